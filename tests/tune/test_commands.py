"""Exact rendered command strings per platform, and validation of every value placed in a command."""

from __future__ import annotations

import pytest

from rdmatool.tune import commands as c


def test_host_commands():
    assert c.host_trust_dscp("ens1f0np0") == ["mlnx_qos -i ens1f0np0 --trust dscp"]
    assert c.host_pfc("ens1f0np0", [3]) == ["mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0"]
    assert c.host_pfc("eth2", [3, 4]) == ["mlnx_qos -i eth2 --pfc 0,0,0,1,1,0,0,0"]
    assert c.host_dscp2prio("ens1f0np0", 26, 3) == ["mlnx_qos -i ens1f0np0 --dscp2prio set,26,3"]
    assert c.host_cable_len("ens1f0np0", 7) == ["mlnx_qos -i ens1f0np0 --cable_len 7"]
    assert c.host_dcqcn("ens1f0np0", "np", 3) == ["echo 1 > /sys/class/net/ens1f0np0/ecn/roce_np/enable/3"]
    assert c.host_dcqcn("ens1f0np0", "rp", 3) == ["echo 1 > /sys/class/net/ens1f0np0/ecn/roce_rp/enable/3"]
    assert c.host_dcqcn("ens1f0np0", "rp", 0, enable=False) == [
        "echo 0 > /sys/class/net/ens1f0np0/ecn/roce_rp/enable/0"]
    assert c.host_cnp("ens1f0np0", 48, 6) == ["echo 48 > /sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp",
                                              "echo 6 > /sys/class/net/ens1f0np0/ecn/roce_np/cnp_802p_prio"]
    assert c.host_roce_tos("mlx5_0", 106) == ["cma_roce_tos -d mlx5_0 -t 106"]
    assert c.host_roce_tos("mlx5_1", 106, 1) == ["cma_roce_tos -d mlx5_1 -t 106",
                                                 "echo 106 > /sys/class/infiniband/mlx5_1/tc/1/traffic_class"]


def test_host_vlan_netdev_is_quoted_only_when_needed():
    # '@' and '.' are legal in interface names and safe for the shell; shlex leaves them unquoted
    assert c.host_trust_dscp("ens1f0.100") == ["mlnx_qos -i ens1f0.100 --trust dscp"]


@pytest.mark.parametrize("bad", ["", "eth0;reboot", "eth0 x", "a/b", "$(id)", "averyveryverylongname0", None, 3,
                                 "-i", "eth0\n", "eth0\nreboot", "eth٣"])
def test_bad_netdev_rejected(bad):
    with pytest.raises(ValueError):
        c.host_trust_dscp(bad)


@pytest.mark.parametrize(("fn", "args"), [
    (c.host_pfc, ("eth0", [8])), (c.host_dscp2prio, ("eth0", 64, 3)), (c.host_dscp2prio, ("eth0", 26, -1)),
    (c.host_cable_len, ("eth0", 0)), (c.host_cable_len, ("eth0", 7.5)), (c.host_cable_len, ("eth0", True)),
    (c.host_cable_len, ("eth0", "7")), (c.host_dcqcn, ("eth0", "xx", 3)), (c.host_roce_tos, ("mlx5_0;id", 106)),
    (c.host_roce_tos, ("mlx5_0", 256)),
])
def test_bad_numbers_rejected(fn, args):
    with pytest.raises(ValueError):
        fn(*args)


def test_integral_float_accepted():
    assert c.host_cable_len("eth0", 7.0) == ["mlnx_qos -i eth0 --cable_len 7"]


def test_sonic():
    assert c.switch_pfc("sonic", "Ethernet0", [3], [4]) == [
        "config interface pfc priority Ethernet0 3 on", "config interface pfc priority Ethernet0 4 off"]
    assert c.switch_ecn("sonic", "AZURE_LOSSLESS", 3, 17857, 36864, 20) == [
        "ecnconfig -p AZURE_LOSSLESS -gmin 17857 -gmax 36864 -gdrop 20", "ecnconfig -q 3 on"]
    assert c.switch_dscp_map("sonic", "Ethernet0", 26, 3) == [
        "sonic-db-cli CONFIG_DB HSET 'DSCP_TO_TC_MAP|AZURE' 26 3"]
    assert c.switch_trust_dscp("sonic", "Ethernet8") == [
        "sonic-db-cli CONFIG_DB HSET 'PORT_QOS_MAP|Ethernet8' dscp_to_tc_map AZURE"]
    assert c.switch_cable_length("sonic", "Ethernet0", 5) == ["config interface cable-length Ethernet0 5m"]
    assert c.switch_strict_priority("sonic", "Ethernet0", 6) == []


def test_cumulus():
    assert c.switch_ecn("cumulus", None, 3, 150000, 1500000, 100) == [
        "nv set qos congestion-control default-global traffic-class 3 min-threshold 150000 max-threshold 1500000 "
        "probability 100 ecn enable", "nv config apply"]
    assert c.switch_pfc("cumulus", "swp1", [3]) == [
        "nv set qos pfc default-global switch-priority 3", "nv set qos pfc default-global rx enable",
        "nv set qos pfc default-global tx enable", "nv config apply"]
    assert c.switch_trust_dscp("cumulus", None) == ["nv set qos mapping default-global trust l3", "nv config apply"]
    assert c.switch_dscp_map("cumulus", None, 26, 3) == [
        "nv set qos mapping default-global dscp 26 switch-priority 3", "nv config apply"]
    assert c.switch_cable_length("cumulus", None, 50) == ["nv set qos pfc default-global cable-length 50",
                                                          "nv config apply"]


def test_onyx():
    assert c.switch_ecn("onyx", "Eth1/1", 3, 153600, 1536000, 20) == [
        "configure terminal",
        "interface ethernet 1/1 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500",
        "exit"]
    assert c.switch_pfc("onyx", "Eth1/3/1", [3], [4]) == [
        "configure terminal", "dcb priority-flow-control enable force", "dcb priority-flow-control priority 3 enable",
        "no dcb priority-flow-control priority 4 enable",
        "interface ethernet 1/3/1 dcb priority-flow-control mode on force", "exit"]
    assert c.switch_trust_dscp("onyx", "1/2") == ["configure terminal", "interface ethernet 1/2 qos trust L3", "exit"]
    assert c.switch_dscp_map("onyx", "Eth1/1", 26, 3) == []


def test_eos():
    assert c.switch_ecn("eos", "Ethernet1/1", 3, 17857, 36864, 20) == [
        "configure", "interface Ethernet1/1", "tx-queue 3",
        "random-detect ecn minimum-threshold 17857 bytes maximum-threshold 36864 bytes max-mark-probability 20",
        "end"]
    assert c.switch_pfc("eos", "Ethernet5", [3], [4]) == [
        "configure", "interface Ethernet5", "priority-flow-control on", "priority-flow-control priority 3 no-drop",
        "no priority-flow-control priority 4 no-drop", "end"]
    assert c.switch_dscp_map("eos", None, 26, 3) == ["configure", "qos map dscp 26 to traffic-class 3", "end"]


def test_nxos():
    assert c.switch_pfc("nxos", "Ethernet1/1", [3]) == [
        "configure terminal", "policy-map type network-qos QOS_NETWORK", "class type network-qos c-8q-nq3",
        "pause pfc-cos 3", "mtu 9216", "system qos", "service-policy type network-qos QOS_NETWORK",
        "interface Ethernet1/1", "priority-flow-control mode on", "end"]
    assert c.switch_strict_priority("nxos", None, 6, {"nxos_queuing_policy": "custom-8q-out-policy"}) == [
        "configure terminal", "policy-map type queuing custom-8q-out-policy", "class type queuing c-out-8q-q6",
        "priority level 1", "end"]


@pytest.mark.parametrize(("platform", "port"), [
    ("sonic", "Ethernet0 on; reboot"), ("sonic", "swp1"), ("cumulus", "Ethernet0"), ("onyx", "1/1 x"),
    ("eos", "Ethernet1/1\nreload"), ("nxos", "Ethernet1"), ("nxos", None),
    # a trailing newline alone is a second (empty) line in a pasted block: refused on every platform
    ("sonic", "Ethernet0\n"), ("cumulus", "swp2\n"), ("onyx", "1/1\n"), ("eos", "Ethernet1\n"),
    ("nxos", "Ethernet1/1\n"),
])
def test_bad_ports_rejected(platform, port):
    with pytest.raises(ValueError):
        c.switch_port(platform, port)


def test_ecn_validation():
    with pytest.raises(ValueError):
        c.switch_ecn("sonic", "AZURE_LOSSLESS", 3, 2000, 1000, 20)  # Kmin ≥ Kmax
    with pytest.raises(ValueError):
        c.switch_ecn("sonic", "AZURE LOSSLESS; rm", 3, 1000, 2000, 20)
    with pytest.raises(ValueError):
        c.switch_ecn("sonic", "AZURE_LOSSLESS", 3, 1000, 2000, 101)
    with pytest.raises(ValueError):
        c.switch_ecn("junos", "x", 3, 1000, 2000, 20)
