"""The communication matrix against the topology: path classes, the slow class named on its leaf, and the pairs a
bundle holds."""

from __future__ import annotations

import json
from pathlib import Path

from rdmatool.topology import Link
from rdmatool.topology.paths import (
    CROSS_LEAF,
    CROSS_SPINE,
    SAME_LEAF,
    bundle_pairs,
    path_class,
    path_class_facts,
    uplinks,
)
from tests.topology import pod


def test_path_classes_from_placement_and_uplinks() -> None:
    where = {"a": {"mlx5_0": "leaf1"}, "b": {"mlx5_0": "leaf1"}, "c": {"mlx5_0": "leaf2"}, "d": {"mlx5_0": "leaf3"}}
    spines = {"leaf1": {"spine1"}, "leaf2": {"spine1"}, "leaf3": {"spine9"}}
    assert path_class("a", "b", where, spines) == SAME_LEAF
    assert path_class("a", "c", where, spines) == CROSS_LEAF
    assert path_class("a", "d", where, spines) == CROSS_SPINE
    assert path_class("a", "c", where, {}) == CROSS_LEAF  # spines unknown: one hop up is all that can be said
    assert path_class("a", "zz", where, spines) is None


def test_uplinks_come_from_switch_to_switch_lldp() -> None:
    spines = uplinks(pod.analysis(pod.leaf_spine_rows()))
    assert spines == {"leaf01": {"spine01"}, "leaf02": {"spine01"}, "leaf03": {"spine01"}, "spine01":
                      {"leaf01", "leaf02", "leaf03"}}


def links() -> list[Link]:
    return [Link(h, "mlx5_0", leaf, f"Ethernet{i}") for leaf, hosts in pod.LEAVES.items() for i, h in enumerate(hosts)]


def test_slow_uplinks_are_named_on_their_leaf_only() -> None:
    facts = path_class_facts(pod.pairs(slow_leaf="leaf03", slow_gbps=150.0), links(), {})
    verdicts = facts[facts["metric"] == "path_class_verdict"]
    assert list(zip(verdicts["target"], verdicts["entity"], verdicts["text"])) == [("leaf03", "cross_leaf", "slow")]
    median = facts[facts["metric"] == "path_class_median_gbps"]["value"].iloc[0]
    assert median == 150.0


def test_a_healthy_matrix_and_a_single_class_say_nothing() -> None:
    assert path_class_facts(pod.pairs(), links(), {}).empty
    same_leaf_only = [p for p in pod.pairs() if p["server"][:2] == p["client"][:2] and
                      pod.LEAVES["leaf01"][0] <= p["server"] and p["client"] <= pod.LEAVES["leaf01"][-1]]
    assert path_class_facts(same_leaf_only, links(), {}).empty


def test_errored_pairs_and_unknown_hosts_are_left_out() -> None:
    pairs = pod.pairs(slow_leaf="leaf02") + [{"server": "h01", "client": "h99", "bw_avg_gbps": 1.0, "error": None}]
    for p in pairs:
        if "h05" in (p["server"], p["client"]):
            p["error"], p["bw_avg_gbps"] = "timeout", None
    facts = path_class_facts(pairs, links(), {})
    assert set(facts.loc[facts["metric"] == "path_class_verdict", "target"]) == {"leaf02"}


def test_bundle_pairs_reads_the_stored_perftest_records(tmp_path: Path) -> None:
    assert bundle_pairs(tmp_path) == []
    (tmp_path / "perf").mkdir()
    (tmp_path / "perf" / "results.json").write_text(json.dumps(pod.pairs()[:3]))
    (tmp_path / "perf" / "attribution.json").write_text("{}")
    assert [p["client"] for p in bundle_pairs(tmp_path)] == [p["client"] for p in pod.pairs()[:3]]
    (tmp_path / "perf" / "results.json").write_text("{not json")
    assert bundle_pairs(tmp_path) == []
