"""The watch's store (rdmatool.watch.store): a checkpoint and a journal of each interval's input, replayed into the
very history the watch had, whatever a kill left on disk, and bounded on disk."""

from __future__ import annotations

import dataclasses
import json
import shutil
import struct
import threading
from pathlib import Path

import numpy as np
import pytest

from rdmatool.watch import store
from rdmatool.watch.history import History, Shape
from rdmatool.watch.light import Reading
from rdmatool.watch.loop import Watch, WatchOptions
from tests.watch.fakes import FakeHost, steady

SHAPE = Shape(recent=8, coarse=4, factor=4)  # the rings wrap and a coarse bin completes every 4 intervals
ARRAYS = ("rates", "read", "coarse_mean", "coarse_max", "last_value", "last_time", "last_interval")


def _readings(i: int) -> list[Reading]:
    """Interval i of a small fleet: gpu03 appears at 5, gpu02 misses 7 to 9 (a gap), gpu01's counter is reset at
    11, its port goes down at 6, a probe's figure every other interval."""
    at = 1_000.0 + 10.0 * i
    out = []
    for n, host in enumerate(("gpu01", "gpu02", "gpu03")):
        if (host == "gpu03" and i < 5) or (host == "gpu02" and 7 <= i <= 9):
            continue
        base = 3.0 * i if host == "gpu01" and i >= 11 else 1e6 + (n + 1) * 500.0 * i + (i % 3) * 40.0
        counters = {("eth2", "rx_pause_frames", 3): base, ("mlx5_0/1", "cnp_sent", None): 7.0 * i * (n + 1)}
        states = {("mlx5_0/1", "port_state"): "DOWN" if host == "gpu01" and i >= 6 else "ACTIVE"}
        gauges = {("ib_send_lat@probe", "lat_p99_us", None): 4.0 + i % 5} if i % 2 == 0 else {}
        out.append(Reading(host, at + 0.1 * n, counters, states, gauges))
    return out


def _live(intervals: int) -> History:
    history = History(SHAPE)
    for i in range(intervals):
        history.record(1_000.0 + 10.0 * i, _readings(i))
    return history


def _watched(directory: Path, intervals: int, each=None) -> History:
    """The history of `intervals` intervals, kept in `directory` as the watch keeps it."""
    history, kept = History(SHAPE), store.Store(directory, 10.0)
    for i in range(intervals):
        step = history.prepare(1_000.0 + 10.0 * i, _readings(i))
        history.apply(step)
        kept.append(history, step)
        if each is not None:
            each(i, history)
    return history


def _same(mine: History, theirs: History) -> None:
    """Every array bit for bit (NaNs included), the series, states and interval."""
    rows = len(mine)
    assert theirs.keys == mine.keys and theirs.index == mine.index
    assert theirs.interval == mine.interval and theirs.states == mine.states
    for name in ("times", "coarse_times"):
        assert getattr(theirs, name).tobytes() == getattr(mine, name).tobytes(), name
    for name in ARRAYS:
        a, b = getattr(mine, name)[:rows], getattr(theirs, name)[:rows]
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), name


def _frames(path: Path) -> list[tuple[int, int]]:
    """(offset, length) of each record's payload in a journal."""
    data = path.read_bytes()
    at, out = len(store._header(SHAPE)), []
    while at < len(data):
        length, _ = struct.unpack_from("<II", data, at)
        out.append((at + 8, length))
        at += 8 + length
    return out


@pytest.mark.parametrize("fraction", [store.JOURNAL_FRACTION, 1e9])  # checkpoints as they come; journal only
def test_a_history_loaded_from_checkpoint_and_journal_is_the_live_one(tmp_path: Path, monkeypatch,
                                                                       fraction: float) -> None:
    monkeypatch.setattr(store, "JOURNAL_FRACTION", fraction)
    checkpoints = set()

    def check(i: int, live: History) -> None:
        checkpoints.add(_checkpoint_interval(tmp_path))
        _same(live, store.load(tmp_path, SHAPE))
        pause = live.index.get(("gpu02", "eth2", "rx_pause_frames", 3))
        if i == 10:  # the gap's intervals got the rate over it
            assert np.isfinite(live.recent_series()[1][pause, -4:]).all()
        if i == 11:  # no rate across the reset
            assert np.isnan(live.latest_rates[live.index[("gpu01", "eth2", "rx_pause_frames", 3)]])

    live = _watched(tmp_path, 23, check)
    assert len(live) == 3 * 3 and live.states["gpu01"] == {"mlx5_0/1\tport_state": "DOWN"}
    if fraction < 1:
        assert len(checkpoints) > 2
    else:
        assert checkpoints == {1} and len(_frames(tmp_path / store.JOURNAL_FILE)) == 22  # the first write: one
    again = store.load(tmp_path, SHAPE)  # and the loaded one goes on as the live one does
    assert again.record(1_230.0, _readings(23)) == live.record(1_230.0, _readings(23))
    _same(live, again)


def _checkpoint_interval(directory: Path) -> int:
    with np.load(directory / store.HISTORY_FILE) as data:
        return json.loads(bytes(data["meta"]).decode())["interval"]


def test_a_torn_or_damaged_last_record_is_the_interval_a_kill_cut(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(store, "JOURNAL_FRACTION", 1e9)
    _watched(tmp_path, 14)
    journal = tmp_path / store.JOURNAL_FILE
    whole = journal.read_bytes()
    journal.write_bytes(whole[:-3])  # cut short
    _same(_live(13), store.load(tmp_path, SHAPE))
    journal.write_bytes(whole)
    offset, length = _frames(journal)[-1]
    damaged = bytearray(whole)
    damaged[offset + length // 2] ^= 0x40  # one bit of a value: only the checksum tells
    journal.write_bytes(bytes(damaged))
    _same(_live(13), store.load(tmp_path, SHAPE))
    offset, length = _frames(journal)[5]  # a damaged record ends the journal: what follows it cannot be trusted
    damaged = bytearray(whole)
    damaged[offset + length - 1] ^= 0x01
    journal.write_bytes(bytes(damaged))
    _same(_live(1 + 5), store.load(tmp_path, SHAPE))  # interval 0 in the checkpoint, records 1 to 5 before it
    journal.write_bytes(whole[: len(store._header(SHAPE)) - 4])  # even the header cut short: the checkpoint alone
    _same(_live(1), store.load(tmp_path, SHAPE))


def test_a_kill_between_a_checkpoint_and_the_journals_emptying_replays_nothing_twice(tmp_path: Path,
                                                                                     monkeypatch) -> None:
    monkeypatch.setattr(store, "JOURNAL_FRACTION", 1e9)
    live = _watched(tmp_path, 9)
    old = (tmp_path / store.JOURNAL_FILE).read_bytes()
    assert len(_frames(tmp_path / store.JOURNAL_FILE)) == 8
    store.save(tmp_path, live, 10.0)  # the checkpoint, then the journal emptied ...
    (tmp_path / store.JOURNAL_FILE).write_bytes(old)  # ... which the kill prevented
    _same(live, store.load(tmp_path, SHAPE))


def test_the_journal_stays_a_fraction_of_the_checkpoint(tmp_path: Path) -> None:
    sizes = []

    def check(i: int, live: History) -> None:
        journal = (tmp_path / store.JOURNAL_FILE).stat().st_size
        assert journal <= store.JOURNAL_FRACTION * (tmp_path / store.HISTORY_FILE).stat().st_size
        sizes.append(journal)

    _watched(tmp_path, 80, check)
    emptied = sum(1 for a, b in zip(sizes, sizes[1:]) if b < a)
    assert emptied >= 5 and max(sizes) > len(store._header(SHAPE))  # records kept, and checkpoints now and then


def test_a_journal_removed_while_the_watch_runs_is_made_whole_by_a_checkpoint(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(store, "JOURNAL_FRACTION", 1e9)

    def remove(i: int, live: History) -> None:
        if i == 4:
            (tmp_path / store.JOURNAL_FILE).unlink()

    live = _watched(tmp_path, 7, remove)
    assert _checkpoint_interval(tmp_path) == 6  # interval 5's write found the journal gone
    _same(live, store.load(tmp_path, SHAPE))


def test_a_journal_that_is_not_ours_is_named_never_replayed_nor_overwritten(tmp_path: Path) -> None:
    _watched(tmp_path, 3)
    journal = tmp_path / store.JOURNAL_FILE
    journal.write_bytes(b"PK\x03\x04 something else entirely")
    with pytest.raises(store.StoreError, match=r"^\S*history.journal: not a watch journal .*move it away"):
        store.load(tmp_path, SHAPE)
    (tmp_path / store.HISTORY_FILE).unlink()
    with pytest.raises(store.StoreError, match="history.journal: not a watch journal"):
        store.load(tmp_path, SHAPE)  # even without a checkpoint: never silently replaced
    assert journal.read_bytes().startswith(b"PK")
    shutil.rmtree(tmp_path)
    tmp_path.mkdir()
    _watched(tmp_path, 3)
    with pytest.raises(store.StoreError, match="history.journal: written with another history shape"):
        store.load(tmp_path, Shape(recent=8, coarse=5, factor=4))


def test_a_journal_that_does_not_follow_its_checkpoint_is_named(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(store, "JOURNAL_FRACTION", 1e9)
    _watched(tmp_path, 6)
    journal = (tmp_path / store.JOURNAL_FILE).read_bytes()
    store.save(tmp_path, History(SHAPE), 10.0)  # an older checkpoint put back
    (tmp_path / store.JOURNAL_FILE).write_bytes(journal)
    with pytest.raises(store.StoreError, match=r"history.journal: its interval 1 does not follow the 0 of "
                                               r"history.npz; move it away"):
        store.load(tmp_path, SHAPE)


def test_a_whole_record_that_does_not_fit_its_history_is_named(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(store, "JOURNAL_FRACTION", 1e9)
    live = _watched(tmp_path, 4)
    step = live.prepare(1_040.0, _readings(4))
    wrong = dataclasses.replace(step, rows=np.full(len(step.rows), len(live) + 50, dtype=np.int32))
    with (tmp_path / store.JOURNAL_FILE).open("ab") as handle:
        handle.write(store._record(wrong))  # checksummed as any record: written by a bug, or another version
    with pytest.raises(store.StoreError, match=r"history.journal: interval 4 is not a watch journal record of this "
                                               r"version \(a record that does not fit its history\)"):
        store.load(tmp_path, SHAPE)


def test_a_checkpoint_of_an_older_format_is_refused_in_one_line(tmp_path: Path) -> None:
    meta = {"format": 1, "interval": 3, "keys": [], "shape": [8, 4, 4], "states": {}}
    np.savez(tmp_path / store.HISTORY_FILE, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    with pytest.raises(store.StoreError, match=r"history.npz: not a watch history of this version \(format 1\)$"):
        store.load(tmp_path, SHAPE)


def test_the_watch_journals_each_interval_and_ends_on_a_checkpoint(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(store, "JOURNAL_FRACTION", 1e9)
    seen = []
    stop = threading.Event()
    ticks = iter(range(100))

    def clock() -> float:
        n = next(ticks)
        if n == 6:
            stop.set()
        seen.append((n, len(_frames(tmp_path / store.JOURNAL_FILE)) if n else 0))
        return 10.0 * n

    watch = Watch([FakeHost("gpu01", steady), FakeHost("gpu02", steady)],
                  WatchOptions(interval_s=0, duration_s=0, shape=SHAPE, out=tmp_path), [], lambda event: None,
                  lambda line: None, clock=clock)
    outcome = watch.run(stop)
    assert outcome.intervals == 7
    assert [count for _, count in seen] == [0, 0, 1, 2, 3, 4, 5]  # the first write a checkpoint, then records
    assert (tmp_path / store.JOURNAL_FILE).read_bytes() == store._header(SHAPE)  # the end: a checkpoint
    assert _checkpoint_interval(tmp_path) == 7
    _same(watch.history, store.load(tmp_path, SHAPE))
