"""The gate's choice of pair schedule: the profile keys, the topology file, and the figures it reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.gate import profile as profiles
from rdmatool.gate import schedule_choice
from rdmatool.gate.judge import judge
from rdmatool.perf.localise import RailRun
from rdmatool.perf.model import Attribution
from rdmatool.rules import playbook
from rdmatool.topology import Link
from tests.perf import fabric_model

TOPOLOGY = """\
rails:
  - {nic: mlx5_0, switch: leafA, hosts: "h0[0-3]"}
  - {nic: mlx5_0, switch: leafB, hosts: "h0[4-7]"}
"""
HOSTS = [f"h{i:02d}" for i in range(8)]
NOBODY = Attribution((), [], {})


def test_profile_reads_the_topology_beside_it_and_refuses_a_bad_schedule(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("topology: topo.yaml\nbandwidth: {schedule: topology}\n")
    loaded = profiles.load(tmp_path / "p.yaml")
    assert loaded.topology == str(tmp_path / "topo.yaml") and loaded.bandwidth.schedule == "topology"
    assert profiles.load(None).topology is None and profiles.load(None).bandwidth.schedule == "auto"
    (tmp_path / "p.yaml").write_text("bandwidth: {schedule: leafy}\n")
    with pytest.raises(profiles.ProfileError, match=r"p\.yaml:1: bandwidth.schedule .*'leafy'"):
        profiles.load(tmp_path / "p.yaml")
    (tmp_path / "p.yaml").write_text("topology: [a]\n")
    with pytest.raises(profiles.ProfileError, match="topology takes the path"):
        profiles.load(tmp_path / "p.yaml")


def test_check_refuses_topology_without_a_file_and_a_file_that_does_not_load(tmp_path: Path) -> None:
    with pytest.raises(schedule_choice.ScheduleError, match="needs the cabling"):
        schedule_choice.check(None, "topology")
    broken = tmp_path / "t.yaml"
    broken.write_text("rails: 3\n")
    with pytest.raises(Exception, match=str(broken)):
        schedule_choice.check(str(broken), "auto")
    schedule_choice.check(str(broken), "random")  # never read
    schedule_choice.check(None, "auto")


def test_choose_follows_the_cabling_when_a_file_gives_it(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TOPOLOGY)
    assert schedule_choice.choose("auto", None, HOSTS, 3).kind == "random"
    assert schedule_choice.choose("random", str(tmp_path / "t.yaml"), HOSTS, 3).kind == "random"
    choice = schedule_choice.choose("auto", str(tmp_path / "t.yaml"), HOSTS, 3)
    assert choice.kind == "topology" and choice.leaf_of == {h: "leafA" if h < "h04" else "leafB" for h in HOSTS}
    with pytest.raises(schedule_choice.ScheduleError, match="fewer than two"):
        schedule_choice.choose("topology", str(tmp_path / "t.yaml"), ["x1", "x2"], 3)
    assert schedule_choice.choose("auto", str(tmp_path / "t.yaml"), ["x1", "x2"], 3).kind == "random"


def test_the_figures_state_the_exposure_and_name_a_slow_leaf_pair(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TOPOLOGY)
    choice = schedule_choice.choose("auto", str(tmp_path / "t.yaml"), HOSTS, 3)
    args = choice.engine_args()
    plan = args["planner"](HOSTS)  # as the engine calls it, with the hosts it reached
    fault = frozenset(("leafA", "leafB"))
    results = []
    for index, pairs in enumerate(plan):
        results += fabric_model.measure("bad_inter_leaf_link", fault, "r", choice.leaf_of, pairs, index, None)
    run = RailRun.of(results, fabric_model.LINE_GBPS)
    from rdmatool.perf.schedule import confirmation_for

    confirm = confirmation_for(run.statuses, HOSTS, args["leaf_of"])
    results += fabric_model.measure("bad_inter_leaf_link", fault, "r", choice.leaf_of, confirm, len(plan), None)
    figures = choice.figures(results, RailRun.of(results, fabric_model.LINE_GBPS).attribution, 0.9)
    assert figures["kind"] == "topology" and figures["rounds"] == 3 and figures["pair_runs"] == 12
    assert figures["bad_node"]["probability"] == 1.0 and figures["bad_inter_leaf_link"]["probability"] == 1.0
    assert "bad_rail_nic" not in figures
    # every host crossed the slow path in rounds 2 and 3: no host is free of a low pair to confirm against
    assert figures["confirmation_pair_runs"] == len(confirm) == 0
    assert figures["bad_inter_leaf_links"] == [["leafA", "leafB"]]


def lldp(host: str, nic: str, leaf: str) -> Link:
    return Link(host, nic, leaf, f"swp{host[-1]}", "lldp")


SEEN = [lldp(h, "mlx5_1", "leafA" if h < "h04" else "leafB") for h in HOSTS] + \
    [Link(h, "mlx5_0", "ib-leaf01", str(i + 1), "iblinkinfo") for i, h in enumerate(HOSTS)]


def test_without_a_file_the_schedule_follows_the_cabling_the_collection_saw(tmp_path: Path) -> None:
    tested = dict.fromkeys(HOSTS, "mlx5_1")  # discovery picked the RoCE NIC: the InfiniBand leaf is not its leaf
    choice = schedule_choice.choose("auto", None, HOSTS, 3, observed=SEEN, devices=tested)
    assert choice.kind == "topology" and "8/8 hosts from the stage-1 collection (lldp)" in choice.why
    assert choice.leaf_of == {h: "leafA" if h < "h04" else "leafB" for h in HOSTS}
    choice.planner(HOSTS)
    assert choice.figures([], NOBODY, 0.9)["source"] == "lldp"
    on_ib = schedule_choice.choose("auto", None, HOSTS, 3, observed=SEEN, devices=dict.fromkeys(HOSTS, "mlx5_0"))
    assert set(on_ib.leaf_of.values()) == {"ib-leaf01"} and on_ib.cabling.source == "iblinkinfo"
    # a tested NIC the cabling does not name: that host's leaf is unknown, never another NIC's
    partly = schedule_choice.choose("auto", None, HOSTS, 3, observed=SEEN[:8], devices={"h00": "mlx5_3"})
    assert "h00" not in partly.leaf_of and len(partly.leaf_of) == 7 and "7/8 hosts" in partly.why
    (tmp_path / "t.yaml").write_text(TOPOLOGY.replace("leafB", "leafC"))
    from_file = schedule_choice.choose("auto", str(tmp_path / "t.yaml"), HOSTS, 3, observed=SEEN)
    assert from_file.cabling.source == "topology-file" and set(from_file.leaf_of.values()) == {"leafA", "leafC"}
    nothing = schedule_choice.choose("auto", None, HOSTS, 3, observed=[lldp("other", "mlx5_0", "leafZ")])
    assert nothing.kind == "random" and "none seen by the collection" in nothing.why
    nothing.planner(HOSTS)
    assert nothing.figures([], NOBODY, 0.9)["source"] is None
    randomly = schedule_choice.choose("random", str(tmp_path / "t.yaml"), HOSTS, 3, observed=SEEN,
                                      devices=tested)
    assert randomly.kind == "random" and randomly.leaf_of is None
    assert randomly.tested_leaf == choice.leaf_of  # the path classes still know the cabling, from the collection


def bandwidth_run(choice, kind: str, fault) -> tuple[list, Attribution]:
    plan = choice.planner(HOSTS)
    results = []
    for index, pairs in enumerate(plan):
        results += fabric_model.measure(kind, fault, "r", choice.tested_leaf, pairs, index, None)
    return results, RailRun.of(results, fabric_model.LINE_GBPS).attribution


def test_the_gate_names_a_slow_cross_leaf_class_on_its_leaf_from_its_own_matrix() -> None:
    rules = playbook.load_dir(default_playbooks())
    for mode in ("auto", "random"):
        choice = schedule_choice.choose(mode, None, HOSTS, 3, observed=SEEN, devices=dict.fromkeys(HOSTS, "mlx5_1"))
        cabling = schedule_choice.path_cabling(choice.tested_leaf)
        results, attribution = bandwidth_run(choice, "bad_inter_leaf_link", frozenset(("leafA", "leafB")))
        found = [f for f in judge(results, attribution, rules, "bandwidth", 0.9, cabling=cabling)
                 if f.rule == "path_class_slow"]
        assert [(f.target, f.entity) for f in found] == [("leafA", "cross_leaf")], mode
        assert found[0].evidence["observed"] == fabric_model.LINE_GBPS * fabric_model.SLOW
        assert "cross_leaf path" in found[0].symptom and "{" not in found[0].symptom
        assert not [f for f in judge(results, attribution, rules, "bandwidth", 0.9) if f.rule == "path_class_slow"]
        healthy, fine = bandwidth_run(choice, "none", None)
        assert not [f for f in judge(healthy, fine, rules, "bandwidth", 0.9, cabling=cabling)
                    if f.rule == "path_class_slow"]
    assert schedule_choice.path_cabling({"h00": "leafA"}) is None  # one host's leaf: no classes to compare


def test_a_replay_reads_the_tested_leaves_the_live_run_saved(tmp_path: Path) -> None:
    choice = schedule_choice.choose("auto", None, HOSTS, 3, observed=SEEN, devices=dict.fromkeys(HOSTS, "mlx5_1"))
    choice.planner(HOSTS)
    schedule_choice.save(choice, choice.figures([], NOBODY, 0.9), tmp_path / "perf")
    assert schedule_choice.saved_leaves(tmp_path) == choice.leaf_of
    (tmp_path / "perf" / "schedule.json").write_text('{"tested_leaf": ["not", "a", "map"]}')
    assert schedule_choice.saved_leaves(tmp_path) == {}
    (tmp_path / "perf" / "schedule.json").write_text("{broken")
    assert schedule_choice.saved_leaves(tmp_path) == {} and schedule_choice.saved_leaves(tmp_path / "none") == {}
