"""Cabling from a bundle's facts: both LLDP ends and the InfiniBand subnet, one Link per cable."""

from __future__ import annotations

from rdmatool.topology import Link, placement
from rdmatool.topology.observed import host_view, links_from_analysis, subnet_view, switch_view
from tests.pods.facts import analysis, row


def facts():
    return [
        row("gpu01", "linux", "mlx5_1/1", "netdev", text="ens1f0np0"),
        row("gpu01", "linux", "ens1f0np0", "lldp_neighbor", text="leaf01.dc1|Ethernet0"),
        row("gpu01", "linux", "eno1", "lldp_neighbor", text="mgmt01|swp9"),  # no RDMA device: stays the netdev
        row("leaf01", "sonic", "Ethernet0", "lldp_neighbor", text="gpu01|0c:42:a1:00:00:01"),
        row("leaf01", "sonic", "Ethernet4", "lldp_neighbor", text="gpu02.dc1|ens1f0np0"),  # only the switch saw it
        row("gpu02", "linux", "mlx5_1/1", "netdev", text="ens1f0np0"),
        row("gpu03", "linux", "x", "ib_link_neighbor", text='gpu09 mlx5_0|1', raw_key="CA"),
        row("gpu03", "linux", "MF0;ib-leaf1:MQM9700/U1/7", "ib_link_neighbor", text="gpu09 mlx5_0|1",
            raw_key="Switch"),
        row("gpu03", "linux", "MF0;ib-leaf1:MQM9700/U1/40", "ib_link_neighbor", text="MF0;ib-spine1:MQM9700/U1|3",
            raw_key="Switch"),
    ]


def test_each_side_names_the_cable_its_way() -> None:
    a = analysis(facts())
    assert Link("gpu01", "mlx5_1", "leaf01", "Ethernet0", "lldp") in host_view(a)
    assert Link("gpu01", "eno1", "mgmt01", "swp9", "lldp") in host_view(a)
    assert switch_view(a) == [Link("gpu01", "0c:42:a1:00:00:01", "leaf01", "Ethernet0", "lldp"),
                              Link("gpu02", "mlx5_1", "leaf01", "Ethernet4", "lldp")]
    assert subnet_view(a) == [Link("gpu09", "mlx5_0", "ib-leaf1", "7", "iblinkinfo")]  # the uplink is no host


def test_links_from_analysis_gives_each_cable_once() -> None:
    links = links_from_analysis(analysis(facts()))
    assert [(lk.host, lk.nic, lk.switch, lk.switch_port) for lk in links] == [
        ("gpu01", "mlx5_1", "leaf01", "Ethernet0"), ("gpu01", "eno1", "mgmt01", "swp9"),
        ("gpu02", "mlx5_1", "leaf01", "Ethernet4"), ("gpu09", "mlx5_0", "ib-leaf1", "7")]
    assert placement(links)["gpu01"] == {"mlx5_1": "leaf01", "eno1": "mgmt01"}


def test_no_lldp_no_links() -> None:
    assert links_from_analysis(analysis([row("gpu01", "linux", "mlx5_1/1", "netdev", text="ens1f0np0")])) == []
