"""Parsed samples as columns: one `Output` record per raw output, the sample rows of all outputs as codes over one
string pool (`Columns`), and `parse_all`, which fills them on every core for a big bundle.

This is what the samples store keeps on disk and what the frame is built from; it knows nothing of files. A
placeholder entity (`netdev`, `port`) of a parser that does not name what it reads is replaced by the output's
qualifier here, once, for both (`entity_namer`: one name per port).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from rdmatool import parsers
from rdmatool.errors import ParseError
from rdmatool.table import parallel

MISSING_INT = np.iinfo(np.int64).min
_U64 = 2**64
_SMALL = 1 << 20  # a priority or a size below this is its own code (`_small`)
# Parsers whose output does not name the interface/port it is about emit these placeholders; the bundle's
# qualifier (what the command was run for) supplies the real name.
PLACEHOLDER_ENTITIES = {"netdev", "port"}
# One name per RDMA port whichever tool read it: `<device>/<port>` (`mlx5_0/1`), as ibstat, ibstatus, ibv_devinfo
# and sysfs print it. perfquery knows only a LID and mlxlink names nothing, so their port comes from the qualifier
# they were run with, `<device>.<port>` (`<device>` alone: port 1, what both tools read without -P / -p).
# perfquery's every entity is that port; mlxlink's `port` is, and its `port/laneN` are lanes of it.
RDMA_PORT_BY_QUALIFIER = {"perfquery": "all", "mlxlink": "placeholder"}
# perftest run against one peer: the qualifier `<test>@<peer>` (`ib_write_bw@gpu02`) is the entity of its every
# sample, so that one host's results with several peers stay apart in the facts as they are in the frame.
PER_PEER = {"perftest"}
PEER_MARK = "@"


def rdma_port(qualifier: str) -> str:
    """`mlx5_0.1` → `mlx5_0/1`; a bare device `mlx5_0` → `mlx5_0/1`."""
    device, dot, port = qualifier.rpartition(".")
    if dot and device and port.isdigit():
        return f"{device}/{port}"
    return f"{qualifier}/1"


def entity_namer(parser: str, qualifier: str | None) -> Callable[[str], str] | None:
    """How one output's entities are renamed from its qualifier (None: kept as the parser wrote them)."""
    if not qualifier:
        return None
    by_port, port = RDMA_PORT_BY_QUALIFIER.get(parser), rdma_port(qualifier)
    if by_port == "all":
        return lambda entity: port
    if by_port == "placeholder":
        return lambda entity: port if entity == "port" else port + entity[4:] if entity.startswith("port/") \
            else entity
    if parser in PER_PEER and PEER_MARK in qualifier:
        return lambda entity: qualifier
    return lambda entity: qualifier if entity in PLACEHOLDER_ENTITIES else entity


_ROW_COLUMNS = ("entity", "metric", "raw_key", "text")


@dataclass
class Output:
    """One raw output as the store knows it: where it is, what it was, which sample rows it produced."""

    snapshot: int
    target: str
    stem: str
    raw_sig: list[int] | None
    side_sig: list[int] | None
    parser: str
    qualifier: str | None
    time: float  # epoch seconds of the read (NaN when unknown)
    exit_code: int | None
    rows: int = 0
    failure: str | None = None
    # Why the output was not read (its file turned out unusable when read: see bundle.read_result); never stored.
    skipped: str | None = None

    @classmethod
    def of_result(cls, snapshot: int, target: str, stem: str, raw_sig: list[int] | None, side_sig: list[int] | None,
                  result) -> Output:
        """The record of one CommandResult (live or read back from a bundle), before it is parsed."""
        return cls(snapshot, target, stem, raw_sig, side_sig, result.parser, result.qualifier, epoch(result.started),
                   result.exit_code)


OUT_TEXT = ("target", "stem", "parser", "qualifier", "failure")
OUT_INT = ("snapshot", "raw_size", "raw_mtime", "side_size", "side_mtime", "exit_code", "rows")


def output_columns(outputs: list[Output]) -> dict[str, np.ndarray]:
    """The per-output facts as columns (what the store keeps and the frame is built from)."""
    def ints(values) -> np.ndarray:
        return np.fromiter((MISSING_INT if v is None else v for v in values), dtype=np.int64, count=len(outputs))

    cols = {name: np.array([getattr(o, name) for o in outputs], dtype=object) for name in OUT_TEXT}
    cols["snapshot"] = ints(o.snapshot for o in outputs)
    cols["raw_size"] = ints(o.raw_sig[0] if o.raw_sig else None for o in outputs)
    cols["raw_mtime"] = ints(o.raw_sig[1] if o.raw_sig else None for o in outputs)
    cols["side_size"] = ints(o.side_sig[0] if o.side_sig else None for o in outputs)
    cols["side_mtime"] = ints(o.side_sig[1] if o.side_sig else None for o in outputs)
    cols["exit_code"] = ints(o.exit_code for o in outputs)
    cols["rows"] = ints(o.rows for o in outputs)
    cols["time"] = np.fromiter((o.time for o in outputs), dtype=np.float64, count=len(outputs))
    return cols


def output_list(cols: dict[str, np.ndarray]) -> list[Output]:
    """Columns back to Output records (only when some outputs must be parsed again)."""
    def sig(size: int, mtime: int) -> list[int] | None:
        return None if size == MISSING_INT else [size, mtime]

    names = ("snapshot", "target", "stem", "raw_size", "raw_mtime", "side_size", "side_mtime", "parser", "qualifier",
             "time", "exit_code", "rows", "failure")
    return [Output(snapshot, target, stem, sig(raw_size, raw_mtime), sig(side_size, side_mtime), parser, qualifier,
                   time, None if exit_code == MISSING_INT else exit_code, rows, failure)
            for (snapshot, target, stem, raw_size, raw_mtime, side_size, side_mtime, parser, qualifier, time, exit_code,
                 rows, failure) in zip(*(cols[name].tolist() for name in names))]


@dataclass
class Columns:
    """Sample rows as code and number arrays over one string pool (what the store holds and the frame is built from)."""

    strings: list[str] = field(default_factory=list)
    codes: dict[str, list[int]] = field(default_factory=lambda: {c: [] for c in _ROW_COLUMNS})
    priority: list[int] = field(default_factory=list)
    size_bytes: list[int] = field(default_factory=list)
    value: list[float] = field(default_factory=list)
    exact: list[int] = field(default_factory=list)
    is_int: list[bool] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict)

    def with_pool(self, strings: list[str]) -> Columns:
        self.strings = list(strings)
        self._index = {s: i for i, s in enumerate(self.strings)}
        return self

    def code(self, text: str | None) -> int:
        if text is None:
            return -1
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.strings)
            self.strings.append(text)
        return found

    def codes_of(self, values) -> np.ndarray:
        """`[self.code(v) for v in values]` as int32: the distinct values added first, in order of first appearance
        (what the loop would add), then one look-up per value made in C — at 10,000 hosts the store's five text
        columns of 460,000 outputs each took 0.5 s through `code`."""
        values = list(values)
        for value in dict.fromkeys(values):
            self.code(value)
        index = {**self._index, None: -1}
        return np.fromiter(map(index.__getitem__, values), dtype=np.int32, count=len(values))

    def add(self, parser: str, qualifier: str | None, samples: list) -> int:
        """Append one output's samples (entities named from the qualifier: `entity_namer`); returns how many."""
        code, codes = self.code, self.codes
        entity_col, metric_col, raw_col, text_col = (codes[c] for c in _ROW_COLUMNS)
        rename = entity_namer(parser, qualifier)
        for s in samples:
            entity_col.append(code(s.entity if rename is None else rename(s.entity)))
            metric_col.append(code(s.metric))
            raw_col.append(code(s.raw_key))
            text_col.append(code(s.text))
            self.priority.append(MISSING_INT if s.priority is None else int(s.priority))
            self.size_bytes.append(MISSING_INT if s.size_bytes is None else int(s.size_bytes))
            v = s.value
            # kept exact too: a 64-bit counter near its wrap does not fit a float's 53-bit mantissa
            counter = isinstance(v, int) and not isinstance(v, bool) and 0 <= v < _U64
            self.value.append(np.nan if v is None else float(v))
            self.exact.append(v if counter else 0)
            self.is_int.append(counter)
        return len(samples)

    def extend(self, strings: list[str], arrays: dict[str, np.ndarray]) -> None:
        """Append rows parsed elsewhere (another process, its own string pool) after the rows held here."""
        remap = np.array([self.code(text) for text in strings] + [-1], dtype=np.int64)  # -1 (None) stays -1
        for name in _ROW_COLUMNS:
            self.codes[name].extend(remap[arrays[name]].tolist())
        for name in _ROW_NUMBERS:
            getattr(self, name).extend(arrays[name].tolist())

    def arrays(self) -> dict[str, np.ndarray]:
        out = {c: np.asarray(self.codes[c], dtype=np.int32) for c in _ROW_COLUMNS}
        return out | {name: np.asarray(getattr(self, name), dtype=dtype) for name, dtype in _ROW_NUMBERS.items()}


_ROW_NUMBERS = {"priority": np.int64, "size_bytes": np.int64, "value": np.float64, "exact": np.uint64, "is_int": bool}
ARRAY_NAMES = (*_ROW_COLUMNS, *_ROW_NUMBERS)


def parse_output(out: Output, stdout: str, columns: Columns, known: set[str]) -> None:
    """Parse one raw output into `columns`; an unparsable output records its one-line failure and adds nothing."""
    if out.skipped is not None:
        out.rows, out.failure = 0, None
        return
    if out.parser not in known:
        out.rows, out.failure = 0, f"no parser named {out.parser!r}"
        return
    if out.exit_code != 0 and not stdout.strip():
        # A failed command with no output, or one that never finished (no exit status: the target's deadline cut
        # it): a collection failure, nothing to parse (an empty output would read as "printed nothing")
        out.rows, out.failure = 0, None
        return
    try:
        samples = parsers.parse(out.parser, stdout)
    except ParseError as exc:
        name = f"snapshots/{out.snapshot}/{out.target}/{out.parser}"
        out.rows, out.failure = 0, exc.located(name + (f".{out.qualifier}" if out.qualifier else ""))
        return
    out.rows, out.failure = columns.add(out.parser, out.qualifier, samples), None


# Below this many outputs a worker process costs more than it saves.
PARALLEL_MIN = 1000


def parse_all(jobs: list, columns: Columns, known: set[str], prepare: Callable | None = None) -> list[Output]:
    """Parse jobs into `columns`, in order, and return their Outputs (rows and failures filled in) — on every core for
    a big bundle (20,000 outputs of a 1,000-host fleet take one core ten seconds or more); the table is the same
    either way. A job is an (Output, raw text) pair, or anything `prepare` turns into one: reading the files inside
    the share lets the workers read them too."""
    prepare = prepare or (lambda job: job)  # (the shares are forked, never pickled)
    n = parallel.workers(len(jobs), PARALLEL_MIN)
    if n < 2:
        return _parse_into(columns, jobs, prepare, known)
    bounds = [(len(jobs) * k // n, len(jobs) * (k + 1) // n) for k in range(n)]
    results = parallel.fork_map(lambda bound: _parse_share(jobs[bound[0]:bound[1]], prepare), bounds)
    done = []
    for outputs, strings, arrays in results:
        done.extend(outputs)
        columns.extend(strings, arrays)
    return done


def _parse_into(columns: Columns, jobs: list, prepare: Callable, known: set[str]) -> list[Output]:
    done = []
    for job in jobs:
        out, text = prepare(job)
        parse_output(out, text, columns, known)
        done.append(out)
    return done


def _parse_share(jobs: list, prepare: Callable) -> tuple[list[Output], list[str], dict[str, np.ndarray]]:
    columns = Columns()
    return _parse_into(columns, jobs, prepare, set(parsers.names())), columns.strings, columns.arrays()


# What names a series: the output it came from (target, parser, qualifier) and, within it, the sample's own key.
# The parser and the qualifier are part of it because two outputs of one target may say the same thing of the same
# entity: one perftest result per peer, the same port state read by sysfs and by ibv_devinfo. Without them one would
# silently replace the other among the latest values.
OUTPUT_KEY = ("target", "parser", "qualifier")
SAMPLE_KEY = ("entity", "metric", "priority", "size_bytes", "raw_key")


def series_of(outputs: dict[str, np.ndarray], arrays: dict[str, np.ndarray]) -> np.ndarray:
    """One int64 per row naming its series (OUTPUT_KEY of its output, SAMPLE_KEY of the row), made from the codes, so
    telling 700,000 readings apart never hashes a string. The same arrays always give the same ids, which is how a
    loaded store's are checked. A missing qualifier (None, or code -1) is a value of its own."""
    per_output = tuple_ids([_factorize(outputs[name], use_na_sentinel=False)[0] for name in OUTPUT_KEY])
    ids = np.repeat(_factorize(per_output)[0].astype(np.int64), outputs["rows"])
    span = int(ids.max()) + 1 if len(ids) else 1
    # `tuple_ids([ids] + [_codes_of(arrays[name]) for name in SAMPLE_KEY])`, each column mixed into the ids in place:
    # at 10,000 hosts the five arrays of codes were 360 MB of fresh memory at once, for one pass each.
    for name in SAMPLE_KEY:
        ids, span = _mixed_in(ids, span, arrays[name])
    return ids


def _mixed_in(ids: np.ndarray, span: int, column: np.ndarray) -> tuple[np.ndarray, int]:
    """`ids * width + codes` (tuple_ids' step) for one row column coded as `_codes_of` codes it, written into `ids`
    where the codes are the column itself shifted (a string code, a small number): no array of codes is made."""
    present = None
    if column.dtype == np.int32:
        width = int(column.max()) + 2 if len(column) else 1  # codes column + 1: -1 (None) is 0
    elif column.dtype == np.int64 and len(column) and _small(column):
        present = column != MISSING_INT
        width = int(column.max()) + 2 if present.any() else 1  # codes column + 1, MISSING_INT is 0
    else:
        return _step(ids, span, _codes_of(column))
    ids, span = _dense_for(ids, span, width)
    ids *= width
    if present is None:
        ids += column
        ids += 1
    else:
        np.add(ids, column, out=ids, where=present)
        np.add(ids, 1, out=ids, where=present)
    return ids, span * width


def _small(column: np.ndarray) -> bool:
    """A priority or a size `_codes_of` codes as the number itself (shifted): small, and never below 0 but missing."""
    missing = column == MISSING_INT
    return int(column.max()) < _SMALL and bool(((column >= 0) | missing).all())


def _factorize(values: np.ndarray, **options) -> tuple[np.ndarray, np.ndarray]:
    """pandas.factorize, with pandas imported only when ids are made (by the diagnosis): the collector builds its
    store with this module, and importing pandas would cost each run 0.3-0.7 s of client CPU for nothing."""
    import pandas as pd

    return pd.factorize(values, **options)


def _codes_of(column: np.ndarray) -> np.ndarray:
    """Non-negative codes of one row column for `tuple_ids`, equal exactly where the values are: a string code as it
    is (shifted past -1, None), a priority or a size that is a small number (or MISSING_INT) likewise; anything else
    factorized. A hash of every one of 9,000,000 rows per column is what this spares."""
    if column.dtype == np.int32:
        codes = column.astype(np.int64)
        codes += 1  # in place: at 10,000 hosts each temporary is 72 MB of memory the kernel must hand out
        return codes
    if column.dtype == np.int64 and len(column) and _small(column):
        codes = column + 1
        codes[column == MISSING_INT] = 0
        return codes
    return _factorize(column)[0]


def tuple_ids(parts: list[np.ndarray]) -> np.ndarray:
    """One int64 per row naming the row's tuple of codes (each part: codes 0..k-1, one per row; the fewer k, the
    later the ids must be made dense again)."""
    if not parts:
        return np.zeros(0, dtype=np.int64)
    ids, span = parts[0].astype(np.int64), int(parts[0].max()) + 1 if len(parts[0]) else 1
    for codes in parts[1:]:
        ids, span = _step(ids, span, codes)
    return ids


def _step(ids: np.ndarray, span: int, codes: np.ndarray) -> tuple[np.ndarray, int]:
    """`ids * width + codes` in place (`span`: how many ids there may be; the result's)."""
    width = int(codes.max()) + 1 if len(codes) else 1
    ids, span = _dense_for(ids, span, width)
    ids *= width  # in place (see _codes_of)
    ids += codes
    return ids, span * width


def _dense_for(ids: np.ndarray, span: int, width: int) -> tuple[np.ndarray, int]:
    """The ids, made dense again first when `span * width` would leave int64 (the mixed radix must stay inside it)."""
    if span * width >= 2**62:
        ids, dense = _factorize(ids)
        return ids.astype(np.int64, copy=False), len(dense)
    return ids, span


def epoch(stamp: str | None) -> float:
    """An ISO 8601 read time as epoch seconds; NaN when unknown or unreadable."""
    if not stamp:
        return float("nan")
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except (ValueError, OverflowError, OSError):  # a stamp from a bundle may be any string (year 1, year 9999)
        return float("nan")
