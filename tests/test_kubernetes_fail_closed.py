"""The DaemonSet's node check fails closed on rdmatool's own failures: exit 4 (an internal error) and an exit 3
whose gate stage broke taint the node with FAIL_CLOSED=yes; a plain inconclusive gate never does."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_kubernetes_yaml import _node_check

BROKEN_STAGE = {"verdict": "inconclusive", "stages": [
    {"name": "state", "status": "error", "detail": "stage crashed: ValueError: bad"}]}
UNREACHABLE = {"verdict": "inconclusive", "stages": [{"name": "state", "status": "inconclusive", "detail": "x"}]}


@pytest.mark.parametrize(("code", "payload", "fail_closed", "reason"), [
    (4, None, "yes", "cannot run: exit 4"),
    (4, None, "no", None),
    (3, BROKEN_STAGE, "yes", "cannot run: a gate stage broke"),
    (3, BROKEN_STAGE, "no", None),
    (3, UNREACHABLE, "yes", None),
])
def test_rdmatool_failing_taints_only_when_fail_closed(tmp_path: Path, code: int, payload: dict | None,
                                                       fail_closed: str, reason: str | None) -> None:
    returned, calls, stderr = _node_check(tmp_path, code, payload, fail_closed)
    assert returned == code
    assert [c[3] for c in calls if c[0] == "annotate"] == ([f"rdmatool.io/reason={reason}"] if reason else [])
    assert bool(calls) == bool(reason)
    assert "last line of stderr" in stderr
