"""The runs of one side of a trial, and the figures of one run.

A side is one bundle or a directory whose sub-directories are bundles (the repeated runs, in name order). A run's
figures are read from its bundle's facts:

- `p99_latency_us`: the median over the hosts of their perftest 99th-percentile latency, at the smallest message
  size the run measured (small messages are the ones queueing shows in; large ones are mostly serialisation);
- `pause_fraction`, `ecn_mark_ratio`: per (target, port, priority) as the analysis derives them (the share of the
  window a port was paused by its peer; the share of packets marked), kept per key: `compare` averages them over the
  keys active in any run of the trial, so that a port which stopped pausing counts as 0 rather than dropping out;
- `cnp_per_s`: the CNPs the notification points sent per second, summed over the hosts;
- `goodput_gbps`: the perftest bandwidth of each host at its largest message size, summed;
- `fairness`: Jain's index of those bandwidths, (Σx)² / (n·Σx²): 1 when every host gets the same.

A gate bundle with an incast stage (`incast/results.json`, rdmatool.gate.incast_stage) holds the figures under load,
which are what a congestion setting changes: there, pause fraction and ECN mark ratio are each incast group's (keyed
by group), the CNP rate its receiver's CNPs over the load's duration (summed), goodput the groups' summed, fairness
the mean of the groups' Jain indexes; p99 latency still comes from the bundle's perftest results. `Run.source` says
which (`incast` or `bundle`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

KEYED = ("pause_fraction", "ecn_mark_ratio")


@dataclass
class Run:
    path: str
    analysis: object  # rdmatool.table.analysis.Analysis
    figures: dict[str, float | None] = field(default_factory=dict)
    keyed: dict[str, dict[tuple, float]] = field(default_factory=dict)
    source: str = "bundle"


def side_paths(path: str | Path) -> list[Path]:
    """The bundles of one side; ValueError (one line naming the path) when it is neither a bundle nor holds any."""
    p = Path(path)
    if (p / "manifest.json").is_file():
        return [p]
    if not p.is_dir():
        raise ValueError(f"{path}: no such bundle or directory")
    found = sorted(c for c in p.iterdir() if (c / "manifest.json").is_file())
    if not found:
        raise ValueError(f"{path}: not a bundle (no manifest.json) and no bundle in it")
    return found


def _rows(facts: pd.DataFrame, metric: str, kind: str | None = None) -> pd.DataFrame:
    if facts.empty:
        return facts
    rows = facts[(facts["metric"] == metric) & facts["value"].notna()]
    return rows[rows["kind"] == kind] if kind else rows


def _keyed(facts: pd.DataFrame, metric: str) -> dict[tuple, float]:
    rows = _rows(facts, metric)
    out: dict[tuple, float] = {}
    for target, entity, priority, value in zip(rows["target"], rows["entity"], rows["priority"], rows["value"]):
        out.setdefault((str(target), str(entity), None if pd.isna(priority) else int(priority)), float(value))
    return out


def _p99(facts: pd.DataFrame) -> float | None:
    rows = _rows(facts, "lat_p99_us", "host")
    sizes = rows["size_bytes"].dropna() if not rows.empty else rows
    if rows.empty or sizes.empty:
        return None
    smallest = rows[rows["size_bytes"] == sizes.min()]
    return float(smallest.groupby("target")["value"].median().median())


def _bandwidths(facts: pd.DataFrame) -> list[float]:
    rows = _rows(facts, "bw_avg_gbps", "host")
    if rows.empty:
        return []
    rows = rows[rows["size_bytes"].notna()]
    largest = rows[rows["size_bytes"] == rows.groupby("target")["size_bytes"].transform("max")]
    return [float(v) for v in largest.groupby("target")["value"].median()]


def figures(facts: pd.DataFrame) -> tuple[dict[str, float | None], dict[str, dict[tuple, float]]]:
    """One run's figures and its per-key shares."""
    bws = _bandwidths(facts)
    cnp = _rows(facts, "cnp_sent_per_s", "host")
    out: dict[str, float | None] = {
        "p99_latency_us": _p99(facts),
        "cnp_per_s": float(cnp.drop_duplicates(["target", "entity"])["value"].sum()) if not cnp.empty else None,
        "goodput_gbps": float(sum(bws)) if bws else None,
        "fairness": float(sum(bws) ** 2 / (len(bws) * sum(b * b for b in bws))) if bws and any(bws) else None,
    }
    keyed = {"pause_fraction": _keyed(facts, "rx_pause_fraction"), "ecn_mark_ratio": _keyed(facts, "ecn_mark_ratio")}
    return out, keyed


def incast_groups(bundle: Path) -> list[dict] | None:
    """The incast groups a gate bundle recorded (`incast/results.json`); None without one. BundleError names a file
    that cannot be read or holds no list of groups."""
    from rdmatool.perf.incast import saved_groups

    return saved_groups(bundle / "incast" / "results.json")


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def incast_figures(groups: list[dict]) -> tuple[dict[str, float | None], dict[str, dict[tuple, float]]]:
    """The figures under load of a gate's incast stage (see the module's text)."""
    def values(key: str) -> list[float]:
        return [v for v in (_number(g.get(key)) for g in groups) if v is not None]

    cnp = [c / d for c, d in ((_number(g.get("cnp_sent")), _number(g.get("duration_s"))) for g in groups)
           if c is not None and d]
    goodput, fairness = values("goodput_gbps"), values("fairness")
    out = {"cnp_per_s": float(sum(cnp)) if cnp else None,
           "goodput_gbps": float(sum(goodput)) if goodput else None,
           "fairness": float(np.mean(fairness)) if fairness else None}
    keyed = {metric: {(str(g["name"]), "", None): v for g in groups if (v := _number(g.get(metric))) is not None}
             for metric in KEYED}
    return out, keyed


def load(path: str | Path) -> list[Run]:
    """Every run of one side, analysed; the incast figures of a gate bundle with an incast stage."""
    from rdmatool.table.analysis import analyse_path
    from rdmatool.table.facts import plain

    runs = []
    for bundle in side_paths(path):
        analysis = analyse_path(bundle)
        figs, keyed = figures(plain(analysis.facts))  # (plain texts: None where missing)
        groups = incast_groups(bundle)
        if groups is None:
            runs.append(Run(str(bundle), analysis, figs, keyed))
            continue
        under_load, keyed = incast_figures(groups)
        runs.append(Run(str(bundle), analysis, {**figs, **under_load}, keyed, "incast"))
    return runs


def keyed_means(runs: list[Run], metric: str) -> list[float | None]:
    """Each run's mean of a per-key share over the keys active (above 0) in any run given; None for a run that
    reported none of them, all None when no key was ever active."""
    active = sorted({k for r in runs for k, v in r.keyed.get(metric, {}).items() if v > 0}, key=str)
    if not active:
        return [None] * len(runs)
    out: list[float | None] = []
    for r in runs:
        values = r.keyed.get(metric, {})
        out.append(float(np.mean([values.get(k, 0.0) for k in active])) if values else None)
    return out
