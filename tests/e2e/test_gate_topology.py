"""End to end: `rdmatool gate` on the simulated fabric: the bandwidth pairs follow the cabling (a topology file, else
the LLDP its own collection saw), the JSON states the schedule's exposure and the cabling's source, and a slow path
between two leaves is named as such, as a bad inter-leaf link and as a slow path class of the gate's matrix."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from tests.e2e.helpers import rdmatool
from tests.fabric.fixtures import fabric_fixture

pytestmark = pytest.mark.e2e

fabric = fabric_fixture("healthy", scope="module")
LEAF_A = [f"gpu0{i}" for i in range(1, 5)]
LEAF_B = [f"gpu0{i}" for i in range(5, 9)]
TOPOLOGY = """\
rails:
  - {nic: mlx5_0, switch: leafA, hosts: "gpu[01-04]"}
  - {nic: mlx5_1, switch: leafA, hosts: "gpu[01-04]"}
  - {nic: mlx5_0, switch: leafB, hosts: "gpu[05-08]"}
  - {nic: mlx5_1, switch: leafB, hosts: "gpu[05-08]"}
"""


@pytest.fixture
def clean(fabric):
    fabric.clear_faults()
    yield fabric
    fabric.clear_faults()


def gate(fab, tmp_path: Path, profile: str, *extra: str):
    (tmp_path / "profile.yaml").write_text(profile)
    result = rdmatool("gate", "-i", str(fab.inventory_path), "--known-hosts", str(fab.known_hosts), "--limit",
                      "gpu0[1-8]", "--profile", str(tmp_path / "profile.yaml"), "--json", *extra, timeout=400)
    assert "Traceback" not in result.stderr, result.stderr
    return result, (json.loads(result.stdout) if result.stdout.strip() else {})


def schedule_of(payload: dict) -> dict:
    (bandwidth,) = [s for s in payload["stages"] if s["name"] == "bandwidth"]
    return bandwidth["figures"]["schedule"]


def test_a_slow_inter_leaf_path_is_found_by_the_topology_schedule(clean, tmp_path: Path) -> None:
    (tmp_path / "topology.yaml").write_text(TOPOLOGY)
    for a, b in itertools.product(LEAF_A, LEAF_B):  # every path between the two leaves at 30 %
        clean.set_fault("slow_link", a, peer=b, value=0.3)
    result, payload = gate(clean, tmp_path, "counters_window_s: 1\nbandwidth: {rounds: 3, duration_s: 1}\n",
                           "--topology", str(tmp_path / "topology.yaml"), "--save", str(tmp_path / "bundle"))
    assert result.returncode == 1, payload.get("stages")
    plan = schedule_of(payload)
    assert plan["kind"] == "topology" and "8/8 hosts" in plan["why"]
    assert plan["rounds"] == 3 and plan["pair_runs"] == 12
    assert plan["bad_node"] == {"faults": 8, "exposed": 8, "probability": 1.0, "not_exposed": []}
    assert plan["bad_inter_leaf_link"] == {"faults": 1, "exposed": 1, "probability": 1.0, "not_exposed": []}
    assert plan["bad_inter_leaf_links"] == [["leafA", "leafB"]]
    assert payload["drain"] == []  # a slow path is the fabric's problem, no node is drained for it
    # one finding for the path, naming both leaves and the pairs across, instead of a bad link per pair
    assert payload["bad_links"] == [] and not [f for f in payload["findings"] if f["rule"] == "perf_bad_link"]
    (path,) = [f for f in payload["findings"] if f["rule"] == "perf_slow_inter_leaf"]
    assert (path["target"], path["entity"]) == ("fabric", "leafA<->leafB")
    crossing = {tuple(sorted(pair.split("<->"))) for pair in path["evidence"]["details"]["pairs"]}
    assert all(a in LEAF_A and b in LEAF_B for a, b in crossing)
    assert len(crossing) == 8  # two rounds of four pairs across the leaves, each a different pair
    assert plan["source"] == "topology-file"
    # the gate's own matrix against the topology: the cross-leaf class runs at 30 % of the same-leaf one
    (slow,) = [f for f in payload["findings"] if f["rule"] == "path_class_slow"]
    assert (slow["target"], slow["entity"]) in {("leafA", "cross_leaf"), ("leafB", "cross_leaf")}
    assert "cross_leaf path" in slow["symptom"] and "8 pairs" in slow["symptom"]
    again = rdmatool("gate", "--replay", str(tmp_path / "bundle"), "--profile", str(tmp_path / "profile.yaml"),
                     "--json")
    assert again.returncode == 1, again.stderr
    assert [f for f in json.loads(again.stdout)["findings"] if f["rule"] == "path_class_slow"] == [slow]


def test_profile_topology_is_read_from_the_profile_folder_and_random_reports_its_exposure(clean, tmp_path) -> None:
    (tmp_path / "topology.yaml").write_text(TOPOLOGY)
    result, payload = gate(clean, tmp_path, "counters_window_s: 1\ntopology: topology.yaml\n"
                           "bandwidth: {rounds: 2, duration_s: 1, schedule: random}\n")
    assert result.returncode == 0, payload.get("stages")
    plan = schedule_of(payload)
    assert plan["kind"] == "random" and plan["rounds"] == 2 and plan["pair_runs"] == 8
    assert plan["bad_node"]["probability"] == 1.0
    assert plan["bad_inter_leaf_link"]["faults"] == 0 and plan["bad_inter_leaf_link"]["probability"] is None
    assert "bad_inter_leaf_links" not in plan


def test_a_broken_topology_file_is_one_line_and_exit_2_before_anything_runs(clean, tmp_path: Path) -> None:
    broken = tmp_path / "topology.yaml"
    broken.write_text("rails:\n  - {nic: mlx5_0, switch: leafA, colour: red}\n")
    result, payload = gate(clean, tmp_path, "bandwidth: {schedule: topology}\n", "--topology", str(broken))
    assert result.returncode == 2 and payload == {}
    assert result.stderr.strip().count("\n") == 0 and f"{broken}:2" in result.stderr
    result, _ = gate(clean, tmp_path, "bandwidth: {schedule: topology}\n")
    assert result.returncode == 2 and "needs the cabling" in result.stderr
    result, _ = gate(clean, tmp_path, "bandwidth: {schedule: leafy}\n")
    assert result.returncode == 2 and "profile.yaml" in result.stderr and "leafy" in result.stderr


def test_perf_run_topology_mode_writes_the_schedule_and_names_the_slow_path(clean, tmp_path: Path) -> None:
    (tmp_path / "topology.yaml").write_text(TOPOLOGY)
    for a, b in itertools.product(LEAF_A, LEAF_B):
        clean.set_fault("slow_link", a, peer=b, value=0.3)
    base = ("perf", "run", "-i", str(clean.inventory_path), "--known-hosts", str(clean.known_hosts), "--limit",
            "gpu0[1-8]", "--duration", "1", "--out", str(tmp_path / "out"))
    result = rdmatool(*base, "--mode", "topology", "--topology", str(tmp_path / "topology.yaml"), timeout=400)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stderr
    figures = json.loads((tmp_path / "out" / "schedule.json").read_text())
    assert figures["kind"] == "topology" and figures["bad_inter_leaf_links"] == [["leafA", "leafB"]]
    assert figures["bad_inter_leaf_link"]["probability"] == 1.0
    assert "slow inter-leaf links: leafA<->leafB" in result.stderr
    usage = rdmatool(*base, "--mode", "topology")
    assert usage.returncode == 2 and "go together" in usage.stderr


def test_without_a_topology_file_the_gate_follows_the_lldp_its_collection_saw(clean, tmp_path: Path) -> None:
    leaf = {link.host: link.switch for link in clean.scenario.links if link.nic == "mlx5_1"}  # the RoCE NIC tested
    result, payload = gate(clean, tmp_path, "counters_window_s: 1\nbandwidth: {rounds: 3, duration_s: 1}\n",
                           "--save", str(tmp_path / "bundle"))
    assert result.returncode == 0, payload.get("stages")
    plan = schedule_of(payload)
    assert plan["kind"] == "topology" and plan["source"] == "lldp", plan
    assert "8/8 hosts from the stage-1 collection (lldp)" in plan["why"]
    leaves = {leaf[h] for h in LEAF_A + LEAF_B}
    assert plan["bad_inter_leaf_link"]["faults"] == len(leaves) * (len(leaves) - 1) // 2 > 1
    saved = json.loads((tmp_path / "bundle" / "perf" / "schedule.json").read_text())
    assert saved["tested_leaf"] == {h: leaf[h] for h in LEAF_A + LEAF_B}
    results = json.loads((tmp_path / "bundle" / "perf" / "results.json").read_text())
    first = [(r["server"], r["client"]) for r in results if r["round"] == 0]
    alone = {h for h in LEAF_A + LEAF_B if [leaf[g] for g in LEAF_A + LEAF_B].count(leaf[h]) == 1}
    # round one stays within the leaves; only the hosts alone on their leaf are paired across
    assert len(first) == 4 and all(leaf[a] == leaf[b] or {a, b} <= alone for a, b in first), first
    assert any(leaf[a] == leaf[b] for a, b in first)
    assert any(leaf[r["server"]] != leaf[r["client"]] for r in results if r["round"] > 0)
    assert not [f for f in payload["findings"] if f["rule"] == "path_class_slow"]  # healthy: no class is slow
