"""ECN suggestions per switch configuration object, over hand-built facts (tests/pods/facts.py): the speed of the
port actually cabled, the current thresholds from the switch's own output, one value set per shared object, the
same suggestion whichever finding asks, and the open inputs (INPUT_HOOKS)."""

from __future__ import annotations

import dataclasses

import pytest

from rdmatool.model import Severity
from rdmatool.rules.playbook import Rule
from rdmatool.tune import SUGGESTERS
from rdmatool.tune.suggest import ecn
from tests.pods.facts import analysis, row

RULE = Rule(id="test_rule", kind="threshold", severity=Severity.WARNING, symptom="s", cause="c", check="k", fix="f")


def ev(target, entity=None, priority=None) -> dict:
    return {"metric": "x", "target": target, "entity": entity, "priority": priority, "observed": None,
            "expected": None, "baseline": None, "window_s": None}


def suggest(fab, target, entity=None, priority=None):
    return SUGGESTERS["ecn_thresholds"](RULE, ev(target, entity, priority), fab)


def two_nic_host(name: str, roce_rate: int) -> list[dict]:
    """A GPU node with a 400G InfiniBand NIC and one RoCE NIC of `roce_rate`, and no GID table naming the netdev."""
    return [row(name, "linux", "mlx5_0/1", "link_rate_gbps", 400), row(name, "linux", "mlx5_0/1", "link_layer",
                                                                        text="InfiniBand"),
            row(name, "linux", "mlx5_1/1", "link_rate_gbps", roce_rate),
            row(name, "linux", "mlx5_1/1", "link_layer", text="Ethernet")]


def test_a_100g_port_cabled_to_a_host_with_a_400g_nic_elsewhere_uses_100g() -> None:
    rows = [*two_nic_host("gpu01", 100), row("leaf3", "eos", "Ethernet1/1", "ecn_min_threshold_bytes", 153_600, priority=3)]
    fab = analysis(rows, [("gpu01", "ens1f0np0", "leaf3", "Ethernet1/1")])
    (s,) = suggest(fab, "leaf3", "Ethernet1/1", 3)
    # 100G, 10 µs: BDP 125000 → Kmin 17857 (at 400G it would be 71429)
    assert s.proposed.startswith("Kmin 17857 B, ")
    assert "rate 100 Gb/s (the cabled gpu01 ens1f0np0 (mlx5_1/1) at 100 Gb/s)" in s.rationale
    assert "400" not in s.rationale.split("T_xoff")[0]


def test_the_switch_ports_own_speed_wins() -> None:
    rows = [*two_nic_host("gpu01", 400), row("leaf4", "nxos", "Ethernet1/2", "link_rate_gbps", 100)]
    fab = analysis(rows, [("gpu01", "ens1f0np0", "leaf4", "Ethernet1/2")])
    (s,) = suggest(fab, "leaf4", "Ethernet1/2", 3)
    assert "rate 100 Gb/s (link_rate_gbps of leaf4 Ethernet1/2)" in s.rationale


def test_a_shared_wred_profile_takes_the_values_of_its_slowest_port() -> None:
    rows = [*two_nic_host("gpu01", 100), *two_nic_host("gpu02", 400)]
    rows += [row("leaf1", "sonic", "AZURE_LOSSLESS", m, v, raw_key=m) for m, v in (
        ("ecn_min_threshold_bytes", 1_048_576), ("ecn_max_threshold_bytes", 2_097_152))]
    fab = analysis(rows, [("gpu01", "ens1f0np0", "leaf1", "Ethernet0"), ("gpu02", "ens1f0np0", "leaf1", "Ethernet4")])
    for entity in ("Ethernet0", "Ethernet4", "AZURE_LOSSLESS", None):  # any finding on this switch: one object
        (s,) = suggest(fab, "leaf1", entity)
        assert s.setting == "ECN thresholds of TC 3 (leaf1 WRED profile AZURE_LOSSLESS)"
        assert s.target == "leaf1"
        assert s.proposed.startswith("Kmin 17857 B, ")  # the 100G port's values: ECN before PFC on both
        assert "serves 2 ports (Ethernet0 100 Gb/s, Ethernet4 400 Gb/s)" in s.rationale
        assert s.current == "Kmin 1048576 B, Kmax 2097152 B (Pmax not in the switch's output)"  # never "?"
        assert s.commands["sonic"][0].startswith("ecnconfig -p AZURE_LOSSLESS -gmin 17857 ")


def test_host_and_switch_findings_ask_for_the_same_cumulus_suggestion() -> None:
    rows = [*two_nic_host("gpu01", 200), *two_nic_host("gpu02", 100)]
    rows += [row("leaf2", "cumulus", "qos", "ecn_min_threshold_bytes", 150_000, priority=3),
             row("leaf2", "cumulus", "qos", "ecn_max_threshold_bytes", 1_500_000, priority=3),
             row("leaf2", "cumulus", "qos", "ecn_max_probability_pct", 100, priority=3)]
    fab = analysis(rows, [("gpu01", "ens1f0np0", "leaf2", "swp1"), ("gpu02", "ens1f0np0", "leaf2", "swp2")])
    asked = [suggest(fab, "leaf2", "swp1", 3), suggest(fab, "leaf2", "qos", 0), suggest(fab, "leaf2"),
             suggest(fab, "gpu01", "ens1f0np0", 3)]
    assert all(len(a) == 1 for a in asked)
    assert all(a[0] == asked[0][0] for a in asked)  # equal values: a report prints one block
    s = asked[0][0]
    assert s.target == "leaf2" and s.current == "Kmin 150000 B, Kmax 1500000 B, Pmax 100 %"
    assert [line for line in s.commands["cumulus"] if "congestion-control" in line] == [
        "nv set qos congestion-control default-global traffic-class 3 min-threshold 17857 max-threshold 250000 "
        "probability 20 ecn enable"]
    assert "syntax not verified" not in s.rationale  # Cumulus syntax is verified (docs/tuning.md §9)


def test_nxos_policy_is_one_block_bound_to_each_port() -> None:
    rows = [*two_nic_host("gpu01", 100), *two_nic_host("gpu02", 100),
            row("leaf4", "nxos", "Ethernet1/1", "port_state", text="up")]
    fab = analysis(rows, [("gpu01", "ens1f0np0", "leaf4", "Ethernet1/1"), ("gpu02", "ens1f0np0", "leaf4",
                                                                            "Ethernet1/2")])
    (s,) = suggest(fab, "leaf4", "Ethernet1/2", 3)
    lines = s.commands["nxos"]
    assert lines.count("policy-map type queuing QOS_EGRESS_PORT") == 1
    assert [line for line in lines if line.startswith("interface ")] == ["interface Ethernet1/1",
                                                                       "interface Ethernet1/2"]
    assert "nxos commands: syntax not verified against the vendor's documentation" in s.rationale


def test_input_hooks_adjust_a_ports_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [*two_nic_host("gpu01", 100), row("leaf3", "eos", "Ethernet1/1", "ecn_enabled", 1, priority=3)]
    fab = analysis(rows, [("gpu01", "ens1f0np0", "leaf3", "Ethernet1/1")])
    (before,) = suggest(fab, "leaf3", "Ethernet1/1", 3)

    def incast(ctx, obj, inputs):  # e.g. an incast stage's figures: a PFC trigger reached sooner
        return dataclasses.replace(inputs, xoff_bytes=40_000, xoff_source="set by a test hook",
                                   notes=[*inputs.notes, "incast degree 8 (test)"])

    monkeypatch.setattr(ecn, "INPUT_HOOKS", [incast])
    (after,) = suggest(fab, "leaf3", "Ethernet1/1", 3)
    assert "set by a test hook" in after.rationale and "incast degree 8 (test)" in after.rationale
    assert after.proposed != before.proposed
