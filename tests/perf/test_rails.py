"""Rail-aligned perftest runs: the engine's schedule (round i of every rail at once, no NIC twice in a batch), the
per-rail attribution that tells a bad NIC from a bad node, the rail field of the records (old records read as the
single rail), and the gate's schedule choice on multi-rail hosts (its exposure and localisation per rail)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.gate import policy, schedule_choice
from rdmatool.gate.judge import judge
from rdmatool.outcome.result import finding_json
from rdmatool.perf import engine, schedule
from rdmatool.perf.attribution import attribute, attribute_rails
from rdmatool.perf.model import Attribution, PairResult, PerfOptions
from rdmatool.perf.output import write_results
from rdmatool.rules import playbook
from rdmatool.topology import Link
from tests.perf import fabric_model

RULES = playbook.load_dir(default_playbooks())
RAILS = ("mlx5_0", "mlx5_1")
HOSTS = [f"h{i:02d}" for i in range(8)]
LINE = fabric_model.LINE_GBPS


def slow_nic_result(server: str, client: str, rail: str | None, round_no: int, slow: set[tuple[str, str]],
                    slow_nodes: set[str] = frozenset()) -> PairResult:
    crossed = {server, client} & slow_nodes or {(server, rail), (client, rail)} & slow
    share = fabric_model.SLOW if crossed else fabric_model.HEALTHY
    return PairResult(server, client, "ib_write_bw", 65536, LINE * share, None, None, None, round_no, "", "", 0.1,
                      rail)


# --- the schedule in the engine ----------------------------------------------------------------------------------


class _Session:
    """What run_gate_perf needs of a session, without SSH: every host reached, every host on both rails."""

    def __init__(self, hosts: list[str]) -> None:
        self.options = PerfOptions(duration_s=1, server_ready_s=0.0, slack_s=1.0)
        self.stop = threading.Event()
        self.reachable = list(hosts)
        self.missing: dict[str, str] = {}
        self.hosts = dict.fromkeys(hosts)

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass

    def cleanup_all(self) -> None:
        pass

    def expected_gbps(self, rail: str | None = None) -> dict[str, float]:
        return dict.fromkeys(self.reachable, LINE)

    def down_rails(self) -> dict[tuple[str, str], str]:
        return {}  # every NIC of every host up


def run_rails(monkeypatch, slow: set[tuple[str, str]], slow_nodes: set[str] = frozenset()):
    """The engine's rail-aligned run over a fake session: each batch `_run_round` gets is recorded (a batch runs
    in parallel), each pair measured by the fabric model with the slow NICs / nodes."""
    batches: list[list[tuple]] = []

    def one_batch(session, pairs, round_no):
        batches.append(list(pairs))
        return [slow_nic_result(p[0], p[1], p[2], round_no, slow, slow_nodes) for p in pairs]

    monkeypatch.setattr(engine, "_run_round", one_batch)
    placed = {h: {rail: "leaf01" if h < "h04" else "leaf02" for rail in RAILS} for h in HOSTS}
    leaves = {rail: {h: placed[h][rail] for h in HOSTS} for rail in RAILS}
    session = _Session(HOSTS)
    results, attribution = engine.run_gate_perf(
        [], session.options, None, session=session,
        rail_planner=lambda nodes: schedule.rail_plan({h: placed[h] for h in nodes}, rounds=3), rail_leaves=leaves)
    return batches, results, attribution


def test_rails_run_side_by_side_and_no_nic_is_busy_twice_in_a_batch(monkeypatch) -> None:
    batches, results, attribution = run_rails(monkeypatch, set())
    plan = schedule.rail_plan({h: dict.fromkeys(RAILS, "leaf01" if h < "h04" else "leaf02") for h in HOSTS}, 3)
    assert len(batches) == max(len(r) for r in plan.values())  # healthy: no confirmation round
    for batch in batches:
        units = [u for pair in batch for u in schedule.busy_units(pair)]
        assert len(units) == len(set(units)), batch  # no (host, rail) twice
        assert {pair[2] for pair in batch} == set(RAILS)  # both rails in the same batch
        hosts = [n for pair in batch for n in pair[:2]]
        assert len(hosts) > len(set(hosts))  # so a host does run two pairs at once, one per NIC
    assert {r.rail for r in results} == set(RAILS)
    assert sorted((r.server, r.client, r.rail) for r in results) == \
        sorted((s, c, rail) for rail, rounds in plan.items() for pairs in rounds for s, c in pairs)
    assert attribution.bad_nodes == () and attribution.bad_nics == () and attribution.bad_links == ()


def test_split_conflicts_keeps_the_rails_apart_and_splits_a_nic_used_twice() -> None:
    pairs = [("a", "b", "r0"), ("a", "b", "r1"), ("a", "c", "r0"), ("d", "c", "r1")]
    # a's NIC on r0 is busy with b: a-c on r0 waits; d-c on r1 shares the first batch (c's r1 NIC is free)
    assert schedule.split_conflicts(pairs) == [[("a", "b", "r0"), ("a", "b", "r1"), ("d", "c", "r1")],
                                               [("a", "c", "r0")]]
    assert schedule.split_conflicts([("a", "b"), ("a", "c")]) == [[("a", "b")], [("a", "c")]]  # hosts, no rails
    merged = schedule.rail_rounds({"r0": [[("a", "b")], [("a", "c")]], "r1": [[("c", "d")]]})
    assert merged == [[("a", "b", "r0"), ("c", "d", "r1")], [("a", "c", "r0")]]


def test_a_slow_nic_is_confirmed_on_its_rail_and_named_a_bad_nic(monkeypatch) -> None:
    batches, results, attribution = run_rails(monkeypatch, {("h05", "mlx5_1")})
    confirmation = batches[-1]
    assert confirmation and {pair[2] for pair in confirmation} == {"mlx5_1"}
    assert attribution.bad_nics == (("h05", "mlx5_1"),) and attribution.bad_nodes == ()
    assert attribution.bad_links == ()  # its partners on mlx5_1 are not blamed
    record = attribution.evidence["_nics"]["h05/mlx5_1"]
    assert record["ok_on_rails"] == ["mlx5_0"] and record["median_gbps"] == pytest.approx(LINE * fabric_model.SLOW)
    # one attribution over every rail at once would pass h05 (fine on mlx5_0) and blame its partners' links
    merged = attribute([r for r in results], LINE)
    assert merged.bad_links and "h05" not in merged.bad_nodes


def test_a_node_slow_on_every_rail_is_a_bad_node_not_a_nic(monkeypatch) -> None:
    _, _, attribution = run_rails(monkeypatch, set(), slow_nodes={"h02"})
    assert attribution.bad_nodes == ("h02",) and attribution.bad_nics == ()
    assert attribution.evidence["h02"]["verdict"] == "bad"


# --- the rule, the drain, the records ---------------------------------------------------------------------------------


def rail_matrix(slow: set[tuple[str, str]]) -> list[PairResult]:
    out = []
    for rail in RAILS:
        for index, pairs in enumerate(schedule.all_pairs(HOSTS)):
            out += [slow_nic_result(s, c, rail, index, slow) for s, c in pairs]
    return out


def test_a_bad_nic_drains_its_host_naming_the_nic() -> None:
    results = rail_matrix({("h03", "mlx5_0")})
    attribution = attribute_rails(results, dict.fromkeys(RAILS, LINE))
    (finding,) = judge(results, attribution, RULES, "bandwidth", 0.9)
    assert (finding.rule, finding.target, finding.entity) == ("perf_bad_rail_nic", "h03", "mlx5_0")
    assert finding.symptom == ("RDMA bandwidth far below expected on h03 NIC mlx5_0 with every partner on its rail, "
                               "while h03 runs at speed on mlx5_1")
    assert finding.fix.startswith("Drain h03, naming NIC mlx5_0") and "1/N" in finding.fix
    assert finding.evidence["expected"] == f">= {0.9 * LINE:.1f} Gb/s"
    assert finding.evidence["details"]["ok_on_rails"] == ["mlx5_1"]
    stage = policy.StageResult("bandwidth", policy.stage_status([finding]), findings=[finding])
    (why,) = policy.drain_reasons([stage], set(HOSTS), {"bandwidth": attribution.bad_nodes})
    assert (why.node, why.rule, why.entity) == ("h03", "perf_bad_rail_nic", "mlx5_0")


def test_records_keep_the_rail_and_old_records_read_as_the_single_rail(tmp_path: Path) -> None:
    results = rail_matrix({("h03", "mlx5_0")})
    attribution = attribute_rails(results, dict.fromkeys(RAILS, LINE))
    live = judge(results, attribution, RULES, "bandwidth", 0.9)
    write_results(results, attribution, tmp_path)
    recorded = json.loads((tmp_path / "results.json").read_text())
    assert {r["rail"] for r in recorded} == set(RAILS)
    again = [PairResult.from_record(r) for r in recorded]
    assert [r.rail for r in again] == [r.rail for r in results]
    saved = Attribution.from_record(json.loads((tmp_path / "attribution.json").read_text()))
    assert saved.bad_nics == (("h03", "mlx5_0"),)
    assert [finding_json(f) for f in judge(again, saved, RULES, "bandwidth", 0.9)] == [finding_json(f) for f in live]
    rows = (tmp_path / "pairs.csv").read_text().splitlines()
    assert rows[0].endswith(",rail,server_nic,client_nic") and rows[1].endswith(",mlx5_0,,")
    old = {k: v for k, v in recorded[0].items() if k != "rail"}
    assert PairResult.from_record(old).rail is None
    assert PairResult.from_record({**old, "rail": ["not", "a", "name"]}).rail is None  # untrusted data
    assert Attribution.from_record({"bad_nodes": ["h1"]}).bad_nics == ()


# --- the gate's schedule choice ----------------------------------------------------------------------------------------


def lldp_links() -> list[Link]:
    """Two rails, each on its own pair of leaves: rail k of h00-h03 on leafA<k>, of h04-h07 on leafB<k>."""
    return [Link(h, rail, f"leaf{'A' if h < 'h04' else 'B'}{k}", f"swp{i}", "lldp")
            for i, h in enumerate(HOSTS) for k, rail in enumerate(RAILS)]


def test_the_gate_schedules_rail_by_rail_and_reports_the_bad_rail_nic_exposure() -> None:
    rails = dict.fromkeys(HOSTS, list(RAILS))
    choice = schedule_choice.choose("auto", None, HOSTS, 3, observed=lldp_links(),
                                    devices=dict.fromkeys(HOSTS, "mlx5_0"), rails=rails)
    assert choice.kind == "topology" and "rail-aligned on 2 rails (mlx5_0, mlx5_1)" in choice.why
    args = choice.engine_args()
    assert set(args) == {"rail_planner", "rail_leaves"}
    plan = args["rail_planner"](HOSTS)
    assert set(plan) == set(RAILS)
    fabric = choice.tested_rails()
    slow = ("h06", "mlx5_1")
    results = []
    for rail, rounds in plan.items():
        for index, pairs in enumerate(rounds):
            results += [slow_nic_result(s, c, rail, index, {slow}) for s, c in pairs]
    for rail in RAILS:  # each rail's confirmation, as the engine runs it
        mine = [r for r in results if r.rail == rail]
        statuses = {p: v.status for p, v in engine.classify(mine, LINE).items()}
        results += [slow_nic_result(s, c, rail, len(plan[rail]), {slow})
                    for s, c in schedule.confirmation_for(statuses, list(fabric[rail]), fabric[rail])]
    attribution = attribute_rails(results, dict.fromkeys(RAILS, LINE))
    assert attribution.bad_nics == (slow,)
    figures = choice.figures(results, attribution, 0.9)
    assert figures["rails"] == list(RAILS) and figures["source"] == "lldp"
    assert figures["bad_rail_nic"]["faults"] == 16 and figures["bad_rail_nic"]["probability"] == 1.0
    assert figures["bad_node"]["probability"] == 1.0 and figures["bad_inter_leaf_link"]["faults"] == 2  # one per rail
    assert figures["bad_rail_nics"] == [list(slow)] and figures["bad_inter_leaf_links"] == []
    assert figures["pair_runs"] == sum(len(p) for rounds in plan.values() for p in rounds)


def test_one_rail_a_fixed_device_or_no_multi_rail_host_keeps_the_single_rail_schedule() -> None:
    observed = lldp_links()
    single = schedule_choice.choose("auto", None, HOSTS, 3, observed=observed, devices=dict.fromkeys(HOSTS, "mlx5_0"),
                                    rails=dict.fromkeys(HOSTS, ["mlx5_0"]))
    assert not single.rail_leaves and set(single.engine_args()) == {"planner", "leaf_of"}
    fixed = schedule_choice.choose("auto", None, HOSTS, 3, "mlx5_0", observed=observed,
                                   rails=dict.fromkeys(HOSTS, list(RAILS)))
    assert not fixed.rail_leaves
    # storage hosts on mlx5_0, compute hosts on mlx5_1: two NIC names, but no host on both
    split = {h: ["mlx5_0"] if h < "h04" else ["mlx5_1"] for h in HOSTS}
    assert schedule_choice.rail_fabric(observed, split) == {}
    randomly = schedule_choice.choose("random", None, HOSTS, 3, observed=observed, rails=dict.fromkeys(HOSTS, list(RAILS)))
    assert randomly.kind == "random" and not randomly.rail_leaves


def test_a_replay_reads_each_rails_leaves_for_the_path_classes(tmp_path: Path) -> None:
    choice = schedule_choice.choose("auto", None, HOSTS, 3, observed=lldp_links(),
                                    devices=dict.fromkeys(HOSTS, "mlx5_0"), rails=dict.fromkeys(HOSTS, list(RAILS)))
    choice.rail_planner(HOSTS)
    schedule_choice.save(choice, choice.figures([], Attribution((), (), {}), 0.9), tmp_path / "perf")
    assert schedule_choice.saved_rail_leaves(tmp_path) == choice.tested_rails()
    cabling = schedule_choice.stage_cabling({}, schedule_choice.saved_rail_leaves(tmp_path))
    assert set(cabling) == set(RAILS)
    links, _ = cabling["mlx5_1"]
    assert {(link.host, link.switch) for link in links} == {(h, f"leaf{'A' if h < 'h04' else 'B'}1") for h in HOSTS}
    (tmp_path / "perf" / "schedule.json").write_text('{"rail_leaf": {"mlx5_0": ["no"]}}')
    assert schedule_choice.saved_rail_leaves(tmp_path) == {}
