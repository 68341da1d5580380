"""Shared pytest configuration: the repository root is importable as `tests.*` for the simulated fabric, and the
markers that let a developer run the fast suite alone: `pytest -m "not e2e and not slow"`.

- `e2e`: talks SSH to the simulated fabric (a real sshd on loopback; needs root and openssh-server). Modules say so
  with `pytestmark`; a test that uses a fixture made by `tests.fabric.fixtures.fabric_fixture` is marked here too,
  so a forgotten mark never slips a fabric test into the fast suite.
- `slow`: no fabric, but many seconds: fuzzing, and the parametrised cases that each diagnose or run a whole
  bundle or capture again (doctored stores, bad manifests, periodic bursts).
`.ci/run` runs everything."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# A configuration file of the machine running the tests (~/.config/rdmatool/config.yaml, /etc/rdmatool/config.yaml)
# must not change the defaults the tests rely on; the configuration tests set RDMATOOL_CONFIG themselves.
os.environ["RDMATOOL_CONFIG"] = ""

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def pytest_sessionfinish(session, exitstatus) -> None:  # noqa: ARG001 - pytest's hook signature
    """Stop the simulated fabrics the session shared between test modules (tests.fabric.fixtures)."""
    fixtures = sys.modules.get("tests.fabric.fixtures")
    if fixtures is not None:
        fixtures.stop_shared()


def pytest_collection_modifyitems(config, items) -> None:  # noqa: ARG001 - pytest's hook signature
    import pytest

    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        if any(getattr(d.func, "simulated_fabric", False) for chain in defs for d in chain):
            item.add_marker(pytest.mark.e2e)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ARG001 - pytest's hook signature
    """How many generated fabrics the run judged (tests/generated), healthy and faulted, so the log says it."""
    counts: dict[str, dict[str, int]] = {}
    for outcome in ("passed", "failed", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "")
            if not nodeid.startswith("tests/generated/") or "[" not in nodeid:  # one parametrised case a fabric
                continue
            if getattr(report, "when", "call") != ("setup" if outcome == "skipped" else "call"):
                continue
            kind = "faulted" if "fault" in nodeid else "healthy"
            counts.setdefault(kind, {}).setdefault(outcome, 0)
            counts[kind][outcome] += 1
    if counts:
        parts = [f"{kind}: " + ", ".join(f"{n} {outcome}" for outcome, n in sorted(c.items()))
                 for kind, c in sorted(counts.items())]
        terminalreporter.write_line("generated fabrics judged — " + "; ".join(parts))
