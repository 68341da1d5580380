"""End to end: the simulated fabric collected over real SSH in two shards at once (`collect --shard 1/2` and
`--shard 2/2`, as two tasks of a job array would), merged by `rdmatool bundle merge` and diagnosed — against the
same fabric collected whole. Nothing is mocked: the CLI as a user runs it, the fabric's real sshd.

The faults injected are configuration faults, which every collection sees alike: the degraded scenario's flapping
cable and PFC storm grow counters by a fraction per second (a link recovery every 3 s), so two collections a minute
apart would not see the same counts in a one-second window, sharded or not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import REPO, collect, manifest, rdmatool
from tests.fabric.fixtures import fabric_fixture

pytestmark = pytest.mark.e2e

fabric = fabric_fixture("healthy", scope="module")
FAULTS = (("mtu_1024", "gpu02", {"nic": "mlx5_1"}), ("pfc_mismatch", "gpu03", {"nic": "mlx5_1", "value": 4}),
          ("width_downgrade", "gpu07", {"nic": "mlx5_0"}), ("port_down", "gpu06", {"nic": "mlx5_0"}),
          ("firmware_outlier", "gpu05", {"nic": "mlx5_0", "value": "28.35.1012"}))


def collect_async(fabric, out: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    return subprocess.Popen([sys.executable, "-m", "rdmatool", "collect", "-i", str(fabric.inventory_path), "-o",
                             str(out), "--known-hosts", str(fabric.known_hosts), "--timeout", "10", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)


@pytest.fixture(scope="module")
def collections(fabric, tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("shards")
    for kind, target, params in FAULTS:
        fabric.set_fault(kind, target, **params)
    try:
        shards = [collect_async(fabric, tmp / f"shard-{k}", "--interval", "1", "--shard", f"{k}/2") for k in (1, 2)]
        for proc in shards:
            _, stderr = proc.communicate(timeout=300)
            assert proc.returncode == 0, stderr
        whole = collect(fabric, tmp / "whole", "--interval", "1")
        assert whole.returncode == 0, whole.stderr
    finally:
        fabric.reset()
    return {"shard-1": tmp / "shard-1", "shard-2": tmp / "shard-2", "whole": tmp / "whole", "tmp": tmp}


def diagnosis(bundle: Path) -> tuple[int, dict]:
    result = rdmatool("diagnose", str(bundle), "--format", "json")
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


def judged(doc: dict) -> list[tuple]:
    return sorted((f["rule"], f["target"], str(f.get("entity")), f["severity"]) for f in doc["findings"])


def test_two_shards_merged_are_diagnosed_as_the_whole_fabric(collections) -> None:
    shard_targets = [{t["name"] for t in manifest(collections[k])["targets"]} for k in ("shard-1", "shard-2")]
    whole_targets = {t["name"] for t in manifest(collections["whole"])["targets"]}
    assert shard_targets[0] and shard_targets[1] and not shard_targets[0] & shard_targets[1]
    assert shard_targets[0] | shard_targets[1] == whole_targets
    merged = collections["tmp"] / "all"
    result = rdmatool("bundle", "merge", str(collections["shard-1"]), str(collections["shard-2"]), "-o", str(merged))
    assert result.returncode == 0, result.stderr
    assert f"merged 2 bundles: {len(whole_targets)} targets" in result.stderr
    assert {t["name"] for t in manifest(merged)["targets"]} == whole_targets
    store = merged / "samples.npz"
    before = os.stat(store)
    code, doc = diagnosis(merged)
    whole_code, whole_doc = diagnosis(collections["whole"])
    assert {f["target"] for f in doc["findings"]} >= {target for _, target, _ in FAULTS}, "faults to compare"
    assert code == whole_code == 1
    assert judged(doc) == judged(whole_doc)
    assert doc["verdict"] == whole_doc["verdict"]
    # the diagnosis read the merged samples as they were stored: nothing parsed, nothing written back
    after = os.stat(store)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_bundle_show_of_the_merge_counts_both_shards(collections) -> None:
    merged = collections["tmp"] / "show"
    assert rdmatool("bundle", "merge", str(collections["shard-2"]), str(collections["shard-1"]), "-o",
                    str(merged)).returncode == 0
    shown = [json.loads(rdmatool("bundle", "show", str(p), "--json").stdout)
             for p in (merged, collections["shard-1"], collections["shard-2"])]
    assert shown[0]["outputs"] == shown[1]["outputs"] + shown[2]["outputs"]
    assert shown[0]["targets"] == shown[1]["targets"] + shown[2]["targets"]
    assert shown[0]["snapshots"] == 2


def test_a_shard_merged_with_the_whole_collection_is_refused_then_resolved(collections) -> None:
    out = collections["tmp"] / "overlap"
    refused = rdmatool("bundle", "merge", str(collections["whole"]), str(collections["shard-1"]), "-o", str(out))
    assert refused.returncode == 2
    assert len(refused.stderr.strip().splitlines()) == 1 and "--prefer" in refused.stderr
    assert not out.exists()
    resolved = rdmatool("bundle", "merge", str(collections["whole"]), str(collections["shard-1"]), "-o", str(out),
                        "--prefer", "newest")
    assert resolved.returncode == 0, resolved.stderr
    # shard 1 was collected before the whole fabric: the newer readings of the whole collection win
    assert manifest(out)["merged_from"][1]["targets"] == 0
    assert {t["name"] for t in manifest(out)["targets"]} == {t["name"]
                                                             for t in manifest(collections["whole"])["targets"]}
