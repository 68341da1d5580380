"""Playbook validation: every problem is one `FILE:LINE: message`, and the shipped playbooks load."""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool.diagnose import default_playbooks
from rdmatool.errors import PlaybookError
from rdmatool.rules import playbook

GOOD = """\
rules:
  - id: flaps
    kind: rate
    metric: link_downed
    field: delta
    op: ">"
    value: 0
    severity: critical
    symptom: s
    cause: c
    check: k
    fix: f
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return path


def test_good_rule_loads(tmp_path: Path) -> None:
    (rule,) = playbook.load_file(_write(tmp_path, GOOD))
    assert rule.id == "flaps" and rule.kind == "rate" and rule.params["value"] == 0
    assert rule.source.endswith("p.yaml:2")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("metric: link_downed", "metric: link_dwned"), "unknown metric 'link_dwned'"),
        (("kind: rate", "kind: magic"), "unknown kind 'magic'"),
        (("    fix: f\n", ""), "missing field 'fix'"),
        (('op: ">"', 'op: "=~"'), "unknown operator"),
        (("severity: critical", "severity: loud"), "severity must be one of"),
        (("field: delta", "field: delta\n    expression: x+1"), "unknown parameter(s) ['expression']"),
    ],
)
def test_bad_rule_names_file_and_line(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    path = _write(tmp_path, GOOD.replace(*change))
    with pytest.raises(PlaybookError) as caught:
        playbook.load_file(path)
    assert str(caught.value).startswith(f"{path}:2: ")
    assert message in str(caught.value)


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "rules:\n  - id: x\n    kind: [unclosed\n")
    with pytest.raises(PlaybookError) as caught:
        playbook.load_file(path)
    assert str(caught.value).startswith(f"{path}:")
    assert "invalid YAML" in str(caught.value)


def test_duplicate_ids_across_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(GOOD)
    with pytest.raises(PlaybookError, match="already defined"):
        playbook.load_dir(tmp_path)


def test_shipped_playbooks_load_and_cover_the_seed_table() -> None:
    rules = playbook.load_dir(default_playbooks())
    ids = {r.id for r in rules}
    assert len(rules) >= 40
    for required in ("ib_link_flapping", "pfc_priority_mismatch_host_switch", "dcqcn_rp_disabled", "firmware_drift",
                     "storage_node_overloaded", "bandwidth_below_line_rate", "latency_jitter", "missing_port_state",
                     "training_storage_share_lossless_priority", "ecn_after_pfc", "pfc_storm"):
        assert required in ids
    kinds = {r.kind for r in rules}
    assert kinds == set(playbook.KINDS)
    for rule in rules:
        assert rule.symptom and rule.cause and rule.check and rule.fix
