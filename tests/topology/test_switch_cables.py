"""Cables between collected switches, and host cables to SONiC ports that LLDP names by their alias.

A healthy leaf–spine fabric whose ends spell each other's ports their own way (a SONiC leaf advertising aliases,
an EOS spine, an NX-OS leaf whose LLDP abbreviates its own ports) gives no cabling verdict; a spine port whose LLDP
does not see its leaf is the one named, with the leaf port that sees it, and nothing says a port sees itself.
"""

from __future__ import annotations

import pandas as pd

from rdmatool.topology import observed
from rdmatool.topology.cabling import cabling_facts
from rdmatool.topology.link_errors import link_error_facts
from tests.pods.facts import row
from tests.topology.pod import analysis

HOSTS = ("gpu01", "gpu02")


def fabric(spine_blind: set[str] = frozenset()) -> list[dict]:
    """gpu01/gpu02 on SONiC leaf01 (LLDP shows the aliases etp1, etp2), leaf01 and NX-OS leaf02 cabled to EOS
    spine01; `spine_blind`: spine01 ports whose LLDP sees nothing."""
    out = []
    for i, host in enumerate(HOSTS):
        out += [row(host, "linux", "mlx5_0/1", "netdev", text="ens1f0np0"),
                row(host, "linux", "mlx5_0/1", "port_state", text="Active"),
                row(host, "linux", "mlx5_0/1", "link_layer", text="Ethernet"),
                row(host, "linux", "ens1f0np0", "lldp_neighbor", text=f"leaf01|etp{i + 1}"),
                row("leaf01", "sonic", f"Ethernet{4 * i}", "lldp_neighbor", text=f"{host}|ens1f0np0"),
                row("leaf01", "sonic", f"Ethernet{4 * i}", "port_alias", text=f"etp{i + 1}"),
                row("leaf01", "sonic", f"Ethernet{4 * i}", "oper_state", text="Up")]
    out += [row("leaf01", "sonic", "Ethernet60", "port_alias", text="etp16"),
            row("leaf01", "sonic", "Ethernet60", "lldp_neighbor", text="spine01.dc1|Ethernet1"),
            row("leaf02", "nxos", "Ethernet1/49", "oper_state", text="Up"),
            row("leaf02", "nxos", "Eth1/49", "lldp_neighbor", text="spine01|Et2"),
            row("spine01", "eos", "Ethernet1", "oper_state", text="Up"),
            row("spine01", "eos", "Ethernet2", "oper_state", text="Up")]
    if "Ethernet1" not in spine_blind:
        out.append(row("spine01", "eos", "Ethernet1", "lldp_neighbor", text="leaf01|etp16"))
    if "Ethernet2" not in spine_blind:
        out.append(row("spine01", "eos", "Ethernet2", "lldp_neighbor", text="leaf02|Ethernet1/49"))
    return out


def verdicts(facts: list[dict]) -> pd.DataFrame:
    found = cabling_facts(analysis(facts))
    return found.loc[found["metric"] == "cabling_verdict"] if not found.empty else found


def detail(facts: list[dict], target: str, entity: str, name: str) -> str:
    found = cabling_facts(analysis(facts))
    mine = found.loc[(found["target"] == target) & (found["entity"] == entity) & (found["metric"] == name)]
    return str(mine["text"].iloc[0])


def test_host_lldp_naming_a_sonic_alias_reaches_the_port_by_its_name() -> None:
    links = observed.host_view(analysis(fabric()))
    assert {(link.host, link.nic, link.switch, link.switch_port) for link in links} == {
        ("gpu01", "mlx5_0", "leaf01", "Ethernet0"), ("gpu02", "mlx5_0", "leaf01", "Ethernet4")}


def test_switch_to_switch_cables_are_no_host_cables() -> None:
    a = analysis(fabric())
    assert {link.host for link in observed.links_from_analysis(a)} == set(HOSTS)
    assert {(c.switch, c.port, c.peer, c.peer_port) for c in observed.fabric_view(a)} == {
        ("leaf01", "Ethernet60", "spine01", "Ethernet1"), ("spine01", "Ethernet1", "leaf01", "Ethernet60"),
        ("leaf02", "Ethernet1/49", "spine01", "Ethernet2"), ("spine01", "Ethernet2", "leaf02", "Ethernet1/49")}


def test_a_healthy_leaf_spine_fabric_has_no_cabling_verdict() -> None:
    found = verdicts(fabric())
    assert found.empty, found[["target", "entity", "text"]].to_dict("records")


def test_a_spine_port_blind_to_its_leaf_is_the_one_named() -> None:
    facts = fabric(spine_blind={"Ethernet2"})
    found = verdicts(facts)
    assert [(t, e, v) for t, e, v in zip(found["target"], found["entity"], found["text"])] == [
        ("spine01", "Ethernet2", "one_sided")]
    assert detail(facts, "spine01", "Ethernet2", "cabling_far_end") == "leaf02 Ethernet1/49"
    seen = detail(facts, "spine01", "Ethernet2", "cabling_seen_back")
    assert seen == "spine01 Ethernet2 sees no neighbour, while leaf02 Ethernet1/49 sees it"


def test_a_spine_port_seeing_another_leaf_names_what_it_sees() -> None:
    facts = [f for f in fabric() if not (f["target"] == "spine01" and f["entity"] == "Ethernet2"
                                         and f["metric"] == "lldp_neighbor")]
    facts.append(row("spine01", "eos", "Ethernet2", "lldp_neighbor", text="leaf01|etp16"))
    found = verdicts(facts)
    # spine01 Ethernet2 does not see leaf02 back; leaf01 Ethernet60 does not see spine01 Ethernet2 back
    assert sorted(zip(found["target"], found["entity"])) == [("leaf01", "Ethernet60"), ("spine01", "Ethernet2")]
    assert "sees leaf01 Ethernet60" in detail(facts, "spine01", "Ethernet2", "cabling_seen_back")
    assert "sees spine01 Ethernet1" in detail(facts, "leaf01", "Ethernet60", "cabling_seen_back")


def test_a_host_blind_to_its_switch_port_names_the_host_nic_not_the_port_itself() -> None:
    facts = [f for f in fabric() if not (f["target"] == "gpu02" and f["metric"] == "lldp_neighbor")]
    facts.append(row("gpu02", "linux", "eth9", "lldp_neighbor", text="mgmt01|ge-0/0/1"))  # its LLDP runs elsewhere
    found = verdicts(facts)
    assert list(zip(found["target"], found["entity"], found["text"])) == [("leaf01", "Ethernet4", "one_sided")]
    assert detail(facts, "leaf01", "Ethernet4", "cabling_far_end") == "gpu02 mlx5_0"


def test_errors_on_a_sonic_port_pair_with_the_host_that_names_its_alias() -> None:
    facts = fabric()
    grown = {"gpu01": ("mlx5_0/1", "host"), "leaf01": ("Ethernet0", "switch")}
    for target, (entity, _kind) in grown.items():
        error = row(target, "linux" if target == "gpu01" else "sonic", entity, "rx_crc_errors_per_s", 2.0)
        facts.append({**error, "delta": 20.0, "window_s": 10.0})
    found = link_error_facts(analysis(facts))
    said = found.loc[found["metric"] == "link_error_verdict"]
    assert list(zip(said["target"], said["entity"], said["text"])) == [("gpu01", "mlx5_0/1", "both_ends")]


def test_errors_on_an_uplink_name_the_peer_switch_port() -> None:
    facts = fabric()
    error = row("spine01", "eos", "Ethernet1", "rx_crc_errors_per_s", 2.0)
    facts.append({**error, "delta": 20.0, "window_s": 10.0})
    found = link_error_facts(analysis(facts))
    far = found.loc[(found["metric"] == "link_far_end") & (found["target"] == "spine01")]
    assert list(far["text"]) == ["leaf01 Ethernet60"]


def test_a_topology_file_port_matches_under_any_spelling() -> None:
    from rdmatool.platforms.port_names import PortNames
    from rdmatool.topology import Link
    from rdmatool.topology.expected import ExpectedTopology, diff

    plan = ExpectedTopology(links=(Link("gpu01", "mlx5_0", "spine01", "Et1/1"), Link("gpu02", "mlx5_0", "leaf01", "etp2"),
                                   Link("gpu03", "mlx5_0", "leaf01", "etp3")))
    seen = [Link("gpu01", "mlx5_0", "spine01", "Ethernet1/1"), Link("gpu02", "mlx5_0", "leaf01", "Ethernet4"),
            Link("gpu03", "mlx5_0", "leaf01", "Ethernet4")]
    ports = PortNames.build([], [("leaf01", "Ethernet4", "etp2"), ("leaf01", "Ethernet8", "etp3")])
    found = diff(plan, seen, ["gpu01", "gpu02", "gpu03"], ports)
    assert [(d.kind, d.host, d.expected_port, d.observed_port) for d in found] == [
        ("wrong_port", "gpu03", "etp3", "Ethernet4")]


def test_a_switch_brought_in_keeps_its_cabled_ports_however_the_cabling_spells_them() -> None:
    from rdmatool.model import Target, TargetKind
    from rdmatool.topology import Link
    from rdmatool.topology.switches_for_hosts import add_cabled_switches

    host = Target(name="gpu01", address="127.0.1.1", kind=TargetKind.HOST)
    leaf = Target(name="leaf01", address="127.0.2.1", kind=TargetKind.SWITCH, ports=("Ethernet1/1", "Ethernet1/2"))
    chosen = add_cabled_switches([host], [host, leaf], [Link("gpu01", "mlx5_0", "leaf01", "Eth1/2")])
    assert [t.ports for t in chosen.targets if t.name == "leaf01"] == [("Ethernet1/2",)]


def test_an_infiniband_ca_whose_description_carries_its_guid_is_still_its_host_nic() -> None:
    facts = [row("gpu01", "linux", "MF0;ib-leaf01:MQM9790/U1 (0x0c42a10300a1b2c0)/7", "ib_link_neighbor",
                 text="gpu01 mlx5_0 (0xb83fd20300000001)|1", raw_key="Switch"),
             row("gpu01", "linux", "MF0;ib-leaf01:MQM9790/U1/8", "ib_link_neighbor", text="gpu02 mlx5_0|1",
                 raw_key="Switch"),
             row("gpu01", "linux", "MF0;ib-leaf01:MQM9790/U1/40", "ib_link_neighbor",
                 text="MF0;ib-spine01:MQM9790/U1|1", raw_key="Switch")]
    links = observed.subnet_view(analysis(facts))
    assert {(link.host, link.nic, link.switch, link.switch_port) for link in links} == {
        ("gpu01", "mlx5_0", "ib-leaf01", "7"), ("gpu02", "mlx5_0", "ib-leaf01", "8")}
