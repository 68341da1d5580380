"""ECN late where the switch does the pausing (switch_pauses_senders_ecn_late): a leaf that keeps its senders
paused on the RoCE priority while marking almost nothing is named, with the hosts it pauses as the evidence, on
every switch OS. Cumulus and Onyx count the time they keep a peer paused; SONiC, EOS and NX-OS count frames only,
and the paused host's received pause time stands for it. The other direction (a switch port held paused by its
host: a storm) stays the host's story. Pods from tests/pods, written as real bundles and diagnosed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from rdmatool.diagnose.pipeline import diagnose_analysis
from rdmatool.model import Severity
from rdmatool.table.analysis import analyse_path
from tests.pods import bundle as pods
from tests.pods.bundle import WINDOW_S, Pod

RULE = "switch_pauses_senders_ecn_late"
OWN_TIME = ("cumulus", "onyx")  # the switch counts the time it keeps its peers paused
FRAMES_ONLY = ("sonic", "eos", "nxos")  # the paused hosts count it


def pausing_leaf(platform: str, paused: float = 0.3, marks: int = 50, pausers: int = 2) -> Pod:
    """A pod behind one leaf of `platform` that keeps the hosts of its first `pausers` ports paused `paused` of the
    window on priority 3 (its transmitted PFC, and the time those hosts count as received pauses) while every port
    marks `marks` of its 10^7 packets there (the storage port carries none there, and marks none)."""
    pod = pods.healthy_pod((platform,))
    for port in pod.switch.ports:
        if port.uc_packets["3"][1]:
            port.ecn_marks["3"][1] = marks
    for port in pod.switch.ports[:pausers]:
        pause(pod, port, paused)
    return pod


def pause(pod: Pod, port: pods.SwitchPort, paused: float) -> None:
    """`port` keeps its host paused `paused` of the window on priority 3, as both ends count it."""
    port.tx_pause_us["3"][1] = int(paused * WINDOW_S * 1e6)
    port.tx_pfc["3"][1] = 50_000
    nic = next(p for p in pod.host(port.host).ports if p.netdev == port.netdev)
    nic.ethtool["rx_prio3_pause_duration"][1] = int(paused * WINDOW_S * 1e6)
    nic.ethtool["rx_prio3_pause"][1] = 50_000


def storming_host(platform: str) -> Pod:
    """gpu01 storms its leaf (it keeps the switch port paused 90 % of the window on priority 3) and the leaf passes
    the back-pressure on: it keeps the other hosts paused 30 % while marking almost nothing."""
    pod = pausing_leaf(platform, pausers=0)
    first = pod.switch.ports[0]
    nic = next(p for p in pod.host(first.host).ports if p.netdev == first.netdev)
    nic.ethtool["tx_prio3_pause_duration"][1] = int(0.9 * WINDOW_S * 1e6)
    nic.ethtool["tx_prio3_pause"][1] = 3_000_000
    first.rx_pause_us["3"][1] = int(0.9 * WINDOW_S * 1e6)
    first.rx_pfc["3"][1] = 3_000_000
    for port in pod.switch.ports[1:3]:
        pause(pod, port, 0.3)
    return pod


def diagnose(pod: Pod, tmp_path: Path):
    return diagnose_analysis(analyse_path(pods.write(pod, tmp_path / "bundle")))


def of(result, rule: str) -> list:
    return [f for f in result.findings if f.rule == rule]


@dataclass(frozen=True)
class Trigger:
    rule: str
    pod: Callable[[], Pod]


# the guard of tests/rules/test_each_rule.py counts this case as the rule's trigger
TRIGGERS = [Trigger(RULE, lambda: pausing_leaf("sonic"))]


@pytest.mark.parametrize("trigger", TRIGGERS, ids=lambda t: t.rule)
def test_the_trigger_pod_fires_its_rule(trigger: Trigger, tmp_path: Path) -> None:
    found = of(diagnose(trigger.pod(), tmp_path), trigger.rule)
    assert [(f.target, f.entity, f.evidence["priority"]) for f in found] == [("leaf01", None, 3)]


@pytest.mark.parametrize("platform", pods.PLATFORMS)
def test_a_switch_that_pauses_its_senders_while_marking_nothing_is_named(platform: str, tmp_path: Path) -> None:
    pod = pausing_leaf(platform)
    ports = [p.name for p in pod.switch.ports[:2]]
    result = diagnose(pod, tmp_path)
    (finding,) = of(result, RULE)
    assert (finding.target, finding.entity, finding.evidence["priority"]) == ("leaf01", None, 3)
    assert finding.severity is Severity.WARNING
    assert finding.evidence["observed"] == pytest.approx(0.3, rel=1e-3)
    details = finding.evidence["details"]
    # the hosts it pauses are the evidence, and where each share was read
    read_at = "switch" if platform in OWN_TIME else "host"
    assert [(d["switch_port"], d["peer"], d["peer_port"], d["read_at"]) for d in details["paused"]] == [
        (ports[0], "gpu01", "ens1f0np0", read_at), (ports[1], "gpu02", "ens1f0np0", read_at)]
    assert [d["paused"] for d in details["paused"]] == pytest.approx([0.3, 0.3], rel=1e-3)
    assert details["marked"] == pytest.approx(50 / 10**7, rel=0.05)  # 50 marks per port over 10^7 packets
    assert "gpu01 ens1f0np0" in finding.symptom and "gpu02 ens1f0np0" in finding.symptom
    assert "priority 3" in finding.symptom and "30 %" in finding.symptom
    # the switch's ECN thresholds are what is named: the suggestion is for that switch
    assert finding.suggestions and {s.target for s in finding.suggestions} == {"leaf01"}
    # a paused port is not a port held paused: the rules of the other direction stay silent
    assert of(result, "ecn_after_pfc") == [] and of(result, "switch_ecn_fires_after_pfc") == []


@pytest.mark.parametrize("platform", pods.PLATFORMS)
def test_the_same_switch_with_healthy_marks_is_not_named(platform: str, tmp_path: Path) -> None:
    result = diagnose(pausing_leaf(platform, marks=50_000), tmp_path)  # 0.5 % of its packets marked
    assert of(result, RULE) == []


@pytest.mark.parametrize("platform", pods.PLATFORMS)
def test_a_host_storming_its_switch_is_the_hosts_story(platform: str, tmp_path: Path) -> None:
    result = diagnose(storming_host(platform), tmp_path)
    storm = [f for f in result.findings if f.rule in ("pfc_storm", "host_pause_storm_rate") and f.target == "gpu01"]
    assert storm and all(f.severity is Severity.CRITICAL for f in storm)
    # the leaf pauses the others only because gpu01 holds it paused: not the leaf's ECN
    assert of(result, RULE) == []


@pytest.mark.parametrize("platform", FRAMES_ONLY)
def test_pause_frames_alone_name_no_switch(platform: str, tmp_path: Path) -> None:
    """A leaf counting frames only sends many pause frames, but its hosts were hardly paused: no time, no finding."""
    pod = pausing_leaf(platform, pausers=0)
    for port in pod.switch.ports[:2]:
        port.tx_pfc["3"][1] = 50_000
    assert of(diagnose(pod, tmp_path), RULE) == []


@pytest.mark.parametrize("platform", OWN_TIME)
def test_the_switch_own_pause_time_wins_over_the_host(platform: str, tmp_path: Path) -> None:
    """Cumulus and Onyx count the time themselves: a host that says it was paused 30 % does not overrule a switch
    that kept it paused 0.1 % of the window."""
    pod = pausing_leaf(platform, pausers=0)
    for port in pod.switch.ports[:2]:
        nic = next(p for p in pod.host(port.host).ports if p.netdev == port.netdev)
        nic.ethtool["rx_prio3_pause_duration"][1] = int(0.3 * WINDOW_S * 1e6)
    assert of(diagnose(pod, tmp_path), RULE) == []


def test_too_few_packets_are_not_judged(tmp_path: Path) -> None:
    pod = pausing_leaf("cumulus")
    for port in pod.switch.ports:
        for counters in (port.uc_packets, port.ecn_marks):
            for prio in counters:
                counters[prio][1] = 0
    assert of(diagnose(pod, tmp_path), RULE) == []


# --- the kind on hand-made facts: ports named by alias, and a switch as the paused peer ------------------------


def fact(target: str, kind: str, entity: str, metric: str, value=None, priority=None, delta=None, text=None,
         raw_key=None) -> dict:
    return {"target": target, "kind": kind, "platform": "cumulus" if target == "spine01" else "sonic",
            "role": None, "entity": entity, "metric": metric, "priority": priority, "size_bytes": None,
            "value": value, "text": text, "raw_key": raw_key, "window_s": WINDOW_S, "delta": delta, "flag": ""}


def test_a_port_named_by_its_alias_is_one_port_and_a_paused_switch_counts_its_own_time() -> None:
    """A SONiC leaf (frames only) pauses gpu01 on Ethernet0, which gpu01's LLDP names by its alias etp1, and the
    Cumulus spine01 on Ethernet4, which counts the time it was paused itself; the leaf marks 10 of 2·10^7 packets."""
    import pandas as pd

    from rdmatool.diagnose.pipeline import default_playbooks
    from rdmatool.rules import playbook
    from rdmatool.rules.kinds import Context
    from rdmatool.rules.registry import KINDS
    from rdmatool.table.analysis import FACT_COLUMNS

    rows = [fact("leaf01", "switch", "Ethernet0", "port_alias", text="etp1"),
            fact("leaf01", "switch", "Ethernet4", "port_alias", text="etp2"),
            fact("gpu01", "host", "ens1f0np0", "rx_pause_fraction", 0.4, 3),
            fact("spine01", "switch", "swp1", "rx_pause_fraction", 0.3, 3, raw_key="RoCE pause duration")]
    for port in ("Ethernet0", "Ethernet4"):
        rows += [fact("leaf01", "switch", port, "tx_packets_per_s", 1e6, 3, delta=1e7),
                 fact("leaf01", "switch", port, "ecn_marked_packets_per_s", 0.5, 3, delta=5)]
    facts = pd.DataFrame(rows, columns=FACT_COLUMNS).astype({"priority": "Int64", "size_bytes": "Int64"})
    links = pd.DataFrame([("gpu01", "ens1f0np0", "leaf01", "etp1"), ("gpu01", "ens1f0np0", "leaf01", "Ethernet0"),
                          ("spine01", "swp1", "leaf01", "Ethernet4")],
                         columns=["host", "host_port", "switch", "switch_port"])
    rule = next(r for r in playbook.load_dir(default_playbooks()) if r.id == RULE)
    hits = KINDS[rule.kind].judge(facts, rule, Context(links=links))
    assert list(hits["target"]) == ["leaf01"] and list(hits["priority"]) == [3]
    details = hits["details"].iloc[0]
    assert [(d["switch_port"], d["peer"], d["peer_port"], d["paused"], d["read_at"]) for d in details["paused"]] == [
        ("Ethernet0", "gpu01", "ens1f0np0", 0.4, "host"), ("Ethernet4", "spine01", "swp1", 0.3, "peer switch")]
    assert details["marked"] == pytest.approx(10 / 2e7)
