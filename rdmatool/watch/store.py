"""The watch's output directory: its history on disk, so that a restart resumes, and its findings.

- `history.npz`: the whole History (rdmatool.watch.history), replaced atomically after every interval. Its size is
  fixed by the number of series and the history's shape, never by how long the watch ran.
- `findings.jsonl`: every finding event (new, cleared), one JSON object a line; past MAX_LOG_BYTES it becomes
  `findings.jsonl.1` (the one before is dropped), so the log is bounded too.
- `findings.json`: the findings open after the last interval, replaced atomically (what `diagnose` would say now).

A killed watch loses at most the interval it was in: every file is either the old one or the new one.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np

from rdmatool.errors import RdmatoolError
from rdmatool.files import write_atomic
from rdmatool.watch.history import History, Shape

FORMAT = 1
HISTORY_FILE, LOG_FILE, OPEN_FILE = "history.npz", "findings.jsonl", "findings.json"
MAX_LOG_BYTES = 4 * 1024 * 1024
MAX_HISTORY_BYTES = 2 * 1024 * 1024 * 1024  # refuse to load what no watch could have written


class StoreError(RdmatoolError):
    """A watch directory that cannot be used: `PATH: why`."""


def save(directory: Path, history: History, interval_s: float) -> None:
    rows = len(history)
    meta = {"format": FORMAT, "interval": history.interval, "interval_s": interval_s, "keys": history.keys,
            "shape": [history.shape.recent, history.shape.coarse, history.shape.factor], "states": history.states}
    buffer = io.BytesIO()
    np.savez(buffer, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), times=history.times,
             coarse_times=history.coarse_times, rates=history.rates[:rows], coarse_mean=history.coarse_mean[:rows],
             coarse_max=history.coarse_max[:rows], last_value=history.last_value[:rows],
             last_time=history.last_time[:rows])
    path = directory / HISTORY_FILE
    try:
        write_atomic(path, buffer.getvalue())
    except OSError as exc:
        raise StoreError(f"{path}: cannot write ({exc.strerror or exc})") from exc


def load(directory: Path, shape: Shape) -> History | None:
    """The history a previous watch left in `directory`, None when there is none; StoreError when it is not one."""
    path = directory / HISTORY_FILE
    if not path.exists():
        return None
    try:
        if path.stat().st_size > MAX_HISTORY_BYTES:
            raise StoreError(f"{path}: larger than any watch history ({path.stat().st_size} bytes)")
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            arrays = {name: data[name] for name in ("times", "coarse_times", "rates", "coarse_mean", "coarse_max",
                                                      "last_value", "last_time")}
    except StoreError:
        raise
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise StoreError(f"{path}: not a watch history ({' '.join(str(exc).split())[:120]}); move it away to "
                         "start afresh") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise StoreError(f"{path}: not a watch history of this version (format {meta.get('format')!r})")
    if list(meta.get("shape", [])) != [shape.recent, shape.coarse, shape.factor]:
        raise StoreError(f"{path}: written with another history shape {meta.get('shape')}; move it away to start "
                         "afresh")
    history = History(shape)
    keys = [tuple(k) for k in meta["keys"]]
    rows = len(keys)
    if any(len(arrays[n]) != rows for n in ("rates", "coarse_mean", "coarse_max", "last_value", "last_time")):
        raise StoreError(f"{path}: its arrays do not match its {rows} series")
    history.keys = keys
    history.index = {key: i for i, key in enumerate(keys)}
    history.interval = int(meta["interval"])
    history.times, history.coarse_times = arrays["times"].astype(float), arrays["coarse_times"].astype(float)
    history.rates = arrays["rates"].astype(np.float32)
    history.coarse_mean, history.coarse_max = arrays["coarse_mean"], arrays["coarse_max"]
    history.last_value, history.last_time = arrays["last_value"], arrays["last_time"]
    history.last_interval = np.full(rows, -1, dtype=np.int64)  # a restart is a gap: its first rates are not spread
    history.states = meta.get("states") or {}
    return history


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
