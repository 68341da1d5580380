"""The `verdict` kind on hand-written facts: what fires, what the evidence says, what the text can name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rdmatool.errors import PlaybookError
from rdmatool.gate.judge import analysis_of
from rdmatool.rules import engine, playbook

RULE = """\
rules:
  - id: judged
    kind: verdict
    verdict: perf_node_verdict
    value: bad
    metric: bw_avg_gbps
{extra}    severity: error
    symptom: "{{target}} ran {{perf_test}} at {{observed}}"
    cause: c
    check: "{{perf_server}} stays as written when the subject has no such fact"
    fix: f
"""


def fact(target, metric, value=None, text=None, entity=None) -> dict:
    return {"target": target, "kind": "host", "platform": None, "role": None, "entity": entity, "metric": metric,
            "priority": None, "size_bytes": None, "value": value, "text": text, "raw_key": None, "window_s": None,
            "delta": None, "flag": ""}


ROWS = [
    fact("a", "perf_node_verdict", text="bad"), fact("a", "perf_test", text="ib_read_bw"),
    fact("a", "bw_avg_gbps", 97.25), fact("a", "bw_avg_gbps", 12.0), fact("a", "perf_pass_gbps", 180.0),
    fact("a", "perf_record", text=json.dumps({"partners_low": ["b", "c"], "median_gbps": 97.25})),
    fact("a", "perf_node_verdict", text="ok", entity="elsewhere"),  # another subject of the same target
    fact("b", "perf_node_verdict", text="ok"), fact("b", "bw_avg_gbps", 190.0),
    fact("c", "perf_node_verdict", text="bad"),
]


def rules(tmp_path: Path, extra: str = "") -> list:
    path = tmp_path / "p.yaml"
    path.write_text(RULE.format(extra=extra))
    return playbook.load_file(path)


def test_fires_on_the_verdict_with_the_subjects_first_measurement(tmp_path: Path) -> None:
    found = engine.evaluate(analysis_of(ROWS), rules(tmp_path))
    assert [(f.target, f.entity) for f in found] == [("a", None), ("c", None)]
    a, c = found
    assert a.evidence == {"metric": "bw_avg_gbps", "target": "a", "entity": None, "priority": None,
                          "observed": 97.25, "expected": None, "baseline": None, "window_s": None}
    assert a.symptom == "a ran ib_read_bw at 97.25 Gb/s"  # in human units: rdmatool.present.units
    assert a.check == "{perf_server} stays as written when the subject has no such fact"
    assert c.evidence["observed"] is None and c.symptom == "c ran {perf_test} at -"


def test_expected_from_the_pass_line_else_as_written(tmp_path: Path) -> None:
    extra = '    at_least: perf_pass_gbps\n    expected: "a pass line"\n'
    a, c = engine.evaluate(analysis_of(ROWS), rules(tmp_path, extra))
    assert a.evidence["expected"] == ">= 180.0 Gb/s"
    assert c.evidence["expected"] == "a pass line"


def test_details_keep_the_judges_record_whole(tmp_path: Path) -> None:
    a, c = engine.evaluate(analysis_of(ROWS), rules(tmp_path, "    details: perf_record\n"))
    assert a.evidence["details"] == {"partners_low": ["b", "c"], "median_gbps": 97.25}
    assert list(a.evidence)[-1] == "details"
    assert "details" not in c.evidence  # no record of c


def test_other_kinds_evidence_has_no_details() -> None:
    rule = playbook.Rule(id="t", kind="threshold", severity=playbook.Severity.WARNING, symptom="{perf_test}",
                         cause="c", check="k", fix="f", params={"metric": "bw_avg_gbps", "op": ">", "value": 100})
    (b,) = engine.evaluate(analysis_of(ROWS), [rule])
    assert b.target == "b" and "details" not in b.evidence
    assert b.symptom == "{perf_test}"  # only a verdict names its subject's facts


def test_silent_without_verdict_facts(tmp_path: Path) -> None:
    rows = [r for r in ROWS if r["metric"] != "perf_node_verdict"]
    assert engine.evaluate(analysis_of(rows), rules(tmp_path)) == []


@pytest.mark.parametrize(("drop", "message"), [
    ("    verdict: perf_node_verdict\n", "needs ['verdict']"),
    ("    value: bad\n", "needs ['value']"),
])
def test_a_verdict_rule_needs_its_verdict_and_value(tmp_path: Path, drop: str, message: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(RULE.format(extra="").replace(drop, ""))
    with pytest.raises(PlaybookError, match=message.replace("[", r"\[").replace("]", r"\]")):
        playbook.load_file(path)
