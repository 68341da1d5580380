"""The communication matrix against the topology: perftest pairs grouped by the path they take.

A pair of hosts is `same_leaf` when they share a leaf (a NIC of each on one switch), `cross_leaf` when their leaves
share a spine (or the spines are not known), and `cross_spine` when the bundle knows both leaves' uplinks and they
share none. Bandwidth pairs are grouped by class; the reference is the fastest class's median (a class needs
MIN_PAIRS pairs to count). A slower class is explained leaf by leaf: the leaf whose pairs of that class are slowest
is named (its uplinks are oversubscribed or faulty), its pairs set aside, and the next leaf considered, until what
is left of the class runs like the reference. A slow class no single leaf explains is named on `fabric`.

Each slow leaf and class is a `path_class_verdict` fact (text `slow`) with its median, the reference, the pair count
and a JSON record of every class's pairs, for `path_class_slow` in playbooks/15-topology.yaml.

The pairs come from a bundle's perftest records (`perf/results.json`, rdmatool.bundle.replay) or from a run in
memory (objects with `server`, `client`, `bw_avg_gbps`, `error`, as rdmatool.perf.model.PairResult).
Uplinks: a switch's LLDP neighbour that is another switch of the bundle, or an InfiniBand switch-to-switch link.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np
import pandas as pd

from rdmatool.bundle.reader import Bundle
from rdmatool.bundle.replay import perf_records
from rdmatool.errors import BundleError
from rdmatool.platforms.port_names import ca_of
from rdmatool.table.analysis import FACT_COLUMNS
from rdmatool.table.facts import FactQuery
from rdmatool.topology import Link, placement
from rdmatool.topology.observed import fabric_view, switch_name

SAME_LEAF, CROSS_LEAF, CROSS_SPINE = "same_leaf", "cross_leaf", "cross_spine"
MIN_PAIRS = 3
TOLERANCE = 0.15  # a class this much below the reference is systematically slower, not noise


def _field(pair, name: str):
    return pair.get(name) if isinstance(pair, dict) else getattr(pair, name, None)


def uplinks(analysis) -> dict[str, set[str]]:
    """leaf → the switches it is cabled to (its spines), from switch-to-switch LLDP and InfiniBand links."""
    query = FactQuery.of(analysis)
    out: dict[str, set[str]] = {}
    for cable in fabric_view(analysis):
        out.setdefault(cable.switch, set()).add(cable.peer)
    ib = query.of_metric("ib_link_neighbor")
    for entity, text, raw_key in zip(ib["entity"], ib["text"], ib["raw_key"]):
        if raw_key == "Switch" and isinstance(text, str) and isinstance(entity, str):
            remote = text.rpartition("|")[0]
            if ca_of(remote) is None:  # another switch, not `<host> <device>`
                out.setdefault(switch_name(entity.rpartition("/")[0]), set()).add(switch_name(remote))
    return out


def path_class(a: str, b: str, where: dict[str, dict[str, str]], spines: dict[str, set[str]]) -> str | None:
    """The class of the path between two hosts; None when the cabling of either is not known."""
    leaves_a, leaves_b = set(where.get(a, {}).values()), set(where.get(b, {}).values())
    if not leaves_a or not leaves_b:
        return None
    if leaves_a & leaves_b:
        return SAME_LEAF
    up_a = set().union(*(spines.get(leaf, set()) for leaf in leaves_a))
    up_b = set().union(*(spines.get(leaf, set()) for leaf in leaves_b))
    return CROSS_SPINE if up_a and up_b and not up_a & up_b else CROSS_LEAF


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def _judge(classified: dict[str, list[tuple[str, str, float, set[str]]]]) -> list[dict]:
    medians = {c: _median([p[2] for p in pairs]) for c, pairs in classified.items() if len(pairs) >= MIN_PAIRS}
    if len(medians) < 2:
        return []
    reference = max(medians.values())
    line = (1 - TOLERANCE) * reference
    record = {c: {"pairs": len(pairs), "median_gbps": medians.get(c)} for c, pairs in sorted(classified.items())}
    out = []
    for cls, median in sorted(medians.items()):
        if median >= line:
            continue
        left = list(classified[cls])
        named = False
        while left and _median([p[2] for p in left]) < line:
            per_leaf: dict[str, list[float]] = {}
            for _a, _b, bw, leaves in left:
                for leaf in leaves:
                    per_leaf.setdefault(leaf, []).append(bw)
            slow = sorted((_median(v), leaf) for leaf, v in per_leaf.items() if len(v) >= 2 and _median(v) < line)
            if not slow:
                break
            leaf_median, leaf = slow[0]
            mine = [p for p in left if leaf in p[3]]
            out.append({"target": leaf, "class": cls, "median": leaf_median, "pairs": len(mine),
                        "reference": reference, "record": record})
            named = True
            left = [p for p in left if leaf not in p[3]]
        if not named:
            out.append({"target": "fabric", "class": cls, "median": median, "pairs": len(classified[cls]),
                        "reference": reference, "record": record})
    return out


def path_class_facts(pairs, links: list[Link], spines: dict[str, set[str]]) -> pd.DataFrame:
    """The slow path classes of a run's bandwidth pairs, as facts (rdmatool.table.analysis.FACT_COLUMNS)."""
    where = placement(links)
    classified: dict[str, list[tuple[str, str, float, set[str]]]] = {}
    for pair in pairs or []:
        a, b, bw = _field(pair, "server"), _field(pair, "client"), _field(pair, "bw_avg_gbps")
        if _field(pair, "error") or not isinstance(bw, (int, float)) or not isinstance(a, str) or not isinstance(b, str):
            continue
        cls = path_class(a, b, where, spines)
        if cls is not None:
            leaves = set(where[a].values()) | set(where[b].values())
            classified.setdefault(cls, []).append((a, b, float(bw), leaves))
    rows = []
    for hit in _judge(classified):
        base = {"target": hit["target"], "kind": "switch" if hit["target"] != "fabric" else "fabric",
                "platform": None, "role": None, "entity": hit["class"], "priority": pd.NA, "size_bytes": pd.NA,
                "raw_key": "perftest pairs by path class", "window_s": np.nan, "delta": np.nan, "flag": ""}
        for metric, value, text in (
                ("path_class_verdict", np.nan, "slow"), ("path_class", np.nan, hit["class"]),
                ("path_class_median_gbps", hit["median"], None), ("path_class_reference_gbps", hit["reference"], None),
                ("path_class_pairs", float(hit["pairs"]), None),
                ("path_class_record", np.nan, json.dumps(hit["record"], sort_keys=True))):
            rows.append({**base, "metric": metric, "value": value, "text": text})
    if not rows:
        return pd.DataFrame(columns=FACT_COLUMNS)
    return pd.DataFrame(rows, columns=FACT_COLUMNS).astype({"priority": "Int64", "size_bytes": "Int64"})


def bundle_pairs(path: str | Path) -> list[dict]:
    """The perftest pair records a bundle holds (none when it holds no perftest run)."""
    try:
        found = perf_records(Bundle(Path(path), {}))
    except BundleError:
        return []  # unreadable perftest records: the rest of the bundle is diagnosed; the gate's replay names them
    results = found[0] if found else []
    return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []
