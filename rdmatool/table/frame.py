"""Samples → one tidy pandas DataFrame (COLUMNS); two snapshots → counter rates that survive wraps, resets and
saturation. `exact` holds an integer reading as an exact unsigned 64-bit integer (nullable): a 64-bit counter near
its wrap does not fit a float's 53-bit mantissa. The text columns are categoricals: entity, metric, text and raw_key
over the store's string pool (its codes are the rows' codes: a selection by metric compares integers), the others
over their outputs' values. A fleet's 9,000,000 rows then hold no string pointer at all; whoever cuts rows reads
them as plain texts (`column_codes.as_texts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rdmatool import metrics, parsers
from rdmatool.bundle import Bundle
from rdmatool.model import MetricKind
from rdmatool.table import column_codes, samples_store
from rdmatool.table import sample_columns as store
from rdmatool.table.absent_outputs import absent_failures

COLUMNS = [  # time: epoch seconds of the read
    "snapshot", "time", "target", "kind", "platform", "role", "parser", "qualifier", "entity", "metric",
    "priority", "size_bytes", "value", "text", "raw_key", "exact",
]
# A series' identity (sample_columns.OUTPUT_KEY + SAMPLE_KEY): which output said it, and what it is about.
KEY = [*store.OUTPUT_KEY, *store.SAMPLE_KEY]
# The text columns a cut of rows reads as plain objects, None where missing (`column_codes.as_texts`); the rows'
# target, kind, platform and parser stay categoricals, as the table always gave them.
OBJECTS = ("role", "qualifier", "entity", "metric", "text", "raw_key")
U32, U64 = 2**32, 2**64


@dataclass(frozen=True)
class ParseFailure:
    target: str
    snapshot: int
    parser: str
    qualifier: str | None
    message: str


@dataclass
class SampleTable:
    frame: pd.DataFrame
    parse_failures: list[ParseFailure] = field(default_factory=list)
    collection_failures: list[dict] = field(default_factory=list)
    targets: list[dict] = field(default_factory=list)
    # Each row's series id (one per KEY tuple) when the loader knows it from its string codes, else `series_ids`.
    series: np.ndarray | None = field(default=None, repr=False)
    skipped: list[str] = field(default_factory=list)  # files not read, one line each with the reason
    # What the reader had to assume (read times from the manifest, or none): printed with the diagnosis so that
    # nobody mistakes an estimate for a measurement.
    notes: list[str] = field(default_factory=list)
    # The target folders' other files, (snapshot, target, file name, path): the packet captures (bundle.Scan.others);
    # None when not known (a bundle read in memory, an odd folder).
    other_files: list[tuple[int, str, str, str]] | None = field(default=None, repr=False)


def series_ids(frame: pd.DataFrame) -> np.ndarray:
    """One int64 per row naming its series (its KEY tuple; a missing part is a value of its own, as in a merge)."""
    return store.tuple_ids([pd.factorize(frame[column], use_na_sentinel=False)[0] for column in KEY])


def from_bundle(bundle: Bundle) -> SampleTable:
    """Parse every output of a bundle held in memory; an unparsable output is recorded and the rest go on."""
    columns = store.Columns()
    jobs = [(store.Output.of_result(e.snapshot, e.target, "", None, None, e.result), e.result.stdout)
            for e in bundle.entries]
    outputs = store.parse_all(jobs, columns, set(parsers.names()))
    table = _table(store.output_columns(outputs), columns.strings, columns.arrays(), bundle.manifest)
    table.skipped = list(bundle.skipped)
    return table


def load(path: str | Path, write_store: bool = True) -> SampleTable:
    """The sample table of a bundle directory, through its samples store (rdmatool.table.samples_store.load_or_parse:
    stored samples where current, a parse of what changed, the store written back when `write_store`)."""
    parsed = samples_store.load_or_parse(path, write_store)
    table = _table(parsed.outputs, parsed.strings, parsed.arrays, parsed.manifest, parsed.skipped)
    table.other_files = parsed.others
    if parsed.others is not None:  # None: an odd folder hid which targets hold captures; judged as they are
        present = set(zip(parsed.outputs["snapshot"].tolist(), parsed.outputs["target"].tolist()))
        present.update((snapshot, target) for snapshot, target, _, _ in parsed.others)
        table.collection_failures += absent_failures(parsed.manifest, present)
    return table


def _table(outputs: dict[str, np.ndarray], strings: list[str], arrays: dict[str, np.ndarray],
           manifest: dict, skipped: list[str] | None = None) -> SampleTable:
    """The sample frame from per-output columns and per-row arrays; parse failures in output order. `manifest`: as
    bundle.read_manifest normalised it (targets are objects with a name). The arrays are taken over: the priority
    and size columns are made the frame's nullable integers in place."""
    # (first: the ids read the priority and size columns as they are, missing values marked MISSING_INT)
    series = arrays["series"] if "series" in arrays else store.series_of(outputs, arrays)
    info = {t["name"]: t for t in manifest.get("targets") or []}
    counts = outputs["rows"]
    target_codes, target_names = pd.factorize(outputs["target"])
    per_target = [info.get(name, {}) for name in target_names]
    columns: dict = {}

    def per_output(name: str, values: np.ndarray, missing: bool = False) -> None:
        """A text the rows take from their output as categories: a small integer per row, not a pointer (at 10,000
        hosts 18 MB of codes instead of 72 MB of pointers). `missing`: a value may be None (code -1); else a column
        with a missing value stays objects."""
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        if not missing and len(codes) and codes.min() < 0:
            columns[name] = np.repeat(np.asarray(values, dtype=object), counts)
        else:
            narrow = np.int8 if len(uniques) < 2**7 else np.int16 if len(uniques) < 2**15 else np.int32
            columns[name] = pd.Categorical.from_codes(np.repeat(codes.astype(narrow), counts),
                                                      categories=pd.Index(uniques, dtype=object))

    def of_target(field: str, default: str | None) -> np.ndarray:
        """Each output's target's `field` (one object per output)."""
        return np.array([t.get(field, default) for t in per_target] + [None], dtype=object)[target_codes]

    times, notes = read_times(outputs, manifest)
    columns["snapshot"] = np.repeat(outputs["snapshot"], counts)
    columns["time"] = np.repeat(times, counts)
    per_output("target", outputs["target"])
    per_output("kind", of_target("kind", "host"))
    per_output("platform", of_target("platform", "linux"))
    per_output("role", of_target("role", None), missing=True)
    per_output("parser", outputs["parser"])
    per_output("qualifier", outputs["qualifier"], missing=True)
    for name in ("priority", "size_bytes"):
        # in place: at 10,000 hosts a copy is 72 MB of fresh memory per column, for nothing
        values = arrays[name]
        missing = values == store.MISSING_INT
        values[missing] = 0
        columns[name] = pd.arrays.IntegerArray(values, missing)
    columns["value"] = arrays["value"]
    columns["exact"] = pd.arrays.IntegerArray(arrays["exact"].astype(np.uint64, copy=False), ~arrays["is_int"])
    # The pool holds each string once (the store checks it; a parse builds it so): its codes are the rows' codes.
    pool = pd.CategoricalDtype(pd.Index(strings, dtype=object))
    for name in ("entity", "metric", "text", "raw_key"):
        columns[name] = pd.Categorical.from_codes(arrays[name], dtype=pool)
    frame = pd.DataFrame(columns, columns=COLUMNS, copy=False)
    failed = np.flatnonzero(pd.notna(outputs["failure"]))
    failures = [ParseFailure(outputs["target"][i], int(outputs["snapshot"][i]), outputs["parser"][i],
                             outputs["qualifier"][i], outputs["failure"][i]) for i in failed]
    return SampleTable(frame, failures, list(manifest.get("failures") or []), list(manifest.get("targets") or []),
                       series, list(skipped or []), notes)


def noise_notes(frame: pd.DataFrame) -> list[str]:
    """One line per parser that skipped recognised noise (`parse_skipped_lines`): how many lines, on how many
    targets, of which classes — so that what was not read is said, never hidden."""
    if "metric" not in frame.columns:  # a capture alone: no sample table at all
        return []
    # as texts: grouped in name order (a categorical column would group in the order its values were met)
    noise = column_codes.as_texts(frame.take(np.flatnonzero(column_codes.mask(frame, None, "metric",
                                                                             ["parse_skipped_lines"]))))
    out = []
    for parser, rows in noise.groupby("parser", sort=True):
        kinds = rows.groupby("entity")["value"].sum()
        detail = ", ".join(f"{kind} {int(count)}" for kind, count in kinds.items())
        out.append(f"{parser}: skipped {int(kinds.sum())} line(s) of recognised noise on "
                   f"{rows['target'].nunique()} target(s) ({detail})")
    return out


NO_TIMES = ("no read times in the bundle (its side data and manifest snapshots carry none): counter changes are "
            "deltas without rates, and the rules that need a rate are skipped")


def read_times(outputs: dict[str, np.ndarray], manifest: dict) -> tuple[np.ndarray, list[str]]:
    """Each output's read time (epoch seconds), and a note for what was assumed. A bundle from another writer may
    have no side data: its outputs then take their snapshot's time from the manifest (`started`, else
    `finished`), so that a rate still has a window; with no time anywhere the rates are left out, said once."""
    times = np.asarray(outputs["time"], dtype=float)
    missing = np.isnan(times)
    if not missing.any():
        return times, []
    snapshot_time = {}
    for entry in manifest.get("snapshots") or []:
        index = entry.get("index")
        stamp = store.epoch(entry.get("started")) if entry.get("started") else store.epoch(entry.get("finished"))
        if isinstance(index, int) and not np.isnan(stamp):
            snapshot_time[index] = stamp
    filled, snapshots = times.copy(), np.asarray(outputs["snapshot"])
    filled[missing] = [snapshot_time.get(int(snapshot), np.nan) for snapshot in snapshots[missing]]
    used = int((missing & ~np.isnan(filled)).sum())
    notes = []
    if used:
        notes.append(f"{used} output(s) carry no read time: their rates use the manifest's snapshot times "
                     "(the window is the time between snapshots, not between reads)")
    if np.isnan(filled).all() and len(np.unique(snapshots)) > 1:
        notes.append(NO_TIMES)
    return filled, notes


def rates(frame: pd.DataFrame, series: np.ndarray | None = None) -> pd.DataFrame:
    """See `rates_with_rows`; the rates alone."""
    return rates_with_rows(frame, series)[0]


def rates_with_rows(frame: pd.DataFrame, series: np.ndarray | None = None) -> tuple[pd.DataFrame, np.ndarray]:
    """One row per counter seen in both the first and the last snapshot: delta, window and `<metric>_per_s`.

    `flag` says why a rate is absent or adjusted: `wrap32`/`wrap64` (counter wrapped: delta corrected), `reset`
    (value went down: reboot, driver reload, cleared counters — no rate), `saturated` (a legacy counter pinned at
    its maximum — no rate), `no_window` (read times unknown). `series`: the rows' series ids (`series_ids`), when
    the caller already has them. Also returns, per rate, the frame row of its first reading (for its other columns).
    """
    found = rate_arrays(frame, series)
    if found is None:
        empty = pd.DataFrame(columns=[*KEY, "window_s", "delta", "rate", "flag", "previous", "current"])
        return empty, np.array([], dtype=np.int64)
    return rate_rows(frame, found, np.arange(len(found.rows)), OBJECTS), found.rows


def rate_rows(frame: pd.DataFrame, found: RateArrays, at: np.ndarray, texts=None) -> pd.DataFrame:
    """The rates at `at` as rows: KEY (its categorical columns, or those in `texts`, as plain texts) and figures."""
    out = column_codes.as_texts(frame[KEY].take(found.rows[at]), texts).reset_index(drop=True)
    for name in ("window", "delta", "rate", "flag", "previous", "current"):
        out["window_s" if name == "window" else name] = getattr(found, name)[at]
    return out


@dataclass
class RateArrays:
    """The rates of `rates_with_rows` as arrays, per rate: the frame row of its first reading and the figures."""

    rows: np.ndarray
    window: np.ndarray
    delta: np.ndarray
    rate: np.ndarray
    flag: np.ndarray  # object: "", wrap32, wrap64, reset, saturated, no_window
    previous: np.ndarray
    current: np.ndarray


def rate_arrays(frame: pd.DataFrame, series: np.ndarray | None = None) -> RateArrays | None:
    """What `rates_with_rows` says, as arrays; None when there is no rate."""
    if frame.empty:
        return None
    snapshot = frame["snapshot"].to_numpy()
    first, last = frame["snapshot"].min(), frame["snapshot"].max()
    if not first < last:  # one snapshot (or none with a number): no rate
        return None
    series = series_ids(frame) if series is None else series
    counters = {name for name, m in metrics.GLOSSARY.items() if m.kind is MetricKind.COUNTER}
    usable = column_codes.mask(frame, None, "metric", counters) & frame["value"].notna().to_numpy()
    # The last reading of each series within the first and within the last snapshot, in row order.
    a_rows = last_of_each(series, np.flatnonzero(usable & (snapshot == first)))
    b_rows = last_of_each(series, np.flatnonzero(usable & (snapshot == last)))
    position = positions_in(series[b_rows], series[a_rows])
    found = position >= 0
    a_rows, b_rows = a_rows[found], b_rows[position[found]]
    if not len(a_rows):
        return None
    value, exact, time = frame["value"].to_numpy(), frame["exact"], frame["time"].to_numpy()
    window = time[b_rows] - time[a_rows]
    v0, v1 = value[a_rows], value[b_rows]
    delta = v1 - v0
    flag = np.full(len(a_rows), "", dtype=object)
    for i in np.flatnonzero(delta < 0):  # rare: decide wrap or reset on exact integers
        delta[i], flag[i] = _went_down(exact.iat[a_rows[i]], exact.iat[b_rows[i]], v0[i], v1[i])
    marks = column_codes.as_texts(frame.take(np.flatnonzero(column_codes.mask(frame, None, "metric",
                                                                             ["counter_saturated"]))))
    saturated = {(t, e, m) for t, e, m in zip(marks["target"], marks["entity"], marks["text"]) if m}
    if saturated:
        first_readings = column_codes.as_texts(frame[["target", "entity", "metric"]].take(a_rows))
        keys = zip(*(first_readings[c].to_numpy() for c in ("target", "entity", "metric")))
        for i, k in enumerate(keys):
            if k in saturated:
                delta[i], flag[i] = np.nan, "saturated"
    flag[~(window > 0) & (flag == "")] = "no_window"
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(window > 0, delta / window, np.nan)
    return RateArrays(a_rows, window, delta, rate, flag, v0, v1)


def last_of_each(series: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Of `rows` (ascending; all rows when None), the last one of each series, still ascending.

    By a stable sort of the ids, not a hash: a table's ids come in runs (output by output, snapshot by snapshot) that
    a merge sort joins in a few passes, five to ten times faster than hashing a fleet's 9,000,000 ids."""
    ids = series if rows is None else series[rows]
    if not len(ids):
        return np.arange(0) if rows is None else rows
    if ids.dtype.kind not in "iub":  # (ids that do not sort as numbers: hashed)
        keep = ~pd.Series(ids, copy=False).duplicated(keep="last").to_numpy()
    else:
        order = np.argsort(ids, kind="stable")
        ranked = ids[order]
        ends = np.empty(len(ids), dtype=bool)  # the last of each run of one id in the sorted order
        np.not_equal(ranked[1:], ranked[:-1], out=ends[:-1])
        ends[-1] = True
        keep = np.zeros(len(ids), dtype=bool)
        keep[order[ends]] = True
    return np.flatnonzero(keep) if rows is None else rows[keep]


def positions_in(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Where each of `needles` is in `haystack` (distinct ids), -1 where it is not: `pd.Index.get_indexer`, by
    sorting both (they come nearly sorted) and a binary search, a third of the hash's time at a fleet's size."""
    if haystack.dtype.kind not in "iub" or needles.dtype.kind not in "iub":
        return pd.Index(haystack).get_indexer(needles)
    found = np.full(len(needles), -1, dtype=np.intp)
    if not len(haystack) or not len(needles):
        return found
    in_order = np.argsort(haystack, kind="stable")
    ranked = haystack[in_order]
    asked = np.argsort(needles, kind="stable")
    wanted = needles[asked]
    at = np.searchsorted(ranked, wanted)
    at[at == len(ranked)] = 0
    hit = ranked[at] == wanted
    found[asked[hit]] = in_order[at[hit]]
    return found


def _went_down(e0, e1, v0: float, v1: float) -> tuple[float, str]:
    old = int(v0) if pd.isna(e0) else int(e0)  # the exact reading when there is one (None/NaN/NA: the float)
    new = int(v1) if pd.isna(e1) else int(e1)
    # A wrap is only believable when the old value sat in the top half of the width and the new one in the
    # bottom half; anything else (a value merely lower) is a reset, and a reset has no rate.
    if U32 // 2 <= old < U32 and new < U32 // 2:
        return float(new + U32 - old), "wrap32"
    if U64 // 2 <= old < U64 and new < U64 // 2:
        return float(new + U64 - old), "wrap64"
    return float("nan"), "reset"
