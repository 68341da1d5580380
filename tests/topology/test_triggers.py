"""One trigger per topology rule (playbooks/15-topology.yaml), on the hand-made rail pod of tests/topology/pod.py,
and the healthy pod silent. Each case moves one cable (or hides one end's LLDP) and the rule must fire exactly on
that NIC or port, naming what was seen and what was expected."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.model import Severity
from rdmatool.rules import engine, playbook
from rdmatool.topology.expected import load as load_topology
from tests.pods.facts import row
from tests.topology import pod

RULES = {r.id: r for r in playbook.load_dir(default_playbooks())}
TOPOLOGY_RULES = sorted(r for r in RULES if RULES[r].params.get("verdict") in ("cabling_verdict", "path_class_verdict"))
BAD = (Severity.WARNING, Severity.ERROR, Severity.CRITICAL)
PLAN = """\
rails:
  - {nic: mlx5_0, switch: leaf-r0}
  - {nic: mlx5_1, switch: leaf-r1}
links:
  - {host: gpu01, nic: mlx5_0, switch: leaf-r0, port: Ethernet0}
"""


@dataclass(frozen=True)
class Trigger:
    rule: str
    build: Callable[[Path], object]  # tmp_path → the analysis with its cabling facts
    hits: tuple[tuple[str, str], ...]  # (target, entity) of every finding
    names: tuple[str, ...] = ()  # words the first finding's symptom must hold


def cabled(cables=None, topology: str | None = None, tmp: Path | None = None, **kwargs):
    plan = None
    if topology is not None:
        (tmp / "topology.yaml").write_text(topology)
        plan = load_topology(tmp / "topology.yaml")
    return pod.with_cabling(pod.analysis(pod.rows(cables, **kwargs)), plan)


def swapped(host: str = "gpu02") -> dict:
    cables = pod.healthy()
    cables[(host, "mlx5_0")], cables[(host, "mlx5_1")] = cables[(host, "mlx5_1")], cables[(host, "mlx5_0")]
    return cables


def on_other_pod() -> dict:
    cables = pod.healthy()
    cables[("gpu03", "mlx5_1")] = ("leaf-p2", "Ethernet0")
    return cables


def moved_port() -> dict:
    cables = pod.healthy()
    cables[("gpu01", "mlx5_0")] = ("leaf-r0", "Ethernet100")
    return cables


def unplugged() -> dict:
    cables = pod.healthy()
    del cables[("gpu03", "mlx5_1")]
    return cables


def changed_between_snapshots(tmp: Path):
    a = pod.analysis(pod.rows())
    lldp = a.facts[a.facts["metric"] == "lldp_neighbor"]
    first = lldp.assign(snapshot=0)
    last = lldp.assign(snapshot=1)
    moved = (last["target"] == "gpu01") & (last["entity"] == "ens1f0np0")
    last.loc[moved, "text"] = "leaf-r0|Ethernet12"
    a.table.frame = pd.concat([first, last], ignore_index=True)
    return pod.with_cabling(a)


def slower_switch_port(tmp: Path):
    return cabled(rates={("leaf-r0", "Ethernet0"): 200})


TRIGGERS = [
    Trigger("rail_miscabled", lambda tmp: cabled(swapped()), (("gpu02", "mlx5_0"), ("gpu02", "mlx5_1")),
            ("gpu02 mlx5_0 reaches leaf-r1", "gpu01, gpu03", "leaf-r0")),
    Trigger("host_on_unexpected_leaf", lambda tmp: cabled(on_other_pod()), (("gpu03", "mlx5_1"),),
            ("leaf-p2", "leaf-r1")),
    Trigger("neighbor_one_sided", lambda tmp: cabled(switch_blind={("gpu01", "mlx5_0")}), (("gpu01", "mlx5_0"),),
            ("leaf-r0 Ethernet0", "no neighbour")),
    Trigger("rdma_port_without_neighbor",
            lambda tmp: cabled(host_blind={("gpu01", "mlx5_1")}, switch_blind={("gpu01", "mlx5_1")}),
            (("gpu01", "mlx5_1"),), ("ens1f1np1",)),
    Trigger("link_speed_mismatch", slower_switch_port, (("gpu01", "mlx5_0"),), ("400", "200", "leaf-r0 Ethernet0")),
    Trigger("lldp_neighbor_changed", changed_between_snapshots, (("gpu01", "ens1f0np0"),),
            ("leaf-r0 Ethernet0 → leaf-r0 Ethernet12",)),
    Trigger("topology_wrong_switch", lambda tmp: cabled(swapped("gpu03"), PLAN, tmp),
            (("gpu03", "mlx5_0"), ("gpu03", "mlx5_1")), ("reaches leaf-r1", "cables it to leaf-r0")),
    Trigger("topology_wrong_port", lambda tmp: cabled(moved_port(), PLAN, tmp), (("gpu01", "mlx5_0"),),
            ("leaf-r0 Ethernet100", "leaf-r0 Ethernet0")),
    Trigger("path_class_slow", lambda tmp: pod.with_cabling(pod.analysis(pod.leaf_spine_rows()),
                                                            pairs=pod.pairs(slow_leaf="leaf02")),
            (("leaf02", "cross_leaf"),), ("through leaf02", "cross_leaf", "180")),
    Trigger("topology_missing_link", lambda tmp: cabled(unplugged(), PLAN, tmp), (("gpu03", "mlx5_1"),),
            ("gpu03 mlx5_1 to leaf-r1",)),
]


@pytest.mark.parametrize("trigger", TRIGGERS, ids=lambda t: t.rule)
def test_the_trigger_fires_its_rule_where_the_cable_is(trigger: Trigger, tmp_path: Path) -> None:
    rule = RULES[trigger.rule]
    found = engine.evaluate(trigger.build(tmp_path), [rule])
    assert sorted((f.target, f.entity) for f in found) == sorted(trigger.hits), [f.symptom for f in found]
    first = next(f for f in found if (f.target, f.entity) == trigger.hits[0])
    for f in found:
        assert f.severity is rule.severity and "{" not in f.symptom + f.cause + f.check + f.fix, f.symptom
    for word in trigger.names:
        assert word in first.symptom, (word, first.symptom)


def test_every_topology_rule_has_a_trigger() -> None:
    assert sorted(t.rule for t in TRIGGERS) == TOPOLOGY_RULES


@pytest.mark.parametrize("topology", [None, PLAN], ids=["lldp", "with-topology-file"])
def test_healthy_rail_pod_is_silent(topology, tmp_path: Path) -> None:
    a = cabled(None, topology, tmp_path)
    found = engine.evaluate(a, [RULES[r] for r in TOPOLOGY_RULES])
    assert [(f.rule, f.target, f.entity) for f in found if f.severity in BAD] == []


def test_two_hosts_swapped_against_each_other_name_both_hosts_and_both_switches() -> None:
    """Two hosts, one of them with its rail NICs swapped: no majority, so each finding names the other host."""
    cables = {k: v for k, v in swapped("gpu02").items() if k[0] != "gpu03"}
    facts = [r for r in pod.rows(cables) if r["target"] != "gpu03"]
    found = engine.evaluate(pod.with_cabling(pod.analysis(facts)), [RULES["rail_miscabled"]])
    assert {(f.target, f.entity) for f in found} == {("gpu01", "mlx5_0"), ("gpu01", "mlx5_1"), ("gpu02", "mlx5_0"),
                                                     ("gpu02", "mlx5_1")}
    text = next(f.symptom for f in found if (f.target, f.entity) == ("gpu02", "mlx5_0"))
    assert "gpu02 mlx5_0 reaches leaf-r1" in text and "(gpu01)" in text and "leaf-r0" in text


def test_management_port_lldp_is_not_a_rail() -> None:
    facts = pod.rows() + [row("gpu02", "linux", "eno1", "lldp_neighbor", text="mgmt-sw|swp7")]
    found = engine.evaluate(pod.with_cabling(pod.analysis(facts)), [RULES[r] for r in TOPOLOGY_RULES])
    assert found == []
