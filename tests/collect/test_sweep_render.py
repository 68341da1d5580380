"""The simulated subnet's sweep outputs (tests/fabric/subnet.py: fat_tree, sweep_texts) parse with the real parsers,
and each fault shows where a rule would look for it: the other half of the sweep (rules, benchmarks) builds on them."""

from __future__ import annotations

from rdmatool import parsers
from tests.fabric import subnet

FAULTS = [{"kind": "ib_port_errors", "target": "ib-leaf01", "port": 3},
          {"kind": "ib_link_degraded", "target": "ib-leaf02", "port": 4, "value": "1X"},
          {"kind": "ib_uplink_congested", "target": "ib-leaf01", "port": 4},
          {"kind": "ib_vl15_dropped", "target": "ib-spine01"},
          {"kind": "ib_sm", "target": "", "value": "two"},
          {"kind": "ib_cable_gone", "target": "ib-leaf02", "port": 1}]
LEAF1, LEAF2 = "MF0;ib-leaf01:MQM9790/U1", "MF0;ib-leaf02:MQM9790/U1"


def _samples(texts: dict[str, str]) -> dict[str, dict[tuple[str, str], object]]:
    out = {}
    for tool, text in texts.items():
        samples = parsers.parse(tool, text)
        assert not [s for s in samples if s.metric in ("tool_error", "parse_skipped_lines")], tool
        out[tool] = {(s.entity, s.metric): s.value if s.text is None else s.text for s in samples}
    return out


def test_a_healthy_fat_tree_parses_whole_with_no_error_counter() -> None:
    texts = subnet.sweep_texts(subnet.fat_tree(2, 4, 2))
    assert set(texts) == set(subnet.SWEEP_TOOLS)
    seen = _samples(texts)
    links = seen["ibnetdiscover"]
    assert links[(f"{LEAF1}/3", "ib_link_neighbor")] == "MF0;ib-spine01:MQM9790/U1|1"
    assert links[("MF0;ib-spine02:MQM9790/U1/4", "ib_link_rate_gbps")] == 400.0
    assert links[("gpu0008 mlx5_0/1", "ib_link_neighbor")] == "MF0;ib-leaf04:MQM9790/U1|2"
    assert seen["ibqueryerrors"][("host", "ib_bad_ports")] == 0
    assert seen["ibqueryerrors"][("host", "ib_nodes_checked")] == 6 + 8
    assert seen["sminfo"][("lid1", "sm_state")] == "master"


def test_each_fault_is_in_the_tool_that_shows_it_and_counters_grow_with_time() -> None:
    tree = subnet.fat_tree(2, 2, 2, faults=FAULTS)
    first, later = _samples(subnet.sweep_texts(tree, 0.0, 0)), _samples(subnet.sweep_texts(tree, 10.0, 1))
    errors, errors_later = first["ibqueryerrors"], later["ibqueryerrors"]
    assert errors[(f"{LEAF1}/3", "symbol_errors")] == 1200 and errors_later[(f"{LEAF1}/3", "symbol_errors")] == 1450
    assert errors_later[(f"{LEAF1}/3", "link_downed")] > errors[(f"{LEAF1}/3", "link_downed")]
    assert errors_later[(f"{LEAF1}/3", "link_error_recovery")] > errors[(f"{LEAF1}/3", "link_error_recovery")]
    assert errors_later[(f"{LEAF1}/4", "port_xmit_wait")] > errors[(f"{LEAF1}/4", "port_xmit_wait")] > 0
    assert errors[(f"{LEAF1}/4", "port_xmit_discards")] == 100
    assert errors[("MF0;ib-spine01:MQM9790/U1/0", "vl15_dropped")] == 12
    assert first["ibnetdiscover"][(f"{LEAF2}/4", "ib_link_width")] == "1X"
    assert first["ibnetdiscover"][("MF0;ib-spine02:MQM9790/U1/2", "ib_link_width")] == "1X"
    assert first["iblinkinfo"][(f"{LEAF2}/4", "ib_link_rate_gbps")] == 100.0
    masters = [e for (e, m), v in first["sminfo"].items() if m == "sm_state" and v == "master"]
    assert len(masters) == 2
    # the cable of ib-leaf02 port 1 (gpu0003) is there in the first sweep and gone from the second
    assert (f"{LEAF2}/1", "ib_link_neighbor") in first["ibnetdiscover"]
    assert (f"{LEAF2}/1", "ib_link_neighbor") not in later["ibnetdiscover"]
    assert ("gpu0003 mlx5_0/1", "ib_port_guid") not in later["ibnetdiscover"]


def test_no_master_and_a_lower_speed_are_faults_too() -> None:
    tree = subnet.fat_tree(1, 2, 1, faults=[{"kind": "ib_sm", "target": "", "value": "none"},
                                            {"kind": "ib_link_degraded", "target": "ib-leaf01", "port": 2,
                                             "value": 200}])
    seen = _samples(subnet.sweep_texts(tree, 30.0))
    assert seen["sminfo"][("lid1", "sm_state")] == "standby"
    assert seen["ibnetdiscover"][(f"{LEAF1}/2", "ib_link_speed")] == "HDR"
    assert seen["iblinkinfo"][("MF0;ib-spine01:MQM9790/U1/1", "ib_link_rate_gbps")] == 200.0
