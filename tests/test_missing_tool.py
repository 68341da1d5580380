"""One fact, one judgement: a tool missing on a host (`perfquery not installed on gpu01`) is a warning that names the
tool and the host, in collect, diagnose and the gate alike (exit 0 on its own); the rest of the host is judged. It
was three: collect exit 0, the gate PASS, diagnose INCONCLUSIVE. A host that gave nothing else is not read
(inconclusive), missing tool or not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rdmatool.collect import TargetOutcome
from rdmatool.diagnose.pipeline import diagnose_bundle
from rdmatool.gate.profile import GateProfile
from rdmatool.gate.run import replay_gate
from rdmatool.model import CommandResult, Finding, Severity, Target, Verdict
from rdmatool.outcome.failures import tool_gaps
from rdmatool.outcome.verdict import EXIT_CODES, verdict
from rdmatool.table.absent_outputs import absent_failures
from tests.pods import bundle as pods

MISSING = {"target": "gpu01", "kind": "command", "parser": "perfquery", "qualifier": "mlx5_0.1",
           "error": "perfquery not installed on gpu01", "snapshot": 1}
HUNG = {"target": "gpu02", "kind": "command", "parser": "ethtool_stats", "qualifier": "ens1f0np0",
        "error": "ethtool -S ens1f0np0 timed out on gpu02", "snapshot": 1}


def finding(severity: Severity) -> Finding:
    return Finding(rule="r", severity=severity, target="t", entity=None, symptom="s", cause="c", check="k", fix="f")


def test_a_missing_tool_is_a_gap_and_nothing_else_is() -> None:
    shell = {**MISSING, "error": "sh: perfquery: command not found"}
    assert tool_gaps([MISSING, HUNG, shell, {"target": "gpu03", "error": "connection refused"}]) == [MISSING, shell]


@pytest.mark.parametrize(("severities", "failures", "expected"), [
    ((), [], Verdict.WARN),
    ((Severity.ERROR,), [], Verdict.FAIL),  # a hard finding outranks a gap
    ((), [HUNG], Verdict.INCONCLUSIVE),  # an unknown is still inconclusive beside a gap
    ((Severity.INFO,), [], Verdict.WARN),
])
def test_a_gap_warns_and_outranks_nothing_else(severities, failures, expected) -> None:
    assert verdict([finding(s) for s in severities], failures, gaps=[MISSING]) is expected
    assert verdict([], []) is Verdict.PASS  # the same without the gap


@pytest.fixture(scope="module")
def without_perfquery(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pod = pods.healthy_pod()
    pod.hosts[0].failing["perfquery"] = 127  # as the host script records it: `perfquery not installed on gpu01`
    return pods.write(pod, tmp_path_factory.mktemp("pod") / "bundle")


def test_diagnose_warns_naming_the_tool_and_the_host(without_perfquery: Path) -> None:
    result = diagnose_bundle(without_perfquery)
    assert result.verdict is Verdict.WARN and EXIT_CODES[result.verdict] == 0, result.failures
    assert [f["error"] for f in result.failures] == ["perfquery not installed on gpu01"]


def test_the_gate_says_the_same_and_drains_nothing(without_perfquery: Path) -> None:
    gate = replay_gate(str(without_perfquery), GateProfile())
    assert gate.verdict is Verdict.WARN and gate.drain == []
    assert [f["error"] for f in gate.failures] == ["perfquery not installed on gpu01"]
    state = next(s for s in gate.stages if s.name == "state")
    assert state.detail.startswith("5/5 targets read")  # the host is read: what it said is judged


def test_a_host_with_nothing_but_a_missing_tool_is_not_read() -> None:
    """Its snapshot holds no output at all: the missing tool explains perfquery's absence, not the host's."""
    manifest = {"snapshots": [{"index": 0}, {"index": 1}], "targets": [{"name": "gpu01"}, {"name": "gpu02"}],
                "failures": [MISSING]}
    present = {(0, "gpu01"), (0, "gpu02"), (1, "gpu02")}
    [absent] = absent_failures(manifest, present)
    assert absent["target"] == "gpu01" and "no output in snapshot 1" in absent["error"]
    # a failure that says why the host is silent still explains it (a command cut by the deadline)
    cut = {**MISSING, "error": "target deadline exceeded"}
    assert absent_failures({**manifest, "failures": [cut]}, present) == []


def test_collect_says_warning_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    from rdmatool.cli.collect_cmd import print_summary

    def outcome(name: str, *errors: str, error: str | None = None) -> TargetOutcome:
        results = [CommandResult(name, "sysfs_counters", "grep -H -r .", "x\n", qualifier="mlx5_0")]
        results += [CommandResult(name, "perfquery", "perfquery -x", "", 127, qualifier="mlx5_0.1", error=e)
                    for e in errors]
        return TargetOutcome(Target(name, "127.0.0.1"), {0: results}, error=error)

    assert print_summary([outcome("gpu01", "perfquery not installed on gpu01"), outcome("gpu02")]) == 0
    row = next(line for line in capsys.readouterr().err.splitlines() if "gpu01" in line)
    assert [cell.strip() for cell in re.split(r"[│┃|]", row) if cell.strip()] == [
        "gpu01", "warning", "perfquery not installed on gpu01"]
    hung = outcome("gpu01", "perfquery did not finish on gpu01")
    assert print_summary([hung, outcome("gpu02")]) == 0 and "partial" in capsys.readouterr().err
    assert print_summary([outcome("gpu01", error="gpu01: connection refused"), outcome("gpu02")]) == 3
