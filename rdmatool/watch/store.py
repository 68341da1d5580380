"""The watch's output directory: its history on disk, so that a restart resumes, and its findings.

- `history.npz`: a checkpoint of the whole History (rdmatool.watch.history), replaced atomically. Its size is fixed
  by the number of series and the history's shape, never by how long the watch ran.
- `history.journal`: each interval since that checkpoint, appended and fsynced as it ends: the interval's input to
  the history (History.prepare's Step: the new series, the rows, values and times read, the states that changed),
  some 12 bytes a series where the checkpoint is some 1,700. `load` replays it through History.apply, so the history
  it gives is the live one bit for bit. When the journal passes JOURNAL_FRACTION of the checkpoint's size, and when
  the watch ends, a new checkpoint is written and the journal emptied: the disk stays bounded, and the checkpoint's
  cost is spread over the intervals in between. A run's first write is a checkpoint too (its journal then follows a
  checkpoint of its own, whatever the last run left).
- `findings.jsonl`: every finding event (new, cleared), one JSON object a line; past MAX_LOG_BYTES it becomes
  `findings.jsonl.1` (the one before is dropped), so the log is bounded too.
- `findings.json`: the findings open after the last interval, replaced atomically (what `diagnose` would say now).

A killed watch loses at most the interval it was in: every file is the old one or the new one, and a journal record
is framed with its length and a CRC-32, so a record cut short (or damaged) ends the journal there and the history is
the one of the interval before. A kill between a checkpoint and the journal's emptying leaves records the checkpoint
holds already: their interval says so, and they are skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import zlib
from pathlib import Path

import numpy as np

from rdmatool.errors import RdmatoolError
from rdmatool.files import read_regular_bytes, write_atomic, write_atomic_with
from rdmatool.watch.history import History, Shape, Step

FORMAT = 2  # 2: the checkpoint holds last_interval (a restart resumes gap filling exactly) and has a journal
HISTORY_FILE, JOURNAL_FILE, LOG_FILE, OPEN_FILE = "history.npz", "history.journal", "findings.jsonl", "findings.json"
MAX_LOG_BYTES = 4 * 1024 * 1024
MAX_HISTORY_BYTES = 2 * 1024 * 1024 * 1024  # refuse to load what no watch could have written
JOURNAL_FRACTION = 0.25  # a new checkpoint when the journal passes this share of the checkpoint's size
JOURNAL_MAGIC = b"rdmatool watch journal 2\n"
_SHAPE = struct.Struct("<III")  # after the magic: the history's shape (recent, coarse, factor)
_FRAME = struct.Struct("<II")  # a record: its payload's length and CRC-32
# a payload: interval, time, JSON length, gauges, gauge time runs, counters, counter time runs
_HEAD = struct.Struct("<qdIIIII")
# the History's arrays of one row a series, as the checkpoint keeps them and load gives them back
_PER_ROW = {"rates": np.float32, "read": bool, "coarse_mean": np.float32, "coarse_max": np.float32,
            "last_value": float, "last_time": float, "last_interval": np.int64}


class StoreError(RdmatoolError):
    """A watch directory that cannot be used: `PATH: why`."""


class Store:
    """The store as one run of the watch writes it: `append` after each interval, `close` at the end."""

    def __init__(self, directory: Path, interval_s: float) -> None:
        self.directory, self.interval_s = directory, interval_s
        self.checkpoint_bytes: int | None = None  # the last checkpoint's size; None: none written by this run
        self.journal_bytes = 0
        self.journaled = 0  # records since that checkpoint

    def append(self, history: History, step: Step) -> None:
        """Keep `step`, which `history` has just applied: a journal record, or a checkpoint (the run's first write,
        a journal past its share)."""
        if step.interval != history.interval - 1:
            raise ValueError(f"interval {step.interval} stored after the history's {history.interval - 1}")
        if self.checkpoint_bytes is None:
            self.checkpoint(history)
            return
        path = self.directory / JOURNAL_FILE
        frame = _record(step)
        try:
            with path.open("ab") as handle:
                before = handle.tell()
                lost = before < self.journal_bytes  # removed or cut by someone meanwhile: what it held is gone
                if not lost:
                    try:
                        handle.write(frame)
                        handle.flush()
                        os.fsync(handle.fileno())
                    except OSError:
                        with contextlib.suppress(OSError):  # no torn record before the next one (a full disk)
                            handle.truncate(before)
                        raise
                    self.journal_bytes = handle.tell()
        except OSError as exc:
            raise StoreError(f"{path}: cannot write ({exc.strerror or exc})") from exc
        self.journaled += 1
        if lost or self.journal_bytes > JOURNAL_FRACTION * self.checkpoint_bytes:
            self.checkpoint(history)  # a lost journal too: the checkpoint makes the disk whole again

    def checkpoint(self, history: History) -> None:
        self.checkpoint_bytes = save(self.directory, history, self.interval_s)
        self.journal_bytes, self.journaled = len(_header(history.shape)), 0

    def close(self, history: History) -> None:
        """The watch's end: what the journal holds becomes a checkpoint (a restart then reads one file)."""
        if self.journaled:
            self.checkpoint(history)


def save(directory: Path, history: History, interval_s: float) -> int:
    """A checkpoint of `history`, then an empty journal; the checkpoint's size in bytes."""
    rows = len(history)
    meta = {"format": FORMAT, "interval": history.interval, "interval_s": interval_s, "keys": history.keys,
            "shape": [history.shape.recent, history.shape.coarse, history.shape.factor], "states": history.states}
    arrays = {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), "times": history.times,
              "coarse_times": history.coarse_times, **{name: getattr(history, name)[:rows] for name in _PER_ROW}}
    path = directory / HISTORY_FILE
    try:
        write_atomic_with(path, lambda handle: np.savez(handle, **arrays))  # streamed: no copy of 150 MB in memory
        size = path.stat().st_size
        path = directory / JOURNAL_FILE
        write_atomic(path, _header(history.shape))
    except OSError as exc:
        raise StoreError(f"{path}: cannot write ({exc.strerror or exc})") from exc
    return size


def load(directory: Path, shape: Shape) -> History | None:
    """The history a previous watch left in `directory` (its checkpoint, the journal replayed), None when there is
    none; StoreError when it is not one."""
    path, journal = directory / HISTORY_FILE, directory / JOURNAL_FILE
    # The journal first: a watch running meanwhile may write a checkpoint, which only makes these records older
    # than it (skipped); a checkpoint read first could be followed by a journal that no longer follows it.
    records = _records(journal, shape)
    if not path.exists():
        return None
    history = _checkpoint(path, shape)
    for payload in records:
        step = _step(journal, payload, history)
        if step is None:
            continue  # the checkpoint holds it already (written after it, the journal not yet emptied)
        history.apply(step)
    return history


def intervals(directory: Path, shape: Shape | None = None) -> int:
    """The intervals the store in `directory` holds (0: none)."""
    history = load(directory, shape or Shape())
    return history.interval if history is not None else 0


def _checkpoint(path: Path, shape: Shape) -> History:
    try:
        if path.stat().st_size > MAX_HISTORY_BYTES:
            raise StoreError(f"{path}: larger than any watch history ({path.stat().st_size} bytes)")
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            if isinstance(meta, dict) and meta.get("format") == FORMAT:
                arrays = {name: data[name] for name in ("times", "coarse_times", *_PER_ROW)}
    except StoreError:
        raise
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise StoreError(f"{path}: not a watch history ({' '.join(str(exc).split())[:120]}); move it away to "
                         "start afresh") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        format_ = meta.get("format") if isinstance(meta, dict) else None
        raise StoreError(f"{path}: not a watch history of this version (format {format_!r})")
    if list(meta.get("shape", [])) != [shape.recent, shape.coarse, shape.factor]:
        raise StoreError(f"{path}: written with another history shape {meta.get('shape')}; move it away to start "
                         "afresh")
    history = History(shape)
    keys = [tuple(k) for k in meta["keys"]]
    rows = len(keys)
    if any(len(arrays[n]) != rows for n in _PER_ROW):
        raise StoreError(f"{path}: its arrays do not match its {rows} series")
    history.keys = keys
    history.index = {key: i for i, key in enumerate(keys)}
    history.interval = int(meta["interval"])
    history.times, history.coarse_times = arrays["times"].astype(float), arrays["coarse_times"].astype(float)
    for name, dtype in _PER_ROW.items():
        setattr(history, name, arrays[name].astype(dtype, copy=False))
    history.latest_rates = np.full(rows, np.nan)  # not kept: a restart's textfiles have rates from its next reading
    history.states = meta.get("states") or {}
    return history


def _header(shape: Shape) -> bytes:
    return JOURNAL_MAGIC + _SHAPE.pack(shape.recent, shape.coarse, shape.factor)


def _runs(times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`times` as runs of one value (a reading's counters share its time): (values, lengths). Compared bit by bit,
    so that repeating the runs gives the very array back."""
    if not len(times):
        return times, np.zeros(0, dtype=np.int32)
    bits = times.view(np.int64)
    starts = np.flatnonzero(np.concatenate([[True], bits[1:] != bits[:-1]]))
    return times[starts], np.diff(np.append(starts, len(times))).astype(np.int32)


def _record(step: Step) -> bytes:
    meta = json.dumps({"keys": step.new_keys, "states": step.states}).encode()
    gauge_times, gauge_lengths = _runs(step.gauge_times)
    times, lengths = _runs(step.times)
    payload = b"".join([
        _HEAD.pack(step.interval, step.at, len(meta), len(step.gauge_rows), len(gauge_times), len(step.rows),
                   len(times)), meta,
        *(np.ascontiguousarray(a, dtype=t).tobytes() for a, t in (
            (step.gauge_rows, "<i4"), (step.gauge_values, "<f8"), (gauge_times, "<f8"), (gauge_lengths, "<i4"),
            (step.rows, "<i4"), (step.values, "<f8"), (times, "<f8"), (lengths, "<i4")))])
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def _records(path: Path, shape: Shape) -> list[memoryview]:
    """The journal's whole records' payloads, in order. A record cut short or damaged ends it (the interval a kill
    cut, or a disk's torn write): it and what follows are dropped. StoreError when the file is not a journal of this
    history's shape."""
    try:
        data = memoryview(read_regular_bytes(path, MAX_HISTORY_BYTES))
    except FileNotFoundError:
        return []
    except RdmatoolError as exc:
        raise StoreError(f"{exc}; move it away to start afresh") from exc
    header = _header(shape)
    if len(data) < len(header) and header.startswith(bytes(data)):
        return []  # the header itself cut short
    if not bytes(data[: len(JOURNAL_MAGIC)]) == JOURNAL_MAGIC:
        raise StoreError(f"{path}: not a watch journal of this version; move it away to start afresh")
    if bytes(data[: len(header)]) != header:
        raise StoreError(f"{path}: written with another history shape; move it away to start afresh")
    out, at = [], len(header)
    while at + _FRAME.size <= len(data):
        length, crc = _FRAME.unpack_from(data, at)
        payload = data[at + _FRAME.size: at + _FRAME.size + length]
        if len(payload) < max(length, _HEAD.size) or zlib.crc32(payload) != crc:
            break
        out.append(payload)
        at += _FRAME.size + length
    return out


def _step(path: Path, payload: memoryview, history: History) -> Step | None:
    """A record as the Step it was, checked against the history it follows; None when the history holds it."""
    interval, at, meta_len, gauges, gauge_runs, counters, counter_runs = _HEAD.unpack_from(payload)
    if interval < history.interval:
        return None
    if interval > history.interval:
        raise StoreError(f"{path}: its interval {interval} does not follow the {history.interval} of "
                         f"{HISTORY_FILE}; move it away to start afresh")
    try:
        offset = _HEAD.size
        meta = json.loads(bytes(payload[offset: offset + meta_len]).decode())
        offset += meta_len

        def take(dtype: str, n: int) -> np.ndarray:
            nonlocal offset
            size = np.dtype(dtype).itemsize * n
            if offset + size > len(payload):
                raise ValueError("a record shorter than its arrays")
            array = np.frombuffer(payload, dtype=dtype, count=n, offset=offset).astype(dtype[1:])
            offset += size
            return array

        def repeated(runs: int, n: int) -> np.ndarray:
            values, lengths = take("<f8", runs), take("<i4", runs)
            if (lengths < 1).any() or int(lengths.sum(dtype=np.int64)) != n:
                raise ValueError("time runs that are not its values'")
            return np.repeat(values, lengths)

        gauge_rows, gauge_values = take("<i4", gauges), take("<f8", gauges)
        gauge_times = repeated(gauge_runs, gauges)
        rows, values = take("<i4", counters), take("<f8", counters)
        times = repeated(counter_runs, counters)
        keys = [tuple(k) for k in meta["keys"]]  # as the checkpoint keeps them: JSON lists
        states = meta["states"]
        if not isinstance(states, dict) or not all(isinstance(s, dict) for s in states.values()):
            raise ValueError("states that are not a target's")
        rows_after = len(history) + len(keys)
        if (offset != len(payload) or any(len(k) != 4 for k in keys) or len(set(keys)) != len(keys)
                or any(k in history.index for k in keys)
                or any(len(r) and (r.min() < 0 or r.max() >= rows_after) for r in (gauge_rows, rows))):
            raise ValueError("a record that does not fit its history")
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise StoreError(f"{path}: interval {interval} is not a watch journal record of this version "
                         f"({' '.join(str(exc).split())[:120]}); move it away to start afresh") from exc
    return Step(interval, at, keys, states, gauge_rows, gauge_values, gauge_times, rows, values, times)


def log_events(directory: Path, events: list[dict]) -> None:
    """Append finding events to the log, rotating it past MAX_LOG_BYTES."""
    if not events:
        return
    path = directory / LOG_FILE
    if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
        os.replace(path, directory / (LOG_FILE + ".1"))
    with path.open("a", encoding="utf-8") as handle:
        for event in events:
            handle.write(json.dumps(event, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def save_open(directory: Path, findings: list[dict]) -> None:
    write_atomic(directory / OPEN_FILE, (json.dumps({"format": FORMAT, "findings": findings}, indent=1,
                                                    sort_keys=True) + "\n").encode())
