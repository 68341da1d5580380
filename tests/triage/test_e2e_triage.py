"""End to end: the triage classes on the simulated fabric, collected over real SSH by `rdmatool collect` and judged by
`rdmatool diagnose`. Each host is set up for one class through the scenario's knobs (its GPUs' utilisation and
memory through the nvidia-smi shim, its RDMA ports' traffic); one compute host has no GPU and no nvidia-smi."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bundle_sides import outputs_of
from tests.e2e.helpers import collect, rdmatool
from tests.fabric import scenario
from tests.fabric.fixtures import sim_fabric

NICS = [{"device": "mlx5_0", "link_layer": "InfiniBand", "netdev": "ibp24s0", "rate_gbps": 400, "width": "4X",
         "mtu": 4096}]
HOSTS = {  # name: knobs, and the class the triage must find there
    "gpu01": ({"gpu_util": 96.0, "net_util": 0.03}, "compute_bound"),
    "gpu02": ({"gpu_util": 22.0, "net_util": 0.85}, "communication_bound"),
    "gpu03": ({"gpu_util": 9.0, "net_util": 0.03}, "data_loading"),
    "gpu04": ({"gpus": 0}, None),
    "gpu05": ({"gpu_util": 2.0, "gpu_memory_pct": 0.5, "net_util": 0.01}, "idle"),
}
FINDING = {"compute_bound": "triage_compute_bound", "communication_bound": "triage_communication_bound",
           "data_loading": "triage_data_loading"}


def triage_scenario() -> scenario.Scenario:
    hosts = [{"name": name, "address": f"127.0.1.{i + 1}", "role": "compute", "nics": NICS, **knobs}
             for i, (name, (knobs, _)) in enumerate(HOSTS.items())]
    return scenario.from_dict({"name": "triage", "hosts": hosts, "switches": [], "links": []})


@pytest.fixture(scope="module")
def diagnosis(tmp_path_factory) -> tuple[dict, Path]:
    with sim_fabric(triage_scenario()) as fabric:
        out = tmp_path_factory.mktemp("triage") / "bundle"
        result = collect(fabric, out, "--interval", "3", "--timeout", "20")
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report = rdmatool("diagnose", str(out), "--format", "json")
    assert report.returncode in (0, 1), report.stderr
    return json.loads(report.stdout), out


@pytest.mark.e2e
def test_each_host_is_in_its_class_with_the_evidence(diagnosis) -> None:
    report, _ = diagnosis
    findings = {(f["rule"], f["target"]): f for f in report["findings"]}
    for host, (knobs, verdict) in HOSTS.items():
        rule = FINDING.get(verdict)
        if rule is None:
            assert not any(t == host and r.startswith("triage_") for r, t in findings), host
            continue
        found = findings[(rule, host)]
        assert found["severity"] == "info"
        assert found["evidence"]["observed"] == pytest.approx(knobs["gpu_util"], abs=1.0)
        record = found["evidence"]["details"]
        assert record["verdict"] == verdict and len(record["gpus"]) == 8
        assert record["ports"]["mlx5_0/1"] == pytest.approx(knobs["net_util"], rel=0.1, abs=0.01)
        assert "8 GPUs" in found["symptom"] and "mlx5_0/1" in found["symptom"]


@pytest.mark.e2e
def test_a_host_without_gpu_is_an_info_monitoring_gap_not_a_failure(diagnosis) -> None:
    report, _ = diagnosis
    gap = [f for f in report["findings"] if f["rule"] == "gpu_monitoring_gap"]
    assert [(f["target"], f["severity"]) for f in gap] == [("gpu04", "info")]
    assert report["failures"] == []  # no nvidia-smi there: no section, no "not installed" failure


@pytest.mark.e2e
def test_the_triage_alone_keeps_the_verdict_a_pass(diagnosis) -> None:
    report, _ = diagnosis
    above = [(f["rule"], f["target"]) for f in report["findings"] if f["severity"] != "info"]
    assert above == [] and report["verdict"] == "pass"


@pytest.mark.e2e
def test_the_bundle_holds_the_shim_output_of_both_snapshots(diagnosis) -> None:
    _, bundle = diagnosis
    outputs = [(snapshot, host) for snapshot in (0, 1) for host in ("gpu01", "gpu02", "gpu03", "gpu04", "gpu05")
               if any(stem.startswith("nvidia_smi") for stem in outputs_of(bundle, snapshot, host))]
    # four GPU hosts, two snapshots each; gpu04 has no nvidia-smi
    assert {host for _, host in outputs} == {"gpu01", "gpu02", "gpu03", "gpu05"}
    assert {snapshot for snapshot, _ in outputs} == {0, 1}
