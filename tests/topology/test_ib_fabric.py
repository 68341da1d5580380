"""The InfiniBand fabric from one host's sweep (rdmatool.topology.ib_sweep, ib_fabric; playbooks/17-ib-fabric.yaml):
switch ports restated on their switches, each fault named on its link, never on the host that read the subnet, and
a healthy fat tree silent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import pytest

from rdmatool.diagnose.judges import with_judges
from rdmatool.diagnose.pipeline import default_playbooks, diagnose_bundle
from rdmatool.model import Severity, Verdict
from rdmatool.rules import engine, playbook
from rdmatool.table.analysis import analyse_path
from rdmatool.topology import ib_sweep, observed
from rdmatool.topology.ib_fabric import VERDICT, with_ib_fabric
from tests.helpers import PARSER_FIXTURES
from tests.topology.ib_fat_tree import Faults, fat_tree, write_bundle

# the sweeping host's own InfiniBand port (the fixture's first CA: its second is a RoCE bond)
IBSTAT = (PARSER_FIXTURES / "ibstat" / "healthy.txt").read_text().split("CA 'mlx5_bond_0'")[0]


def _bundle(tmp_path, tree, snapshots, name="b"):
    sweeper = tree.hosts[0]
    own = IBSTAT.replace("0x5c257303006b1e40", tree.guid(f"{sweeper} mlx5_0"))  # its CA as the sweep lists it
    return write_bundle(tmp_path / name, tree, snapshots, extra={(sweeper, "ibstat"): [own] * len(snapshots)})


def _verdicts(analysis) -> dict[tuple[str, str], str]:
    rows = analysis.query.of_metric(VERDICT)
    return dict(zip(zip(rows["target"], rows["entity"]), rows["text"]))


@pytest.fixture(scope="module")
def faulted(tmp_path_factory):
    tree = fat_tree(48, 8, 4, 4, seed=7)
    leaf1, leaf2, leaf3, spine0 = tree.leaves[1], tree.leaves[2], tree.leaves[3], tree.spines[0]
    before = Faults(counters={(leaf1, 9): {"SymbolErrorCounter": 3}, (leaf2, 3): {"SymbolErrorCounter": 65535}})
    after = Faults(
        counters={(leaf1, 9): {"SymbolErrorCounter": 10, "LinkDownedCounter": 2},
                  (leaf2, 3): {"SymbolErrorCounter": 65535},  # saturated: no growth can be read
                  (leaf2, 9): {"SymbolErrorCounter": 5},  # printed only now: grew from 0
                  (spine0, 2): {"VL15Dropped": 4, "PortXmitWait": 900_000_000}},
        gone={(leaf2, 10)}, narrow={(leaf3, 9): "2x"}, sms=(3, 3))
    path = _bundle(tmp_path_factory.mktemp("faulted"), tree, [before, after])
    return tree, path, diagnose_bundle(path)


@dataclass(frozen=True)
class Trigger:
    rule: str
    where: Callable  # tree → (target, entity) of the finding
    names: Callable  # tree → what its symptom must say
    case: str = "faulted"  # the bundle it fires on: `faulted` (the fixture), `no_master`


TRIGGERS = [
    Trigger("ib_switch_link_downed", lambda t: (t.leaves[1], "9"), lambda t: (f"{t.spines[0]} port 2", "+2")),
    Trigger("ib_switch_port_errors", lambda t: (t.leaves[2], "9"), lambda t: (f"{t.spines[0]} 3", "symbol_errors +5")),
    Trigger("ib_cable_gone", lambda t: (t.leaves[2], "10"), lambda t: (f"{t.spines[1]} port 3", "Down/Polling")),
    Trigger("ib_switch_link_below_fabric", lambda t: (t.leaves[3], "9"), lambda t: ("2X NDR (200 Gb/s)", "400 Gb/s")),
    Trigger("ib_uplink_congested", lambda t: (t.spines[0], "2"),
            lambda t: ("2:1", f"{t.leaves[1]}: 3200 Gb/s to hosts, 1600 Gb/s up")),
    Trigger("ib_vl15_dropped", lambda t: (t.spines[0], "2"), lambda t: ("dropped 4 ",)),
    Trigger("ib_several_master_sms", lambda t: ("subnet", "sm"), lambda t: ("2 subnet managers", t.hosts[0])),
    Trigger("ib_no_master_sm", lambda t: ("subnet", "sm"), lambda t: (t.hosts[0], "standby"), "no_master"),
]


@pytest.mark.parametrize("trigger", [t for t in TRIGGERS if t.case == "faulted"], ids=lambda t: t.rule)
def test_each_fault_is_one_finding_on_its_switch_port_naming_the_far_end(faulted, trigger) -> None:
    tree, _path, result = faulted
    shown = [f for f in result.findings if f.rule == trigger.rule and f.explained_by is None]
    assert [(f.target, f.entity) for f in shown] == [trigger.where(tree)]
    for words in trigger.names(tree):
        assert words in shown[0].symptom, (words, shown[0].symptom)


def test_the_fabric_fails_once_per_story(faulted) -> None:
    tree, _path, result = faulted
    # the flapping link's symbol errors are its consequence; the 10-links wording is replaced on InfiniBand ports
    errors = [f for f in result.findings if f.rule == "ib_switch_port_errors"]
    assert [f.explained_by is not None for f in errors] == [True, False]
    assert not {f.rule for f in result.findings} & {"switch_port_errors_growing", "ib_link_flapping",
                                                    "ib_xmit_wait_high", "ib_symbol_errors_growing"} - {
        f.rule for f in result.findings if f.explained_by is not None}
    assert result.verdict is Verdict.FAIL


def test_no_finding_lands_on_the_host_that_read_the_subnet_and_no_host_is_drained(faulted) -> None:
    tree, _path, result = faulted
    hard = [f for f in result.findings if f.severity in (Severity.ERROR, Severity.CRITICAL)]
    assert hard and not [f for f in hard if f.target in tree.hosts]
    assert not [f for f in result.findings if f.target == tree.hosts[0] and "MF0;" in (f.entity or "")]


def test_a_saturated_counter_never_reads_as_growth(faulted) -> None:
    tree, path, result = faulted
    leaf2 = tree.leaves[2]
    assert not [f for f in result.findings if (f.target, f.entity) == (leaf2, "3") and f.severity is not
                Severity.WARNING]
    facts = with_ib_fabric(analyse_path(path)).query.rows(target=leaf2, entity="3", metric="symbol_errors_per_s")
    assert list(facts["flag"]) == ["saturated"] and facts["delta"].isna().all()


def test_switch_ports_are_their_switches_entities_and_cables_join_both_ends(faulted) -> None:
    tree, path, _result = faulted
    analysis = with_ib_fabric(analyse_path(path))
    query = analysis.query
    leaf0, spine0 = tree.leaves[0], tree.spines[0]
    assert query.kind_platform(leaf0) == ("switch", "infiniband")
    assert query.values(leaf0, "9", "ib_link_neighbor") == [(pytest.approx(float("nan"), nan_ok=True),
                                                             f"{spine0}|1")]
    assert query.values(leaf0, "node", "ib_node_guid")[0][1] == tree.guid(leaf0)
    host = tree.hosts[3]
    links = {(link.host, link.nic): (link.switch, link.switch_port) for link in observed.subnet_view(analysis)}
    assert links[(host, "mlx5_0")] == (leaf0, "4")
    cables = {(c.switch, c.port): (c.peer, c.peer_port) for c in observed.fabric_view(analysis)}
    assert cables[(leaf0, "9")] == (spine0, "1") and cables[(spine0, "1")] == (leaf0, "9")
    swept = query.rows(target=tree.hosts[0])
    assert not swept["entity"].map(lambda e: isinstance(e, str) and e.startswith("MF0;")).any()


def test_the_gate_judges_the_sweep_in_its_state_and_counter_stages(faulted) -> None:
    _tree, path, _result = faulted
    verdicts = set(_verdicts(with_judges(analyse_path(path), gate=True)).values())
    assert {"link_downed", "cable_gone", "below_fabric", "congested", "several_masters"} <= verdicts


@pytest.fixture(scope="module")
def rules():
    return playbook.load_dir(default_playbooks())


@pytest.mark.parametrize(("hosts", "per_leaf", "uplinks", "spines", "seed"),
                         [(12, 4, 2, 2, 1), (40, 10, 4, 3, 2), (64, 16, 4, 4, 3)])
def test_a_healthy_fat_tree_raises_nothing(tmp_path, rules, hosts, per_leaf, uplinks, spines, seed) -> None:
    tree = fat_tree(hosts, per_leaf, uplinks, spines, seed=seed)
    quiet = Faults(counters={(tree.leaves[0], 1): {"PortXmitWait": 1000}})
    analysis = with_judges(analyse_path(_bundle(tmp_path, tree, [quiet, quiet])))
    assert len(_verdicts(analysis)) == 0 and analysis.query.targets() == {*tree.switches, tree.hosts[0], "subnet"}
    assert [f.rule for f in engine.evaluate(analysis, rules)] == []


def test_switches_of_one_name_are_told_apart_by_guid(tmp_path) -> None:
    tree = fat_tree(8, 4, 2, 2, seed=4)
    tree.desc = lambda node: "Quantum Mellanox Technologies" if node in tree.switches else node
    path = _bundle(tmp_path, tree, [Faults(), Faults()])
    sweeps = ib_sweep.read(analyse_path(path))
    names = sorted(n.name for n in sweeps[0].switches())
    assert names == sorted(f"Quantum Mellanox Technologies ({tree.guid(s)})" for s in tree.switches)


def test_no_master_subnet_manager(tmp_path, rules) -> None:
    tree = fat_tree(8, 4, 2, 2, seed=5)
    path = _bundle(tmp_path, tree, [Faults(sms=(2,)), Faults(sms=(2, 0))])
    trigger = next(t for t in TRIGGERS if t.case == "no_master")
    found = [f for f in engine.evaluate(with_judges(analyse_path(path)), rules) if f.severity is not Severity.INFO]
    assert [(f.rule, f.target, f.entity) for f in found] == [(trigger.rule, *trigger.where(tree))]
    for words in trigger.names(tree):
        assert words in found[0].symptom


def test_a_bundle_without_a_sweep_is_left_as_it_is(tmp_path) -> None:
    from tests.topology.ib_fat_tree import BundleWriter, CommandResult, Target

    writer = BundleWriter(tmp_path / "plain")
    writer.add(0, CommandResult(target="gpu01", parser="ibstat", command="ibstat", stdout=IBSTAT))
    analysis = analyse_path(writer.commit([Target("gpu01", "127.0.0.1")], [{"index": 0}], [], 10.0))
    assert with_ib_fabric(analysis) is analysis
    assert isinstance(analysis.facts, pd.DataFrame)


# --- the simulated fabric's own subnet (tests/fabric/subnet.py), as the collection's e2e test sweeps it -------------

FABRIC_FAULTS = [  # (fault, the rule that names it, where)
    ({"kind": "ib_port_errors", "target": "ib-leaf02", "port": 3}, "ib_switch_link_downed", ("ib-leaf02", "3")),
    ({"kind": "ib_link_degraded", "target": "ib-leaf01", "port": 4, "value": "1X"}, "ib_switch_link_below_fabric",
     ("ib-leaf01", "4")),
    ({"kind": "ib_uplink_congested", "target": "ib-spine01", "port": 2}, "ib_uplink_congested", ("ib-spine01", "2")),
    ({"kind": "ib_vl15_dropped", "target": "ib-spine02"}, "ib_vl15_dropped", ("ib-spine02", "0")),
    ({"kind": "ib_sm", "value": "two"}, "ib_several_master_sms", ("subnet", "sm")),
    ({"kind": "ib_cable_gone", "target": "ib-leaf03", "port": 3}, "ib_cable_gone", ("ib-leaf03", "3")),
]


def test_the_simulated_fabrics_subnet_faults_are_each_named_once(tmp_path, rules) -> None:
    from rdmatool.bundle import BundleWriter
    from rdmatool.model import CommandResult, Target
    from tests.fabric import subnet as simulated

    subnet = simulated.fat_tree(spines=2, leaves=4, hosts_per_leaf=2, faults=[f for f, _, _ in FABRIC_FAULTS])
    writer = BundleWriter(tmp_path / "sim")
    for snapshot in (0, 1):
        texts = simulated.sweep_texts(subnet, elapsed_s=100.0 + 10 * snapshot, read=snapshot)
        for parser, text in {**texts, "ibstat": IBSTAT}.items():
            writer.add(snapshot, CommandResult(target="gpu0001", parser=parser, command=parser, stdout=text,
                                               qualifier=None if parser == "ibstat" else "mlx5_0.1",
                                               started=f"2026-12-01T02:00:{10 * snapshot:02d}+00:00"))
    path = writer.commit([Target("gpu0001", "127.0.0.1")], [{"index": 0}, {"index": 1}], [], 10.0)
    findings = engine.evaluate(with_judges(analyse_path(path)), rules)
    named = {(f.rule, f.target, f.entity) for f in findings if f.explained_by is None and f.severity is not
             Severity.INFO}
    assert named == {(rule, *where) for _, rule, where in FABRIC_FAULTS}, sorted(named)
    assert not [f for f in findings if f.target.startswith("gpu")]
