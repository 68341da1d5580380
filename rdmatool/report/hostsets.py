"""Host names as people read them in a report: folded sets (`gpu[001-064]`), and failures grouped by what failed."""

from __future__ import annotations

from collections.abc import Iterable

from rdmatool.present.hostlist import fold


def folded(names: Iterable[str]) -> str:
    """The names once each, folded; a name NodeSet cannot hold (a bundle from elsewhere) leaves the list as it is."""
    unique = list(dict.fromkeys(str(n) for n in names))
    try:
        return fold(unique)
    except ValueError:
        return ", ".join(unique)


def grouped_failures(failures: list[dict]) -> list[tuple[str, str, str]]:
    """(folded targets, what failed, error), in order of first appearance: a thousand hosts refused alike are one
    line, `gpu[001-999] [connection]: timed out`."""
    groups: dict[tuple[str, str], list[str]] = {}
    for failure in failures:
        key = (str(failure.get("parser") or failure.get("kind") or "connection"), str(failure.get("error", "")))
        groups.setdefault(key, []).append(str(failure.get("target", "")))
    return [(folded(targets), what, error) for (what, error), targets in groups.items()]
