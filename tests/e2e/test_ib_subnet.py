"""End to end: an InfiniBand-only pod on the simulated fabric, whose cabling comes from the subnet itself.

No LLDP and no switch to log into: the hosts' `iblinkinfo` (read in each snapshot, by one host under the subnet
manager) is the only source of the cabling. The bundle holds one iblinkinfo output per snapshot; the cables and the leaves' uplinks are
read from it; swapped rail NICs are named from it; and the gate, given no topology file, schedules its bandwidth
pairs on the leaves it reports.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rdmatool import bundle as bundle_io
from rdmatool.table.analysis import analyse_path
from rdmatool.topology.observed import IBLINKINFO, links_from_analysis
from rdmatool.topology.paths import uplinks
from tests.e2e.helpers import collect, rdmatool
from tests.fabric import scenario as scenario_mod
from tests.fabric.fixtures import sim_fabric

pytestmark = pytest.mark.e2e

IB = {"link_layer": "InfiniBand", "rate_gbps": 400, "width": "4X", "mtu": 4096, "firmware": "28.39.1002",
      "board_id": "MT_0000000838", "hca_type": "MT4129"}
TOPOLOGY_RULES = ("rail_miscabled", "host_on_unexpected_leaf", "neighbor_one_sided", "rdma_port_without_neighbor",
                  "link_speed_mismatch", "lldp_neighbor_changed", "path_class_slow")


def leaf_spine(faults: list[dict] | None = None) -> scenario_mod.Scenario:
    """gpu01-02 on ib-leaf01, gpu03-04 on ib-leaf02, both leaves up to ib-spine01."""
    return scenario_mod.from_dict({
        "name": "ib-leaf-spine",
        "hosts": [{"name": "gpu[01-04]", "address": "127.0.1.[1-4]",
                   "nics": [{"device": "mlx5_0", "netdev": "ibp24s0", **IB}]}],
        "ib_switches": [{"name": "ib-leaf01", "ports": 8}, {"name": "ib-leaf02", "ports": 8},
                        {"name": "ib-spine01", "ports": 4}],
        "links": [{"host": f"gpu0{i}", "nic": "mlx5_0", "switch": "ib-leaf01" if i <= 2 else "ib-leaf02",
                   "switch_port": str(2 - i % 2)} for i in range(1, 5)],
        "ib_links": [{"switch": "ib-leaf01", "port": 8, "peer": "ib-spine01", "peer_port": 1},
                     {"switch": "ib-leaf02", "port": 8, "peer": "ib-spine01", "peer_port": 2}],
        "faults": faults or [],
    })


def rails(faults: list[dict]) -> scenario_mod.Scenario:
    """Three hosts, two InfiniBand rails: mlx5_0 on ib-rail0, mlx5_1 on ib-rail1."""
    return scenario_mod.from_dict({
        "name": "ib-rails",
        "hosts": [{"name": "gpu[01-03]", "address": "127.0.1.[1-3]",
                   "nics": [{"device": "mlx5_0", "netdev": "ibp24s0", **IB},
                            {"device": "mlx5_1", "netdev": "ibp25s0", **IB}]}],
        "ib_switches": [{"name": "ib-rail0"}, {"name": "ib-rail1"}],
        "links": [{"host": f"gpu0{i}", "nic": f"mlx5_{k}", "switch": f"ib-rail{k}", "switch_port": str(i)}
                  for i in (1, 2, 3) for k in (0, 1)],
        "faults": faults,
    })


def topology_findings(bundle: Path) -> list[dict]:
    done = rdmatool("diagnose", str(bundle), "--format", "json")
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    return [f for f in json.loads(done.stdout)["findings"] if f["rule"] in TOPOLOGY_RULES]


def test_the_cabling_of_an_infiniband_pod_comes_from_the_subnet(tmp_path: Path) -> None:
    sc = leaf_spine()
    with sim_fabric(sc) as fab:
        bundle = tmp_path / "bundle"
        result = collect(fab, bundle, "--interval", "1")
        assert result.returncode == 0, result.stderr
    read = [(e.snapshot, e.target, e.result.qualifier) for e in bundle_io.read(bundle).entries
            if e.result.parser == "iblinkinfo"]
    assert [snapshot for snapshot, _, _ in read] == [0, 1], read  # one subnet manager, read in each snapshot
    assert len({host for _, host, _ in read}) == 1 and read[0][1] in {h.name for h in sc.hosts}  # by one host
    assert read[0][2] == "mlx5_0.1"
    analysis = analyse_path(bundle)
    seen = links_from_analysis(analysis)
    assert {(link.host, link.nic, link.switch, link.switch_port) for link in seen} == {
        (link.host, link.nic, link.switch, link.switch_port) for link in sc.links}
    assert {link.source for link in seen} == {IBLINKINFO}
    assert uplinks(analysis)["ib-leaf01"] == {"ib-spine01"} and uplinks(analysis)["ib-leaf02"] == {"ib-spine01"}
    assert topology_findings(bundle) == []


def test_a_down_host_port_leaves_its_cable_out_of_the_subnet(tmp_path: Path) -> None:
    with sim_fabric(leaf_spine([{"kind": "port_down", "target": "gpu04", "nic": "mlx5_0"}])) as fab:
        bundle = tmp_path / "bundle"
        assert collect(fab, bundle, "--interval", "0").returncode in (0, 1)
    seen = {link.host: link.switch for link in links_from_analysis(analyse_path(bundle))}
    assert seen == {"gpu01": "ib-leaf01", "gpu02": "ib-leaf01", "gpu03": "ib-leaf02"}


def test_swapped_rail_nics_on_infiniband_are_named_from_the_subnet(tmp_path: Path) -> None:
    faults = [{"kind": "swapped_rails", "target": "gpu02", "nic": "mlx5_0", "value": "mlx5_1"}]
    with sim_fabric(rails(faults)) as fab:
        bundle = tmp_path / "bundle"
        assert collect(fab, bundle, "--interval", "0").returncode == 0
    found = topology_findings(bundle)
    named = {(f["target"], f["entity"]): f["symptom"] for f in found if f["rule"] == "rail_miscabled"}
    assert set(named) == {("gpu02", "mlx5_0"), ("gpu02", "mlx5_1")}, found
    assert "gpu02 mlx5_0 reaches ib-rail1" in named[("gpu02", "mlx5_0")]
    assert "reach ib-rail0" in named[("gpu02", "mlx5_0")]


def test_without_a_topology_file_the_gate_schedules_on_the_subnet_cabling(tmp_path: Path) -> None:
    with sim_fabric(leaf_spine()) as fab:
        (tmp_path / "profile.yaml").write_text("counters_window_s: 1\nbandwidth: {rounds: 2, duration_s: 1}\n")
        result = rdmatool("gate", "-i", str(fab.inventory_path), "--known-hosts", str(fab.known_hosts),
                          "--profile", str(tmp_path / "profile.yaml"), "--json", "--save", str(tmp_path / "b"),
                          timeout=400)
    assert "Traceback" not in result.stderr, result.stderr
    payload = json.loads(result.stdout)
    assert result.returncode == 0, payload["stages"]
    (bandwidth,) = [s for s in payload["stages"] if s["name"] == "bandwidth"]
    plan = bandwidth["figures"]["schedule"]
    assert plan["kind"] == "topology" and plan["source"] == IBLINKINFO, plan
    assert "4/4 hosts from the stage-1 collection (iblinkinfo)" in plan["why"]
    assert plan["bad_inter_leaf_link"]["faults"] == 1 and plan["bad_inter_leaf_link"]["probability"] == 1.0
    saved = json.loads((tmp_path / "b" / "perf" / "schedule.json").read_text())
    assert saved["tested_leaf"] == {"gpu01": "ib-leaf01", "gpu02": "ib-leaf01", "gpu03": "ib-leaf02",
                                    "gpu04": "ib-leaf02"}
