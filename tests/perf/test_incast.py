"""The incast stage's parts without a fabric: the plan (one group per leaf, N senders -> 1 receiver), the figures
from two counter reads and the senders' goodput, their facts, and the rules of playbooks/45-incast.yaml on them
(one trigger case per rule, listed in TRIGGERS for the coverage guard of tests/rules/test_each_rule.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from rdmatool import metrics
from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.errors import BundleError
from rdmatool.gate import policy
from rdmatool.gate.incast_stage import replay_incast
from rdmatool.gate.judge import analysis_of
from rdmatool.gate.profile import ProfileError, load
from rdmatool.perf import incast
from rdmatool.perf import incast_figures as fig
from rdmatool.perf.model import HostInfo, PairResult
from rdmatool.rules import engine, playbook
from rdmatool.table.analysis import FACT_COLUMNS
from rdmatool.topology import Link

RULES = [r for r in playbook.load_dir(default_playbooks()) if policy.stage_of(r) == "incast"]
LINE = 200.0
SECONDS = 10.0
SENDERS = ("s1", "s2", "s3", "s4")


# --- the plan -------------------------------------------------------------------------------------------------------


def test_one_group_per_leaf_first_host_receives() -> None:
    cabling = {h: ("leaf1", f"Ethernet{i * 4}") for i, h in enumerate(["a3", "a1", "a2", "a5", "a4", "a6"])}
    cabling |= {"b2": ("leaf2", "swp2"), "b1": ("leaf2", "swp1")}
    groups = incast.plan(list(cabling) + ["lonely"], cabling | {"lonely": ("leaf3", "Eth1/1")}, fan_in=4)
    assert [g.name for g in groups] == ["leaf1:a1", "leaf2:b1"]  # leaf3 has one host: nothing to load
    first = groups[0]
    assert first.senders == ("a2", "a3", "a4", "a5")  # fan-in 4: a6 sits this one out
    assert first.port == cabling["a1"][1]
    assert dict(first.sender_ports) == {s: cabling[s][1] for s in first.senders}
    assert groups[1].senders == ("b2",)  # fewer hosts than the fan-in: all the leaf has


def test_hosts_of_unknown_cabling_make_one_group_listed_last() -> None:
    groups = incast.plan(["x2", "x1", "y1", "y2"], {"y1": ("leaf9", "p1"), "y2": ("leaf9", "p2")}, fan_in=2)
    assert [(g.switch, g.receiver, g.senders) for g in groups] == [("leaf9", "y1", ("y2",)), (None, "x1", ("x2",))]
    assert groups[1].name == "fabric:x1" and groups[1].port is None


def test_plan_refuses_a_fan_in_below_one() -> None:
    with pytest.raises(ValueError, match="fan_in=0"):
        incast.plan(["a", "b"], {}, 0)


def info(host: str, device: str = "mlx5_1", netdev: str = "ens1f0np0") -> HostInfo:
    return HostInfo(host, device, 1, "Ethernet", LINE, 3, "192.168.0.1", "gid", netdev)


def test_cabling_of_the_tested_nic_by_device_or_netdev() -> None:
    links = [Link("h1", "mlx5_0", "ib-leaf", "1"), Link("h1", "mlx5_1", "leaf1", "Ethernet0"),
             Link("h2", "ens1f0np0", "leaf1", "Ethernet4"), Link("h3", "mlx5_1", "leaf2", "swp1")]
    assert incast.cabling_of(links, {"h1": info("h1"), "h2": info("h2")}) == {
        "h1": ("leaf1", "Ethernet0"), "h2": ("leaf1", "Ethernet4")}  # h3 was not discovered: not tested


# --- the gate profile -----------------------------------------------------------------------------------------------


def test_profile_incast_is_off_by_default_and_on_when_given(tmp_path) -> None:
    assert load(None).incast.enabled is False
    path = tmp_path / "p.yaml"
    path.write_text("incast: {fan_in: 3, duration_s: 5}\ndeadlines_s: {incast: 40}\n")
    got = load(path)
    assert (got.incast.enabled, got.incast.fan_in, got.incast.duration_s) == (True, 3, 5)
    assert got.deadlines_s["incast"] == 40


@pytest.mark.parametrize("text, message", [
    ("incast: {fan_in: 0}", "fan_in"), ("incast: {duration_s: 0.5}", "duration_s"),
    ("incast: {test: ib_send_lat}", "bandwidth test"), ("incast: {fanin: 4}", "fanin"), ("incast: 4", "mapping")])
def test_profile_refuses_a_bad_incast_key(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(text + "\n")
    with pytest.raises(ProfileError, match=message) as caught:
        load(path)
    assert str(caught.value).startswith(f"{path}:")


# --- the figures ----------------------------------------------------------------------------------------------------


@dataclass
class Load:
    """What an incast of SENDERS -> r through leaf1 did: per-sender goodput and pause, the marks and packets toward
    the receiver (NIC and leaf queue), CNPs sent by the receiver, handled / ignored by each sender."""

    goodput: dict = field(default_factory=lambda: dict.fromkeys(SENDERS, LINE * 0.965 * 0.98 / 4))
    paused: dict = field(default_factory=lambda: dict.fromkeys(SENDERS, 0.002))
    packets: float = 6.0e7
    mark_ratio: float = 0.02
    cnp_sent: float = 6.0e5
    ignored_by: tuple = ()
    switch_counters: bool = True


GROUP = incast.Group("r", SENDERS, "leaf1", "Ethernet0", tuple((s, f"Ethernet{4 * (i + 1)}")
                                                              for i, s in enumerate(SENDERS)))
INFOS = {h: info(h) for h in ("r", *SENDERS)}


def counters(load: Load) -> list[tuple]:
    """(target, entity, metric, priority, raw_key, delta) of the load; `r` and the senders read over ethtool and
    hw_counters, leaf1 over its queue and PFC counters."""
    nd, rp = "ens1f0np0", "mlx5_1/1"
    marks = load.packets * load.mark_ratio
    rows = [("r", rp, "ecn_marked_packets", None, "np_ecn_marked_roce_packets", marks),
            ("r", nd, "rx_packets", 3, "rx_prio3_packets", load.packets),
            ("r", rp, "cnp_sent", None, "np_cnp_sent", load.cnp_sent)]
    for s in SENDERS:
        rows.append((s, nd, "rx_pause_duration_us", 3, "rx_prio3_pause_duration", load.paused[s] * SECONDS * 1e6))
        cnps = load.cnp_sent / len(SENDERS)
        ignored = s in load.ignored_by
        rows += [(s, rp, "cnp_handled", None, "rp_cnp_handled", 0.0 if ignored else cnps),
                 (s, rp, "cnp_ignored", None, "rp_cnp_ignored", cnps if ignored else 0.0)]
    if load.switch_counters:
        rows += [("leaf1", "Ethernet0", "ecn_marked_packets", 3, "EcnMarked/pkts", marks),
                 ("leaf1", "Ethernet0", "tx_packets", 3, "Counter/pkts", load.packets)]
    return rows


def analyses(load: Load):
    def rows(after: bool) -> list[dict]:
        out = []
        for target, entity, metric, prio, raw_key, delta in counters(load):
            kind = "switch" if target == "leaf1" else "host"
            out.append({**dict.fromkeys(FACT_COLUMNS), "target": target, "kind": kind, "entity": entity,
                        "metric": metric, "priority": prio, "raw_key": raw_key, "flag": "",
                        "value": 1.0e6 + (delta if after else 0.0)})
        for host in ("r", *SENDERS):
            out.append({**dict.fromkeys(FACT_COLUMNS), "target": host, "kind": "host", "entity": "ens1f0np0",
                        "metric": "pfc_enabled", "priority": 3, "value": 1.0, "flag": ""})
        return out

    return analysis_of(rows(False)), analysis_of(rows(True))


def results(load: Load) -> list[PairResult]:
    return [PairResult("r", s, "ib_write_bw", 1048576, load.goodput[s], None, None,
                       None if load.goodput[s] is not None else "client: timed out", 0, "", "", 1.0)
            for s in SENDERS]


def figures(load: Load) -> dict:
    before, after = analyses(load)
    return fig.group_figures(GROUP, results(load), INFOS, before, after, SECONDS)


def test_figures_of_a_healthy_incast() -> None:
    got = figures(Load())
    assert got["fan_in"] == 4 and got["receiver"] == "r" and got["switch"] == "leaf1"
    assert got["goodput_gbps"] == pytest.approx(LINE * 0.965 * 0.98)
    assert got["goodput_efficiency"] == pytest.approx(0.965 * 0.98)
    assert got["fairness"] == pytest.approx(1.0)
    assert [s["goodput_share"] for s in got["sender_figures"]] == pytest.approx([0.25] * 4)
    assert got["pause_fraction"] == pytest.approx(0.002)
    assert (got["ecn_mark_ratio"], got["ecn_mark_ratio_at"]) == (pytest.approx(0.02), "switch")
    assert got["cnp_sent"] == pytest.approx(6.0e5) and got["cnp_handled"] == pytest.approx(6.0e5)
    assert got["cnp_ignored"] == 0


def test_fairness_is_jains_index_and_one_greedy_sender_lowers_it() -> None:
    greedy = Load(goodput={"s1": 90.0, "s2": 30.0, "s3": 30.0, "s4": 30.0})
    got = figures(greedy)
    assert got["fairness"] == pytest.approx(180.0 ** 2 / (4 * (90.0 ** 2 + 3 * 30.0 ** 2)))
    assert got["sender_figures"][0]["goodput_share"] == pytest.approx(0.5)
    assert fig.jain([1.0]) is None and fig.jain([0.0, 0.0]) is None


def test_mark_ratio_falls_back_to_the_receiver_without_switch_counters() -> None:
    got = figures(Load(mark_ratio=0.05, switch_counters=False))
    assert (got["ecn_mark_ratio"], got["ecn_mark_ratio_at"]) == (pytest.approx(0.05), "receiver")


def test_a_sender_without_goodput_leaves_fairness_unjudged() -> None:
    got = figures(Load(goodput={**dict.fromkeys(SENDERS, 45.0), "s3": None}))
    assert got["fairness"] is None and got["goodput_efficiency"] is None
    assert got["goodput_gbps"] == pytest.approx(135.0)
    assert got["sender_figures"][2]["error"] == "client: timed out"


def test_a_counter_that_went_backwards_gives_no_figure() -> None:
    before, after = analyses(Load())
    after.facts.loc[after.facts["metric"] == "cnp_sent", "value"] = 5.0  # the receiver's counters were cleared
    got = fig.group_figures(GROUP, results(Load()), INFOS, before, after, SECONDS)
    assert got["cnp_sent"] is None and got["receiver_figures"]["cnp_sent"] is None


def test_facts_are_glossary_rows_on_the_leaf_port_and_the_hosts() -> None:
    rows = fig.facts([figures(Load())], {"leaf1": ("switch", "sonic", None), "s1": ("host", "linux", "compute")})
    assert all(list(row) == FACT_COLUMNS for row in rows)
    assert sorted({r["metric"] for r in rows if not metrics.is_known(r["metric"])}) == []
    group = {r["metric"]: r["value"] if r["value"] is not None else r["text"]
             for r in rows if (r["target"], r["entity"]) == ("leaf1", "Ethernet0")}
    assert group["incast_receiver"] == "r" and group["incast_fan_in"] == 4
    assert group["incast_fairness"] == pytest.approx(1.0)
    s1 = {r["metric"]: r["value"] for r in rows if r["target"] == "s1"}
    assert s1["incast_goodput_share"] == pytest.approx(0.25) and "incast_ecn_mark_ratio" not in s1
    assert next(r for r in rows if r["target"] == "s1")["platform"] == "linux"
    receiver = {r["metric"]: r["value"] for r in rows if r["target"] == "r"}
    assert set(receiver) == {"incast_ecn_mark_ratio", "incast_cnp_sent", "incast_cnp_per_mark"}
    assert receiver["incast_cnp_per_mark"] == pytest.approx(6.0e5 / (6.0e7 * 0.02))


# --- the rules ------------------------------------------------------------------------------------------------------


def judged(load: Load):
    rows = fig.facts([figures(load)], {"leaf1": ("switch", "sonic", None), **{h: ("host", "linux", "compute")
                                                                             for h in ("r", *SENDERS)}})
    return engine.evaluate(analysis_of(rows), RULES)


@dataclass(frozen=True)
class Trigger:
    rule: str
    load: Callable[[], Load]
    hits: list[tuple[str, str | None]]  # (target, entity): where it fires, and only there


TRIGGERS = [
    # thresholds above XOFF: PFC holds the senders three quarters of the time, the queue never reaches Kmin
    Trigger("incast_ecn_after_pfc", lambda: Load(paused=dict.fromkeys(SENDERS, 0.75), mark_ratio=0.0, cnp_sent=0.0),
            [("leaf1", "Ethernet0")]),
    # the notification point off: 1.8 million marks answered by a trickle of 250 CNPs (other traffic's)
    Trigger("incast_marks_without_cnp", lambda: Load(mark_ratio=0.3, cnp_sent=250.0), [("r", "ens1f0np0")]),
    Trigger("incast_cnps_ignored", lambda: Load(ignored_by=("s2",)), [("s2", "ens1f0np0")]),
    Trigger("incast_unfair", lambda: Load(goodput={"s1": 90.0, "s2": 30.0, "s3": 30.0, "s4": 30.0}),
            [("leaf1", "Ethernet0")]),
    Trigger("incast_goodput_low", lambda: Load(goodput=dict.fromkeys(SENDERS, 30.0)), [("leaf1", "Ethernet0")]),
]


def test_every_incast_rule_has_a_trigger() -> None:
    assert {t.rule for t in TRIGGERS} == {r.id for r in RULES}


@pytest.mark.parametrize("trigger", TRIGGERS, ids=[t.rule for t in TRIGGERS])
def test_rule_fires_where_the_incast_shows_it(trigger: Trigger) -> None:
    found = judged(trigger.load())
    assert [(f.target, f.entity) for f in found if f.rule == trigger.rule] == trigger.hits
    assert {f.rule for f in found} == {trigger.rule}  # this rule only
    rule = next(r for r in RULES if r.id == trigger.rule)
    assert all("{" not in f.symptom for f in found), [f.symptom for f in found]
    assert {f.severity for f in found} == {rule.severity}


def test_a_healthy_incast_is_silent() -> None:
    assert judged(Load()) == []


# --- replaying a saved incast -----------------------------------------------------------------------------------------


def test_replay_without_an_incast_record_has_no_stage(tmp_path) -> None:
    assert replay_incast(str(tmp_path), RULES) is None


@pytest.mark.parametrize("text", ['{"groups": [{"name": "leaf1:r"}]}', '{"groups": 3}', "[1, 2]", "not json"])
def test_replay_refuses_an_incast_record_of_the_wrong_shape(tmp_path, text: str) -> None:
    (tmp_path / "incast").mkdir()
    (tmp_path / "incast" / "results.json").write_text(text)
    with pytest.raises(BundleError, match="incast/results.json"):
        replay_incast(str(tmp_path), RULES)
