"""The watch's bounded history (rdmatool.watch.history) and its store on disk (rdmatool.watch.store)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from rdmatool.watch import store
from rdmatool.watch.history import History, Shape
from rdmatool.watch.light import Reading
from rdmatool.watch.loop import Watch, WatchOptions
from tests.watch.fakes import FakeHost, steady

SHAPE = Shape(recent=20, coarse=6, factor=5)


def _reading(at: float, value: float, target: str = "gpu01") -> Reading:
    return Reading(target, at, {("eth2", "rx_pause_frames", 3): value}, {("mlx5_0/1", "port_state"): "ACTIVE"})


def test_rates_per_second_and_no_rate_across_a_counter_reset() -> None:
    history = History(SHAPE)
    assert history.record(0.0, [_reading(0.0, 100.0)]) == {}  # the first reading gives no rate
    assert history.record(10.0, [_reading(10.0, 600.0)]) == {("gpu01", "eth2", "rx_pause_frames", 3): 50.0}
    assert history.record(20.0, [_reading(20.0, 5.0)]) == {}  # went backwards: a reset, no rate
    assert history.record(30.0, [_reading(30.0, 25.0)]) == {("gpu01", "eth2", "rx_pause_frames", 3): 2.0}


def test_memory_stays_the_same_however_long_the_watch_runs_and_old_spikes_survive_downsampling() -> None:
    history = History(SHAPE)
    value = 0.0
    for i in range(40):
        value += 1000.0 if i == 3 else 10.0  # one spike early on
        history.record(i * 10.0, [_reading(i * 10.0, value)])
    size = history.nbytes()
    for i in range(40, 400):
        value += 10.0
        history.record(i * 10.0, [_reading(i * 10.0, value)])
    assert history.nbytes() == size and len(history) == 1
    times, rates = history.recent_series()
    assert rates.shape == (1, SHAPE.recent) and np.all(rates == 1.0) and times[-1] == 3990.0
    coarse_times, mean, peak = history.coarse_series()
    assert mean.shape == (1, SHAPE.coarse) and np.all(mean == 1.0)  # the spike has left even the coarse ring
    history = History(SHAPE)
    value = 0.0
    for i in range(20):
        value += 1000.0 if i == 3 else 10.0
        history.record(i * 10.0, [_reading(i * 10.0, value)])
    _, mean, peak = history.coarse_series()
    assert peak[0, 0] == 100.0 and mean[0, 0] == pytest.approx(25.75)  # (1 + 100 + 1 + 1) / 4: the maximum kept


def test_a_host_that_leaves_and_returns_is_a_gap_the_others_are_watched_on() -> None:
    notes: list[str] = []
    away = FakeHost("gpu02", steady, down=lambda i: 3 <= i < 6)
    stop = threading.Event()
    ticks = iter(range(10))

    def clock() -> float:
        n = next(ticks)
        if n == 9:
            stop.set()
        return 10.0 * n

    watch = Watch([FakeHost("gpu01", steady), away], WatchOptions(interval_s=0, duration_s=0, shape=SHAPE), [],
                  lambda event: None, notes.append, clock=clock)
    outcome = watch.run(stop)
    assert outcome.intervals == 10 and outcome.read_ever == {"gpu01", "gpu02"}
    assert notes == ["gpu02: not read (connection refused); a gap until it answers, the others are watched on",
                     "gpu02: answering again after 3 interval(s) missed"]
    _, rates = watch.history.recent_series()
    row = watch.history.index[("gpu02", "eth2", "rx_pause_frames", 3)]
    # the average over the gap, in the interval it was read and in each interval of the gap
    assert rates[row, 3:7] == pytest.approx([50.0] * 4)
    assert away.closed >= 1  # readers are closed at the end


def test_the_store_saves_and_resumes_the_history_exactly(tmp_path: Path) -> None:
    history = History(SHAPE)
    for i in range(13):
        history.record(i * 10.0, [_reading(i * 10.0, i * i * 100.0), _reading(i * 10.0, i * 7.0, "gpu02")])
    store.save(tmp_path, history, 10.0)
    again = store.load(tmp_path, SHAPE)
    assert again.keys == history.keys and again.interval == 13 and again.states == history.states
    for mine, theirs in zip(history.recent_series() + history.coarse_series(),
                            again.recent_series() + again.coarse_series()):
        np.testing.assert_array_equal(mine, theirs)
    assert again.record(130.0, [_reading(130.0, 169 * 100.0)]) == {("gpu01", "eth2", "rx_pause_frames", 3): 250.0}


def test_a_store_that_is_not_a_history_is_named_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / store.HISTORY_FILE).write_bytes(b"not a zip")
    with pytest.raises(store.StoreError, match=r"history.npz: not a watch history .*move it away"):
        store.load(tmp_path, SHAPE)
    assert (tmp_path / store.HISTORY_FILE).read_bytes() == b"not a zip"
    store.save(tmp_path, History(SHAPE), 10.0)
    with pytest.raises(store.StoreError, match="another history shape"):
        store.load(tmp_path, Shape(recent=30, coarse=6, factor=5))
    assert store.load(tmp_path / "absent", SHAPE) is None


def test_the_findings_log_is_bounded(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(store, "MAX_LOG_BYTES", 400)
    for i in range(30):
        store.log_events(tmp_path, [{"event": "finding", "n": i, "pad": "x" * 50}])
    assert (tmp_path / store.LOG_FILE).stat().st_size <= 400 + 100
    assert (tmp_path / (store.LOG_FILE + ".1")).exists() and not (tmp_path / (store.LOG_FILE + ".2")).exists()
    assert '"n": 29' in (tmp_path / store.LOG_FILE).read_text().splitlines()[-1]
