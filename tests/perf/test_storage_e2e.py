"""End to end: `rdmatool perf run --mode storage` over real SSH against the simulated fabric (perftest shims, scaled
durations): three compute hosts read each of two storage nodes at once with ib_read_bw; stor02 is slow (slow_node)
and is named, by the storage_node_slow finding too (its NIC), stor01 passes; storage.json records the rounds, the
figures and every result. The shim slows each flow of a slow node (its factor on each client's demand) and the
congestion model then shares the node's NIC: at 0.2 the three flows together stay under it, so the node delivers
about 60 % of what stor01 does. The leaf's ECN fires after PFC (fault ecn_above_xoff), so stor01's three readers,
more than its NIC carries, are paused on the compute class (priority 3, the site's RoCE priority): the counters of
the nodes, their clients and their leaf, read before and after the reads (storage-counters/), show it and
storage_pauses_compute names the paused hosts. One leaf (SONiC): every switch is read when the inventory lists no
cabling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.helpers import rdmatool
from tests.fabric import scenario
from tests.fabric.fixtures import sim_fabric

pytestmark = pytest.mark.e2e


def test_a_slow_storage_node_is_named_and_a_healthy_one_passes(tmp_path: Path) -> None:
    sc = scenario.build(5, n_storage=2, faults=[{"kind": "slow_node", "target": "stor02", "value": 0.2},
                                                {"kind": "ecn_above_xoff", "target": "leaf01"}],
                        name="perf-storage", platforms=("sonic",))
    with sim_fabric(sc) as fab:
        done = rdmatool("perf", "run", "-i", str(fab.inventory_path), "--known-hosts", str(fab.known_hosts),
                        "--mode", "storage", "--clients-per-node", "3", "--slow-share", "0.9", "--out", str(tmp_path),
                        "--duration", "2",
                        "--slack", "35", timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("stor02: ") and line.endswith("  SLOW") for line in lines), done.stdout
    assert any(line.startswith("stor01: ") and "SLOW" not in line for line in lines), done.stdout
    # the finding (playbooks/80-storage.yaml) names the node and the NIC it was read through; stor01 has none
    slow = [line for line in lines if line.startswith("ERROR storage_node_slow: ")]
    assert len(slow) == 1 and "Storage node stor02 delivered" in slow[0] and " through NIC " in slow[0], done.stdout
    assert "stor01" not in slow[0], slow
    record = json.loads((tmp_path / "storage.json").read_text())
    by_node = {n["node"]: n for n in record["figures"]["nodes"]}
    assert by_node["stor01"]["clients"] == ["gpu01", "gpu02", "gpu03"] and by_node["stor01"]["complete"]
    assert by_node["stor02"]["share"] < 0.9 * record["figures"]["median_share"]
    assert record["figures"]["slow_share_of_median"] == 0.9  # --slow-share, not the default 0.8
    assert {r["test"] for r in record["results"]} == {"ib_read_bw"} and len(record["results"]) == 6
    paused = {p["target"] for p in record["pauses"]["paused"]}
    assert record["pauses"]["priority"] == 3 and paused >= {"gpu01", "gpu02", "gpu03"}, record["pauses"]
    [pauses] = [line for line in lines if line.startswith("ERROR storage_pauses_compute: ")]
    assert "Storage reads from stor01, stor02 paused the compute class (priority 3) on " in pauses
    assert "the storage nodes share the compute class (priority 3)" in pauses
    assert (tmp_path / "storage-counters" / "after" / "manifest.json").is_file()
