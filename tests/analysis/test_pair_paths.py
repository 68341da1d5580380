"""A bundle's per-peer perftest results grouped by the leaves of their ends, as the gate groups its matrix: every pair
between two leaves slow while each end runs at speed within its leaf is one finding naming the two leaves (and their
uplink ports), not a bad link per pair, and no node is blamed."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from rdmatool.bundle.names import file_stem
from rdmatool.diagnose.pipeline import diagnose_analysis
from rdmatool.gate.judge import analysis_of
from rdmatool.model import Severity
from rdmatool.pairs import paths
from rdmatool.pairs.attribution import fact_row
from rdmatool.pairs.bundle_results import pair_results
from rdmatool.table.analysis import analyse_path
from tests.analysis.pairs_bundle import perftest_output
from tests.bundle_sides import put_output
from tests.pods import bundle as pods

BAD = (Severity.WARNING, Severity.ERROR, Severity.CRITICAL)
# healthy_pod(platforms=2) cables the RoCE ports (mlx5_1) to leaf01 and leaf02 in turn
LEAF01, LEAF02 = ("gpu01", "gpu03", "gpu05"), ("gpu02", "gpu04", "gpu06")


def _bundle(tmp_path: Path, pairs: dict[tuple[str, str], float], device: str = "mlx5_1") -> Path:
    pod = pods.healthy_pod(platforms=("sonic", "cumulus"), gpus=6)
    for host in pod.hosts:
        host.bw, host.lat = None, None
    path = pods.write(pod, tmp_path / "pod")
    started = (pods.T0 + timedelta(seconds=pods.WINDOW_S)).isoformat()
    for (client, server), bw in pairs.items():
        qualifier = f"ib_write_bw@{server}"
        side = {"command": f"ib_write_bw -d {device} --report_gbits {server}", "exit_code": 0, "started": started,
                "qualifier": qualifier}
        text = perftest_output(bw).replace("mlx5_0", device)  # the RoCE NIC, the one LLDP cables to a leaf
        put_output(path, 1, client, file_stem("perftest", qualifier), text, side)
    return path


def _within(hosts: tuple[str, ...], bw: float) -> dict[tuple[str, str], float]:
    return {(a, b): bw for i, a in enumerate(hosts) for b in hosts[i + 1:]}


def _crossing(bw: float) -> dict[tuple[str, str], float]:
    return dict(zip(zip(LEAF01, LEAF02), [bw] * len(LEAF01)))


def _bad(result) -> list[tuple]:
    return sorted((f.rule, f.target, f.entity) for f in result.findings if f.severity in BAD)


def test_every_pair_between_two_leaves_slow_is_one_finding_naming_the_leaves(tmp_path: Path) -> None:
    pairs = {**_within(LEAF01, 390.0), **_within(LEAF02, 391.0), **_crossing(150.0)}
    result = diagnose_analysis(analyse_path(_bundle(tmp_path, pairs)))
    assert _bad(result) == [("perf_slow_inter_leaf", "fabric", "leaf01<->leaf02")]
    (finding,) = [f for f in result.findings if f.rule == "perf_slow_inter_leaf"]
    assert "leaf leaf01 and leaf leaf02" in finding.symptom
    assert "gpu01<->gpu02, gpu03<->gpu04, gpu05<->gpu06" in finding.symptom
    assert finding.evidence["observed"] == 150.0
    record = finding.evidence["details"]
    assert record["pairs"] == ["gpu01<->gpu02", "gpu03<->gpu04", "gpu05<->gpu06"]
    assert record["expected_gbps"] == 400.0  # the hosts' fastest port


def test_one_slow_pair_between_leaves_stays_a_bad_link(tmp_path: Path) -> None:
    pairs = {**_within(LEAF01, 390.0), **_within(LEAF02, 391.0), **_crossing(389.0)}
    pairs["gpu01", "gpu02"] = 150.0
    result = diagnose_analysis(analyse_path(_bundle(tmp_path, pairs)))
    assert _bad(result) == [("perf_bad_link", "fabric", "gpu01<->gpu02")]


def test_a_pair_between_the_leaves_at_speed_clears_the_path(tmp_path: Path) -> None:
    pairs = {**_within(LEAF01, 390.0), **_within(LEAF02, 391.0), **_crossing(150.0)}
    pairs["gpu05", "gpu06"] = 389.0
    result = diagnose_analysis(analyse_path(_bundle(tmp_path, pairs)))
    assert _bad(result) == [("perf_bad_link", "fabric", "gpu01<->gpu02"), ("perf_bad_link", "fabric", "gpu03<->gpu04")]


def test_without_the_tested_nics_cabling_the_pairs_are_judged_one_by_one(tmp_path: Path) -> None:
    pairs = {**_within(LEAF01, 390.0), **_within(LEAF02, 391.0), **_crossing(150.0)}
    result = diagnose_analysis(analyse_path(_bundle(tmp_path, pairs, device="mlx5_0")))  # the IB NIC: no LLDP
    assert [rule for rule, _, _ in _bad(result)] == ["perf_bad_link"] * 3


def test_the_uplink_ports_are_named_when_the_leaves_lldp_sees_the_spine(tmp_path: Path) -> None:
    pairs = {**_within(LEAF01, 390.0), **_within(LEAF02, 391.0), **_crossing(150.0)}
    analysis = analyse_path(_bundle(tmp_path, pairs))
    slow = paths.slow_paths(
        pair_results(analysis), {None: {**dict.fromkeys(LEAF01, "leaf01"), **dict.fromkeys(LEAF02, "leaf02")}}, {None: 400.0}, 0.9)
    rows = paths.path_facts(slow, 0.9, {"leaf01": ["Ethernet48 to spine01 Ethernet0"]})
    texts = {r["metric"]: r["text"] for r in rows}
    assert texts["perf_path_uplinks"] == "leaf01 Ethernet48 to spine01 Ethernet0"
    assert json.loads(texts["perf_record"])["uplinks"] == ["leaf01 Ethernet48 to spine01 Ethernet0"]
    none = {r["metric"]: r["text"] for r in paths.path_facts(slow, 0.9)}
    assert none["perf_path_uplinks"] == paths.NO_UPLINKS


def test_a_leafs_uplinks_are_its_lldp_neighbours_that_are_switches_of_the_data() -> None:
    rows = [fact_row("leaf01", "switch", "Ethernet48", "lldp_neighbor", text="spine01.dc1|Ethernet0"),
            fact_row("leaf01", "switch", "Ethernet0", "lldp_neighbor", text="gpu01|ens1f0np0"),  # a host
            fact_row("spine01", "switch", "Ethernet0", "lldp_neighbor", text="leaf01|Ethernet48"),
            fact_row("gpu01", "host", "ens1f0np0", "lldp_neighbor", text="leaf01|Ethernet0")]
    assert paths.uplink_ports(analysis_of(rows)) == {"leaf01": ["Ethernet48 to spine01 Ethernet0"],
                                                    "spine01": ["Ethernet0 to leaf01 Ethernet48"]}
