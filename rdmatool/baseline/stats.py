"""Statistics over the nights that count: sketches of large groups, weighted quantiles, robust statistics, pooling per
group, the reference facts and the comparison of two baselines (the package docstring says what each one means)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from rdmatool.baseline.verdicts import counted

SKETCH_POINTS = 21  # K: a night's fine group with more figures than this is stored as its K quantiles + n
SKETCH_PERCENTS = np.linspace(0.0, 100.0, SKETCH_POINTS)  # 0, 5, ..., 100
FINE_KEYS = ["metric", "kind", "role", "platform", "ca_type", "link_rate_gbps", "priority", "size_bytes"]
RULE_KEYS = ["metric", "kind", "role", "priority", "size_bytes"]
STAT_FIELDS = ["median", "mad", "p10", "p90", "n", "nights"]
RULE_COLUMNS = [*RULE_KEYS, "median", "mad", "n", "p10", "p90", "nights"]


def sort_key(key: tuple) -> tuple:
    """A total order on group keys that mix strings, numbers and nulls (nulls first, then strings, then numbers)."""
    return tuple((0, "") if v is None else (1, v) if isinstance(v, str) else (2, f"{v:020.6f}") for v in key)


def sketch(values: list[float]) -> dict:
    """A fine group's figures of one night as stored: the raw values up to K, else K quantiles + the true count."""
    if len(values) <= SKETCH_POINTS:
        return {"values": sorted(float(v) for v in values)}
    arr = np.asarray(values, dtype=float)
    return {"quantiles": [float(q) for q in np.percentile(arr, SKETCH_PERCENTS)], "n": int(arr.size)}


def sketch_night(night: dict) -> dict:
    """Replace, in place, every group of the night with more than K raw values by its sketch (idempotent)."""
    groups = []
    for group in night.get("values", []):
        raw = group.get("values") if isinstance(group, dict) else None
        if isinstance(raw, list) and len(raw) > SKETCH_POINTS:
            group = {k: v for k, v in group.items() if k != "values"} | sketch(raw)
        groups.append(group)
    night["values"] = groups
    return night


def _points(group: dict) -> tuple[list[float], float, int]:
    """(stored points, weight of each, true count) of one night's fine group."""
    if "quantiles" in group:
        points = list(group.get("quantiles") or [])
        count = int(group.get("n") or len(points))
        return points, (count / len(points) if points else 1.0), count
    points = list(group.get("values") or [])
    return points, 1.0, len(points)


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """numpy's linear-interpolation quantile generalised to weights: a point of weight w stands for w copies
    (exactly the same as np.percentile on the expanded list when the weights are integers)."""
    order = np.argsort(values, kind="stable")
    x, w = values[order], weights[order]
    ends = np.cumsum(w) - 1.0  # last position of each point in the expanded list
    starts = ends - w + 1.0
    h = q * ends[-1]
    i = min(int(np.searchsorted(ends, h, side="left")), len(x) - 1)
    if i == 0 or h >= starts[i]:
        return float(x[i])
    return float(x[i - 1] + (h - ends[i - 1]) * (x[i] - x[i - 1]))


def robust_weighted(values: list[float], weights: list[float], n: int) -> dict:
    arr, w = np.asarray(values, dtype=float), np.asarray(weights, dtype=float)
    median = weighted_quantile(arr, w, 0.5)
    return {
        "median": median,
        "mad": weighted_quantile(np.abs(arr - median), w, 0.5),
        "p10": weighted_quantile(arr, w, 0.1),
        "p90": weighted_quantile(arr, w, 0.9),
        "n": int(n),
    }


def robust(values: list[float]) -> dict:
    arr = np.asarray(values, dtype=float)
    median = float(np.median(arr))
    return {
        "median": median,
        "mad": float(np.median(np.abs(arr - median))),
        "p10": float(np.percentile(arr, 10)),
        "p90": float(np.percentile(arr, 90)),
        "n": int(arr.size),
    }


def pooled(nights: list[dict], keys: list[str]) -> list[dict]:
    """Statistics per group over the kept nights: exact from the raw values when no night of the group is a
    sketch, else weighted (package docstring, "Bounded nights")."""
    pools: dict[tuple, list[float]] = {}
    weights: dict[tuple, list[float]] = {}
    counts: dict[tuple, int] = {}
    seen: dict[tuple, set[int]] = {}
    for i, night in enumerate(nights):
        for group in night.get("values", []):
            key = tuple(group.get(k) for k in keys)
            points, weight, count = _points(group)
            pools.setdefault(key, []).extend(points)
            weights.setdefault(key, []).extend([weight] * len(points))
            counts[key] = counts.get(key, 0) + count
            seen.setdefault(key, set()).add(i)
    out = []
    for key in sorted(pools, key=sort_key):
        if not pools[key]:
            continue
        exact = all(w == 1.0 for w in weights[key])
        stats = robust(pools[key]) if exact else robust_weighted(pools[key], weights[key], counts[key])
        out.append({**dict(zip(keys, key)), **stats, "nights": len(seen[key])})
    return out


def reference(nights: list[dict]) -> dict:
    """The majority value per reference group over the counts of the kept nights (ties: lexically first)."""
    pooled_counts: dict[str, dict[str, Counter]] = {}
    for night in nights:
        for category, groups in (night.get("facts") or {}).items():
            for group, counts in groups.items():
                pooled_counts.setdefault(category, {}).setdefault(group, Counter()).update(counts)
    out: dict = {}
    for category in sorted(pooled_counts):
        for group in sorted(pooled_counts[category]):
            counts = pooled_counts[category][group]
            value, count = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
            out.setdefault(category, {})[group] = {"value": value, "count": count, "total": sum(counts.values())}
    return out


def rebuild(doc: dict) -> dict:
    """Sketch the large groups of the kept nights, then recompute stats, rule_stats and reference from the nights
    that count (rdmatool.baseline.verdicts: a failing night is kept, listed, and left out of them)."""
    nights = [sketch_night(night) for night in doc["nights"]]
    doc["nights"] = nights
    normal = [night for night in nights if counted(night)]
    doc["stats"] = pooled(normal, FINE_KEYS)
    doc["rule_stats"] = pooled(normal, RULE_KEYS)
    doc["reference"] = reference(normal)
    return doc


def diff(a: dict, b: dict, top: int = 20) -> dict:
    """The coarse groups whose medians moved most (relative change, then absolute) and changed reference facts."""
    def index(doc: dict) -> dict:
        return {tuple(r.get(k) for k in RULE_KEYS): r for r in doc.get("rule_stats", [])}

    left, right = index(a), index(b)
    moved = []
    for key in sorted(set(left) & set(right), key=sort_key):
        m0, m1 = float(left[key]["median"]), float(right[key]["median"])
        change = m1 - m0
        if change == 0:
            continue
        relative = change / abs(m0) if m0 != 0 else math.copysign(math.inf, change)
        spread = float(left[key].get("mad") or 0.0) * 1.4826
        moved.append({**dict(zip(RULE_KEYS, key)), "median_a": m0, "median_b": m1, "change": change,
                      "relative": relative, "mads": change / spread if spread > 0 else None,
                      "n_a": left[key].get("n"), "n_b": right[key].get("n")})
    moved.sort(key=lambda r: (-abs(r["relative"]), -abs(r["change"])))
    facts = []
    ra, rb = a.get("reference") or {}, b.get("reference") or {}
    for category in sorted(set(ra) | set(rb)):
        ga, gb = ra.get(category) or {}, rb.get(category) or {}
        for group in sorted(set(ga) | set(gb)):
            va = (ga.get(group) or {}).get("value")
            vb = (gb.get(group) or {}).get("value")
            if va != vb:
                facts.append({"category": category, "group": group, "a": va, "b": vb})
    return {
        "moved": moved[:top] if top else moved, "moved_total": len(moved),
        "only_a": len(set(left) - set(right)), "only_b": len(set(right) - set(left)), "facts": facts,
    }
