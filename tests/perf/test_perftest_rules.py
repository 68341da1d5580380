"""The perftest judgement as facts and rules: the attribution's facts (bad node, bad link, failed pairs), the
verdict rules of playbooks/40-perftest.yaml firing on them and silent on a healthy matrix, and the same findings
whether the results are judged live or read back from a saved bundle."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from rdmatool import metrics
from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.gate import policy
from rdmatool.gate.judge import judge
from rdmatool.gate.profile import LatencyPolicy
from rdmatool.outcome.result import finding_json
from rdmatool.perf.attribution import attribute, attribute_rails, facts, with_down_nics
from rdmatool.perf.model import UNREACHABLE, Attribution, PairResult
from rdmatool.perf.output import write_results
from rdmatool.perf.schedule import all_pairs
from rdmatool.rules import engine, playbook
from rdmatool.table.analysis import FACT_COLUMNS, analyse_path
from rdmatool.topology import Link

NODES = [f"h{i}" for i in range(1, 9)]
LINE = 200.0
RULES = playbook.load_dir(default_playbooks())
# The perftest playbook's verdict rules (other playbooks judge other verdicts with the same kind: the topology's).
VERDICT_RULES = {r.id: r for r in RULES if r.kind == "verdict" and "40-perftest.yaml" in r.source}
REPO = Path(__file__).resolve().parents[2]


def bandwidth(slow_nodes=(), slow_links=(), no_server=(), nodes=NODES) -> list[PairResult]:
    """Every pair once: 96.5 % of line rate, halved at a slow node, x0.3 on a slow link; a node without a perftest
    server fails every pair it serves."""
    out = []
    for index, pairs in enumerate(all_pairs(nodes)):
        for s, c in pairs:
            bw = LINE * 0.965 * (0.5 if s in slow_nodes or c in slow_nodes else 1.0)
            bw *= 0.3 if frozenset((s, c)) in {frozenset(link) for link in slow_links} else 1.0
            error = f"client {c}: Couldn't connect to {s}:18515" if s in no_server else None
            out.append(PairResult(s, c, "ib_write_bw", 65536, None if error else round(bw, 3), None, None, error,
                                  index, "", "", 1.0))
    return out


RAILS = ("mlx5_0", "mlx5_1")


def rail_bandwidth(slow_nics=(), slow_nodes=(), nodes=NODES) -> list[PairResult]:
    """Every pair once on each rail (NIC k against NIC k), as `bandwidth`; a (host, rail) in `slow_nics` halves the
    pairs of that host on that rail only."""
    out = []
    for rail in RAILS:
        for index, pairs in enumerate(all_pairs(nodes)):
            for s, c in pairs:
                slow = {s, c} & set(slow_nodes) or {(s, rail), (c, rail)} & set(slow_nics)
                out.append(PairResult(s, c, "ib_write_bw", 65536, round(LINE * 0.965 * (0.5 if slow else 1.0), 3),
                                      None, None, None, index, "", "", 1.0, rail))
    return out


def by_rail(results: list[PairResult]) -> Attribution:
    return attribute_rails(results, dict.fromkeys(RAILS, LINE))


def latency(slow_nodes=(), high=(), jittery=()) -> list[PairResult]:
    """Every pair once: 1.7 us typical, doubled at a slow node; a pair in `high` has a 40 us p99, one in `jittery` a
    p99.9 twelve times its typical latency."""
    out = []
    for index, pairs in enumerate(all_pairs(NODES)):
        for s, c in pairs:
            typical = 1.7 * (2.0 if s in slow_nodes or c in slow_nodes else 1.0)
            lat = {"lat_typical_us": typical, "lat_p99_us": typical * 1.3, "lat_p999_us": typical * 2}
            if {s, c} in [set(p) for p in high]:
                lat["lat_p99_us"] = 40.0
            if {s, c} in [set(p) for p in jittery]:
                lat["lat_p999_us"] = typical * 12
            out.append(PairResult(s, c, "ib_send_lat", 2, None, None, lat, None, index, "", "", 0.1))
    return out


CEILINGS = LatencyPolicy(enabled=True, max_p99_us=10.0, max_p999_over_typical=5.0)


def _pair_of(a: str, b: str) -> Callable[[list[PairResult]], list[tuple[str, str]]]:
    return lambda results: [("fabric", f"{r.client}->{r.server}") for r in results if {r.client, r.server} == {a, b}]


def subject(rows: list[dict], target: str, entity: str | None = None) -> dict:
    """metric → value (else text) of one subject's facts; a metric stated twice keeps its first."""
    found: dict = {}
    for row in rows:
        if row["target"] == target and row["entity"] == entity:
            found.setdefault(row["metric"], row["text"] if row["value"] is None else row["value"])
    return found


def where(findings) -> list[tuple]:
    return [(f.rule, f.target, f.entity) for f in findings]


# --- the attribution's facts ----------------------------------------------------------------------------------


def test_facts_are_rows_of_the_facts_format_with_glossary_metrics() -> None:
    results = bandwidth(slow_nodes={"h3"}, slow_links=[("h1", "h5")], no_server={"h7"})
    rows = facts(results, attribute(results, LINE), threshold=0.9)
    assert rows
    assert all(list(row) == FACT_COLUMNS for row in rows)
    unknown = sorted({row["metric"] for row in rows if not metrics.is_known(row["metric"])})
    assert unknown == []


def test_facts_of_a_bad_node() -> None:
    results = bandwidth(slow_nodes={"h3"})
    attribution = attribute(results, LINE)
    rows = facts(results, attribution, threshold=0.9)
    node = subject(rows, "h3")
    assert node["perf_node_verdict"] == "bad"
    assert node["perf_test"] == "ib_write_bw"
    assert node["bw_avg_gbps"] == attribution.evidence["h3"]["median_gbps"] == pytest.approx(LINE * 0.965 * 0.5)
    assert node["perf_pass_gbps"] == pytest.approx(0.9 * LINE)
    assert json.loads(node["perf_record"]) == attribution.evidence["h3"]
    # its partners are fine elsewhere: known-good, no bad link anywhere
    assert {subject(rows, n)["perf_node_verdict"] for n in NODES if n != "h3"} == {"ok"}
    assert not [r for r in rows if r["metric"] == "perf_link_verdict"]


def test_facts_of_a_bad_link() -> None:
    results = bandwidth(slow_links=[("h5", "h1")])
    attribution = attribute(results, LINE)
    rows = facts(results, attribution, threshold=0.9)
    link = subject(rows, "fabric", "h1<->h5")
    assert link["perf_link_verdict"] == "bad"
    assert (link["perf_link_a"], link["perf_link_b"]) == ("h1", "h5")
    assert link["bw_avg_gbps"] == pytest.approx(LINE * 0.965 * 0.3)
    assert json.loads(link["perf_record"]) == attribution.evidence["h1<->h5"]
    assert {subject(rows, n)["perf_node_verdict"] for n in NODES} == {"ok"}  # neither end is to blame


def test_facts_of_failed_pairs_say_whether_a_bad_node_explains_them() -> None:
    results = bandwidth(slow_nodes={"h3"})
    extra = [PairResult("h2", "h4", "ib_write_bw", 65536, None, None, None, "client h4: QP error", 9, "", "", 1.0),
             PairResult("h2", "h4", "ib_write_bw", 65536, None, None, None, "client h4: later", 10, "", "", 1.0),
             PairResult("h3", "h6", "ib_write_bw", 65536, None, None, None, "client h6: refused", 9, "", "", 1.0),
             PairResult("h8", "h1", "ib_write_bw", 65536, None, None, None, f"{UNREACHABLE}h8 (10.0.0.8:22): refused",
                        9, "", "", 1.0)]
    rows = facts(results + extra, attribute(results + extra, LINE))
    failed = subject(rows, "h4", "h4->h2")
    assert failed["perf_pair_verdict"] == "failed"
    assert failed["tool_error"] == "client h4: QP error"  # the first message of the pair
    assert (failed["perf_server"], failed["perf_test"]) == ("h2", "ib_write_bw")
    assert subject(rows, "h6", "h6->h3")["perf_pair_verdict"] == "bad_end"
    assert subject(rows, "h1", "h1->h8")["perf_pair_verdict"] == "failed"
    assert len([r for r in rows if r["metric"] == "perf_pair_verdict"]) == 3  # once per pair, not per run


# --- the rules on those facts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trigger:
    rule: str
    stage: str
    results: Callable[[], list[PairResult]]
    hits: Callable[[list[PairResult]], list[tuple[str, str | None]]]  # (target, entity): where it fires, only there
    ceilings: LatencyPolicy | None = None  # the gate profile's latency ceilings, for the latency stage
    attributed: Callable[[list[PairResult]], Attribution] | None = None  # else `attribute` at LINE (bandwidth)
    cabling: tuple | None = None  # the tested NICs' links and the leaves' uplinks (the gate's path_cabling)


def _served_by_h7(results: list[PairResult]) -> list[tuple[str, str]]:
    return [(r.client, f"{r.client}->h7") for r in results if r.server == "h7"]


LEAVES = [Link(h, "mlx5_0", "leafA" if i < 4 else "leafB") for i, h in enumerate(NODES)]
CROSSING = [(a, b) for a in NODES[:4] for b in NODES[4:]]

TRIGGERS = [
    Trigger("perf_bad_node", "bandwidth", lambda: bandwidth(slow_nodes={"h3"}), lambda _: [("h3", None)]),
    # h3's mlx5_1 is slow on its rail, h3 at speed on mlx5_0: the NIC, not the node
    Trigger("perf_bad_rail_nic", "bandwidth", lambda: rail_bandwidth(slow_nics={("h3", "mlx5_1")}),
            lambda _: [("h3", "mlx5_1")], attributed=by_rail),
    Trigger("perf_bad_link", "bandwidth", lambda: bandwidth(slow_links=[("h1", "h5")]),
            lambda _: [("fabric", "h1<->h5")]),
    # h3's mlx5_1 is down while the other hosts' mlx5_1 run: every pair at speed on the rails h3 has, its rail down
    Trigger("perf_rail_down", "bandwidth", bandwidth, lambda _: [("h3", "mlx5_1")],
            attributed=lambda results: with_down_nics(attribute(results, LINE),
                                                      {("h3", "mlx5_1"): "Ethernet port 1 DOWN"})),
    # every pair between leafA (h1-h4) and leafB (h5-h8) slow, each end at speed within its leaf: the path, once
    Trigger("perf_slow_inter_leaf", "bandwidth", lambda: bandwidth(slow_links=CROSSING),
            lambda _: [("fabric", "leafA<->leafB")], cabling=(LEAVES, {})),
    # h7 runs no server: every pair it serves fails, yet it passes as a client, so no node is to blame
    Trigger("perf_pair_failed", "bandwidth", lambda: bandwidth(no_server={"h7"}), _served_by_h7),
    Trigger("perf_latency_bad_node", "latency", lambda: latency(slow_nodes={"h2"}), lambda _: [("h2", None)],
            CEILINGS),
    Trigger("perf_latency_high", "latency", lambda: latency(high=[("h1", "h6")]), _pair_of("h1", "h6"), CEILINGS),
    Trigger("perf_latency_jitter", "latency", lambda: latency(jittery=[("h3", "h4")]), _pair_of("h3", "h4"),
            CEILINGS),
]


def test_every_verdict_rule_has_a_trigger() -> None:
    assert {t.rule for t in TRIGGERS} == set(VERDICT_RULES)


@pytest.mark.parametrize("trigger", TRIGGERS, ids=[t.rule for t in TRIGGERS])
def test_rule_fires_on_the_attribution_facts(trigger: Trigger) -> None:
    results = trigger.results()
    attribution = trigger.attributed(results) if trigger.attributed else \
        attribute(results, LINE if trigger.stage == "bandwidth" else None)
    found = judge(results, attribution, RULES, trigger.stage, threshold=0.9, latency=trigger.ceilings,
                  cabling=trigger.cabling)
    found = [f for f in found if f.rule in VERDICT_RULES]  # (the cabling's path classes are 15-topology.yaml's)
    rule = VERDICT_RULES[trigger.rule]
    hits = trigger.hits(results)
    assert hits and [(f.target, f.entity) for f in found] == hits  # this rule only, and only there
    for f in found:
        assert f.rule == rule.id and f.severity is rule.severity
        assert "{" not in f.symptom + f.cause + f.check + f.fix, f.symptom  # every placeholder filled
        assert f.evidence["metric"] == rule.params["metric"]
    assert policy.stage_of(rule) == trigger.stage


def test_bad_node_evidence_is_its_median_pass_line_and_record() -> None:
    results = bandwidth(slow_nodes={"h3"})
    attribution = attribute(results, LINE)
    (finding,) = judge(results, attribution, RULES, "bandwidth", threshold=0.8)
    assert finding.evidence == {
        "metric": "bw_avg_gbps", "target": "h3", "entity": None, "priority": None,
        "observed": attribution.evidence["h3"]["median_gbps"], "expected": ">= 160.0 Gb/s", "baseline": None,
        "window_s": None, "details": attribution.evidence["h3"]}
    assert finding.check.startswith("ibstat / ibv_devinfo -v on h3 ")
    assert finding.fix == "Drain h3; fix the link or host bottleneck before it rejoins the pool"


def test_bad_link_names_both_ends_and_blames_the_fabric() -> None:
    results = bandwidth(slow_links=[("h1", "h5")])
    (finding,) = judge(results, attribute(results, LINE), RULES, "bandwidth", threshold=0.9)
    assert finding.target == "fabric" and finding.entity == "h1<->h5"
    assert finding.symptom == "RDMA bandwidth far below expected between h1 and h5 only"
    assert "the path h1 → h5 through the leaf and spine" in finding.check
    assert finding.evidence["expected"] is None and finding.evidence["details"]["verdict"] == "bad"


def test_failed_pair_names_the_test_and_both_ends() -> None:
    results = [PairResult("h2", "h4", "ib_read_bw", 65536, None, None, None, "client h4: QP error", 0, "", "", 1.0)]
    (finding,) = judge(results, attribute(results, LINE), RULES, "bandwidth")
    assert finding.symptom == "perftest ib_read_bw from h4 to h2 failed"
    assert finding.check.startswith("Run ib_read_bw by hand between the two hosts")
    assert (finding.evidence["observed"], finding.evidence["expected"]) == ("client h4: QP error", "a completed run")
    assert "details" not in finding.evidence


def test_latency_stage_judges_its_own_rule_only() -> None:
    results = latency(slow_nodes={"h2"})
    (finding,) = judge(results, attribute(results, None), RULES, "latency")  # not perf_bad_node as well
    assert finding.rule == "perf_latency_bad_node"
    assert finding.check == "ib_send_lat -a from h2 to a known-good peer; cpupower frequency-info on h2"
    assert finding.evidence["expected"] == "within 1.5x of the fleet median"


@pytest.mark.parametrize("stage", ["bandwidth", "latency"])
def test_silent_on_a_healthy_matrix(stage: str) -> None:
    results = bandwidth() if stage == "bandwidth" else latency()
    attribution = attribute(results, LINE if stage == "bandwidth" else None)
    assert attribution.bad_nodes == () and attribution.bad_links == ()
    assert judge(results, attribution, RULES, stage) == []


def test_silent_in_a_diagnosis_of_a_bundle_without_perftest_results() -> None:
    analysis = analyse_path(REPO / "examples" / "demo-bundle")
    assert engine.evaluate(analysis, list(VERDICT_RULES.values())) == []


def test_a_skipped_rule_is_not_judged() -> None:
    results = bandwidth(slow_nodes={"h3"}, slow_links=[("h1", "h5")])
    rules = [r for r in RULES if r.id != "perf_bad_node"]
    assert where(judge(results, attribute(results, LINE), rules, "bandwidth")) == [
        ("perf_bad_link", "fabric", "h1<->h5")]


def test_findings_keep_the_attribution_order_of_subjects() -> None:
    # The attribution sorts links by their ends (n1 < n10); their names sort the other way ("n10<" < "n1<").
    results = [PairResult("n1", "n5", "ib_write_bw", 65536, 50.0, None, None, None, 0, "", "", 1.0),
               PairResult("n10", "n2", "ib_write_bw", 65536, 50.0, None, None, None, 0, "", "", 1.0)]
    attribution = Attribution(bad_nodes=(), bad_links=(("n1", "n5"), ("n10", "n2")), evidence={})
    found = judge(results, attribution, RULES, "bandwidth")
    assert [f.entity for f in found] == ["n1<->n5", "n10<->n2"]
    assert [f.entity for f in sorted(found, key=engine.order)] == ["n10<->n2", "n1<->n5"]


# --- live and replayed --------------------------------------------------------------------------------------------


def test_live_and_replay_judge_the_same_findings(tmp_path: Path) -> None:
    results = bandwidth(slow_nodes={"h3"}, slow_links=[("h1", "h5")], no_server={"h7"})
    attribution = attribute(results, LINE)
    live = judge(results, attribution, RULES, "bandwidth", threshold=0.9)
    write_results(results, attribution, tmp_path / "perf")  # as the gate saves them
    recorded = [PairResult.from_record(r) for r in json.loads((tmp_path / "perf" / "results.json").read_text())]
    replayed = Attribution.from_record(json.loads((tmp_path / "perf" / "attribution.json").read_text()))
    again = judge(recorded, replayed, RULES, "bandwidth", threshold=0.9)
    assert {f.rule for f in live} == {"perf_bad_node", "perf_bad_link", "perf_pair_failed"}
    assert [finding_json(f) for f in again] == [finding_json(f) for f in live]


def test_latency_findings_state_the_profile_ceiling_and_both_ends() -> None:
    results = latency(high=[("h1", "h6")], jittery=[("h1", "h6")])
    found = judge(results, attribute(results, None), RULES, "latency", latency=CEILINGS)
    assert [f.rule for f in found] == ["perf_latency_high", "perf_latency_jitter"]
    high, jitter = found
    r = next(r for r in results if {r.client, r.server} == {"h1", "h6"})
    assert high.symptom == f"ib_send_lat p99 latency 40 µs between {r.client} and {r.server}"
    assert (high.evidence["observed"], high.evidence["expected"]) == (40.0, "<= 10 us")
    assert jitter.severity.value == "warning" and jitter.evidence["expected"] == "<= 5 x typical"
    assert jitter.evidence["observed"] == 12.0 and f"({r.client} -> {r.server})" in jitter.symptom
    # a looser profile: the same measurements pass
    loose = LatencyPolicy(enabled=True, max_p99_us=50.0, max_p999_over_typical=20.0)
    assert judge(results, attribute(results, None), RULES, "latency", latency=loose) == []


def test_a_down_rail_names_the_nic_and_why() -> None:
    results = bandwidth()
    attribution = with_down_nics(attribute(results, LINE), {("h3", "mlx5_1"): "Ethernet port 1 DOWN"})
    assert attribution.bad_nics == (("h3", "mlx5_1"),) and attribution.bad_nodes == ()
    (finding,) = judge(results, attribution, RULES, "bandwidth")
    assert finding.symptom == "h3 NIC mlx5_1 is not tested: Ethernet port 1 DOWN, while the other hosts' mlx5_1 run"
    assert finding.fix.startswith("Drain h3, naming NIC mlx5_1")
    again = Attribution.from_record(json.loads(json.dumps(attribution.as_dict())))  # a replay judges the same
    assert [f.symptom for f in judge(results, again, RULES, "bandwidth")] == [finding.symptom]
