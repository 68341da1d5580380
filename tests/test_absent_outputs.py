"""A target the manifest lists that left nothing in a snapshot the manifest lists, with no failure saying why, is not
judged as if it were healthy: the files of a bundle can go missing after the collection (a deleted folder, a copy
cut short), and a target without its second snapshot has no counter rates to fail on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rdmatool.diagnose.pipeline import diagnose_bundle
from rdmatool.gate.profile import GateProfile
from rdmatool.gate.run import replay_gate
from rdmatool.table.absent_outputs import absent_failures
from tests.bundle_sides import remove_target
from tests.e2e.helpers import rdmatool
from tests.pods import bundle as pods

MANIFEST = {"snapshots": [{"index": 0}, {"index": 1}],
            "targets": [{"name": "gpu01"}, {"name": "gpu02"}, {"name": "gpu03"}, {"name": "leaf01"}]}


def test_a_listed_target_with_nothing_in_a_listed_snapshot_is_a_failure_unless_one_says_why() -> None:
    manifest = {**MANIFEST, "failures": [
        {"target": "gpu02", "error": "gpu02 (10.0.0.2:22): connection refused"},  # not reached: said already
        {"target": "leaf01", "parser": "sonic_pfc_counters", "snapshot": 1, "error": "target deadline exceeded"},
    ]}
    present = {(0, "gpu01"), (0, "gpu03"), (1, "gpu03"), (0, "leaf01")}
    found = absent_failures(manifest, present)
    assert [(f["target"], f["snapshot"]) for f in found] == [("gpu01", 1)]
    assert "no output in snapshot 1" in found[0]["error"] and not found[0].get("parser")
    assert absent_failures(manifest, present | {(1, "gpu01")}) == []


def test_every_snapshot_missing_is_named() -> None:
    found = absent_failures({**MANIFEST, "targets": [{"name": "gpu01"}]}, set())
    assert found[0]["error"].startswith("no output in snapshots 0, 1 of the bundle")


def _pod_bundle(tmp_path: Path) -> tuple[Path, str]:
    pod = pods.healthy_pod()
    return pods.write(pod, tmp_path / "pod"), pod.hosts[0].name


def test_a_target_whose_second_snapshot_is_gone_makes_the_diagnosis_and_the_gate_inconclusive(tmp_path) -> None:
    path, host = _pod_bundle(tmp_path)
    assert diagnose_bundle(path).verdict.value == "pass"  # the same bundle whole
    assert replay_gate(str(path), GateProfile()).verdict.value == "pass"
    remove_target(path, 1, host)
    result = diagnose_bundle(path)
    assert result.verdict.value == "inconclusive", result.failures
    assert [f["target"] for f in result.failures] == [host] and host in result.unreachable
    gate = replay_gate(str(path), GateProfile())
    assert gate.verdict.value == "inconclusive" and gate.drain == []
    # the command line: exit 3, and the target named
    run = rdmatool("diagnose", str(path))
    assert run.returncode == 3, run.stdout + run.stderr
    assert host in run.stdout and "no output in snapshot 1" in run.stdout.replace("\n  ", " ")


def test_a_bundle_whose_second_snapshot_folder_is_gone_is_inconclusive(tmp_path) -> None:
    path, host = _pod_bundle(tmp_path)
    shutil.rmtree(path / "snapshots" / "1")
    gate = replay_gate(str(path), GateProfile())
    assert gate.verdict.value == "inconclusive" and gate.drain == []
    assert host in {f["target"] for f in gate.failures if "no output in snapshot 1" in f["error"]}


def test_a_replayed_bundle_of_one_snapshot_says_why_it_has_no_counter_stage(tmp_path) -> None:
    # not "budget too short": a replay has no budget; its bundle holds no two readings of a counter
    path, _ = _pod_bundle(tmp_path)
    shutil.rmtree(path / "snapshots" / "1")
    manifest = path / "manifest.json"
    data = json.loads(manifest.read_text())
    data["snapshots"] = [s for s in data["snapshots"] if s["index"] == 0]
    manifest.write_text(json.dumps(data))
    gate = replay_gate(str(path), GateProfile())
    assert gate.failures == []  # one snapshot listed, one read: nothing absent
    counters = next(s for s in gate.stages if s.name == "counters")
    assert counters.status == "inconclusive" and "no two snapshots" in counters.detail, counters
    assert gate.verdict.value == "inconclusive"


def test_a_target_with_only_a_capture_in_a_snapshot_is_not_absent(tmp_path) -> None:
    path, host = _pod_bundle(tmp_path)
    remove_target(path, 1, host)
    folder = path / "snapshots" / "1" / host
    folder.mkdir()
    (folder / "capture.mlx5_0.pcap").write_bytes(b"")  # what `rdmatool capture` adds to a snapshot
    failures = diagnose_bundle(path).failures
    assert not any("no output in snapshot" in f["error"] for f in failures), failures


def test_a_limit_on_a_replayed_bundle_is_refused_not_ignored(tmp_path) -> None:
    """The gate's replay judges a bundle whole; `diagnose BUNDLE --limit` narrows it (tests/test_bundle_limit.py)."""
    path, host = _pod_bundle(tmp_path)
    run = rdmatool("gate", "--replay", str(path), "--limit", host)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "judged whole" in run.stderr and "Traceback" not in run.stderr
    data = json.loads((path / "manifest.json").read_text())
    assert len(data["targets"]) > 1  # a selection would have mattered
