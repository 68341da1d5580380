"""Replay transport: a saved bundle read back as the collection it records, so that diagnose and the gate run
offline on it exactly as on the live fabric (offline triage of last night's gate, demos, tests)."""

from __future__ import annotations

import json
from pathlib import Path

from rdmatool import bundle as bundle_io
from rdmatool.collect import TargetOutcome
from rdmatool.errors import BundleError
from rdmatool.model import Platform, Target, TargetKind


def targets(loaded: bundle_io.Bundle) -> list[Target]:
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


def outcomes(loaded: bundle_io.Bundle) -> list[TargetOutcome]:
    """Per target, its recorded snapshots and connection failure — what collect.collect_all returned live."""
    by_name = {t.name: TargetOutcome(t) for t in targets(loaded)}
    for entry in loaded.entries:
        outcome = by_name.get(entry.target)
        if outcome is not None:
            outcome.snapshots.setdefault(entry.snapshot, []).append(entry.result)
    for failure in loaded.failures:
        if not failure.get("parser") and failure.get("target") in by_name:
            by_name[failure["target"]].error = failure.get("error") or "failed"
    return list(by_name.values())


def perf_records(loaded: bundle_io.Bundle, folder: str = "perf") -> tuple[list[dict], dict] | None:
    """The perftest pair results and attribution a gate or `perf run` stored in the bundle, if any."""
    root = Path(loaded.path) / folder
    results, attribution = root / "results.json", root / "attribution.json"
    if not (results.is_file() and attribution.is_file()):
        return None
    try:
        return json.loads(results.read_text()), json.loads(attribution.read_text())
    except ValueError as exc:
        raise BundleError(f"{root}: unreadable perf results ({exc})") from None
