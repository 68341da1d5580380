"""End to end: a leaf–spine fabric of each switch OS, collected over real SSH with its spines, and diagnosed.

Four RoCE hosts with two NICs each, NIC mlx5_0 on leaf01 and mlx5_1 on leaf02; each leaf cabled to spine01 and
spine02, and the two leaves to each other (a peer link), every switch of the one OS under test (or leaves of one OS
and spines of another, where each end's LLDP shows the other's port as the other advertises it). Both ends of every
cable speak LLDP in their OS's own output; a SONiC port is advertised by its alias (`etp1`), as SONiC does. Healthy,
the diagnosis passes with nothing at warning or worse: every switch-to-switch cable is a normal cable, and every
host finds its SONiC port through the alias. With one spine port's LLDP blind to its leaf (fault
uplink_one_sided), that spine port is the one named, with the leaf port that sees it.
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
HOSTS = 4
LEAVES, SPINES = ("leaf01", "leaf02"), ("spine01", "spine02")
UPLINK = HOSTS  # the index of a leaf's first uplink port: after its host ports
SERIOUS = ("warning", "error", "critical")


def port(platform: str, index: int) -> str:
    return scenario_mod.switch_port_name(platform, index)


def leaf_spine(platform: str, faults: list[dict], spine_platform: str | None = None) -> scenario_mod.Scenario:
    """The fabric, every switch running `platform` (the spines `spine_platform` when given)."""
    up = spine_platform or platform
    links, switch_links = [], []
    for h in range(HOSTS):
        for n, leaf in enumerate(LEAVES):
            links.append({"host": f"gpu0{h + 1}", "nic": f"mlx5_{n}", "switch": leaf, "switch_port": port(platform, h)})
    for n, leaf in enumerate(LEAVES):
        for s, spine in enumerate(SPINES):
            switch_links.append({"switch": leaf, "switch_port": port(platform, UPLINK + s), "peer": spine,
                                 "peer_port": port(up, n)})
    peer_link = port(platform, UPLINK + len(SPINES))
    switch_links.append({"switch": LEAVES[0], "switch_port": peer_link, "peer": LEAVES[1], "peer_port": peer_link})
    leaf_ports = [{"name": port(platform, h), "speed_gbps": 200} for h in range(HOSTS)] + [
        {"name": port(platform, UPLINK + i), "speed_gbps": 400} for i in range(len(SPINES) + 1)]
    spine_ports = [{"name": port(up, n), "speed_gbps": 400} for n in range(len(LEAVES))]
    return scenario_mod.from_dict({
        "name": f"leaf-spine-{platform}",
        "hosts": [{"name": f"gpu[01-0{HOSTS}]", "address": f"127.0.1.[1-{HOSTS}]", "role": "compute",
                   "nics": [{"device": "mlx5_0", "netdev": "ens1f0np0", **NIC},
                            {"device": "mlx5_1", "netdev": "ens1f1np1", **NIC}]}],
        "switches": [{"name": name, "platform": platform if name in LEAVES else up, "address": f"127.0.2.{k + 1}",
                      "ports": [dict(p) for p in (leaf_ports if name in LEAVES else spine_ports)]}
                     for k, name in enumerate((*LEAVES, *SPINES))],
        "links": links,
        "switch_links": switch_links,
        "faults": faults,
    })


def diagnosed(tmp_path: Path, platform: str, faults: list[dict], spine_platform: str | None = None,
              ) -> tuple[int, list[dict], Path]:
    with sim_fabric(leaf_spine(platform, faults, spine_platform)) as fab:
        out = tmp_path / "bundle"
        result = collect(fab, out, "--interval", "0")
        assert result.returncode == 0, result.stderr
    done = rdmatool("diagnose", str(out), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)["findings"], out


@pytest.mark.parametrize(("platform", "spine_platform"), [
    *((p, None) for p in scenario_mod.PLATFORMS), ("sonic", "eos"), ("nxos", "sonic"), ("onyx", "cumulus")])
def test_a_healthy_leaf_spine_fabric_gives_no_warning(tmp_path: Path, platform: str, spine_platform: str | None,
                                                       ) -> None:
    code, findings, bundle = diagnosed(tmp_path, platform, [], spine_platform)
    serious = [(f["rule"], f["severity"], f["target"], f["entity"], f["symptom"]) for f in findings
               if f["severity"] in SERIOUS]
    assert serious == [] and code == 0, serious
    # the spines were collected, and their LLDP saw the leaves: the silence is about cables that were seen
    from rdmatool.table.analysis import analyse_path
    from rdmatool.topology import observed

    analysis = analyse_path(bundle)
    cables = {(c.switch, c.peer) for c in observed.fabric_view(analysis)}
    assert {(spine, leaf) for spine in SPINES for leaf in LEAVES} <= cables
    assert (LEAVES[0], LEAVES[1]) in cables and (LEAVES[1], LEAVES[0]) in cables
    hosts = {(link.host, link.nic, link.switch, link.switch_port) for link in observed.host_view(analysis)}
    assert ("gpu01", "mlx5_0", "leaf01", port(platform, 0)) in hosts  # a SONiC alias resolved to the port's name


@pytest.mark.parametrize("platform", ["sonic", "nxos"])
def test_a_spine_port_blind_to_its_leaf_is_named_on_that_port(tmp_path: Path, platform: str) -> None:
    blind = port(platform, 1)  # spine01's port to leaf02
    _, findings, _ = diagnosed(tmp_path, platform, [{"kind": "uplink_one_sided", "target": "spine01",
                                                     "value": blind}])
    sided = [f for f in findings if f["rule"] == "neighbor_one_sided"]
    assert [(f["target"], f["entity"]) for f in sided] == [("spine01", blind)], findings
    symptom = sided[0]["symptom"]
    assert f"leaf02 {port(platform, UPLINK)}" in symptom and "sees no neighbour" in symptom
    assert f"spine01 {blind} and spine01 {blind}" not in symptom  # never a port that sees itself
    assert not [f for f in findings if f["severity"] in SERIOUS and f["rule"] != "neighbor_one_sided"], findings
