"""A monitoring gap whose command hung says so, instead of the gap rule's "install the tool" or "update the driver".

The collection records a command that did not finish (its timeout fired, it never finished) as a failed command,
which a diagnosis adds as a fact (rdmatool.rules.command_failures); a rule on that fact replaces the gap rule on its
host. mlnx_qos (the NIC QoS configuration), the read of the RDMA counters in sysfs (ECN/CNP counters) and the GPU
tools (GPU utilisation) each get theirs, as `ethtool -S` did (tests/rules/test_pause_counter_gaps.py). Hand-made pods
(tests/pods) whose failed commands are written through the transport's own conversion, diagnosed with the shipped
playbooks as `rdmatool diagnose` does; the gate says the same of a hung mlnx_qos and a hung `ethtool -S`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool import bundle as bundle_io
from rdmatool.diagnose.pipeline import diagnose_analysis
from rdmatool.gate.profile import GateProfile
from rdmatool.gate.run import replay_gate
from rdmatool.table.analysis import analyse_bundle
from tests.pods import bundle as pods
from tests.rules.test_pause_counter_gaps import GAP_RULES

QOS_RULES = {"missing_qos_config", "qos_config_mlnx_qos_hung"}
CC_RULES = {"missing_roce_cc_counters", "roce_cc_counters_read_hung"}
GPU_RULES = {"gpu_monitoring_gap", "gpu_tool_hung"}


def _diagnosed(pod: pods.Pod, path: Path):
    return diagnose_analysis(analyse_bundle(bundle_io.read(pods.write(pod, path))))


def _of(result, rules: set[str]) -> list:
    return [f for f in result.findings if f.rule in rules]


def test_a_hung_mlnx_qos_is_a_command_that_did_not_finish_not_a_missing_tool(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    pod.host("gpu02").failing["mlnx_qos"] = 124  # its timeout fired
    [gap] = _of(_diagnosed(pod, tmp_path / "hung"), QOS_RULES)
    assert (gap.rule, gap.target) == ("qos_config_mlnx_qos_hung", "gpu02")
    assert "mlnx_qos did not finish on RoCE host gpu02" in gap.symptom
    # the failure as the transport recorded it
    assert gap.evidence["observed"] == "mlnx_qos -i ens1f0np0 timed out on gpu02"
    assert "install mlnx" not in gap.fix.lower() and "not installed" not in gap.symptom + gap.cause
    assert "mlnx_qos is installed" in gap.cause and "time mlnx_qos -i" in gap.check and "drain gpu02" in gap.fix


def test_a_missing_mlnx_qos_still_says_install_it(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    pod.host("gpu03").omit.add("mlnx_qos")  # the host script runs mlnx_qos only where it is found: no output, no failure
    [gap] = _of(_diagnosed(pod, tmp_path / "missing"), QOS_RULES)
    assert (gap.rule, gap.target) == ("missing_qos_config", "gpu03")
    assert "not installed" in gap.cause and "Install mlnx-tools" in gap.fix


def test_an_mlnx_qos_that_failed_otherwise_is_not_said_to_be_missing(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    pod.host("gpu03").printed_nothing.add("mlnx_qos")  # it ran and gave nothing: a parse failure, listed
    result = _diagnosed(pod, tmp_path / "failed")
    [gap] = _of(result, QOS_RULES)
    assert (gap.rule, gap.target) == ("missing_qos_config", "gpu03")
    assert any(f["target"] == "gpu03" and f["parser"] == "mlnx_qos" for f in result.failures)
    # the cause names both, and points at the failure the diagnosis lists
    assert not gap.cause.startswith("mlnx_qos is not installed, so")
    assert "listed with the failures" in gap.cause and "mlnx_qos -i <netdev>" in gap.check


def test_a_hung_read_of_the_rdma_counters_is_not_an_old_driver(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    pod.host("stor01").failing["sysfs_counters"] = 124
    [gap] = _of(_diagnosed(pod, tmp_path / "sysfs"), CC_RULES)
    assert (gap.rule, gap.target) == ("roce_cc_counters_read_hung", "stor01")
    assert gap.evidence["observed"].endswith("timed out on stor01")
    assert "update the driver" not in gap.fix.lower() and "drain stor01" in gap.fix


def test_a_hung_gpu_tool_is_not_a_tool_to_install(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    pod.host("gpu01").failing["nvidia_smi"] = 124
    [gap] = _of(_diagnosed(pod, tmp_path / "gpu"), GPU_RULES)
    assert (gap.rule, gap.target) == ("gpu_tool_hung", "gpu01")
    assert gap.evidence["observed"].startswith("nvidia-smi ") and gap.evidence["observed"].endswith(" on gpu01")
    assert "install" not in gap.fix.lower() and "not installed" not in gap.cause and "drain gpu01" in gap.fix
    assert gap.severity.value == "info"  # a gap of the triage, as the one it replaces


def test_a_missing_gpu_tool_still_says_install_it(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    pod.host("gpu01").omit.add("nvidia_smi")  # the host script runs each GPU tool only where it is found
    [gap] = _of(_diagnosed(pod, tmp_path / "no-gpu-tool"), GPU_RULES)
    assert (gap.rule, gap.target) == ("gpu_monitoring_gap", "gpu01")
    assert "Install" in gap.fix


@pytest.mark.parametrize(("parser", "rules", "hung"), [
    ("mlnx_qos", QOS_RULES, "qos_config_mlnx_qos_hung"),
    ("ethtool_stats", GAP_RULES, "pause_counters_ethtool_hung"),
])
def test_the_gate_says_a_hung_tool_hung(tmp_path: Path, parser: str, rules: set[str], hung: str) -> None:
    pod = pods.healthy_pod()
    pod.host("gpu01").failing[parser] = 124
    result = replay_gate(str(pods.write(pod, tmp_path / "gate")), GateProfile())
    gaps = [(f.rule, f.target) for stage in result.stages for f in stage.findings if f.rule in rules]
    assert gaps == [(hung, "gpu01")]
    assert result.verdict.value == "inconclusive"  # a hung tool leaves the host unread (rdmatool.outcome.failures)
