"""The playbook's `explains`: checked at load (FILE:LINE), and in the engine a finding explained by another on the
same target and port (whichever name of the port each uses) keeps its place in the findings, marked
`explained_by` with the explaining finding's id; nothing else about the findings changes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from rdmatool.diagnose.pipeline import default_playbooks, diagnose_analysis
from rdmatool.errors import PlaybookError
from rdmatool.outcome.result import finding_ids
from rdmatool.rules import engine, playbook
from rdmatool.table.analysis import analyse_path
from tests.pods import bundle as pods

RULE = ("  - {id: %s, kind: threshold, metric: port_state, op: '!=', value: Active, severity: error,\n"
        "     symptom: s, cause: c, check: k, fix: f%s}\n")


def _load(tmp_path: Path, *rules: tuple[str, str]) -> list[playbook.Rule]:
    (tmp_path / "a.yaml").write_text("rules:\n" + "".join(RULE % rule for rule in rules))
    return playbook.load_dir(tmp_path)


def test_a_good_explains_loads(tmp_path: Path) -> None:
    a, b = _load(tmp_path, ("a", ", explains: [b]"), ("b", ""))
    assert a.explains == ("b",) and b.explains == ()


@pytest.mark.parametrize(("rules", "line", "message"), [
    ((("a", ", explains: b"), ("b", "")), 2, "rule a: `explains` must be a list of strings naming other rules"),
    ((("a", ", explains: [a]"),), 2, "rule a: `explains` must be a list of strings naming other rules"),
    ((("a", ", explains: [no_such_rule]"),), 2, "rule a: `explains` names no rule of"),
    ((("a", ", explains: [b], replaces: [b]"), ("b", "")), 2, "rule a: b both in `replaces` and in `explains`"),
    ((("a", ", explains: [b]"), ("b", ", explains: [c]"), ("c", ", explains: [a]")), 2,
     "rule a: `explains` goes round in a circle: a → b → c → a"),
])
def test_a_bad_explains_is_refused_naming_file_and_line(tmp_path: Path, rules, line: int, message: str) -> None:
    with pytest.raises(PlaybookError) as caught:
        _load(tmp_path, *rules)
    assert str(caught.value).startswith(f"{tmp_path / 'a.yaml'}:{line}: "), caught.value
    assert message in str(caught.value)


def _down_pod() -> pods.Pod:
    """gpu02's RoCE port physically down: its RDMA port (mlx5_1/1) Down and Polling."""
    pod = pods.healthy_pod()
    roce = next(p for p in pod.host("gpu02").ports if p.roce)
    roce.state, roce.phys = "1: DOWN", "2: Polling"
    return pod


def test_the_shipped_pair_is_explained_and_every_finding_stays(tmp_path: Path) -> None:
    analysis = analyse_path(pods.write(_down_pod(), tmp_path / "bundle"))
    result = diagnose_analysis(analysis)
    found = {(f.rule, f.target, f.entity): f for f in result.findings}
    told = found[("port_not_active", "gpu02", "mlx5_1/1")]
    lead = found[("port_phys_not_linkup", "gpu02", "mlx5_1/1")]
    assert told.explained_by == "port_phys_not_linkup:gpu02:mlx5_1/1" == finding_ids([lead])[0]
    assert lead.explained_by is None
    document = result.as_json()
    by_id = {f["id"]: f for f in document["findings"]}
    assert by_id["port_not_active:gpu02:mlx5_1/1"]["explained_by"] in by_id
    assert "explained_by" not in by_id["port_phys_not_linkup:gpu02:mlx5_1/1"]
    # the same findings (ids, severities, counts) as without the relation: only the mark is new
    plain = [replace(r, explains=()) for r in playbook.load_dir(default_playbooks())]
    without = engine.evaluate(analysis, plain)
    shipped = engine.evaluate(analysis, playbook.load_dir(default_playbooks()))
    assert [replace(f, explained_by=None) for f in shipped] == without


def test_the_same_port_under_its_netdev_name_is_explained_and_an_unrelated_rule_is_not(tmp_path: Path) -> None:
    """The explaining rule sees the RDMA port (mlx5_1/1), the explained one its netdev (ens1f0np0)."""
    (tmp_path / "pb").mkdir()
    (tmp_path / "pb" / "a.yaml").write_text(
        "rules:\n"
        "  - {id: down, kind: threshold, metric: port_state, op: '!=', value: Active, severity: error,\n"
        "     symptom: s, cause: c, check: k, fix: f, explains: [lossless]}\n"
        "  - {id: lossless, kind: threshold, metric: pfc_enabled, op: '==', value: 1, where: {priority: 3},\n"
        "     severity: error, symptom: s, cause: c, check: k, fix: f}\n"
        "  - {id: unrelated, kind: threshold, metric: pfc_enabled, op: '==', value: 1, where: {priority: 3},\n"
        "     severity: error, symptom: s, cause: c, check: k, fix: f}\n")
    analysis = analyse_path(pods.write(_down_pod(), tmp_path / "bundle"))
    findings = engine.evaluate(analysis, playbook.load_dir(tmp_path / "pb"))
    marked = {(f.rule, f.target, f.entity): f.explained_by for f in findings}
    roce = next(p for p in _down_pod().host("gpu02").ports if p.roce)
    assert marked[("down", "gpu02", "mlx5_1/1")] is None
    assert marked[("lossless", "gpu02", roce.netdev)] == "down:gpu02:mlx5_1/1"
    assert marked[("unrelated", "gpu02", roce.netdev)] is None  # the same port, no relation declared
    # the other hosts' ports are up: nothing explains their findings
    assert [k for k, v in marked.items() if v and k[1] != "gpu02"] == []
    assert sum(1 for k in marked if k[0] == "lossless") > 1
