"""Shared pytest configuration: the repository root is importable as `tests.*` for the simulated fabric."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def pytest_sessionfinish(session, exitstatus) -> None:  # noqa: ARG001 - pytest's hook signature
    """Stop the simulated fabrics the session shared between test modules (tests.fabric.fixtures)."""
    fixtures = sys.modules.get("tests.fabric.fixtures")
    if fixtures is not None:
        fixtures.stop_shared()
