"""A node that shows no RDMA device while its peers do is drained; the same gap on a node alone stays inconclusive
(no data is never a pass, and never a drain of a node nobody can compare)."""

from __future__ import annotations

from pathlib import Path

from rdmatool.gate.profile import GateProfile
from rdmatool.gate.run import replay_gate
from tests.pods import bundle as pods


def test_a_node_without_rdma_ports_among_peers_that_have_them_is_drained(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    pod.host("gpu02").omit.update({"sysfs_counters", "ibv_devinfo"})
    result = replay_gate(str(pods.write(pod, tmp_path / "bundle")), GateProfile())
    assert result.verdict.value == "fail" and result.drain == ["gpu02"]
    assert [(r.node, r.stage, r.rule) for r in result.drain_reasons] == [
        ("gpu02", "state", "rdma_device_missing_vs_peers")]


def test_the_same_gap_on_every_node_alike_names_no_one(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    for host in pod.hosts:
        host.omit.update({"sysfs_counters", "ibv_devinfo"})
    result = replay_gate(str(pods.write(pod, tmp_path / "bundle")), GateProfile())
    assert result.drain == [] and result.verdict.value != "fail"
