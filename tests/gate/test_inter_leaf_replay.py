"""The gate's bandwidth stage groups slow pairs by the leaves of their ends, live and on replay: every pair between
two leaves slow, each end at speed within its leaf, is one slow inter-leaf path (a fabric finding naming both leaves)
— not a bad link per pair, and no node drained."""

from __future__ import annotations

from pathlib import Path

from rdmatool.gate import schedule_choice
from rdmatool.gate.profile import GateProfile
from rdmatool.gate.run import replay_gate
from rdmatool.perf.attribution import attribute
from rdmatool.perf.model import PairResult
from rdmatool.perf.output import write_results
from tests.pods import bundle as pods

LINE = 400.0  # the pod's fastest port
LEAF_A, LEAF_B = ("gpu01", "gpu02", "gpu03"), ("gpu04", "gpu05", "gpu06")


def _pairs(slow_crossing: int) -> list[PairResult]:
    """Every pair within a leaf at speed, and the first `slow_crossing` of the pairs across at 40 %."""
    within = [(a, b) for hosts in (LEAF_A, LEAF_B) for i, a in enumerate(hosts) for b in hosts[i + 1:]]
    across = list(zip(LEAF_A, LEAF_B))
    out = []
    for server, client in within + across:
        slow = (server, client) in across[:slow_crossing]
        out.append(PairResult(server, client, "ib_write_bw", 65536, LINE * (0.4 if slow else 0.97), None, None, None,
                              0, "", "", 1.0, None, "mlx5_1/1", "mlx5_1/1"))
    return out


def _saved_gate(tmp_path: Path, results: list[PairResult]) -> str:
    pod = pods.healthy_pod(gpus=6)
    path = pods.write(pod, tmp_path / "bundle")
    write_results(results, attribute(results, LINE), path / "perf")
    choice = schedule_choice.Choice("topology", "test", 3, tested_leaf={
        **dict.fromkeys(LEAF_A, "leafA"), **dict.fromkeys(LEAF_B, "leafB")})
    schedule_choice.save(choice, {}, path / "perf")
    return str(path)


def test_a_slow_path_is_one_finding_and_no_bad_link_on_replay(tmp_path: Path) -> None:
    result = replay_gate(_saved_gate(tmp_path, _pairs(3)), GateProfile())
    slow = [(f.rule, f.target, f.entity) for f in result.findings if f.rule.startswith("perf_")]
    assert slow == [("perf_slow_inter_leaf", "fabric", "leafA<->leafB")]
    assert result.bad_links == [] and result.drain == []
    assert result.verdict.value == "fail"


def test_one_slow_pair_across_stays_a_bad_link(tmp_path: Path) -> None:
    result = replay_gate(_saved_gate(tmp_path, _pairs(1)), GateProfile())
    assert [(f.rule, f.entity) for f in result.findings if f.rule.startswith("perf_")] == [
        ("perf_bad_link", "gpu01<->gpu04")]
    assert result.bad_links == [("gpu01", "gpu04")] and result.drain == []
