"""A rule's gate stage is its playbook key `stage`, checked at load; a rule without it keeps the stage the gate
inferred before the key existed."""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool import yamlio
from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.errors import PlaybookError
from rdmatool.gate import policy
from rdmatool.rules import playbook

RULE = """\
rules:
  - id: r
    kind: {kind}
{params}    severity: warning
    symptom: s
    cause: c
    check: k
    fix: f
"""


def _load(tmp_path: Path, kind: str, params: str) -> playbook.Rule:
    path = tmp_path / "p.yaml"
    path.write_text(RULE.format(kind=kind, params=params))
    (rule,) = playbook.load_file(path)
    return rule


def test_every_shipped_rule_names_its_stage() -> None:
    for path in sorted(default_playbooks().glob("*.yaml")):
        for raw in yamlio.load(path)["rules"]:
            assert raw.get("stage") in playbook.STAGES, f"{path.name}: rule {raw['id']} names no stage"


def test_the_named_stage_is_the_gates_even_against_the_old_inference(tmp_path: Path) -> None:
    # a latency metric, which the inference would put in the latency stage, judged on the first snapshot
    rule = _load(tmp_path, "threshold", "    stage: state\n    metric: lat_p99_us\n    op: \">\"\n    value: 5\n")
    assert policy.stage_of(rule) == "state"


@pytest.mark.parametrize(("kind", "params", "stage"), [
    ("threshold", "    metric: port_state\n    op: \"!=\"\n    value: Active\n", "state"),
    ("rate", "    metric: link_downed\n    field: delta\n    op: \">\"\n    value: 0\n", "counters"),
    ("threshold", "    metric: rx_pause_fraction\n    op: \">\"\n    value: 0.1\n", "counters"),
    ("threshold", "    metric: lat_p99_us\n    op: \">\"\n    value: 5\n", "latency"),
    ("threshold", "    metric: bw_efficiency\n    op: \"<\"\n    value: 0.8\n", "bandwidth"),
    ("threshold", "    metric: incast_pause_fraction\n    op: \">\"\n    value: 0.01\n", "incast"),
])
def test_a_rule_without_stage_keeps_the_inferred_one(tmp_path: Path, kind: str, params: str, stage: str) -> None:
    assert policy.stage_of(_load(tmp_path, kind, params)) == stage


@pytest.mark.parametrize("bad", ["later", "[state]", "1"])
def test_an_unknown_stage_is_refused_at_its_rule(tmp_path: Path, bad: str) -> None:
    with pytest.raises(PlaybookError) as caught:
        _load(tmp_path, "threshold", f"    stage: {bad}\n    metric: port_state\n    op: \"!=\"\n    value: Active\n")
    assert str(caught.value).startswith(f"{tmp_path / 'p.yaml'}:2: rule r: `stage` must be one of state, counters")
