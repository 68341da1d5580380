"""A gate stage whose own code broke proved nothing: the gate exits 4 (rdmatool failed), not 3, so that a hook set
to fail closed holds the job; a stage that failed still names its nodes (exit 1). The verdict and the broken stage
are still printed."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from rdmatool.gate import policy
from rdmatool.gate.run import GateResult
from rdmatool.model import Verdict
from tests.helpers import REPO

DEMO = REPO / "examples" / "demo-bundle"
runner = CliRunner()


def _result(verdict: Verdict, drain: list[str]) -> GateResult:
    stages = [policy.StageResult("state", "failed" if drain else "passed"),
              policy.StageResult("counters", "error", detail=policy.crashed(KeyError("rx_prio3_pause")))]
    return GateResult(verdict=verdict, stages=stages, findings=[], failures=[], drain=drain)


@pytest.fixture
def gate_returns(monkeypatch):
    def use(result: GateResult) -> None:
        monkeypatch.setattr("rdmatool.gate.run.replay_gate", lambda *a, **k: result)
    return use


def test_a_crashed_stage_without_a_failure_exits_4_naming_the_stage(gate_returns) -> None:
    gate_returns(_result(Verdict.INCONCLUSIVE, []))
    run = runner.invoke(app, ["gate", "--replay", str(DEMO), "--json"])
    assert run.exit_code == 4, run.output
    assert run.stderr.strip() == "rdmatool gate: internal error: counters: stage crashed: KeyError: 'rx_prio3_pause'"
    stages = {s["name"]: s["status"] for s in json.loads(run.stdout)["stages"]}
    assert stages == {"state": "passed", "counters": "error"}


def test_a_failure_still_drains_when_another_stage_crashed(gate_returns) -> None:
    gate_returns(_result(Verdict.FAIL, ["gpu03"]))
    run = runner.invoke(app, ["gate", "--replay", str(DEMO), "--json"])
    assert run.exit_code == 1, run.output
    assert json.loads(run.stdout)["drain"] == ["gpu03"]


def test_an_inconclusive_gate_without_a_crash_stays_3(gate_returns) -> None:
    result = _result(Verdict.INCONCLUSIVE, [])
    result.stages[1] = policy.StageResult("counters", "timeout", detail="budget spent")
    gate_returns(result)
    assert runner.invoke(app, ["gate", "--replay", str(DEMO)]).exit_code == 3
