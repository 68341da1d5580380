"""The gate's choice of pair schedule: the profile keys, the topology file, and the figures it reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool.gate import profile as profiles
from rdmatool.gate import schedule_choice
from rdmatool.perf.localise import RailRun
from tests.perf import fabric_model

TOPOLOGY = """\
rails:
  - {nic: mlx5_0, switch: leafA, hosts: "h0[0-3]"}
  - {nic: mlx5_0, switch: leafB, hosts: "h0[4-7]"}
"""
HOSTS = [f"h{i:02d}" for i in range(8)]


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
