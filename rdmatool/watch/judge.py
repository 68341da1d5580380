"""Judgement over time: what the watch's recent history shows that no single snapshot can.

Two figures per series (one counter of one port), as facts the playbooks judge (playbooks/70-watch.yaml):
- a periodic spike: the rate's period by the capture analysis' own detection (rdmatool.capture.periodic: the
  autocorrelation's strongest lag), kept when the spikes stand clear of the series' usual level between them (their
  peak at least SPIKE_OVER_MEDIAN times its lower quartile: a burst read at intervals of its own length spans two
  of them, so up to half of the intervals may show part of it; and MIN_SPIKE_EVENTS more events in an interval
  than that level: a counter that moves by one now and then, read often, alternates 0 and 1 without any spike) and recur at
  least MIN_SPIKES times: watch_spike_period_s, _strength, _count;
- a counter that starts to grow: flat (zero rate) over the earlier intervals of the window, at least GROWTH_FLAT of
  them read, then growing in every interval since, GROWTH_LAST at least: watch_growth_rate, its mean rate since
  (it clears when the flat intervals leave the recent window: a steady growth is the snapshot rules' business).
A steady counter (a constant rate, however high) shows neither: it is the snapshot rules' business.

A latency probe's figure (a gauge, rdmatool.watch.history.is_gauge) is judged as it is, not as a rate: an interval
in which the series was not tested is filled with its median (a host tested every other interval is no period),
and its facts are `watch_lat_*`, judged by the latency rules:
- a periodic latency spike: as above, watch_lat_spike_period_s, _strength, _count;
- a step up: the last STEP_LAST read values all at least STEP_OVER times the median of the STEP_BEFORE (at least)
  read before them, its own history: watch_lat_step_ratio, the median of the last over that median.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from rdmatool.capture import periodic
from rdmatool.table.analysis import FACT_COLUMNS, Analysis
from rdmatool.table.frame import SampleTable
from rdmatool.watch.history import History, Key

SPIKE_OVER_MEDIAN = 2.0
USUAL = 0.25  # the quantile of a series taken as its usual level
MIN_SPIKES = 3
MIN_SPIKE_EVENTS = 10  # a counter's spike: at least this many events in an interval above its usual level
MIN_STRENGTH = 0.3  # below it no fact at all; the rules ask for more
GROWTH_FLAT, GROWTH_LAST = 6, 3
STEP_BEFORE, STEP_LAST, STEP_OVER = 6, 3, 1.5
PREFIX = "watch_"
LATENCY = PREFIX + "lat_"


def spike(rates: np.ndarray) -> tuple[int, float, int] | None:
    """(period in intervals, strength, spikes) of one series' recent rates, None when it has no periodic spike."""
    x = np.nan_to_num(np.asarray(rates, dtype=float), nan=0.0)
    if len(x) < periodic.MIN_BINS or x.max() <= 0 or x.max() < SPIKE_OVER_MEDIAN * max(_usual(x), 0.0):
        return None
    found = periodic.period(x)
    if found is None or found[1] < MIN_STRENGTH:
        return None
    mask = periodic.peaks(x)
    count = int(mask[0]) + int(np.count_nonzero(mask[1:] & ~mask[:-1]))  # each run of peak bins is one spike
    if count < MIN_SPIKES:
        return None
    return found[0], found[1], count


def _usual(x: np.ndarray) -> float:
    """A series' usual level between its spikes: its lower quartile."""
    return float(np.quantile(x, USUAL))


def growth(rates: np.ndarray) -> float | None:
    """The mean rate since the counter started to grow (growing in each of the last GROWTH_LAST intervals at least,
    flat over at least GROWTH_FLAT read intervals before), else None."""
    x = np.asarray(rates, dtype=float)
    growing = np.nan_to_num(x, nan=0.0) > 0
    run = len(x) - int(np.flatnonzero(~growing)[-1]) - 1 if not growing.all() else len(x)
    if run < GROWTH_LAST:
        return None
    before = x[: len(x) - run]
    seen = before[~np.isnan(before)]
    if len(seen) < GROWTH_FLAT or np.any(seen != 0):
        return None
    return float(x[len(x) - run:].mean())


def step(values: np.ndarray) -> float | None:
    """The ratio of the last STEP_LAST read values' median to the median of those read before (STEP_BEFORE at
    least), when each of the last is at least STEP_OVER times that median; else None."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if len(x) < STEP_BEFORE + STEP_LAST:
        return None
    base = float(np.median(x[:-STEP_LAST]))
    last = x[-STEP_LAST:]
    if base <= 0 or last.min() < STEP_OVER * base:
        return None
    return float(np.median(last)) / base


def filled(rates: np.ndarray) -> np.ndarray:
    """Gauge rows with their untested intervals at the row's median (a row never read stays NaN)."""
    x = np.array(rates, dtype=float)
    missing = np.isnan(x)
    if missing.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a row never read: its median is NaN, said so
            medians = np.nanmedian(x, axis=1)
        x[missing] = np.broadcast_to(medians[:, None], x.shape)[missing]
    return x


def facts(history: History) -> pd.DataFrame:
    """The watch_* facts of the recent window, a frame of FACT_COLUMNS."""
    times, rates = history.recent_series()
    rows: list[dict] = []
    if rates.shape[1] >= periodic.MIN_BINS:
        steps = np.diff(times)
        steps = steps[np.isfinite(steps) & (steps > 0)]
        step_s = float(np.median(steps)) if len(steps) else math.nan
        window = float(times[-1] - times[0]) if len(times) > 1 else math.nan
        gauges = history.gauge_rows()
        counters = np.flatnonzero(~gauges)
        excess = MIN_SPIKE_EVENTS / step_s if math.isfinite(step_s) else math.inf  # a rate, events a second
        for row in counters[_candidates(rates[counters], excess=excess)]:
            key = history.keys[row]
            series = rates[row]
            seen = np.nan_to_num(series, nan=0.0)
            found = spike(series) if seen.max() - max(_usual(seen), 0.0) >= excess else None
            if found is not None and math.isfinite(step_s):
                lag, strength, count = found
                rows += [_fact(key, "spike_period_s", lag * step_s, window),
                         _fact(key, "spike_strength", strength, window),
                         _fact(key, "spike_count", count, window)]
            grown = growth(series)
            if grown is not None:
                rows.append(_fact(key, "growth_rate", grown, window))
        rows += _latency(history, np.flatnonzero(gauges), rates, step_s, window)
    frame = pd.DataFrame(rows, columns=FACT_COLUMNS)
    return frame.astype({"priority": "Int64", "size_bytes": "Int64", "value": float, "window_s": float,
                         "delta": float})


def _latency(history: History, gauge_rows: np.ndarray, rates: np.ndarray, step_s: float, window: float) -> list[dict]:
    """The watch_lat_* facts of the probe figures: a periodic spike, a step up."""
    if not len(gauge_rows):
        return []
    values = rates[gauge_rows]
    full = filled(values)
    rows: list[dict] = []
    spiky = set(_candidates(full, growing=False).tolist())
    for i, row in enumerate(gauge_rows):
        key = history.keys[row]
        if not key[2].startswith("lat_"):
            continue  # a window figure (rdmatool.watch.probe): a summary, not judged again
        found = spike(full[i]) if i in spiky else None
        if found is not None and math.isfinite(step_s):
            lag, strength, count = found
            rows += [_fact(key, "lat_spike_period_s", lag * step_s, window),
                     _fact(key, "lat_spike_strength", strength, window),
                     _fact(key, "lat_spike_count", count, window)]
        ratio = step(values[i]) if key[2] == "lat_p99_us" else None
        if ratio is not None:
            rows.append(_fact(key, "lat_step_ratio", ratio, window))
    return rows


def _candidates(rates: np.ndarray, growing: bool = True, excess: float = 0.0) -> np.ndarray:
    """The rows `spike` or `growth` may find something in, by their necessary conditions over the whole matrix at
    once: a fleet's series are mostly zero or steady, and the per-series analysis is then spent on the few others."""
    x = np.nan_to_num(rates, nan=0.0)
    top = x.max(axis=1)
    troughs = np.count_nonzero(x < 0.5 * top[:, None], axis=1)
    spiky = (top > 0) & (troughs >= 2)
    rows = np.flatnonzero(spiky)  # the median only where the cheaper conditions hold
    median = np.maximum(np.quantile(x[rows], USUAL, axis=1), 0.0)
    spiky[rows] = (top[rows] >= SPIKE_OVER_MEDIAN * median) & (top[rows] - median >= excess)
    if not growing:
        return np.flatnonzero(spiky)
    grows = np.all(x[:, -GROWTH_LAST:] > 0, axis=1)
    grows &= np.count_nonzero(rates[:, :-GROWTH_LAST] == 0, axis=1) >= GROWTH_FLAT
    return np.flatnonzero(spiky | grows)


def _fact(key: Key, name: str, value: float, window: float) -> dict:
    target, entity, metric, priority = key
    return {"target": target, "kind": "host", "platform": None, "role": None, "entity": f"{entity}/{metric}",
            "metric": PREFIX + name, "priority": None if priority < 0 else priority, "size_bytes": None,
            "value": float(value), "text": None, "raw_key": metric, "window_s": window, "delta": np.nan, "flag": ""}


def analysis_of(found: pd.DataFrame) -> Analysis:
    """The facts as an analysis the rules engine reads: no samples behind them, no cabling."""
    return Analysis(facts=found, table=SampleTable(frame=pd.DataFrame()), window_s=None)


def watch_rules(rules: list) -> list:
    """The rules of a playbook directory that judge watch facts (the others judge a bundle's snapshots)."""
    return [r for r in rules if str(r.params.get("metric", "")).startswith(PREFIX)]
