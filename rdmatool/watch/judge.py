"""Judgement over time: what the watch's recent history shows that no single snapshot can.

Two figures per series (one counter of one port), as facts the playbooks judge (playbooks/70-watch.yaml):
- a periodic spike: the rate's period by the capture analysis' own detection (rdmatool.capture.periodic: the
  autocorrelation's strongest lag), or the spikes' own spacing where it is REGULAR, kept when the spikes stand clear
  of the series' usual level between them (each at least SPIKE_OVER_MEDIAN times its lower quartile: a burst read
  at intervals of its own length spans two of them, so up to half of the intervals may show part of it; and
  MIN_SPIKE_EVENTS more events in an interval than that level: a counter that moves by one now and then, read
  often, alternates 0 and 1 without any spike) and recur at least MIN_SPIKES times up to now (no gap longer than MAX_GAP_PERIODS periods between them nor since the last: a
  few random incasts that happened to line up, then none, are no period; a lone burst before a longer pause is none
  of the train): watch_spike_period_s, _strength, _count;
- an error or drop counter (GROWTH_COUNTERS: not a congestion counter, which grows whenever a job starts) that
  starts to grow: flat (zero rate) over the earlier intervals of the window, at least GROWTH_FLAT of them read
  (all but a sporadic event, one in GROWTH_FLAT at most), then growing in every interval since, GROWTH_LAST readings
  and GROWTH_MIN_EVENTS events at least (a rate over a gap, in each of its intervals, is one reading: History.read):
  watch_growth_rate, its mean rate since
  (it clears when the flat intervals leave the recent window: a steady growth is the snapshot rules' business).
A steady counter (a constant rate, however high) shows neither: it is the snapshot rules' business. A counter's
total (no priority) beside its per-priority series on the same port gives no fact its priorities give already.

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
# Spikes in the window, at least: three random incasts line up at equal gaps now and then in a fleet's hour (two
# equal gaps), four do far more rarely (three).
MIN_SPIKES = 4
REGULAR = 0.75  # the share of a spike train's gaps within an interval of their median: its own spacing
MAX_GAP_PERIODS = 2  # no gap between spikes, nor since the last, longer than this many periods (one missed, no more)
MIN_SPIKE_EVENTS = 10  # a counter's spike: at least this many events in an interval above its usual level
MIN_STRENGTH = 0.3  # below it no fact at all; the rules ask for more
GROWTH_FLAT, GROWTH_LAST = 6, 3
BLOCK = 16_384  # series judged at once (facts): some 8 MB a copy of their window at 120 intervals
# events since the growth started, at least: three single out-of-sequence packets in a row on a busy port are
# chance; a link or a queue that starts to fail keeps counting and is named a few intervals later
GROWTH_MIN_EVENTS = 5
# The counters whose growth from flat is judged: those that count something wrong (errors, drops, discards,
# out-of-sequence packets and retransmissions), which a healthy port keeps at zero however busy it is. The congestion
# counters (pause frames and durations, port_xmit_wait, ECN marks, CNPs) are not: they go from flat to growing each
# time a job starts on an idle host and back when it ends, which is healthy; their periodic spikes are judged.
GROWTH_COUNTERS = frozenset({
    # drops (a host's, an IB port's, a switch queue's)
    "rx_discards", "tx_discards", "rx_out_of_buffer", "port_xmit_discards", "port_rcv_errors", "vl15_dropped",
    "queue_drops", "wred_drops",
    # link errors
    "symbol_errors", "link_downed", "link_error_recovery", "rx_crc_errors", "rx_symbol_errors",
    "local_link_integrity_errors", "excessive_buffer_overrun_errors", "port_rcv_remote_physical_errors",
    "rx_errors", "tx_errors",
    # transport: lost or reordered packets, retransmissions
    "out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "roce_adp_retrans",
    # a switch's PFC watchdog breaking a pause storm
    "pfc_watchdog_storms",
})
STEP_BEFORE, STEP_LAST, STEP_OVER = 6, 3, 1.5
PREFIX = "watch_"
LATENCY = PREFIX + "lat_"


def spike(rates: np.ndarray, usual: float | None = None) -> tuple[int, float, int] | None:
    """(period in intervals, strength, spikes) of one series' recent rates, None when it has no periodic spike
    (`usual`: its usual level when the caller has it already, facts computing a fleet's at once)."""
    x = np.nan_to_num(np.asarray(rates, dtype=float), nan=0.0)
    if len(x) < periodic.MIN_BINS or x.max() <= 0:
        return None
    floor = SPIKE_OVER_MEDIAN * max(_usual(x) if usual is None else usual, 0.0)
    if x.max() < floor:
        return None
    found = periodic.period(x)
    if found is None or found[1] < MIN_STRENGTH:
        return None
    # a spike stands out of the usual level, each of them: a busy port's noise has a few high readings, and over a
    # short window their autocorrelation can look like a period
    mask = periodic.peaks(x) & (x >= floor)
    starts = np.flatnonzero(mask & ~np.concatenate([[False], mask[:-1]]))  # each run of peak bins is one spike
    if len(starts) < MIN_SPIKES:
        return None
    lag, gaps = found[0], np.diff(starts)
    spacing = int(np.median(gaps))
    if np.mean(np.abs(gaps - spacing) <= 1) >= REGULAR:
        # the spikes' own spacing, when regular: a spike train that started within a busy window shares the series
        # with the job's level, whose slow swing moves the autocorrelation's first peak to a multiple of the period
        lag = spacing
    limit = MAX_GAP_PERIODS * lag + 1
    if len(x) - starts[-1] > limit:
        return None  # not recurring up to now: a few bursts that happened to line up, then none
    # the train: the spikes since the last pause longer than that (a lone burst long before is none of them)
    breaks = np.flatnonzero(gaps > limit)
    train = len(starts) - (int(breaks[-1]) + 1 if len(breaks) else 0)
    if train < MIN_SPIKES:
        return None
    return lag, found[1], train


def _usual(x: np.ndarray) -> float:
    """A series' usual level between its spikes: its lower quartile."""
    return float(np.quantile(x, USUAL))


def growth(rates: np.ndarray, step_s: float = math.nan, read: np.ndarray | None = None) -> float | None:
    """The mean rate since the counter started to grow (growing in each of the last GROWTH_LAST readings at least,
    flat over at least GROWTH_FLAT read intervals before, but for sporadic events, GROWTH_MIN_EVENTS events since
    when the interval `step_s` is known), else None. `read`: which intervals were read (History.recent_read; None:
    all of them)."""
    x = np.asarray(rates, dtype=float)
    growing = np.nan_to_num(x, nan=0.0) > 0
    run = len(x) - int(np.flatnonzero(~growing)[-1]) - 1 if not growing.all() else len(x)
    # GROWTH_LAST readings: a rate over a gap (a host that did not answer for a while, a switch read every few
    # intervals) is in each interval of it, read in one (rdmatool.watch.history): one event in a gap is no growth
    since = x[len(x) - run:]
    readings = run if read is None else int(np.count_nonzero(read[len(x) - run:]))
    if readings < GROWTH_LAST:
        return None
    before = x[: len(x) - run]
    seen = before[~np.isnan(before)]
    # flat before it: zero in all but one in GROWTH_FLAT of the intervals read at most, GROWTH_FLAT of them at least
    # (a healthy host's rx_out_of_buffer ticks now and then: a sporadic event does not hide a counter that starts
    # to grow for good)
    moved = np.count_nonzero(seen)
    if len(seen) - moved < GROWTH_FLAT or moved * GROWTH_FLAT > len(seen):
        return None
    if math.isfinite(step_s) and since.sum() * step_s < GROWTH_MIN_EVENTS - 1e-6:
        return None
    return float(since.mean())


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
    times, _ = history.recent_series(slice(0, 0))
    rows: list[dict] = []
    if len(times) >= periodic.MIN_BINS:
        steps = np.diff(times)
        steps = steps[np.isfinite(steps) & (steps > 0)]
        step_s = float(np.median(steps)) if len(steps) else math.nan
        window = float(times[-1] - times[0]) if len(times) > 1 else math.nan
        gauges, judge_growth = history.gauge_rows(), history.row_flags(_growth_judged)
        excess = MIN_SPIKE_EVENTS / step_s if math.isfinite(step_s) else math.inf  # a rate, events a second
        for lo in range(0, len(history), BLOCK):
            rows += _counter_facts(history, slice(lo, min(lo + BLOCK, len(history))), gauges, judge_growth,
                                   (step_s, window, excess))
        rows = _without_totals(rows)
        gauge_rows = np.flatnonzero(gauges)
        rows += _latency(history, gauge_rows, history.recent_series(gauge_rows)[1], step_s, window)
    return _frame(rows)


def _counter_facts(history: History, block: slice, gauges: np.ndarray, judge_growth: np.ndarray,
                   figures: tuple[float, float, float]) -> list[dict]:
    """The spike and growth facts of one block of rows (a block at a time: the copies of the window a judgement
    makes are a block's, whatever the fleet, so its memory does not step up when the recent ring first fills)."""
    step_s, window, excess = figures
    _, rates = history.recent_series(block)
    read = history.recent_read(block)
    counters = np.flatnonzero(~gauges[block])
    chosen = counters[_candidates(rates[counters], excess=excess, may_grow=judge_growth[block][counters])]
    seen = np.nan_to_num(rates[chosen], nan=0.0)
    usual = np.maximum(np.quantile(seen, USUAL, axis=1), 0.0) if len(chosen) else np.zeros(0)
    rows: list[dict] = []
    for i, local in enumerate(chosen.tolist()):
        row = block.start + local
        key, series = history.keys[row], rates[local]
        found = spike(series, float(usual[i])) if seen[i].max() - usual[i] >= excess else None
        if found is not None and math.isfinite(step_s):
            lag, strength, count = found
            rows += [_fact(key, "spike_period_s", lag * step_s, window),
                     _fact(key, "spike_strength", strength, window),
                     _fact(key, "spike_count", count, window)]
        grown = growth(series, step_s, read[local]) if judge_growth[row] else None
        if grown is not None:
            rows.append(_fact(key, "growth_rate", grown, window))
    return rows


def _frame(rows: list[dict]) -> pd.DataFrame:
    """The facts as a frame of FACT_COLUMNS; most intervals have none, and their empty frame is made once (a frame's
    making and its types were most of a quiet interval's judgement)."""
    global _EMPTY
    if not rows and _EMPTY is not None:
        return _EMPTY.copy()
    frame = pd.DataFrame(rows, columns=FACT_COLUMNS).astype(
        {"priority": "Int64", "size_bytes": "Int64", "value": float, "window_s": float, "delta": float})
    if not rows:
        _EMPTY = frame
        return frame.copy()
    return frame


_EMPTY: pd.DataFrame | None = None


def _latency(history: History, gauge_rows: np.ndarray, rates: np.ndarray, step_s: float, window: float) -> list[dict]:
    """The watch_lat_* facts of the probe figures (`rates`: the recent window of `gauge_rows`): a periodic spike, a
    step up."""
    if not len(gauge_rows):
        return []
    values = rates  # the gauge rows' recent rates
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


def _growth_judged(key: Key) -> bool:
    return key[2] in GROWTH_COUNTERS


def _without_totals(rows: list[dict]) -> list[dict]:
    """The facts without those of a counter's total (no priority) where the same port's counter per priority has the
    same fact: a switch (and some NICs) counts pause both per priority and in all, and a pause storm on one class is
    one finding, on its class, not a second one on the total. A total whose priorities show nothing (a link-level
    pause, not per priority) is kept."""
    prioritised = {(r["target"], r["entity"], r["metric"]) for r in rows if r["priority"] is not None}
    return [r for r in rows if r["priority"] is not None or (r["target"], r["entity"], r["metric"]) not in prioritised]


def _candidates(rates: np.ndarray, growing: bool = True, excess: float = 0.0,
                may_grow: np.ndarray | None = None) -> np.ndarray:
    """The rows `spike` or `growth` may find something in, by their necessary conditions over the whole matrix at
    once: a fleet's series are mostly zero or steady, and the per-series analysis is then spent on the few others
    (`may_grow`: the rows whose growth is judged, all when None)."""
    x = np.nan_to_num(rates, nan=0.0)
    top = x.max(axis=1)
    troughs = np.count_nonzero(x < 0.5 * top[:, None], axis=1)
    spiky = (top > 0) & (troughs >= 2)
    rows = np.flatnonzero(spiky)  # the median only where the cheaper conditions hold
    median = np.maximum(np.quantile(x[rows], USUAL, axis=1), 0.0)
    spiky[rows] = (top[rows] >= SPIKE_OVER_MEDIAN * median) & (top[rows] - median >= excess)
    rows = np.flatnonzero(spiky)  # and at least MIN_SPIKES runs of peak bins (spike's count, by periodic.peaks)
    high = x[rows] >= 0.5 * top[rows, None]
    spiky[rows] = high[:, 0] + np.count_nonzero(high[:, 1:] & ~high[:, :-1], axis=1) >= MIN_SPIKES
    rows = np.flatnonzero(spiky)
    # spike's own figure (periodic.period), all rows at once; margin: an FFT of many rows may differ from one's in
    # the last bits
    spiky[rows] = periodic.periods(x[rows])[1] >= MIN_STRENGTH - 1e-9
    if not growing:
        return np.flatnonzero(spiky)
    grows = np.all(x[:, -GROWTH_LAST:] > 0, axis=1)
    if may_grow is not None:
        grows &= may_grow
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
