"""The watch's memory: a fixed-size history of every series' rate, whatever the duration.

A series is one counter of one port (target, entity, metric, priority), or one figure of a host's latency probe
(rdmatool.watch.probe: a gauge, kept as read). Its rates sit in two rings shared by every
series: `recent` holds the last `recent` intervals at full resolution, `coarse` the `coarse` bins before them,
each the mean and the maximum of `factor` intervals (the maximum keeps a spike visible after downsampling). A ring
column with no reading (a host in a gap, a series not yet seen) is NaN. The memory is series x (recent + 2 x coarse)
floats and never grows with time; new series (a port that appears) add rows, up to `max_series`.

A rate needs two readings of the same counter: the first reading of a series (and the first after a counter went
backwards: a reset or a driver reload) gives none. After a gap the rate is taken over the whole gap, from the last
reading before it: an average, honest about the time it covers, and each interval of the gap gets it too (a switch
read every third interval is then no spike every third interval).

An interval is recorded in two steps: `prepare` turns the readings into arrays (a Step: the new series, the rows,
values and times read, the states that changed) without changing the history, and `apply` records them. The store
(rdmatool.watch.store) journals each Step and replays it through `apply`, which gives the live arrays bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rdmatool.watch.light import Reading

Key = tuple[str, str, str, int]  # target, entity, metric, priority (-1: none)
MAX_SERIES = 200_000
GAUGES = ("lat_", "watch_lat_")  # the probes' figures (rdmatool.watch.probe): kept as read, never a rate


def is_gauge(metric: str) -> bool:
    return metric.startswith(GAUGES)


def _gauge_key(key: Key) -> bool:
    return is_gauge(key[2])


@dataclass(frozen=True)
class Shape:
    recent: int = 120  # intervals at full resolution (20 min at 10 s)
    coarse: int = 144  # downsampled bins (4 h of 100 s bins at 10 s x 10)
    factor: int = 10  # intervals per coarse bin


@dataclass(frozen=True)
class Step:
    """One interval's input to the history, as arrays (History.prepare; History.apply records it). Rows index the
    history's series, `new_keys` appended first (rows len(keys) on)."""

    interval: int  # the interval it records (the history's `interval` before it)
    at: float
    new_keys: list[Key]
    states: dict[str, dict[str, str]]  # the targets whose states changed: their states now
    gauge_rows: np.ndarray  # int32
    gauge_values: np.ndarray  # float64
    gauge_times: np.ndarray  # float64, each value's reading time
    rows: np.ndarray  # int32: the counters'
    values: np.ndarray
    times: np.ndarray


class History:
    def __init__(self, shape: Shape = Shape(), max_series: int = MAX_SERIES) -> None:
        if shape.recent < shape.factor or min(shape.recent, shape.coarse, shape.factor) < 1:
            raise ValueError("the recent ring must hold at least one coarse bin")
        self.shape = shape
        self.max_series = max_series
        self.keys: list[Key] = []
        self.index: dict[Key, int] = {}
        self.interval = 0  # intervals recorded so far (the next column is interval % recent)
        self.times = np.full(shape.recent, np.nan)  # each recent column's time (epoch seconds)
        self.coarse_times = np.full(shape.coarse, np.nan)
        self.rates = np.full((0, shape.recent), np.nan, dtype=np.float32)
        # which of the recent ring's rates were read in their interval (the rest: none, or a gap's rate spread over
        # it): a counter's growth is counted in readings, not in the intervals a gap fills
        self.read = np.zeros((0, shape.recent), dtype=bool)
        self.coarse_mean = np.full((0, shape.coarse), np.nan, dtype=np.float32)
        self.coarse_max = np.full((0, shape.coarse), np.nan, dtype=np.float32)
        self.last_value = np.full(0, np.nan)
        self.last_time = np.full(0, np.nan)
        self.last_interval = np.full(0, -1, dtype=np.int64)  # the interval of each row's last counter reading
        self.states: dict[tuple[str, str], dict[str, str]] = {}  # target -> (entity, metric) -> text, latest
        # each series' rate at its own last reading (NaN: that reading gave none), kept until its next (float64, not
        # saved): what a textfile shows, of a switch between two of its reads too
        self.latest_rates = np.full(0, np.nan)
        self.dropped_series = 0  # readings of series beyond max_series, not kept
        self._flags: dict[Callable[[Key], bool], np.ndarray] = {}  # row_flags' memo, by test

    def __len__(self) -> int:
        return len(self.keys)

    def row_flags(self, test: Callable[[Key], bool]) -> np.ndarray:
        """test(key) of each row, a bool per row: rows only ever come, so each is tested once, not 100,000 keys an
        interval (`test` a module-level function: it is the memo's key)."""
        known = self._flags.get(test, np.zeros(0, dtype=bool))
        if len(known) < len(self.keys):
            new = np.fromiter((test(k) for k in self.keys[len(known):]), dtype=bool, count=len(self.keys) - len(known))
            known = self._flags[test] = np.concatenate([known, new])
        return known[: len(self.keys)]

    def gauge_rows(self) -> np.ndarray:
        """Which rows are gauges (the probes' figures), a bool per row."""
        return self.row_flags(_gauge_key)

    def _add(self, key: Key) -> None:
        row = len(self.keys)
        if row >= len(self.last_value):  # grow by doubling: a few reallocations over a watch's life
            size = max(64, 2 * row)
            self.rates = _grown(self.rates, size)
            self.read = np.concatenate([self.read, np.zeros((size - len(self.read), self.shape.recent), dtype=bool)])
            self.coarse_mean = _grown(self.coarse_mean, size)
            self.coarse_max = _grown(self.coarse_max, size)
            self.last_value = np.concatenate([self.last_value, np.full(size - len(self.last_value), np.nan)])
            self.last_time = np.concatenate([self.last_time, np.full(size - len(self.last_time), np.nan)])
            self.last_interval = np.concatenate([self.last_interval, np.full(size - len(self.last_interval), -1)])
            self.latest_rates = np.concatenate([self.latest_rates, np.full(size - len(self.latest_rates), np.nan)])
        self.keys.append(key)
        self.index[key] = row

    def record(self, at: float, readings: list[Reading]) -> dict[Key, float]:
        """One interval (prepare, then apply); the rates of this interval by series are returned (series without
        a rate are absent)."""
        self.apply(self.prepare(at, readings))
        rows = np.flatnonzero((self.last_interval[: len(self.keys)] == self.interval - 1)
                              & ~np.isnan(self.latest_rates[: len(self.keys)]))
        return dict(zip([self.keys[r] for r in rows.tolist()], self.latest_rates[rows].tolist()))

    def prepare(self, at: float, readings: list[Reading]) -> Step:
        """An interval's readings as arrays, the history unchanged: what `apply` records, and what the store
        journals (rdmatool.watch.store) to replay it exactly. The counters of all readings are gathered at once (a
        fleet's interval is some 100,000 of them)."""
        new: dict[Key, int] = {}  # series seen for the first time, by the row each will get

        def row_of(key: Key) -> int | None:
            row = self.index.get(key)
            if row is None:
                row = new.get(key)
            if row is None:
                if len(self.keys) + len(new) >= self.max_series:
                    self.dropped_series += 1
                    return None
                row = new[key] = len(self.keys) + len(new)
            return row

        states: dict[str, dict[str, str]] = {}
        gauge_rows, gauge_values, gauge_times = [], [], []
        rows, values, times = [], [], []
        index = self.index
        for reading in readings:
            if reading.states:
                states[reading.target] = {f"{e}\t{m}": t for (e, m), t in reading.states.items()}
            for (entity, metric, priority), value in reading.gauges.items():  # a probe's figure: kept as it is
                row = row_of((reading.target, entity, metric, -1 if priority is None else int(priority)))
                if row is not None:
                    gauge_rows.append(row)
                    gauge_values.append(value)
                    gauge_times.append(reading.at)
            for (entity, metric, priority), value in reading.counters.items():
                key = (reading.target, entity, metric, -1 if priority is None else int(priority))
                row = index.get(key)
                if row is None:
                    row = row_of(key)
                    if row is None:
                        continue
                rows.append(row)
                values.append(value)
                times.append(reading.at)
        return Step(self.interval, float(at), list(new),
                    {target: s for target, s in states.items() if self.states.get(target) != s},
                    np.array(gauge_rows, dtype=np.int32), np.array(gauge_values, dtype=float),
                    np.array(gauge_times, dtype=float), np.array(rows, dtype=np.int32),
                    np.array(values, dtype=float), np.array(times, dtype=float))

    def apply(self, step: Step) -> None:
        """Record one prepared interval: the new series, the states, each counter's rate in the interval's column
        (gaps filled), each gauge as read; the coarse ring's bin when the interval completes one. A replayed step
        gives the very arrays the live one gave."""
        if step.interval != self.interval:
            raise ValueError(f"interval {step.interval} applied to a history at interval {self.interval}")
        for key in step.new_keys:
            self._add(key)
        self.states.update(step.states)
        column = self.interval % self.shape.recent
        self.rates[:, column] = np.nan
        self.read[:, column] = False
        self.times[column] = step.at
        if len(step.gauge_rows):
            g = step.gauge_rows
            self.rates[g, column] = step.gauge_values
            self.read[g, column] = True
            self.last_value[g], self.last_time[g] = step.gauge_values, step.gauge_times
        if len(step.rows):
            r, value, then = step.rows, step.values, step.times
            before, before_t = self.last_value[r], self.last_time[r]
            self.last_value[r], self.last_time[r] = value, then
            # no rate on a first reading, a counter that went back (a reset), or a clock that did not move
            ok = ~np.isnan(before) & (value >= before) & (then > before_t)
            rate = (value[ok] - before[ok]) / (then[ok] - before_t[ok])
            self.rates[r[ok], column] = rate
            self.read[r[ok], column] = True
            self.latest_rates[r] = np.nan
            self.latest_rates[r[ok]] = rate
            self._fill_gaps(r[ok], rate)
            self.last_interval[r] = self.interval
        self.interval += 1
        if self.interval % self.shape.factor == 0:
            self._downsample()

    def _fill_gaps(self, rows: np.ndarray, rate: np.ndarray) -> None:
        """A rate over a gap (a host that did not answer, a switch read every few intervals) is the rate of each
        interval of the gap too: the intervals in between get it, so that a series read every third interval is
        not a spike every third interval."""
        gap = self.interval - self.last_interval[rows]
        late = (self.last_interval[rows] >= 0) & (gap > 1)
        if not late.any():
            return
        rows, rate, gap = rows[late], rate[late], np.minimum(gap[late], self.shape.recent)
        for back in range(1, int(gap.max())):
            some = gap > back
            column = (self.interval - back) % self.shape.recent
            hole = np.isnan(self.rates[rows[some], column])
            self.rates[rows[some][hole], column] = rate[some][hole]

    @property
    def last_column(self) -> int:
        """The recent ring's column of the last interval recorded (-1 before the first)."""
        return (self.interval - 1) % self.shape.recent if self.interval else -1

    def _downsample(self) -> None:
        f = self.shape.factor
        columns = [(self.interval - f + i) % self.shape.recent for i in range(f)]
        block = self.rates[: len(self.keys)][:, columns]
        bin_ = (self.interval // f - 1) % self.shape.coarse
        seen = ~np.all(np.isnan(block), axis=1)
        mean = np.full(len(self.keys), np.nan, dtype=np.float32)
        peak = np.full(len(self.keys), np.nan, dtype=np.float32)
        if seen.any():
            mean[seen] = np.nanmean(block[seen], axis=1)
            peak[seen] = np.nanmax(block[seen], axis=1)
        self.coarse_mean[: len(self.keys), bin_] = mean
        self.coarse_max[: len(self.keys), bin_] = peak
        self.coarse_times[bin_] = np.nanmin(self.times[columns]) if not np.all(np.isnan(self.times[columns])) \
            else np.nan

    def recent_series(self, rows: slice | np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(times, rates[series, interval]) of the recent ring in time order, oldest first; of `rows` only (a block
        of them, a judge's share: a copy of the whole fleet's window is some 40 MB at 1,000 hosts), else of all."""
        columns = self._recent_columns()
        return self.times[columns], self.rates[slice(0, len(self.keys)) if rows is None else rows][:, columns]

    def recent_read(self, rows: slice | np.ndarray | None = None) -> np.ndarray:
        """read[series, interval] of the recent ring in recent_series' order: which rates were read then."""
        return self.read[slice(0, len(self.keys)) if rows is None else rows][:, self._recent_columns()]

    def _recent_columns(self) -> list[int]:
        n = min(self.interval, self.shape.recent)
        start = self.interval - n
        return [(start + i) % self.shape.recent for i in range(n)]

    def coarse_series(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(times, mean, max) of the coarse ring in time order, oldest first."""
        bins = self.interval // self.shape.factor
        n = min(bins, self.shape.coarse)
        columns = [(bins - n + i) % self.shape.coarse for i in range(n)]
        rows = len(self.keys)
        return self.coarse_times[columns], self.coarse_mean[:rows][:, columns], self.coarse_max[:rows][:, columns]

    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in (self.rates, self.coarse_mean, self.coarse_max, self.last_value,
                                          self.last_time, self.times, self.coarse_times)))


def _grown(array: np.ndarray, rows: int) -> np.ndarray:
    out = np.full((rows, array.shape[1]), np.nan, dtype=array.dtype)
    out[: array.shape[0]] = array
    return out
