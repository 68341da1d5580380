"""The parsed samples of a bundle, kept beside its raw outputs in `BUNDLE/samples.npz`.

Parsing 20,000 command outputs of a 1,000-host fleet takes Python ten seconds or more; reading back numbers parsed
once takes a fraction of one. `rdmatool collect` writes the store with the bundle, and any reader that had to parse
something writes it back (best effort: a read-only bundle is simply parsed each time).

The store is a cache, never the record — the raw outputs stay the truth:
- every output's entry remembers the size and modification time of its raw and side files, so an output that was
  edited, added or removed since (a hand-written or hand-fixed bundle) is parsed again, alone;
- the store names a digest of the code that produced it (parsers, sample model, this module); other code ignores it;
- it is read with `allow_pickle=False`: a bundle from someone else is data and never runs code;
- a store is used only when every member has the documented dtype and shape, the row and output counts agree, every
  string code is inside the pool (which holds each string once), every series id is the one the row's codes give,
  and the whole stays within a size budget proportional to the bundle's raw files; anything else — a damaged,
  truncated or doctored store, a symlink, a FIFO — is ignored and the raw outputs are parsed instead.

Members (NumPy arrays; JSON documents travel as UTF-8 bytes in uint8 arrays):
  meta      {"format", "digest"}
  strings   the string pool (JSON list); the code columns index it, -1 is None
  out_*     one entry per raw output, in the bundle's order: snapshot, raw_size, raw_mtime, side_size, side_mtime,
            exit_code, rows (int64; MISSING_INT when absent), time (float64, epoch s of the read) and the codes of
            target, stem (file name without .txt), parser, qualifier, failure (a parse error's one line)
  entity, metric, raw_key, text      int32 codes per sample row
  priority, size_bytes               int64 per row; MISSING_INT when absent
  value                              float64 per row (NaN when absent)
  exact                              uint64 per row: the reading as an exact integer when `is_int`, else 0
  is_int                             bool per row: the reading was an integer in [0, 2**64) (what counters are)
  series                             int64 per row: one id per (target, entity, metric, priority, size_bytes,
                                     raw_key) — which rows are readings of the same counter
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import secrets
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from rdmatool import bundle as bundle_io
from rdmatool import files, parallel, parsers
from rdmatool.errors import ParseError

STORE_NAME = "samples.npz"
FORMAT = "rdmatool-samples/1"
MISSING_INT = np.iinfo(np.int64).min
_U64 = 2**64
# Parsers whose output does not name the interface/port it is about emit these placeholders; the bundle's
# qualifier (what the command was run for) supplies the real name.
PLACEHOLDER_ENTITIES = {"netdev", "port"}
# perfquery knows only LID and port; the collector ran it per `<device>.<port>`, the name every other view uses.
QUALIFIER_IS_ENTITY = {"perfquery"}
_ROW_COLUMNS = ("entity", "metric", "raw_key", "text")


@cache
def code_digest() -> str:
    """What produced a store: the parser sources, the sample model, the parse errors' wording (failures are stored)
    and this module. Any edit makes old stores stale."""
    root = Path(__file__).resolve().parent
    files = sorted((root / "parsers").rglob("*.py")) + [root / "model.py", root / "errors.py", Path(__file__).resolve()]
    digest = hashlib.sha256(FORMAT.encode())
    for path in files:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


def signature(path: Path) -> list[int] | None:
    """The bundle's file signature (size, mtime in ns) of a file, or None when it is absent (the file itself, as the
    bundle scan sees it: never through a symlink)."""
    try:
        return bundle_io.signature(os.lstat(path))
    except FileNotFoundError:
        return None


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

    def opt(v: int) -> int | None:
        return None if v == MISSING_INT else v

    lists = {k: v.tolist() for k, v in cols.items()}
    return [Output(lists["snapshot"][i], lists["target"][i], lists["stem"][i],
                   sig(lists["raw_size"][i], lists["raw_mtime"][i]), sig(lists["side_size"][i], lists["side_mtime"][i]),
                   lists["parser"][i], lists["qualifier"][i], lists["time"][i], opt(lists["exit_code"][i]),
                   lists["rows"][i], lists["failure"][i])
            for i in range(len(lists["rows"]))]


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

    def add(self, parser: str, qualifier: str | None, samples: list) -> int:
        """Append one output's samples (placeholder entities replaced by the qualifier); returns how many."""
        code, codes = self.code, self.codes
        entity_col, metric_col, raw_col, text_col = (codes[c] for c in _ROW_COLUMNS)
        qualifier_entity = None
        if qualifier:
            qualifier_entity = qualifier.replace(".", "/") if parser in QUALIFIER_IS_ENTITY else qualifier
        by_qualifier = parser in QUALIFIER_IS_ENTITY
        for s in samples:
            entity = s.entity
            if qualifier_entity is not None and (by_qualifier or entity in PLACEHOLDER_ENTITIES):
                entity = qualifier_entity
            entity_col.append(code(entity))
            metric_col.append(code(s.metric))
            raw_col.append(code(s.raw_key))
            text_col.append(code(s.text))
            self.priority.append(MISSING_INT if s.priority is None else int(s.priority))
            self.size_bytes.append(MISSING_INT if s.size_bytes is None else int(s.size_bytes))
            v = s.value
            if v is None:
                self.value.append(np.nan)
                self.exact.append(0)
                self.is_int.append(False)
            elif isinstance(v, int) and not isinstance(v, bool):
                self.value.append(float(v))  # a 64-bit counter near its wrap does not fit a float's 53-bit mantissa
                counter = 0 <= v < _U64
                self.exact.append(v if counter else 0)
                self.is_int.append(counter)
            else:
                self.value.append(float(v))
                self.exact.append(0)
                self.is_int.append(False)
        return len(samples)

    def extend(self, strings: list[str], arrays: dict[str, np.ndarray]) -> None:
        """Append rows parsed elsewhere (another process, its own string pool) after the rows held here."""
        remap = np.array([self.code(text) for text in strings] + [-1], dtype=np.int64)  # -1 (None) stays -1
        for name in _ROW_COLUMNS:
            self.codes[name].extend(remap[arrays[name]].tolist())
        for name in ("priority", "size_bytes", "value", "exact", "is_int"):
            getattr(self, name).extend(arrays[name].tolist())

    def arrays(self) -> dict[str, np.ndarray]:
        out = {c: np.asarray(self.codes[c], dtype=np.int32) for c in _ROW_COLUMNS}
        out["priority"] = np.asarray(self.priority, dtype=np.int64)
        out["size_bytes"] = np.asarray(self.size_bytes, dtype=np.int64)
        out["value"] = np.asarray(self.value, dtype=np.float64)
        out["exact"] = np.asarray(self.exact, dtype=np.uint64)
        out["is_int"] = np.asarray(self.is_int, dtype=bool)
        return out


ARRAY_NAMES = (*_ROW_COLUMNS, "priority", "size_bytes", "value", "exact", "is_int")


def parse_output(out: Output, stdout: str, columns: Columns, known: set[str]) -> None:
    """Parse one raw output into `columns`; an unparsable output records its one-line failure and adds nothing."""
    if out.skipped is not None:
        out.rows, out.failure = 0, None
        return
    if out.parser not in known:
        out.rows, out.failure = 0, f"no parser named {out.parser!r}"
        return
    if out.exit_code not in (0, None) and not stdout.strip():
        out.rows, out.failure = 0, None  # a failed command with no output: a collection failure, nothing to parse
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
    prepare = prepare or _as_is
    n = parallel.workers(len(jobs), PARALLEL_MIN)
    if n < 2:
        done = []
        for job in jobs:
            out, text = prepare(job)
            parse_output(out, text, columns, known)
            done.append(out)
        return done
    bounds = [(len(jobs) * k // n, len(jobs) * (k + 1) // n) for k in range(n)]
    results = parallel.fork_map(lambda bound: _parse_share(jobs[bound[0]:bound[1]], prepare), bounds)
    done = []
    for outputs, strings, arrays in results:
        done.extend(outputs)
        columns.extend(strings, arrays)
    return done


def _as_is(job: tuple[Output, str]) -> tuple[Output, str]:
    return job


def _parse_share(jobs: list, prepare: Callable) -> tuple[list[Output], list[str], dict[str, np.ndarray]]:
    known = set(parsers.names())
    columns = Columns()
    done = []
    for job in jobs:
        out, text = prepare(job)
        parse_output(out, text, columns, known)
        done.append(out)
    return done, columns.strings, columns.arrays()


def series_of(outputs: dict[str, np.ndarray], arrays: dict[str, np.ndarray]) -> np.ndarray:
    """One int64 per row naming its counter (target, entity, metric, priority, size_bytes, raw_key), made from the
    codes, so telling 700,000 readings apart never hashes a string. The same arrays always give the same ids (numbered
    in order of first appearance), which is how a loaded store's are checked."""
    target = np.repeat(pd.factorize(outputs["target"])[0], outputs["rows"])
    return tuple_ids([target] + [pd.factorize(arrays[name])[0]
                                 for name in ("entity", "metric", "priority", "size_bytes", "raw_key")])


def tuple_ids(parts: list[np.ndarray]) -> np.ndarray:
    """One int64 per row naming the row's tuple of codes (each part: dense codes 0..k-1, one per row)."""
    ids: np.ndarray | None = None
    span = 1
    for codes in parts:
        width = int(codes.max()) + 1 if len(codes) else 1
        if ids is None:
            ids, span = codes.astype(np.int64), width
            continue
        if span * width >= 2**62:  # keep the mixed radix inside int64: make the ids dense again first
            ids, dense = pd.factorize(ids)
            span = len(dense)
        ids, span = ids * width + codes, span * width
    return ids if ids is not None else np.zeros(0, dtype=np.int64)


# ------------------------------------------------------------------------------------------------ on disk


@dataclass
class Stored:
    outputs: dict[str, np.ndarray]  # output_columns
    strings: list[str]
    arrays: dict[str, np.ndarray]  # ARRAY_NAMES and "series"


# What each member must be (dtype; every member is one-dimensional). The row codes and output codes are int32 string
# codes, the rest as `Columns.arrays` and `output_columns` make them.
ROW_DTYPES = {**{c: np.dtype(np.int32) for c in _ROW_COLUMNS}, "priority": np.dtype(np.int64),
              "size_bytes": np.dtype(np.int64), "value": np.dtype(np.float64), "exact": np.dtype(np.uint64),
              "is_int": np.dtype(bool), "series": np.dtype(np.int64)}
OUT_DTYPES = {**{c: np.dtype(np.int64) for c in OUT_INT}, "time": np.dtype(np.float64),
              **{c: np.dtype(np.int32) for c in OUT_TEXT}}
# A store's members together, uncompressed, without a bundle to size it by (see `budget_for`).
DEFAULT_BUDGET = 1 << 30
_INT32 = np.iinfo(np.int32)


def budget_for(raw_bytes: int) -> int:
    """The most a store of a bundle with this many bytes of raw and side files may hold, uncompressed: its samples
    take about as many bytes as the text they were parsed from, so 16 times that (plus room for a tiny bundle) is
    generous for a real store and stops a doctored one (a zip bomb, a header claiming a billion rows) early."""
    return 16 * max(0, raw_bytes) + (16 << 20)


def load(bundle_dir: Path, budget: int | None = None) -> Stored | None:
    """The bundle's store when it exists, is ours, was written by this code and passes every consistency check;
    None otherwise (parse instead). `budget`: the most its members may hold uncompressed (`budget_for`)."""
    budget = DEFAULT_BUDGET if budget is None else budget
    path = bundle_dir / STORE_NAME
    try:
        handle = files.open_regular(path, max_bytes=budget)
    except (OSError, files.UnsafeFileError):  # absent, a symlink, a FIFO, a device, too large: parse instead
        return None
    # The store is only a cache: whatever a damaged or doctored file makes the reader trip over (zip, zlib, numpy,
    # JSON or a check below), the raw outputs are still there to parse, so any failure here means "no store".
    try:
        with handle, zipfile.ZipFile(handle) as archive:
            return _read_store(archive, budget)
    except Exception:
        return None


def _read_store(archive: zipfile.ZipFile, budget: int) -> Stored | None:
    members = ["meta", "strings", *ROW_DTYPES, *(f"out_{name}" for name in OUT_DTYPES)]
    infos = {name: archive.getinfo(f"{name}.npy") for name in members}
    if sum(info.file_size for info in infos.values()) > budget:
        return None

    def member(name: str, dtype: np.dtype) -> np.ndarray:
        with archive.open(infos[name]) as stream:  # reads at most the member's declared size
            array = np.lib.format.read_array(stream, allow_pickle=False)
        if not isinstance(array, np.ndarray) or array.dtype != dtype or array.ndim != 1:
            raise ValueError(f"{name}: not a one-dimensional {dtype} array")
        return array

    meta = json.loads(member("meta", np.dtype(np.uint8)).tobytes().decode("utf-8"))
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("digest") != code_digest():
        return None
    strings = json.loads(member("strings", np.dtype(np.uint8)).tobytes().decode("utf-8"))
    arrays = {name: member(name, dtype) for name, dtype in ROW_DTYPES.items()}
    outputs = {name: member("out_" + name, OUT_DTYPES[name]) for name in (*OUT_INT, "time")}
    text_codes = {name: member("out_" + name, OUT_DTYPES[name]) for name in OUT_TEXT}
    if not _well_formed(strings, arrays, outputs, text_codes):
        return None
    pool = np.array([*strings, None], dtype=object)
    outputs.update({name: pool[codes] for name, codes in text_codes.items()})
    return Stored(outputs, strings, arrays)


def _well_formed(strings, arrays: dict[str, np.ndarray], outputs: dict[str, np.ndarray],
                 text_codes: dict[str, np.ndarray]) -> bool:
    """Everything a reader relies on, checked — a damaged or doctored file must not get further than here, neither as
    a traceback nor as findings no parse of the raw files would give. The members' dtypes and dimensions are
    checked as they are read."""
    if not isinstance(strings, list) or not all(isinstance(x, str) for x in strings):
        return False
    # The codes name strings: a string twice in the pool would make one counter two series.
    if len(set(strings)) != len(strings):
        return False
    n, m = len(arrays["value"]), len(outputs["rows"])
    if any(len(a) != n for a in arrays.values()) or any(len(a) != m for a in (*outputs.values(),
                                                                               *text_codes.values())):
        return False
    size = len(strings)
    # Parsers always name the entity and metric, and every output has a target, a file and a parser: only the other
    # codes may be -1 (None).
    required = [arrays["entity"], arrays["metric"], text_codes["target"], text_codes["stem"], text_codes["parser"]]
    optional = [arrays["raw_key"], arrays["text"], text_codes["qualifier"], text_codes["failure"]]
    if any(len(c) and (c.min() < 0 or c.max() >= size) for c in required):
        return False
    if any(len(c) and (c.min() < -1 or c.max() >= size) for c in optional):
        return False
    rows = outputs["rows"]
    if m and (rows.min() < 0 or rows.max() > n):  # bounded first, so the sum below cannot wrap around
        return False
    if int(rows.sum()) != n or (rows[text_codes["failure"] >= 0] != 0).any():  # a failed parse yields no rows
        return False
    if m and (outputs["snapshot"].min() < 0 or outputs["raw_size"].min() < 0):
        return False
    side_missing = outputs["side_size"] == MISSING_INT
    if (side_missing != (outputs["side_mtime"] == MISSING_INT)).any() or (outputs["side_size"][~side_missing] < 0).any():
        return False
    exit_code = outputs["exit_code"]
    if ((exit_code != MISSING_INT) & ((exit_code < _INT32.min) | (exit_code > _INT32.max))).any():
        return False
    # An exact reading is the float reading's integer; a float reading has no exact one.
    is_int, exact = arrays["is_int"], arrays["exact"]
    if (exact[~is_int] != 0).any() or (arrays["value"][is_int] != exact[is_int].astype(np.float64)).any():
        return False
    if not _parsers_match_files(strings, text_codes["stem"], text_codes["parser"]):
        return False
    # The series ids are what the analysis groups readings by: recomputed from the codes (the pool holds each string
    # once, so codes and strings group alike and number alike) they must be exactly the stored ones.
    expected = series_of({"target": text_codes["target"], "rows": rows}, arrays)
    return bool(np.array_equal(expected, arrays["series"]))


def _parsers_match_files(strings: list[str], stems: np.ndarray, parser_codes: np.ndarray) -> bool:
    """Each output's parser is the one its file is named after (`<parser>[.<qualifier>]`), checked once per distinct
    (file name, parser) pair — a few hundred in a 1,000-host bundle."""
    pairs = np.unique(stems.astype(np.int64) * (len(strings) + 1) + parser_codes)
    for pair in pairs.tolist():
        stem, parser = divmod(pair, len(strings) + 1)
        if strings[stem].partition(".")[0] != strings[parser]:
            return False
    return True


def save(bundle_dir: Path, outputs: dict[str, np.ndarray], strings: list[str], arrays: dict[str, np.ndarray]) -> bool:
    """Write the store atomically (temporary file, fsync, rename); False when the bundle is not writable."""
    meta = {"format": FORMAT, "digest": code_digest()}
    pool = Columns().with_pool(strings)
    members = {f"out_{name}": outputs[name] for name in (*OUT_INT, "time")}
    members.update({f"out_{name}": np.fromiter((pool.code(v) for v in outputs[name]), dtype=np.int32,
                                               count=len(outputs[name])) for name in OUT_TEXT})
    members.update({"meta": _json_bytes(meta), "strings": _json_bytes(pool.strings), **arrays})
    if "series" not in members:
        members["series"] = series_of(outputs, arrays)
    final = bundle_dir / STORE_NAME
    # A fresh, unguessable name created exclusively and never through a symlink: the bundle may be someone else's,
    # and a planted `.samples.npz.<pid>.tmp -> /etc/...` must not make this write land anywhere but here.
    tmp = bundle_dir / f".{STORE_NAME}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
    created = False
    try:
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **members)
        with open(tmp, "xb", opener=_exclusive) as handle:
            created = True
            handle.write(buffer.getbuffer())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, final)  # replaces whatever is at the final name (a symlink too), never writes through it
    except OSError:
        if created:  # only what this call made: a file that was already there is not ours to remove
            with contextlib.suppress(OSError):
                tmp.unlink()
        return False
    return True


def _exclusive(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_EXCL | os.O_NOFOLLOW, 0o644)


def _json_bytes(doc) -> np.ndarray:
    return np.frombuffer(json.dumps(doc, separators=(",", ":")).encode("utf-8"), dtype=np.uint8)


def write_for(bundle_dir: Path, written: list[tuple[int, str, Path, object]]) -> bool:
    """Parse freshly written outputs — (snapshot, target, raw file, CommandResult) — and store them with the bundle."""
    columns = Columns()
    jobs = []
    latest = {w[2]: w for w in written}  # an output written twice keeps its last text, as the file does
    for snapshot, target, raw, result in sorted(latest.values(), key=lambda w: (w[0], w[1], w[2].name)):
        out = Output(snapshot, target, raw.stem, signature(raw), signature(raw.with_suffix(".json")), result.parser,
                     result.qualifier, epoch(result.started), result.exit_code)
        jobs.append((out, result.stdout))
    outputs = parse_all(jobs, columns, set(parsers.names()))
    return save(bundle_dir, output_columns(outputs), columns.strings, columns.arrays())


def epoch(stamp: str | None) -> float:
    """An ISO 8601 read time as epoch seconds; NaN when unknown or unreadable."""
    if not stamp:
        return float("nan")
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except (ValueError, OverflowError, OSError):  # a stamp from a bundle may be any string (year 1, year 9999)
        return float("nan")
