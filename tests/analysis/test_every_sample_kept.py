"""No parsed sample is lost or merged on its way into the frame and the facts.

Each sample a parser makes of a bundle's raw outputs is counted here straight from the parsers, output by output;
the frame must hold exactly that many rows per snapshot, each row in a series of its own within its snapshot, and
the analysis' latest values must hold one fact per series. Two outputs of one target that say the same thing of the
same entity (one perftest result per peer, one port state from two tools) are two series, never one.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from rdmatool import bundle as bundle_io
from rdmatool import parsers
from rdmatool.errors import ParseError
from rdmatool.table import frame as frames
from rdmatool.table.analysis import latest_values
from tests.e2e.helpers import collect
from tests.fabric.fixtures import fabric_fixture
from tests.pods import bundle as pods

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo-bundle"


def parsed_per_snapshot(path: Path) -> Counter:
    """How many samples the parsers make of each snapshot's outputs, read and parsed one by one."""
    counts: Counter = Counter()
    for entry in bundle_io.read(path).entries:
        result = entry.result
        if result.exit_code not in (0, None) and not result.stdout.strip():
            continue  # a failed command with no output: nothing was parsed
        try:
            counts[entry.snapshot] += len(parsers.parse(result.parser, result.stdout))
        except ParseError:
            continue  # a parse failure adds no rows (and is reported as such)
    return counts


def assert_every_sample_kept(path: Path) -> int:
    """Asserts the three counts; returns how many series the bundle has."""
    expected = parsed_per_snapshot(path)
    assert sum(expected.values()) > 0, f"{path}: nothing parsed, nothing proved"
    table = frames.load(path, write_store=False)
    snapshot = table.frame["snapshot"].to_numpy()
    assert Counter(snapshot.tolist()) == expected, "rows were dropped on the way into the frame"
    for s, n in expected.items():
        series = table.series[snapshot == s]
        merged = n - len(np.unique(series))
        assert merged == 0, f"snapshot {s}: {merged} of {n} samples share a series with another sample"
    distinct = len(np.unique(table.series))
    assert len(latest_values(table)) == distinct, "the latest values merged series"
    return distinct


def test_demo_bundle_keeps_every_sample() -> None:
    assert_every_sample_kept(DEMO)


def test_cumulus_dscp_map_is_one_series_per_dscp() -> None:
    # `nv show qos roce` maps 64 DSCPs and 8 PCPs in one table: each mapping is its own fact, not the last one only.
    table = frames.load(DEMO, write_store=False)
    facts = latest_values(table)
    leaf = facts[(facts["target"] == "leaf02") & (facts["entity"] == "qos") & (facts["metric"] == "dscp_to_priority")]
    assert sorted(leaf["text"].astype(int)) == list(range(64))
    assert leaf.loc[leaf["text"] == "26", "value"].tolist() == [3.0]


@pytest.mark.parametrize("variant", [*pods.PLATFORMS, "mixed", "per_peer_perftest"])
def test_hand_made_pod_keeps_every_sample(tmp_path: Path, variant: str) -> None:
    """The pod behind leaves of each switch OS alone, of all of them mixed, and with per-peer perftest results."""
    platforms = pods.PLATFORMS if variant == "mixed" else (variant,) if variant in pods.PLATFORMS else ("sonic",)
    pod = pods.healthy_pod(platforms, gpus=5 if len(platforms) > 1 else 3)
    path = pods.write(pod, tmp_path / "pod")
    if variant == "per_peer_perftest":
        from tests.analysis.pairs_bundle import add_pair_results

        add_pair_results(path, {("gpu01", "gpu02"): 390.0, ("gpu01", "gpu03"): 120.0, ("gpu02", "gpu03"): 121.0})
    distinct = assert_every_sample_kept(path)
    if variant == "per_peer_perftest":
        facts = latest_values(frames.load(path, write_store=False))
        bw = facts[(facts["metric"] == "bw_avg_gbps") & (facts["target"] == "gpu01")]
        per_peer = dict(zip(bw["entity"], bw["value"]))
        assert (per_peer["ib_write_bw@gpu02"], per_peer["ib_write_bw@gpu03"]) == (390.0, 120.0)
    assert distinct > 1000


healthy_fabric = fabric_fixture("healthy", scope="module")


def test_simulated_fabric_bundle_keeps_every_sample(healthy_fabric, tmp_path: Path) -> None:
    out = tmp_path / "healthy"
    result = collect(healthy_fabric, out, "--interval", "1")
    assert result.returncode == 0, result.stderr
    assert_every_sample_kept(out)
