"""A target the gate could not read in full is not vouched for: a switch whose commands its deadline left unrun makes
the gate inconclusive (exit 3), as an unreachable one does; a command that failed on its own (a tool missing) does
not."""

from __future__ import annotations

import json
from pathlib import Path

from rdmatool.gate.profile import GateProfile
from rdmatool.gate.run import replay_gate
from rdmatool.outcome.failures import DEADLINE_EXCEEDED, unread_targets
from tests.pods import bundle as pods


def _with_failures(path: Path, failures: list[dict]) -> Path:
    manifest = path / "manifest.json"
    data = json.loads(manifest.read_text())
    data["failures"] = failures
    manifest.write_text(json.dumps(data))
    return path


def _failure(target: str, parser: str | None, error: str) -> dict:
    return {"target": target, "parser": parser, "qualifier": None, "error": error, "snapshot": 0}


def test_unread_targets_are_the_unreached_and_the_cut_short() -> None:
    failures = [
        _failure("leaf01", "sonic_pfc_counters", DEADLINE_EXCEEDED),
        _failure("gpu02", None, "gpu02 (10.0.0.2:22): connection refused"),
        _failure("gpu03", "ethtool_stats", f"{DEADLINE_EXCEEDED}; output so far kept"),
        _failure("gpu04", "nvidia_smi", "nvidia-smi: command not found"),
    ]
    assert unread_targets(failures) == ["gpu02", "gpu03", "leaf01"]


def test_a_switch_cut_short_by_its_deadline_leaves_the_gate_inconclusive(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    healthy = replay_gate(str(pods.write(pod, tmp_path / "healthy")), GateProfile())
    assert healthy.verdict.value == "pass", healthy.stages  # the same pod, read in full
    switch = pod.switch.name
    cut = _with_failures(pods.write(pod, tmp_path / "cut"), [_failure(switch, "sonic_pfc_counters", DEADLINE_EXCEEDED)])
    result = replay_gate(str(cut), GateProfile())
    assert result.verdict.value == "inconclusive" and result.drain == []
    targets = len(pod.hosts) + 1
    assert result.stages[0].detail == f"{targets - 1}/{targets} targets read", result.stages[0]


def test_a_command_failing_on_its_own_is_reported_but_vouches_for_the_rest(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    host = pod.hosts[0].name
    failed = _with_failures(pods.write(pod, tmp_path / "b"), [_failure(host, "nvidia_smi", "nvidia-smi: not found")])
    result = replay_gate(str(failed), GateProfile())
    assert [f["target"] for f in result.failures] == [host]
    targets = len(pod.hosts) + 1
    assert result.stages[0].detail == f"{targets}/{targets} targets read", result.stages[0]
    assert result.verdict.value == "pass"


def test_a_hung_tool_is_unread_unlike_a_missing_one() -> None:
    # the host script's `timeout` fired (ethtool -S hung: a wedged driver is the usual cause), a switch's CLI never
    # came back: what they would have shown is unknown
    failures = [
        _failure("gpu05", "ethtool_stats", "ethtool -S ens1f0np0 timed out on gpu05"),
        _failure("gpu06", "perfquery", "perfquery did not finish on gpu06"),
        _failure("leaf02", "onyx_pfc_counters", "show interfaces ethernet 1/1 counters: ReadTimeout: Pattern not found"),
        _failure("gpu07", "perfquery", "perfquery not installed on gpu07"),
    ]
    assert unread_targets(failures) == ["gpu05", "gpu06", "leaf02"]


def test_a_host_whose_counter_tool_hung_leaves_the_gate_inconclusive(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    host = pod.hosts[0].name
    hung = _with_failures(pods.write(pod, tmp_path / "hung"),
                          [_failure(host, "ethtool_stats", f"ethtool -S ens1f0np0 timed out on {host}")])
    result = replay_gate(str(hung), GateProfile())
    assert result.verdict.value == "inconclusive" and result.drain == [], result.stages
    targets = len(pod.hosts) + 1
    assert result.stages[0].detail == f"{targets - 1}/{targets} targets read", result.stages[0]
