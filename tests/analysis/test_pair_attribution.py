"""A bundle with per-peer perftest results is judged as the gate judges its matrix, by the same function: the slow
node is blamed and its healthy partners are not; a slow pair of nodes that are fine elsewhere is one bad link
naming both ends."""

from __future__ import annotations

from pathlib import Path

from rdmatool.diagnose.pipeline import default_playbooks, diagnose_analysis
from rdmatool.gate.judge import judge
from rdmatool.model import Severity
from rdmatool.pairs.attribution import attribute
from rdmatool.pairs.bundle_results import expected_rates, pair_results
from rdmatool.rules import playbook
from rdmatool.table.analysis import analyse_path
from tests.analysis.pairs_bundle import add_pair_results
from tests.pods import bundle as pods

BAD = (Severity.WARNING, Severity.ERROR, Severity.CRITICAL)


def _bundle(tmp_path: Path, gpus: int, pairs: dict, errors: dict | None = None) -> Path:
    pod = pods.healthy_pod(gpus=gpus)
    for host in pod.hosts:
        host.bw, host.lat = None, None  # only the per-peer results below
    return add_pair_results(pods.write(pod, tmp_path / "pod"), pairs, errors=errors)


def _bad(result) -> list[tuple]:
    return sorted((f.rule, f.target, f.entity) for f in result.findings if f.severity in BAD)


def _gate_findings(analysis) -> list[tuple]:
    """The gate's judgement of the same pairs: its judge over the same attribution."""
    results = pair_results(analysis)
    rules = playbook.load_dir(default_playbooks())
    found = judge(results, attribute(results, expected_rates(analysis)), rules, "bandwidth")
    return sorted((f.rule, f.target, f.entity) for f in found if f.severity in BAD)


def test_slow_node_is_blamed_and_its_healthy_partners_are_not(tmp_path: Path) -> None:
    path = _bundle(tmp_path, 3, {("gpu01", "gpu02"): 390.0, ("gpu01", "gpu03"): 120.0, ("gpu02", "gpu03"): 121.0})
    analysis = analyse_path(path)
    result = diagnose_analysis(analysis)
    assert _bad(result) == [("perf_bad_node", "gpu03", None)]
    assert _bad(result) == _gate_findings(analysis)
    finding = next(f for f in result.findings if f.rule == "perf_bad_node")
    assert finding.evidence["details"]["partners_low"] == ["gpu01", "gpu02"]
    assert finding.evidence["observed"] == 120.5  # the median of its pairs, not either partner's figure


def test_slow_pair_of_good_nodes_is_one_bad_link_naming_both_ends(tmp_path: Path) -> None:
    pairs = {("gpu01", "gpu02"): 150.0, ("gpu01", "gpu03"): 391.0, ("gpu02", "gpu04"): 389.0,
             ("gpu03", "gpu04"): 390.0}
    analysis = analyse_path(_bundle(tmp_path, 4, pairs))
    result = diagnose_analysis(analysis)
    assert _bad(result) == [("perf_bad_link", "fabric", "gpu01<->gpu02")]
    assert _bad(result) == _gate_findings(analysis)
    link = next(f for f in result.findings if f.rule == "perf_bad_link")
    assert "gpu01" in link.symptom and "gpu02" in link.symptom


def test_healthy_matrix_is_silent(tmp_path: Path) -> None:
    pairs = {("gpu01", "gpu02"): 390.0, ("gpu01", "gpu03"): 391.0, ("gpu02", "gpu03"): 389.5}
    result = diagnose_analysis(analyse_path(_bundle(tmp_path, 3, pairs)))
    assert _bad(result) == []


def test_pair_results_read_back_from_the_bundle(tmp_path: Path) -> None:
    path = _bundle(tmp_path, 3, {("gpu01", "gpu02"): 390.0}, errors={("gpu02", "gpu03"): "Couldn't connect to gpu03"})
    results = {(r.client, r.server): r for r in pair_results(analyse_path(path))}
    assert set(results) == {("gpu01", "gpu02"), ("gpu02", "gpu03")}
    ok, failed = results["gpu01", "gpu02"], results["gpu02", "gpu03"]
    assert (ok.test, ok.size_bytes, ok.bw_avg_gbps, ok.error) == ("ib_write_bw", 65536, 390.0, None)
    assert failed.bw_avg_gbps is None and "Couldn't connect to gpu03" in failed.error
