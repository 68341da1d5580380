"""A gate that fails on a setting carries the same suggested changes, with their exact commands, as a diagnosis of
the same bundle: the on-call engineer reading the gate's output needs the fix as much as the verdict."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from rdmatool.capture.facts import analyse_with_captures
from rdmatool.diagnose.pipeline import diagnose_analysis
from rdmatool.gate.profile import GateProfile
from rdmatool.gate.run import replay_gate
from rdmatool.report import text
from tests.pods import bundle as pods


def _suggested(findings) -> list[tuple[str, str, str, tuple]]:
    return sorted((f.rule, f.target, s.setting, tuple(sorted(s.commands.items())))
                  for f in findings for s in f.suggestions)


def test_the_gate_suggests_what_a_diagnosis_suggests(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    node = pod.hosts[0]
    for port in node.ports:  # PFC on priority 4 on one node, 3 everywhere else
        port.pfc = (4,)
    bundle = pods.write(pod, tmp_path / "bundle")
    gate = replay_gate(str(bundle), GateProfile())
    diagnosis = diagnose_analysis(analyse_with_captures(str(bundle)))
    assert gate.verdict.value == "fail" and gate.drain == [node.name]
    suggested = _suggested(gate.findings)
    assert suggested and suggested == _suggested(diagnosis.findings)
    assert any(rule == "host_pfc_not_roce_priority" and target == node.name for rule, target, _, _ in suggested)
    console = Console(record=True, width=200)
    text.render_gate(gate, console)
    shown = console.export_text()
    commands = [line for f in gate.findings for s in f.suggestions for lines in s.commands.values() for line in lines]
    assert commands and all(line in shown for line in commands)  # the on-call view prints them, ready to paste
