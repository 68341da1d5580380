"""End to end: the gate's storage stage (profile `storage:`) over the real sshd of the simulated fabric. Four compute
hosts read two storage nodes of two RoCE NICs each, two clients a node at once (one per NIC: every NIC of a node
carries reads); stor02's second NIC runs at a quarter of its rate (fault slow_nic). The stage names stor02 slow
through that NIC (storage_node_slow: the gate fails and drains it), passes stor01, judges each node against both
its NICs, and reads the compute class's pause counters of the nodes, their clients and their leaf around the reads
(none paused: each NIC serves one client, nothing congests). Two nodes keep the fabric small: stor02 at 60 % of its
line rate is below 80 % of the two nodes' median (78 %)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.gate.storage_stage import replay_storage
from rdmatool.rules import playbook
from tests.e2e.helpers import rdmatool
from tests.fabric import scenario
from tests.fabric.fixtures import sim_fabric

pytestmark = pytest.mark.e2e

PROFILE = """\
counters_window_s: 1
bandwidth: {enabled: false}
storage: {clients_per_node: 2, duration_s: 2}
"""


def test_the_storage_stage_names_the_slow_node_by_its_nic_and_passes_the_healthy_ones(tmp_path: Path) -> None:
    sc = scenario.build(6, n_storage=2, storage_nics=2, platforms=("sonic",), name="gate-storage",
                        faults=[{"kind": "slow_nic", "target": "stor02", "nic": "mlx5_1", "value": 0.25}])
    (tmp_path / "profile.yaml").write_text(PROFILE)
    with sim_fabric(sc) as fab:
        done = rdmatool("gate", "-i", str(fab.inventory_path), "--known-hosts", str(fab.known_hosts), "--profile",
                        str(tmp_path / "profile.yaml"), "--json", "--save", str(tmp_path / "bundle"), timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    payload = json.loads(done.stdout)
    stages = {s["name"]: s for s in payload["stages"]}
    assert done.returncode == 1 and payload["verdict"] == "fail", (stages, done.stderr)
    stage = stages["storage"]
    assert stage["status"] == "failed", stage
    [slow] = [f for f in payload["findings"] if f["rule"] == "storage_node_slow"]
    assert (slow["target"], slow["entity"]) == ("stor02", "mlx5_1"), slow
    assert payload["drain"] == ["stor02"]
    nodes = {n["node"]: n for n in stage["figures"]["nodes"]}
    assert [n for n, v in nodes.items() if v["slow"]] == ["stor02"]
    assert all(v["line_gbps"] == 400.0 and len(v["nics"]) == 2 for v in nodes.values())  # both NICs read
    assert nodes["stor01"]["share"] > 0.9 and nodes["stor02"]["share"] < 0.8
    pauses = stage["figures"]["pauses"]
    assert pauses["priority"] == 3 and pauses["paused"] == [] and pauses["storage_nodes"] == ["stor01", "stor02"]
    assert {p["target"] for p in pauses["ports"]} >= {"stor01", "gpu01"}  # the background trickle, read
    assert "not paused" in stage["detail"]
    record = json.loads((tmp_path / "bundle" / "storage" / "results.json").read_text())
    assert {r["test"] for r in record["results"]} == {"ib_read_bw"} and len(record["results"]) == 4
    replayed = replay_storage(str(tmp_path / "bundle"), playbook.load_dir(default_playbooks()))
    live = {(f["rule"], f["target"], f["entity"]) for f in payload["findings"] if f["rule"].startswith("storage_")}
    assert {(f.rule, f.target, f.entity) for f in replayed.findings} == live  # the same judgement, recorded
    read = json.loads((tmp_path / "bundle" / "storage" / "before" / "manifest.json").read_text())
    assert {t["name"] for t in read["targets"]} == {*nodes, *(f"gpu{i:02d}" for i in range(1, 5)), "leaf01"}
