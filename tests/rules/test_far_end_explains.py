"""The playbook's `explains_far_end`: a finding explains findings of the named rules on the port at the other end
of its cable (the cabling the bundle's LLDP saw). A host's PFC storm holds the switch port it is cabled to paused:
that port then marks no ECN while it cannot send, its lossless queue fills and drops. Those are the storm seen from
the switch, not causes of their own: marked `explained_by` the storm, folded under it in the table, every finding
kept. The same symptoms on a switch port whose host does not storm stay causes of their own."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from rdmatool.diagnose.pipeline import default_playbooks, diagnose_analysis
from rdmatool.errors import PlaybookError
from rdmatool.outcome.result import finding_ids
from rdmatool.report import text as text_report
from rdmatool.rules import engine, playbook
from rdmatool.table.analysis import analyse_path
from tests.pods import bundle as pods
from tests.pods.bundle import WINDOW_S
from tests.rules.test_explains import _load  # the one-file playbook of threshold rules those tests load


def test_a_good_explains_far_end_loads(tmp_path: Path) -> None:
    a, b = _load(tmp_path, ("a", ", explains_far_end: [b]"), ("b", ""))
    assert a.explains_far_end == ("b",) and a.explains == () and b.explains_far_end == ()


@pytest.mark.parametrize(("rules", "message"), [
    ((("a", ", explains_far_end: b"), ("b", "")), "rule a: `explains_far_end` must be a list of strings"),
    ((("a", ", explains_far_end: [a]"),), "rule a: `explains_far_end` must be a list of strings"),
    ((("a", ", explains_far_end: [no_such_rule]"),), "rule a: `explains_far_end` names no rule of"),
    # a circle through both kinds of relation has no first rule to fold into either
    ((("a", ", explains_far_end: [b]"), ("b", ", explains: [a]")), "goes round in a circle: a → b → a"),
])
def test_a_bad_explains_far_end_is_refused_naming_the_file(tmp_path: Path, rules, message: str) -> None:
    with pytest.raises(PlaybookError) as caught:
        _load(tmp_path, *rules)
    assert str(caught.value).startswith(f"{tmp_path / 'a.yaml'}:2: "), caught.value
    assert message in str(caught.value)


def _paused_and_dropping(port: pods.SwitchPort) -> None:
    """A Cumulus leaf port held paused 90 % of the window on priority 3, marking 0.01 % of its packets and
    dropping RoCE packets for lack of egress buffer: what a storming host does to the port cabled to it."""
    port.rx_pause_us["3"][1] = int(0.9 * WINDOW_S * 1e6)
    port.ecn_marks["3"][1] = 1_000  # of 10^7 packets
    pods.bump(port.uc_drops, "3", 500)


def _stormed_pod() -> tuple[pods.Pod, pods.SwitchPort, pods.SwitchPort]:
    """gpu01's RoCE port storms (it holds its peer paused 95 % of the window on priority 3); the leaf port cabled to
    it shows the consequences. Another leaf port shows the same symptoms with no storm at its far end."""
    pod = pods.healthy_pod(("cumulus",))
    storming = next(p for p in pod.host("gpu01").ports if p.roce)
    storming.ethtool["tx_prio3_pause_duration"][1] = int(0.95 * WINDOW_S * 1e6)
    stormed = next(sp for sp in pod.switch.ports if sp.host == "gpu01")
    alone = next(sp for sp in pod.switch.ports if sp.host == "gpu02")
    _paused_and_dropping(stormed)
    _paused_and_dropping(alone)
    return pod, stormed, alone


def test_a_storm_explains_its_cabled_switch_port_and_nothing_else(tmp_path: Path) -> None:
    pod, stormed, alone = _stormed_pod()
    analysis = analyse_path(pods.write(pod, tmp_path / "bundle"))
    result = diagnose_analysis(analysis)
    found = {(f.rule, f.target, f.entity): f for f in result.findings}
    storm = found[("pfc_storm", "gpu01", "ens1f0np0")]
    storm_id = finding_ids([storm])[0]
    assert storm.explained_by is None
    consequences = [("ecn_after_pfc", stormed.name), ("roce_tx_no_buffer_drops", stormed.name),
                    ("lossless_queue_tail_drops", stormed.name)]
    for rule, port in consequences:
        assert found[(rule, "leaf01", port)].explained_by == storm_id, (rule, port)
    # the same symptoms where no storm is cabled: causes of their own (the tail drops still fold under the drops)
    assert found[("ecn_after_pfc", "leaf01", alone.name)].explained_by is None
    assert found[("roce_tx_no_buffer_drops", "leaf01", alone.name)].explained_by is None
    # only the mark is new: the same findings as without the relation
    plain = [replace(r, explains_far_end=()) for r in playbook.load_dir(default_playbooks())]
    without = engine.evaluate(analysis, plain)
    shipped = engine.evaluate(analysis, playbook.load_dir(default_playbooks()))
    assert [(f.rule, f.target, f.entity) for f in shipped] == [(f.rule, f.target, f.entity) for f in without]
    assert sum(f.explained_by == storm_id for f in shipped) >= len(consequences)


def test_the_table_folds_the_far_end_under_the_storm_naming_the_port(tmp_path: Path) -> None:
    pod, stormed, alone = _stormed_pod()
    result = diagnose_analysis(analyse_path(pods.write(pod, tmp_path / "bundle")))
    console = Console(file=io.StringIO(), width=300, color_system=None)
    text_report.render(result, console)
    printed = console.file.getvalue()
    storm = [i for i, line in enumerate(printed.splitlines()) if "[pfc_storm]" in line]
    assert storm, printed
    also = printed.splitlines()[storm[0] + 1]
    assert also.lstrip().startswith("also:"), printed
    # the far end said once, then what it showed (the figures of the switch port's own findings)
    assert also.lstrip().startswith(f"also: at the far end, leaf01 {stormed.name}: "), also
    assert "ecn_after_pfc prio 3: 90 %" in also and "roce_tx_no_buffer_drops 500" in also, also
    assert alone.name not in also


def _storm_findings(tmp_path: Path, alone_late: bool):
    """The stormed pod, with or without a second late port on the leaf whose far end does not storm."""
    pod, stormed, alone = _stormed_pod()
    if not alone_late:  # the other port marks like a healthy one: only the storm's far end is late
        alone.rx_pause_us["3"][1] = 0
    result = diagnose_analysis(analyse_path(pods.write(pod, tmp_path / "bundle")))
    found = {(f.rule, f.target, f.entity): f for f in result.findings}
    return result, found, stormed, alone


def test_a_switch_late_only_where_a_storm_holds_it_is_explained_by_the_storm(tmp_path: Path) -> None:
    """The switch-wide `switch_ecn_fires_after_pfc` names its late ports: when every one is the far end of a storming
    host, the switch's ECN is not what is wrong, and the finding says the storm explains it."""
    result, found, stormed, _ = _storm_findings(tmp_path, alone_late=False)
    storm = found[("pfc_storm", "gpu01", "ens1f0np0")]
    switch = found[("switch_ecn_fires_after_pfc", "leaf01", None)]
    assert [p["entity"] for p in switch.evidence["details"]["ports"]] == [stormed.name]
    assert switch.explained_by == finding_ids([storm])[0]
    console = Console(file=io.StringIO(), width=300, color_system=None)
    text_report.render(result, console)
    printed = console.file.getvalue()
    # the ECN change it asks for says whose consequence its reasons are
    change = [line for line in printed.splitlines() if "ECN thresholds of TC 3" in line]
    assert change and "for ecn_after_pfc, switch_ecn_fires_after_pfc (explained by pfc_storm on gpu01)" in change[0], \
        printed


def test_a_switch_late_on_a_port_of_its_own_stays_a_cause(tmp_path: Path) -> None:
    """One late port with no storm at its far end keeps the switch-wide finding a cause of its own, even if the
    other late port is a storm's far end."""
    _, found, stormed, alone = _storm_findings(tmp_path, alone_late=True)
    switch = found[("switch_ecn_fires_after_pfc", "leaf01", None)]
    assert sorted(p["entity"] for p in switch.evidence["details"]["ports"]) == sorted([stormed.name, alone.name])
    assert switch.explained_by is None
