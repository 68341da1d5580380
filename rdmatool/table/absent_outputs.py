"""Targets the manifest lists that left nothing in a snapshot the manifest lists, with no failure saying why.

A collection that could not read a target records it (a connection failure, a deadline, a failed command). A bundle
whose files went missing since — a snapshot folder deleted, a copy cut short, a shard half synced — records
nothing: the target then simply has fewer readings, and with its second snapshot gone it has no counter rates, so
its pause storm or its flapping link is never seen and a verdict passes it. Such a target is as unread as an
unreachable one: one failure per target naming the snapshots with nothing, which makes a diagnosis inconclusive and
the gate count the target as missing (rdmatool.outcome.failures.unread_targets: it has no parser).

A tool missing on a target explains its own output's absence, not the target's: a host whose snapshot holds
nothing at all is not read, even if one of its tools was recorded as not installed there (a missing tool is a
warning only beside what the host did say: rdmatool.outcome.verdict).
"""

from __future__ import annotations

from collections.abc import Iterable

from rdmatool.outcome.failures import tool_gaps


def absent_failures(manifest: dict, present: Iterable[tuple[int, str]]) -> list[dict]:
    """One failure per listed target with no output (and no other file: a capture) in some listed snapshot, when no
    failure of the target without a parser (not reached, cut short: the collection said why) and no failure in that
    snapshot is recorded. `present`: the (snapshot, target) pairs holding anything."""
    have = set(present)
    snapshots = sorted({s["index"] for s in manifest.get("snapshots") or []
                        if isinstance(s.get("index"), int) and not isinstance(s.get("index"), bool)})
    explained: set[tuple[int | None, str]] = set()
    failures = manifest.get("failures") or []
    missing_tools = tool_gaps(failures)
    for failure in failures:
        if failure in missing_tools:
            continue
        target = failure.get("target")
        if not failure.get("parser"):
            explained.add((None, target))  # the target's own failure: whatever it left is what it gave
        elif isinstance(failure.get("snapshot"), int):
            explained.add((failure["snapshot"], target))
    out = []
    for entry in manifest.get("targets") or []:
        name = entry.get("name")
        if not isinstance(name, str) or (None, name) in explained:
            continue
        empty = [i for i in snapshots if (i, name) not in have and (i, name) not in explained]
        if empty:  # the same words for every target, so that a view folds a lost snapshot folder into one line
            which = f"snapshot {empty[0]}" if len(empty) == 1 else f"snapshots {', '.join(map(str, empty))}"
            out.append({"target": name, "snapshot": empty[0],
                        "error": f"no output in {which} of the bundle, which the manifest lists, and no failure "
                                 "recorded (files removed or lost since the collection?); not judged"})
    return out
