"""A saved bundle read back as the collection it records: its targets as the inventory resolved them, and the
perftest results a gate or `perf run` stored beside the outputs — so that the gate's verdict can be recomputed
offline (why did last night's gate drain gpu05?). Nothing here connects to anything."""

from __future__ import annotations

import json
from pathlib import Path

from rdmatool import files
from rdmatool.bundle.manifest import one_line
from rdmatool.bundle.reader import Bundle
from rdmatool.errors import BundleError
from rdmatool.model import Platform, Target, TargetKind


def targets(loaded: Bundle) -> list[Target]:
    """The targets as the bundle's manifest recorded them (resolved, without secrets)."""
    out = []
    for t in loaded.targets:
        try:
            out.append(Target(
                name=t["name"], address=t.get("address") or t["name"], kind=TargetKind(t.get("kind", "host")),
                platform=Platform(t.get("platform", "linux")), role=t.get("role"), user=t.get("user"),
                port=int(t.get("port") or 22), identity_file=t.get("identity_file"), proxy_jump=t.get("proxy_jump"),
                groups=tuple(t.get("groups") or ()), ports=tuple(t.get("ports") or ()),
            ))
        except (KeyError, ValueError, TypeError) as exc:
            raise BundleError(f"{loaded.path}/manifest.json: unreadable target {t!r} ({exc})") from None
    return out


def perf_records(loaded: Bundle, folder: str = "perf") -> tuple[list[dict], dict] | None:
    """The perftest pair results and attribution a gate or `perf run` stored in the bundle, if any. Read as the rest
    of a bundle is: regular files only, within the size cap."""
    root = Path(loaded.path) / folder
    results, attribution = root / "results.json", root / "attribution.json"
    if not (results.is_file() and attribution.is_file()):
        return None
    try:
        return (json.loads(files.read_regular_text(results, errors="strict")),
                json.loads(files.read_regular_text(attribution, errors="strict")))
    except files.UnsafeFileError as exc:
        raise BundleError(f"{root}: perf results {exc.reason}; not read") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise BundleError(f"{root}: unreadable perf results ({one_line(exc)})") from None
