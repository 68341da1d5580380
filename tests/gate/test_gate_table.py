"""`rdmatool gate`'s table is the on-call view of a diagnosis (rdmatool.report.text, through report/view.py): the
verdict with its stages; the nodes to drain, each with its reasons, the bad links and the unreachable targets; the
critical and error causes; the suggested changes; the warnings; the info findings counted, not shown."""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console
from typer.testing import CliRunner

from rdmatool.cli import app
from rdmatool.gate import policy
from rdmatool.gate.run import GateResult
from rdmatool.model import Finding, Severity, Suggestion, Verdict
from rdmatool.report import text
from tests.helpers import REPO

DEMO = REPO / "examples" / "demo-bundle"
runner = CliRunner()


def line_of(lines: list[str], pattern: str) -> int:
    return next(i for i, line in enumerate(lines) if re.search(pattern, line))


@pytest.fixture(scope="module")
def replayed() -> tuple[list[str], dict]:
    table = runner.invoke(app, ["gate", "--replay", str(DEMO)], env={"COLUMNS": "80"})
    as_json = runner.invoke(app, ["gate", "--replay", str(DEMO), "--json"])
    assert table.exit_code == as_json.exit_code == 1, table.output
    return table.stdout.splitlines(), json.loads(as_json.stdout)


def test_the_replayed_demo_reads_in_the_on_call_order(replayed) -> None:
    lines, document = replayed
    counts = {s: sum(1 for f in document["findings"] if f["severity"] == s) for s in ("critical", "error", "info")}
    assert lines[0].startswith(f"gate: FAIL  {counts['critical']} critical, {counts['error']} error")
    assert lines[1].startswith("  stages: state failed")
    drain, unreachable = line_of(lines, r"^drain \(\d+\): "), line_of(lines, r"^unreachable \(\d+\): ")
    hard, warnings = line_of(lines, r"^CRITICAL / ERROR \("), line_of(lines, r"^WARNING \(")
    failures = line_of(lines, r"^COMMAND / PARSE FAILURES")
    assert 1 < drain < unreachable < hard < warnings < failures
    assert lines[drain] == f"drain ({len(document['drain'])}): gpu[01-04,06-07]"
    # one reason line per drained node, naming the finding that condemned it; what that finding explains is said
    # in its block, not again here
    reasons = lines[drain + 1:unreachable]
    assert [line.split(":")[0].strip() for line in reasons] == document["drain"]
    gpu06 = next(line for line in reasons if line.startswith("  gpu06: "))
    assert gpu06 == "  gpu06: state: port_phys_not_linkup mlx5_0/1"
    assert {r["rule"] for r in document["drain_reasons"] if r["node"] == "gpu06"} == {
        "port_phys_not_linkup", "port_not_active"}  # the JSON keeps both
    assert "gpu12" in lines[unreachable]
    # the causes as a diagnosis shows them: one block per cause, the explained findings folded in
    assert any(line.startswith("   also: port_not_active") for line in lines[hard:warnings])
    assert not any("[port_not_active]" in line for line in lines)
    # the info findings counted at the end, with the suggested changes that answer only them (the gate suggests as a
    # diagnosis does), and the way to list them; the line wraps at 80 columns
    hidden = sum(1 for f in document["findings"] for _ in f["suggestions"] if f["severity"] == "info")
    assert hidden, "the demo's info findings carry suggested changes"
    last = " ".join(lines[line_of(lines, rf"^{counts['info']} info findings"):])
    assert re.fullmatch(rf"{counts['info']} info findings and \d+ suggestion\(s\) answering only those hidden "
                        r"\(--json lists them\)", last), last
    assert not any(line.startswith(" i ") for line in lines)


def _finding(rule: str, severity: Severity, target: str, suggest: bool = False) -> Finding:
    suggestions = (Suggestion("PFC enabled priorities", "4", "3", "why", {"host": ["mlnx_qos -i x --pfc 3"]}),) \
        if suggest else ()
    return Finding(rule=rule, severity=severity, target=target, entity="mlx5_0/1", symptom=f"{rule} on {target}",
                   cause="c", check="k", fix=f"fix {rule}", evidence={}, suggestions=suggestions)


def _render(gate: GateResult) -> list[str]:
    console = Console(width=80, file=io.StringIO(), color_system=None, highlight=False)
    text.render_gate(gate, console)
    return console.file.getvalue().splitlines()


def test_suggested_changes_come_between_the_causes_and_the_warnings() -> None:
    findings = [_finding("hard", Severity.ERROR, "gpu01", suggest=True), _finding("soft", Severity.WARNING, "gpu02"),
                _finding("quiet", Severity.INFO, "gpu03")]
    stage = policy.StageResult("state", "failed", 1.0, findings, "3/3 targets read")
    gate = GateResult(verdict=Verdict.FAIL, stages=[stage], findings=findings, failures=[], drain=["gpu01"],
                      bad_links=[("gpu01", "gpu02")], elapsed_s=1.5,
                      drain_reasons=[policy.Condemnation("gpu01", "state", "hard", "mlx5_0/1", "hard on gpu01")])
    lines = _render(gate)
    assert lines[:4] == ["gate: FAIL  1 error, 1 warning, 1 info  in 1.5 s",
                         "  stages: state failed (3/3 targets read)",
                         "drain (1): gpu01", "  gpu01: state: hard mlx5_0/1"]
    assert lines[4] == "bad links: gpu01<->gpu02"
    order = [line_of(lines, p) for p in (r"^CRITICAL / ERROR", r"^SUGGESTED CHANGES", r"^WARNING \(")]
    assert order == sorted(order)
    assert any("mlnx_qos -i x --pfc 3" in line for line in lines[order[1]:order[2]])
    assert lines[-1] == "1 info findings hidden (--json lists them)"


def test_a_fabric_level_failure_drains_no_node_and_says_so() -> None:
    findings = [_finding("spine", Severity.ERROR, "leaf01")]
    gate = GateResult(verdict=Verdict.FAIL, stages=[policy.StageResult("state", "failed", 0.1, findings)],
                      findings=findings, failures=[{"target": "gpu09", "kind": "connection", "error": "timed out"}],
                      drain=[], elapsed_s=0.1)
    lines = _render(gate)
    assert lines[2] == "drain (0): none: a fabric-level failure (below)"
    assert lines[3] == "unreachable (1): gpu09: timed out"
    assert lines[4].startswith("CRITICAL / ERROR (1, 1 cause)")
