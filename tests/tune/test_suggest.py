"""Suggesters over a hand-built facts table (tests/pods/facts.py): proposed values and exact command strings.

Expected thresholds are hand-computed in the comments from tuning.md §2.3 / §3.1.
"""

from __future__ import annotations

import pytest

from rdmatool.model import Severity, Suggestion
from rdmatool.rules.playbook import Rule
from rdmatool.tune import SUGGESTERS
from tests.pods.facts import analysis, fabric, host, row

RULE = Rule(id="test_rule", kind="threshold", severity=Severity.WARNING, symptom="s", cause="c", check="k", fix="f")
NAMES = ("ecn_thresholds", "pfc_priority", "trust_dscp", "dscp_map", "dcqcn_np", "dcqcn_rp", "headroom",
         "cnp_priority", "roce_tos")


def ev(target, entity=None, priority=None) -> dict:
    return {"metric": "x", "target": target, "entity": entity, "priority": priority, "observed": None,
            "expected": None, "baseline": None, "window_s": None}


@pytest.fixture
def fab():
    rows, links = fabric()
    return analysis(rows, links)


def call(name, analysis_, target, entity=None, priority=None, profile=None) -> list[Suggestion]:
    if profile is None:
        return SUGGESTERS[name](RULE, ev(target, entity, priority), analysis_)
    return SUGGESTERS[name](RULE, ev(target, entity, priority), analysis_, profile)


def only(suggestions: list[Suggestion]) -> Suggestion:
    assert len(suggestions) == 1, suggestions
    return suggestions[0]


def test_exported_names():
    assert set(NAMES) <= set(SUGGESTERS)
    assert all(callable(fn) for fn in SUGGESTERS.values())


# --- ecn_thresholds ----------------------------------------------------------------------------------------------


def test_ecn_sonic_profile_from_host_rate_with_the_pfc_trigger_unknown(fab):
    # rate 100G (gpu01 behind leaf1), RTT 10 µs, no XOFF threshold known: BDP 125000; Kmin = max(17857.1, 10000) =
    # 17857; Kmax = max(2·BDP, Kmin + 2·MTU) = 250000. Not the mlx5 headroom formula (56,680 B at 100G, 7 m): that is
    # the buffer a NIC reserves above its trigger, and taken as T_xoff it put Kmax (45,344 B) below one BDP.
    s = only(call("ecn_thresholds", fab, "leaf1", "ROCE_LOSSLESS"))
    assert s.current == "Kmin 1048576 B, Kmax 2097152 B, Pmax 5 %"
    assert s.proposed == "Kmin 17857 B, Kmax 250000 B, Pmax 20 %"
    assert s.commands == {"sonic": ["ecnconfig -p ROCE_LOSSLESS -gmin 17857 -gmax 250000 -gdrop 20",
                                    "ecnconfig -q 3 on"]}
    assert "rate 100 Gb/s" in s.rationale and "RTT 10 µs" in s.rationale and "T_xoff unknown" in s.rationale
    assert "BDP = 100e9·10e-6/8 = 125000 B" in s.rationale
    assert "Confirm that Kmax is below the XOFF threshold of the lossless priority group" in s.rationale
    assert "PFC fires before ECN marks" not in s.rationale  # not knowable without the trigger
    assert "formula (301" not in s.rationale  # no NIC headroom figure stands in for the trigger


def test_ecn_cumulus_global_400g_cable_from_switch(fab):
    # gpu02 400G, T_xoff unknown: BDP 500000; Kmin = max(71428.6, 10000) = 71429; Kmax = 2·BDP = 1000000
    s = only(call("ecn_thresholds", fab, "leaf2", "qos", 3))
    assert s.current == "Kmin 150000 B, Kmax 1500000 B, Pmax 100 %"
    assert s.proposed == "Kmin 71429 B, Kmax 1000000 B, Pmax 20 %"
    assert s.commands == {"cumulus": [
        "nv set qos congestion-control default-global traffic-class 3 min-threshold 71429 max-threshold 1000000 "
        "probability 20 ecn enable",
        "nv config apply"]}


def test_ecn_nxos_port_rate_from_switch(fab):
    # leaf4 Ethernet1/2 400G, T_xoff unknown: Kmin = max(71428.6, 10000) = 71429; Kmax = 2·BDP = 1000000
    s = only(call("ecn_thresholds", fab, "leaf4", "Ethernet1/2", 3))
    assert s.current is None
    assert s.proposed == "Kmin 71429 B, Kmax 1000000 B, Pmax 20 %"
    assert s.commands == {"nxos": [
        "configure terminal", "policy-map type queuing QOS_EGRESS_PORT", "class type queuing c-out-8q-q3",
        "random-detect minimum-threshold 71429 bytes maximum-threshold 1000000 bytes drop-probability 20 weight 0 ecn",
        "interface Ethernet1/2", "service-policy type queuing output QOS_EGRESS_PORT", "end"]}


def test_ecn_onyx_in_kb(fab):
    # gpu05 200G, T_xoff unknown: Kmin = 250000/7 = 35714; Kmax = 2·BDP = 500000;
    # Onyx KB: 35714 // 1024 = 34, 500000 // 1024 = 488
    s = only(call("ecn_thresholds", fab, "leaf5", "Eth1/1", 3))
    assert s.proposed == "Kmin 35714 B, Kmax 500000 B, Pmax 20 %"
    assert s.commands == {"onyx": ["configure terminal", "interface ethernet 1/1 traffic-class 3 congestion-control ecn "
                                   "minimum-absolute 34 maximum-absolute 488", "exit"]}


def test_ecn_from_host_finding_renders_the_cabled_eos_port(fab):
    s = only(call("ecn_thresholds", fab, "gpu03", "ens1f0np0"))
    assert s.setting == "ECN thresholds of TC 3 (leaf3 Ethernet1/1)"
    assert s.commands == {"eos": ["configure", "interface Ethernet1/1", "tx-queue 3",
                                  "random-detect ecn minimum-threshold 17857 bytes maximum-threshold 250000 bytes "
                                  "max-mark-probability 20", "end"]}


def test_ecn_profile_xoff_and_rtt(fab):
    # a site profile T_xoff of 46,080 B (a PG trigger set low): Kmin 17857, Kmax min(250000, 36864) = 36864
    s = only(call("ecn_thresholds", fab, "leaf1", "ROCE_LOSSLESS", profile={"xoff_bytes": 46080}))
    assert s.proposed == "Kmin 17857 B, Kmax 36864 B, Pmax 20 %"
    assert "site profile xoff_bytes" in s.rationale
    # RTT 5 µs: BDP 62500, Kmin 8928.6 → floor 10000; Kmax = min(125000, 36864) = 36864
    s = only(call("ecn_thresholds", fab, "leaf1", "ROCE_LOSSLESS", profile={"xoff_bytes": 46080, "rtt_us": 5}))
    assert s.proposed == "Kmin 10000 B, Kmax 36864 B, Pmax 20 %"


def test_ecn_dynamic_threshold_from_profile(fab):
    # B = 10 MB, α = 1, m = 32 → T_xoff = 303030.3; 100G: Kmin 17857, Kmax = min(250000, 242424) = 242424
    s = only(call("ecn_thresholds", fab, "leaf1", "ROCE_LOSSLESS",
                  profile={"shared_buffer_bytes": 10_000_000, "congested_pgs": 32}))
    assert s.proposed == "Kmin 17857 B, Kmax 242424 B, Pmax 20 %"
    assert "dynamic threshold" in s.rationale


def test_ecn_profile_via_analysis_attribute():
    rows, links = fabric()
    fab = analysis(rows, links, profile={"ecn_pmax_pct": 100, "sonic_wred_profile": "AZURE_LOSSLESS"})
    # a port, not a profile: the WRED profile the switch's own `show ecn` names, with its current thresholds
    s = only(call("ecn_thresholds", fab, "leaf1", "Ethernet0"))
    assert s.commands["sonic"][0] == "ecnconfig -p ROCE_LOSSLESS -gmin 17857 -gmax 250000 -gdrop 100"
    assert s.current == "Kmin 1048576 B, Kmax 2097152 B, Pmax 5 %"
    # a switch whose ECN output was not read: the site profile's profile name, and no current value
    bare = [r for r in rows if not (r["target"] == "leaf1" and r["metric"].startswith("ecn_"))]
    s = only(call("ecn_thresholds", analysis(bare, links, profile={"sonic_wred_profile": "AZURE_LOSSLESS"}), "leaf1",
                  "Ethernet0"))
    assert s.commands["sonic"][0] == "ecnconfig -p AZURE_LOSSLESS -gmin 17857 -gmax 250000 -gdrop 20"
    assert s.current is None


def test_ecn_no_rate_no_suggestion():
    fab = analysis([row("leaf9", "sonic", "ROCE_LOSSLESS", "ecn_min_threshold_bytes", 1000)])
    assert call("ecn_thresholds", fab, "leaf9", "ROCE_LOSSLESS") == []
    s = only(call("ecn_thresholds", fab, "leaf9", "ROCE_LOSSLESS", profile={"link_rate_gbps": 100}))
    assert s.proposed == "Kmin 17857 B, Kmax 250000 B, Pmax 20 %"


# --- pfc_priority ------------------------------------------------------------------------------------------------


def test_pfc_host_finding_renders_host_and_sonic_port(fab):
    s = only(call("pfc_priority", fab, "gpu01", "ens1f0np0"))
    assert s.current == "0,0,0,0,0,0,0,0"
    assert s.proposed == "0,0,0,1,0,0,0,0 (priority 3 only)"
    assert s.commands == {
        "host": ["mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0"],
        "sonic": ["config interface pfc priority Ethernet0 3 on", "config interface pfc priority Ethernet0 4 off"],
    }
    assert s.devices == {"sonic": "leaf1"}  # the switch those lines run on, by name


def test_pfc_switch_finding_renders_the_host_behind_it(fab):
    s = only(call("pfc_priority", fab, "leaf1", "Ethernet0", 4))
    assert s.current == "0,0,0,1,1,0,0,0"
    assert s.commands["host"] == ["mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0"]
    assert s.commands["sonic"][1] == "config interface pfc priority Ethernet0 4 off"


def test_pfc_rdma_port_entity_and_a_cumulus_peer_already_right(fab):
    # leaf2 already runs priority 3 alone (test_pfc_already_right_no_suggestion): only the host changes
    s = only(call("pfc_priority", fab, "gpu02", "mlx5_0/1"))
    assert s.current is None
    assert s.commands == {"host": ["mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0"]}
    assert s.devices == {}


def test_pfc_already_right_no_suggestion(fab):
    assert call("pfc_priority", fab, "leaf2", "qos") == []


def test_pfc_profile_priority():
    rows, links = fabric()
    s = only(call("pfc_priority", analysis(rows, links), "gpu01", "ens1f0np0", profile={"roce_priority": 4}))
    assert s.commands["host"] == ["mlnx_qos -i ens1f0np0 --pfc 0,0,0,0,1,0,0,0"]
    assert s.commands["sonic"] == ["config interface pfc priority Ethernet0 4 on",
                                   "config interface pfc priority Ethernet0 3 off"]


# --- trust / dscp map ----------------------------------------------------------------------------------------------


def test_trust_dscp_sonic(fab):
    s = only(call("trust_dscp", fab, "gpu01", "ens1f0np0"))
    assert (s.current, s.proposed) == ("pcp", "dscp")
    assert s.commands == {"host": ["mlnx_qos -i ens1f0np0 --trust dscp"],
                          "sonic": ["sonic-db-cli CONFIG_DB HSET 'PORT_QOS_MAP|Ethernet0' dscp_to_tc_map AZURE"]}


def test_trust_dscp_eos_without_entity(fab):
    s = only(call("trust_dscp", fab, "gpu03"))
    assert s.commands == {"host": ["mlnx_qos -i ens1f0np0 --trust dscp"],
                          "eos": ["configure", "interface Ethernet1/1", "qos trust dscp", "end"]}


def test_trust_cumulus_pcp_dscp_is_fine(fab):
    assert call("trust_dscp", fab, "leaf2", "qos") == []


def test_dscp_map_only_the_wrong_mapping(fab):
    s = only(call("dscp_map", fab, "gpu01", "ens1f0np0"))  # 48 → 6 is already right
    assert (s.current, s.proposed) == ("DSCP 26 → 0", "DSCP 26 → 3")
    assert s.commands == {"host": ["mlnx_qos -i ens1f0np0 --dscp2prio set,26,3"],
                          "sonic": ["sonic-db-cli CONFIG_DB HSET 'DSCP_TO_TC_MAP|AZURE' 26 3"]}


def test_dscp_map_nxos_both_unknown(fab):
    roce, cnp = call("dscp_map", fab, "gpu04", "ens1f0np0")
    assert roce.current is None and roce.proposed == "DSCP 26 → 3"
    assert roce.commands["nxos"] == [
        "configure terminal", "class-map type qos match-all dscp26-prio3", "match dscp 26",
        "policy-map type qos QOS_CLASSIFICATION", "class dscp26-prio3", "set qos-group 3",
        "interface Ethernet1/2", "service-policy type qos input QOS_CLASSIFICATION", "end"]
    assert cnp.commands["host"] == ["mlnx_qos -i ens1f0np0 --dscp2prio set,48,6"]


# --- DCQCN, CNP, TOS ---------------------------------------------------------------------------------------------


def test_dcqcn_np_host_and_from_switch_port(fab):
    s = only(call("dcqcn_np", fab, "gpu01", "ens1f0np0"))
    assert (s.current, s.proposed) == ("0", "1")
    assert s.commands == {"host": ["echo 1 > /sys/class/net/ens1f0np0/ecn/roce_np/enable/3"]}
    from_switch = only(call("dcqcn_np", fab, "leaf1", "Ethernet0", 3))
    assert from_switch.commands == s.commands


def test_dcqcn_rp_already_on_and_unknown(fab):
    assert call("dcqcn_rp", fab, "gpu01", "ens1f0np0") == []
    s = only(call("dcqcn_rp", fab, "gpu02", "ens1f0np0"))
    assert s.current is None
    assert s.commands == {"host": ["echo 1 > /sys/class/net/ens1f0np0/ecn/roce_rp/enable/3"]}


def test_cnp_priority(fab):
    s = only(call("cnp_priority", fab, "gpu01", "ens1f0np0"))
    assert (s.current, s.proposed) == ("DSCP 48 / 802.1p 3", "DSCP 48 / 802.1p 6")
    assert s.commands == {
        "host": ["echo 48 > /sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp",
                 "echo 6 > /sys/class/net/ens1f0np0/ecn/roce_np/cnp_802p_prio"],
        "sonic": ["sonic-db-cli CONFIG_DB HSET 'DSCP_TO_TC_MAP|AZURE' 48 6"],
    }


def test_cnp_priority_cumulus_single_apply(fab):
    s = only(call("cnp_priority", fab, "gpu02", "ens1f0np0"))
    assert s.commands["cumulus"] == ["nv set qos mapping default-global dscp 48 switch-priority 6",
                                     "nv set qos egress-scheduler default-global traffic-class 6 mode strict",
                                     "nv config apply"]


def test_roce_tos(fab):
    for entity in ("mlx5_0/1", "ens1f0np0"):
        s = only(call("roce_tos", fab, "gpu01", entity))
        assert (s.current, s.proposed) == ("0", "106")
        assert s.commands == {"host": ["cma_roce_tos -d mlx5_0 -t 106",
                                       "echo 106 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class"]}
        assert "26×4 + 2" in s.rationale and "NCCL_IB_TC=106" in s.rationale


# --- headroom ------------------------------------------------------------------------------------------------------


def test_headroom_profile_cable_100m(fab):
    # §3.1: 100G, 100 m, MTU 9216 → SONiC headroom 74 KiB = 75776 B; mlx5 xoff 517·100 + 25067.52 = 76767.52
    s = only(call("headroom", fab, "gpu01", "ens1f0np0", profile={"cable_length_m": 100}))
    assert s.current == "7 m"
    assert s.proposed == "100 m (headroom 75776 B per lossless PG, NIC xoff 76768 B)"
    assert s.commands == {"host": ["mlnx_qos -i ens1f0np0 --cable_len 100"],
                          "sonic": ["config interface cable-length Ethernet0 100m"]}


def test_headroom_longest_configured_end(fab):
    # gpu02 (no cable fact) behind Cumulus at 10 m: 400G 10 m → cable 5050.5 B, xoff = 9216 + (9216 + 5050.5 +
    # 819.2 + 57920) = 82221.7 → 81·1024 = 82944; size 82944 + 18432 = 101376
    s = only(call("headroom", fab, "gpu02", "ens1f0np0"))
    assert s.current is None
    assert s.proposed.startswith("10 m (headroom 101376 B per lossless PG")
    assert s.commands == {"host": ["mlnx_qos -i ens1f0np0 --cable_len 10"],
                          "cumulus": ["nv set qos pfc default-global cable-length 10", "nv config apply"]}


# --- robustness --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_missing_facts_never_raise(name):
    empty = analysis([])
    assert SUGGESTERS[name](RULE, ev("gpu01", "ens1f0np0"), empty) == []
    assert SUGGESTERS[name](RULE, {}, empty) == []
    assert SUGGESTERS[name](RULE, ev("fabric", "fabric"), analysis([row("gpu01", "linux", "x", "load1", 1)])) == []
    assert SUGGESTERS[name](RULE, ev("gpu01"), object()) == []


@pytest.mark.parametrize("name", NAMES)
def test_bare_host_never_raises(name):
    # a host known only by its GID table: suggestions with current None (or none at all), never an exception
    for s in SUGGESTERS[name](RULE, ev("gpu09", "mlx5_0/1"), analysis(host("gpu09"))):
        assert s.current is None
        assert s.commands


def test_hostile_lldp_port_is_not_rendered():
    rows, _ = fabric()
    fab = analysis(rows, [("gpu01", "ens1f0np0", "leaf1", "Ethernet0;reboot")])
    s = only(call("pfc_priority", fab, "gpu01", "ens1f0np0"))
    assert s.commands == {"host": ["mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0"]}
    assert "sonic commands not rendered" in s.rationale


def test_hostile_netdev_is_not_rendered():
    rows = [row("gpu01", "linux", "eth0 $(reboot)", "trust_mode", text="pcp")]
    s = only(call("trust_dscp", analysis(rows), "gpu01", "eth0 $(reboot)"))
    assert s.commands == {}
    assert "host commands not rendered" in s.rationale
