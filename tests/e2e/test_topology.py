"""End to end: a rail-optimised pod on the simulated fabric, collected over real SSH and diagnosed.

Three GPU hosts, each with two RoCE NICs: mlx5_0 on rail leaf leaf01 (SONiC), mlx5_1 on rail leaf leaf02 (Cumulus),
both ends speaking LLDP. Healthy, the topology rules stay silent; with gpu02's two NICs swapped between the rail
leaves (fault swapped_rails), the diagnosis names gpu02, both its NICs, the leaf each reaches and the one its peers'
NICs reach; with one switch port blind to its host (fault one_sided_neighbor), the one-sided cable is named; a NIC
moved to a third leaf (unexpected_leaf) is a host on an unexpected leaf; a cable moved between the bundle's two
snapshots (recabled_between_snapshots) is a neighbour changed; a switch port at another speed than its host's
(switch_port_speed) is a speed mismatch, behind a leaf of each switch OS.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.helpers import collect, rdmatool
from tests.fabric import scenario as scenario_mod
from tests.fabric.fixtures import sim_fabric

pytestmark = pytest.mark.e2e

NIC = {"link_layer": "Ethernet", "rate_gbps": 200, "width": "4X", "mtu": 4096, "firmware": "22.39.1002",
       "board_id": "MT_0000000359", "hca_type": "MT4125"}
TOPOLOGY_RULES = ("rail_miscabled", "host_on_unexpected_leaf", "neighbor_one_sided", "rdma_port_without_neighbor",
                  "link_speed_mismatch", "lldp_neighbor_changed", "topology_wrong_switch", "topology_wrong_port",
                  "topology_missing_link")


def rail_pod(faults: list[dict], spare: bool = False) -> scenario_mod.Scenario:
    """With `spare`, a third leaf (leaf03, SONiC) that no host is cabled to."""
    hosts = [f"gpu0{i}" for i in (1, 2, 3)]
    links = []
    for i, host in enumerate(hosts):
        links.append({"host": host, "nic": "mlx5_0", "switch": "leaf01", "switch_port": f"Ethernet{4 * i}"})
        links.append({"host": host, "nic": "mlx5_1", "switch": "leaf02", "switch_port": f"swp{i + 1}"})
    return scenario_mod.from_dict({
        "name": "rail-pod",
        "hosts": [{"name": "gpu[01-03]", "address": "127.0.1.[1-3]", "role": "compute",
                   "nics": [{"device": "mlx5_0", "netdev": "ens1f0np0", **NIC},
                            {"device": "mlx5_1", "netdev": "ens1f1np1", **NIC}]}],
        "switches": [
            {"name": "leaf01", "platform": "sonic", "address": "127.0.2.1",
             "ports": [{"name": f"Ethernet{4 * i}", "speed_gbps": 200} for i in range(3)]},
            {"name": "leaf02", "platform": "cumulus", "address": "127.0.2.2",
             "ports": [{"name": f"swp{i + 1}", "speed_gbps": 200} for i in range(3)]},
            *([{"name": "leaf03", "platform": "sonic", "address": "127.0.2.3",
                "ports": [{"name": "Ethernet0", "speed_gbps": 200}]}] if spare else []),
        ],
        "links": links,
        "faults": faults,
    })


def diagnosed(tmp_path: Path, faults: list[dict], spare: bool = False, interval: str = "0",
              ) -> tuple[int, list[dict]]:
    with sim_fabric(rail_pod(faults, spare)) as fab:
        out = tmp_path / "bundle"
        result = collect(fab, out, "--interval", interval)
        assert result.returncode == 0, result.stderr
    done = rdmatool("diagnose", str(out), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, [f for f in json.loads(done.stdout)["findings"] if f["rule"] in TOPOLOGY_RULES]


def test_healthy_rail_pod_is_silent(tmp_path: Path) -> None:
    _, found = diagnosed(tmp_path, [])
    assert [(f["rule"], f["target"], f["entity"]) for f in found if f["severity"] != "info"] == []


def test_swapped_rail_nics_are_named_with_both_switches(tmp_path: Path) -> None:
    code, found = diagnosed(tmp_path, [{"kind": "swapped_rails", "target": "gpu02", "nic": "mlx5_0",
                                        "value": "mlx5_1"}])
    assert code == 1  # miscabling is an error: something to fix, named
    rails = {(f["target"], f["entity"]): f for f in found if f["rule"] == "rail_miscabled"}
    assert set(rails) == {("gpu02", "mlx5_0"), ("gpu02", "mlx5_1")}
    first, second = rails[("gpu02", "mlx5_0")]["symptom"], rails[("gpu02", "mlx5_1")]["symptom"]
    assert "gpu02 mlx5_0 reaches leaf02" in first and "reach leaf01" in first and "gpu01, gpu03" in first
    assert "gpu02 mlx5_1 reaches leaf01" in second and "reach leaf02" in second
    assert {f["rule"] for f in found} == {"rail_miscabled"}, found  # both ends agree: nothing one-sided


def test_switch_port_blind_to_its_host_is_one_sided(tmp_path: Path) -> None:
    _, found = diagnosed(tmp_path, [{"kind": "one_sided_neighbor", "target": "gpu03", "nic": "mlx5_1"}])
    assert [(f["rule"], f["target"], f["entity"]) for f in found] == [("neighbor_one_sided", "gpu03", "mlx5_1")]
    assert "leaf02 swp3" in found[0]["symptom"]


# (switch OS, the speed of the switch port facing gpu02's 200G NIC): slower on some, faster on others
SPEED_CASES = [("sonic", 100), ("cumulus", 400), ("onyx", 100), ("eos", 400), ("nxos", 100)]


@pytest.mark.parametrize(("platform", "switch_speed"), SPEED_CASES, ids=[p for p, _ in SPEED_CASES])
def test_a_switch_port_at_another_speed_than_its_host_is_a_speed_mismatch(tmp_path: Path, platform: str,
                                                                        switch_speed: int) -> None:
    """Every NOS reports its ports' speeds (SONiC `show interfaces status`, Cumulus `nv show interface -o json`, Onyx
    `show interfaces ethernet status`, EOS `show interfaces status | json`, NX-OS `show interface | json`), read over
    netmiko's real driver for it: a switch port at another speed than the 200G NIC it faces is named."""
    sc = scenario_mod.from_dict({
        "name": f"{platform}-leaf",
        "hosts": [{"name": "gpu[01-02]", "address": "127.0.1.[1-2]", "role": "compute",
                   "nics": [{"device": "mlx5_0", "netdev": "ens1f0np0", **NIC}]}],
        "switches": [{"name": "leaf05", "platform": platform, "address": "127.0.2.1"}],
        "links": "auto",
        "faults": [{"kind": "switch_port_speed", "target": "gpu02", "nic": "mlx5_0", "value": switch_speed}],
    })
    with sim_fabric(sc) as fab:
        out = tmp_path / "bundle"
        assert collect(fab, out, "--interval", "0").returncode == 0
    done = rdmatool("diagnose", str(out), "--format", "json")
    result = json.loads(done.stdout)
    assert result["failures"] == [], result["failures"]
    found = [f for f in result["findings"] if f["rule"] == "link_speed_mismatch"]
    assert [(f["target"], f["entity"]) for f in found] == [("gpu02", "mlx5_0")], done.stdout[-2000:]
    port = scenario_mod.switch_port_name(platform, 1)
    symptom = found[0]["symptom"]
    assert "200 Gb/s" in symptom and f"{switch_speed} Gb/s" in symptom and f"leaf05 {port}" in symptom, symptom


def test_a_nic_on_a_leaf_no_peer_reaches_is_on_an_unexpected_leaf(tmp_path: Path) -> None:
    code, found = diagnosed(tmp_path, [{"kind": "unexpected_leaf", "target": "gpu02", "nic": "mlx5_1",
                                        "value": "leaf03"}], spare=True)
    assert code == 1
    moved = [f for f in found if f["rule"] == "host_on_unexpected_leaf"]
    assert [(f["target"], f["entity"]) for f in moved] == [("gpu02", "mlx5_1")], found
    assert "reaches leaf03" in moved[0]["symptom"] and "expected leaf02" in moved[0]["symptom"]
    assert "gpu01, gpu03" in moved[0]["symptom"]
    assert {f["rule"] for f in found} == {"host_on_unexpected_leaf"}, found  # both ends of the new cable agree


def test_a_cable_moved_between_the_snapshots_is_a_changed_neighbour(tmp_path: Path) -> None:
    code, found = diagnosed(tmp_path, [{"kind": "recabled_between_snapshots", "target": "gpu03", "nic": "mlx5_1",
                                        "value": "leaf03"}], spare=True, interval="1")
    changed = [f for f in found if f["rule"] == "lldp_neighbor_changed"]
    assert [(f["target"], f["entity"]) for f in changed] == [("gpu03", "ens1f1np1")], found
    assert "leaf02 swp3 → leaf03 Ethernet4" in changed[0]["symptom"]
    # the last snapshot's cabling is judged as it stands: gpu03's NIC now on a leaf no peer reaches
    assert ("host_on_unexpected_leaf", "gpu03", "mlx5_1") in {(f["rule"], f["target"], f["entity"]) for f in found}
    # the old switch port's last word was the first snapshot's (it has no neighbour in the second): the cable it
    # still names is one-sided, "a cable moved since one end last heard the other" as the rule says
    sided = [(f["target"], f["entity"]) for f in found if f["rule"] == "neighbor_one_sided"]
    assert sided == [("leaf02", "swp3")], found
    assert code == 1
    _, steady = diagnosed(tmp_path / "steady", [], spare=True, interval="1")
    assert not [f for f in steady if f["rule"] == "lldp_neighbor_changed"]  # two snapshots, nothing moved
