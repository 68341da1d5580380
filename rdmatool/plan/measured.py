"""What the fleet delivers, for the planners (docs/tuning.md §10.3): from a bundle or from a baseline.

From a bundle:
- perftest: the median efficiency (bandwidth / line rate) of its perftest results with large messages — the
  analysis' `bw_efficiency` facts and, for per-peer results, each pair's bandwidth over the slower end's line rate;
- the compute rail: of the compute hosts' RDMA ports (all hosts when none is `compute`), the port name whose usual
  (most common) rate is highest; its slowest active member, and the members whose port is not active. A ring moves
  at the pace of its slowest member, so the rail delivers slowest / usual of its line rate;
- efficiency = that share × the perftest median, or × the planning rule's 70 % when the bundle holds no perftest.

From a baseline: the median of its `bw_efficiency` statistics at their largest message size (weighted by count),
and the compute hosts' `link_rate_gbps` p90 as the line rate (a baseline pools every port of a role).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from rdmatool.pairs.bundle_results import expected_rates, pair_results
from rdmatool.plan.bandwidth import PLANNING_EFFICIENCY
from rdmatool.table.analysis import Analysis, analyse_path
from rdmatool.table.facts import plain


def perftest_efficiencies(analysis: Analysis) -> list[float]:
    facts = analysis.facts
    values = [float(v) for v in facts.loc[facts["metric"] == "bw_efficiency", "value"].dropna()] \
        if not facts.empty else []
    expected = expected_rates(analysis)
    largest: dict[tuple, object] = {}
    for r in pair_results(analysis):
        if r.ok and r.bw_avg_gbps is not None:
            key = (r.client, r.server, r.test)
            if key not in largest or (r.size_bytes or 0) > (largest[key].size_bytes or 0):
                largest[key] = r
    for r in largest.values():
        ends = [expected.get(r.client), expected.get(r.server)]
        ends = [e for e in ends if e]
        if ends:
            values.append(r.bw_avg_gbps / min(ends))
    return values


def compute_rail(analysis: Analysis) -> dict | None:
    facts = plain(analysis.facts)  # (plain texts: None where missing)
    if facts.empty:
        return None
    hosts = facts[facts["kind"] == "host"]
    if (hosts["role"] == "compute").any():
        hosts = hosts[hosts["role"] == "compute"]
    rates = hosts[(hosts["metric"] == "link_rate_gbps") & hosts["value"].notna()]
    if rates.empty:
        return None
    rate = rates.groupby(["target", "entity"])["value"].max()
    states = hosts[hosts["metric"] == "port_state"].drop_duplicates(["target", "entity"])
    state = {(t, e): s for t, e, s in zip(states["target"], states["entity"], states["text"])}
    active = {key: state.get(key, "Active") == "Active" for key in rate.index}
    best = None
    for entity in sorted({e for _, e in rate.index}):
        members = {t: float(v) for (t, e), v in rate.items() if e == entity}
        live = {t: v for t, v in members.items() if active[(t, entity)]}
        if not live:
            continue
        usual = sorted(Counter(live.values()).items(), key=lambda kv: (-kv[1], -kv[0]))[0][0]
        candidate = (usual, len(members), entity, members, live)
        if best is None or candidate[:2] > best[:2]:
            best = candidate
    if best is None:
        return None
    usual, _, entity, members, live = best
    slowest = min(sorted(live), key=lambda t: live[t])
    return {"port": entity, "nominal_gbps": usual, "members": len(members),
            "slowest": {"target": slowest, "gbps": live[slowest]},
            "share": live[slowest] / usual if usual else None,
            "not_active": sorted(t for t in members if t not in live)}


def from_analysis(analysis: Analysis, source: str = "") -> dict:
    """The fleet's figures; `efficiency` None (with `reason`) when the bundle holds neither perftest nor rates."""
    values = perftest_efficiencies(analysis)
    perftest = {"median": float(np.median(values)), "n": len(values)} if values else None
    rail = compute_rail(analysis)
    out = {"source": "bundle", "path": source, "perftest": perftest, "rail": rail,
           "line_gbps": rail["nominal_gbps"] if rail else None}
    if rail is None and perftest is None:
        return {**out, "efficiency": None, "reason": "the bundle holds no perftest result and no link rate"}
    base = perftest["median"] if perftest else PLANNING_EFFICIENCY
    out["basis"] = "perftest median" if perftest else "70 % rule (no perftest result in the bundle)"
    out["efficiency"] = base * (rail["share"] if rail and rail["share"] is not None else 1.0)
    return out


def from_bundle(path: str | Path) -> dict:
    return from_analysis(analyse_path(path), str(path))


def from_baseline_stats(stats: pd.DataFrame, source: str = "") -> dict:
    """From a baseline's rule statistics (rdmatool.baseline.stats_for_rules)."""
    out = {"source": "baseline", "path": source, "perftest": None, "rail": None, "line_gbps": None}
    eff = stats[stats["metric"] == "bw_efficiency"]
    if not eff.empty:
        sizes = eff["size_bytes"].astype("float64")
        if sizes.notna().any():
            eff = eff[sizes == sizes.max()]
        weights = eff["n"].astype(float).to_numpy()
        median = float(np.average(eff["median"].to_numpy(dtype=float), weights=weights)) if weights.sum() > 0 \
            else float(eff["median"].median())
        out["perftest"] = {"median": median, "n": int(weights.sum())}
    rates = stats[stats["metric"] == "link_rate_gbps"]
    if (rates["role"] == "compute").any():
        rates = rates[rates["role"] == "compute"]
    if not rates.empty:
        # its statistics pool every port of a role: the p90 is the fast (compute) rail's rate, the median would fall
        # between two rails
        out["line_gbps"] = float(rates["p90"].max())
    if out["perftest"] is None:
        return {**out, "efficiency": None, "reason": "the baseline holds no perftest efficiency (bw_efficiency)"}
    out["basis"] = "perftest median of the baseline's nights"
    out["efficiency"] = out["perftest"]["median"]
    return out
