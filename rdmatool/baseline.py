"""Baselines: what the fabric looked like on good nights, as robust statistics the deviation rules compare against.

A *store* is a directory (default `./baselines/`); each baseline NAME (default `default`) is one JSON file in it:

```
STORE/.lock            lock file: every read-modify-write of the store holds fcntl.flock(LOCK_EX) on it
STORE/<NAME>.json      {"format": "rdmatool-baseline/2", "name", "keep", "updated",   header scalars, always first
                        "rule_stats": [coarse group, ...]  the view `stats_for_rules` returns, right after the header
                        "reference": {category: {group: {"value", "count", "total"}}}
                        "stats":    [fine group, ...]      recomputed over the kept nights on every save
                        "nights":   [night, ...]}         oldest first, at most `keep` of them, last in the file
night = {"id", "bundle", "created", "saved", "targets",
         "values": [{"metric", "kind", "role", "platform", "ca_type", "link_rate_gbps", "priority", "size_bytes",
                     "values": [...]                     the figures of one bundle for this fine group (<= K of them)
                     | "quantiles": [q0, q5, ..., q100], "n": n}],   a sketch instead when the group had > K
         "facts":  {category: {group: {value: count}}}}  counts of configuration facts in that bundle
```

Bounded nights: a fine group of one night with more than K = SKETCH_POINTS (21) figures is stored as a sketch, its
21 evenly spaced quantiles (0 %, 5 %, ..., 100 %, linear interpolation, so the min and max are kept) and its true
count n; smaller groups keep their raw values. A night of a 1,000-host fleet is therefore a few hundred groups of at
most 21 numbers, whatever the fleet size. Pooling weights each stored point by n / len(points) (1 for raw values):
weighted median, weighted MAD around it and weighted p10/p90 on the step function of the weighted points (the linear
interpolation of numpy's default `percentile`, generalised to weights: a point of weight w stands for w copies), and
n is the sum of the true counts. When every pooled group is raw (no group ever had more than 21 figures in a night)
the statistics are computed exactly as before, from the raw values. With sketches they are approximations: each
night contributes its distribution at 5-percentile resolution and its min/max carry a full 1/21 of its weight. On
3 nights x 5,000 values (normal, log-normal and bimodal fleets, 100 seeded trials each) the pooled median was within
0.05 MAD of the exact one, the MAD within 10 % and p10/p90 within 0.3 MAD; the tests bound the median within 0.1 MAD
and the MAD within 15 %. A sketched night is never expanded back: the raw figures of a large group are gone once
saved.

Fast rule view: `stats_for_rules` (every `rdmatool diagnose --baseline`) does not parse the nights. The file is
written header scalars first, then `rule_stats`; the reader decodes the file from its beginning, key by key, and
stops after `rule_stats` (a few hundred kB at 1,000 hosts whatever the number of nights). It uses that only when the
file is `/2`, every key before `rule_stats` is a scalar header field, the entries have the rule columns and the file
ends with its closing brace (a truncated file is not trusted); anything else (a `/1` file, a file rewritten by hand
with another key order) falls back to the full `load`, which also raises the one-line errors. One file, written
atomically, so there is no second file to go stale.

Formats: `rdmatool-baseline/2` is written; `/1` files (raw values in every night, nights first) are still read:
`load` converts them (the large groups of their nights become sketches, their stored statistics are kept as they
are) and the next save writes `/2`.

Figures: every numeric fact of `analysis.analyse_bundle` except cumulative counters and text states, i.e. gauges
(bw_avg_gbps per size_bytes, link_rate_gbps, lat_*, thresholds...), counter rates (`<metric>_per_s`; reset or
saturated counters have no rate and are left out) and the derived ratios (pause fractions, ecn_mark_ratio,
cnp_handled_ratio, bw_efficiency). A *fine group* is (metric, kind, role, platform, ca_type, link_rate_gbps, priority,
size_bytes): ca_type is the NIC model of the entity's device (else the target's most common one) and link_rate_gbps
the entity's port rate (else the target's fastest port); both are null on switches without them and link_rate_gbps
is null for the link_rate_gbps metric itself. A *coarse group* is (metric, kind, role, priority, size_bytes), the
join key of rules.kinds.deviation. Statistics pool the values of all kept nights: median, MAD (median absolute
deviation, unscaled: the rule multiplies by 1.4826), p10/p90 (linear interpolation), n (values pooled), nights
(see "Bounded nights" for groups stored as sketches).

Reference facts (majority over the counts pooled from the kept nights; ties go to the lexically first value):
`fw_version_by_ca_type`, `fw_version_by_board_id`, `trust_mode_by_role`, `pfc_priorities_by_role` (the comma list of
PFC-enabled priorities per host interface, `none` if none) and `ecn_by_profile` (`platform/entity` →
`min=..,max=..,pmax=..,enabled=..` of the switch ECN/WRED profile or queue).

Saving: the bundle is analysed outside the lock; then, under the lock, the file is re-read, the night appended (a
night with the same id, i.e. the same bundle path and manifest `created`, is replaced: re-running a nightly job is
idempotent), nights sorted by `created` and the oldest dropped beyond `keep` (`--keep` given → stored as the new keep,
else the stored one, else 30), large groups of the new night sketched, statistics recomputed, and the file written to
a temporary file in the store, fsynced and os.replace'd into place (then the directory is fsynced). Two concurrent
saves therefore serialise and both nights land. A corrupt or foreign file raises BaselineError("<path>: ...") and is
never overwritten: `save` into it refuses (move it aside by hand); the other baselines of the store stay readable.
Reads take no lock. A store that cannot be written (read-only, a path under a regular file, a full disk) is a
BaselineError naming the baseline file, the file unchanged.

Reading: a baseline may come from another machine, so it is read as data to check. The file must be a regular file
of at most MAX_FILE_BYTES (no symlink, FIFO or device: rdmatool.files), and every value the code later reads is
type-checked on load — nights a list of objects, statistics numbers, counts non-negative integers, group keys
strings or integers or null — so that a wrong type is one line naming the file and the key (`nights[2].values[5]
.quantiles is an object, not a list`) rather than a traceback in pandas. The fast rule view checks the rows it
returns the same way (it does not read the nights).
"""

from __future__ import annotations

import codecs
import fcntl
import json
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from rdmatool import files, metrics
from rdmatool.errors import BaselineError, BundleError
from rdmatool.model import MetricKind

FORMAT = "rdmatool-baseline/2"
FORMAT_V1 = "rdmatool-baseline/1"  # still read: converted on load
SKETCH_POINTS = 21  # K: a night's fine group with more figures than this is stored as its K quantiles + n
SKETCH_PERCENTS = np.linspace(0.0, 100.0, SKETCH_POINTS)  # 0, 5, ..., 100
HEADER_KEYS = ["format", "name", "keep", "updated"]
KEY_ORDER = [*HEADER_KEYS, "rule_stats", "reference", "stats", "nights"]  # the order of a written file
DEFAULT_STORE = "baselines"
DEFAULT_NAME = "default"
DEFAULT_KEEP = 30
LOCK_NAME = ".lock"
FINE_KEYS = ["metric", "kind", "role", "platform", "ca_type", "link_rate_gbps", "priority", "size_bytes"]
RULE_KEYS = ["metric", "kind", "role", "priority", "size_bytes"]
STAT_FIELDS = ["median", "mad", "p10", "p90", "n", "nights"]
RULE_COLUMNS = [*RULE_KEYS, "median", "mad", "n", "p10", "p90", "nights"]
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}")  # fullmatch: `$` would let a trailing newline in
MAX_FILE_BYTES = 64 * 1024 * 1024  # a 1,000-host baseline of 30 nights is a few MB; a bigger file is not ours
_SKIP_METRICS = {"counter_reset", "counter_saturated"}
_ECN_METRICS = {
    "ecn_min_threshold_bytes": "min", "ecn_max_threshold_bytes": "max", "ecn_max_probability_pct": "pmax",
    "ecn_enabled": "enabled", "ecn_mode": "mode",
}


# --- names and paths ---------------------------------------------------------------------------------------------


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name.endswith(".json"):
        raise BaselineError(f"{_quote(name)}: a baseline name is letters, digits, '.', '_', '-' (no path, no .json)")
    return name


def path_of(store: str | Path, name: str) -> Path:
    return Path(store) / f"{check_name(name)}.json"


def resolve(ref: str, store: str | Path = DEFAULT_STORE) -> Path:
    """A baseline file path, a store directory holding `default.json` (or exactly one baseline), or a NAME."""
    candidate = Path(ref)
    if candidate.is_file():
        return candidate
    if candidate.is_dir():
        if (candidate / f"{DEFAULT_NAME}.json").is_file():
            return candidate / f"{DEFAULT_NAME}.json"
        found = _baseline_files(candidate)
        if len(found) == 1:
            return found[0]
        raise BaselineError(f"{candidate}: a store with {len(found)} baselines and no {DEFAULT_NAME}.json; give a NAME")
    if ref.endswith(".json") or os.sep in ref:
        raise BaselineError(f"{ref}: no such baseline file")
    path = path_of(store, ref)
    if not path.is_file():
        have = ", ".join(p.stem for p in _baseline_files(Path(store))) or "none"
        raise BaselineError(f"{Path(store)}: no baseline named {ref!r} (have: {have})")
    return path


def _baseline_files(store: Path) -> list[Path]:
    if not store.is_dir():
        return []
    return sorted(p for p in store.glob("*.json") if p.is_file() and not p.name.startswith("."))


# --- reading -------------------------------------------------------------------------------------------------------


def load(path: str | Path) -> dict:
    """The parsed baseline; BaselineError naming the file (and the key at fault) on anything unreadable, corrupt or
    foreign. Every value the code reads later is type-checked here, since a baseline may come from elsewhere."""
    path = Path(path)
    try:
        data = files.read_regular_bytes(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        raise BaselineError(f"{path}: no such baseline file") from None
    except files.UnsafeFileError as exc:
        raise BaselineError(f"{path}: unreadable baseline: {exc.reason}") from None
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BaselineError(f"{path}: corrupt baseline, not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except RecursionError:
        raise BaselineError(f"{path}: corrupt baseline, nested too deeply") from None
    except ValueError as exc:
        raise BaselineError(f"{path}: corrupt baseline, not JSON ({_shorten(str(exc))})") from None
    if not isinstance(doc, dict) or doc.get("format") not in (FORMAT, FORMAT_V1):
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise BaselineError(f"{path}: format {_quote(found)} is not {FORMAT!r}")
    _check_document(path, doc)
    if doc["format"] == FORMAT_V1:
        doc["format"] = FORMAT
        for night in doc.get("nights", []):
            if isinstance(night.get("values"), list):
                sketch_night(night)
    return doc


# --- checking what was read ------------------------------------------------------------------------------------
# One pass over the parsed document before anything uses it: a wrong type found later would be a traceback in
# pandas or numpy, far from the file. Group keys may be absent (read as null); the statistics a rule reads may not.

_TEXT, _NUMBER, _INTEGER, _COUNT = "a string", "a number", "an integer", "a count (an integer >= 0)"
_KEY_TYPES = {"metric": _TEXT, "kind": _TEXT, "role": _TEXT, "platform": _TEXT, "ca_type": _TEXT,
              "link_rate_gbps": _NUMBER, "priority": _INTEGER, "size_bytes": _INTEGER}
_STAT_TYPES = {"median": _NUMBER, "mad": _NUMBER, "p10": _NUMBER, "p90": _NUMBER, "n": _COUNT, "nights": _COUNT}
_RULE_REQUIRED = [*RULE_KEYS, "median", "mad", "n"]
_INT_BOUND = 2**63  # what the int64 columns of the rules' view hold


def _fits(value, expected: str) -> bool:
    if expected == _TEXT:
        return isinstance(value, str)
    if isinstance(value, bool):
        return False
    if expected == _NUMBER:
        return (isinstance(value, int) and -_INT_BOUND < value < _INT_BOUND) or (
            isinstance(value, float) and math.isfinite(value))
    if expected == _INTEGER:
        return isinstance(value, int) and -_INT_BOUND < value < _INT_BOUND
    return isinstance(value, int) and 0 <= value < _INT_BOUND  # _COUNT


def _kind_of(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {_shorten(repr(value), 40)}"
    if isinstance(value, str):
        return f"the string {_quote(value, 60)}"
    return {dict: "an object", list: "a list"}.get(type(value), type(value).__name__)


class _Corrupt(Exception):
    """Where (a key path such as `nights[2].values[5].quantiles`) and what is wrong; made a BaselineError by
    `_check_document`, which knows the file."""


def _expect(value, expected: str, where: str, nullable: bool = True) -> None:
    if (value is None and nullable) or _fits(value, expected):
        return
    raise _Corrupt(f"{where} is {_kind_of(value)}, not {expected}{' or null' if nullable else ''}")


def _key(where: str, key) -> str:
    return f"{where}.{key}" if isinstance(key, str) and key.isidentifier() else f"{where}[{_quote(key, 60)}]"


def _mapping(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise _Corrupt(f"{where} is {_kind_of(value)}, not an object")
    return value


def _listing(value, where: str) -> list:
    if not isinstance(value, list):
        raise _Corrupt(f"{where} is {_kind_of(value)}, not a list")
    return value


def _numbers(values, where: str) -> None:
    values = _listing(values, where)
    # The common case in one cheap pass (x - x is 0.0 only for a finite float); the element at fault otherwise.
    if all(type(x) is float and x - x == 0.0 for x in values):
        return
    for i, x in enumerate(values):
        _expect(x, _NUMBER, f"{where}[{i}]", nullable=False)


def _check_group(row, where: str, required: list[str] = ()) -> None:
    row = _mapping(row, where)
    for key in required:
        if key not in row:
            raise _Corrupt(f"{where} lacks {key!r} (a rule_stats entry needs {_RULE_REQUIRED})")
    for key, expected in _KEY_TYPES.items():
        if key in row:
            _expect(row[key], expected, _key(where, key), nullable=key != "metric")
    for key, expected in _STAT_TYPES.items():
        if key in row:
            _expect(row[key], expected, _key(where, key), nullable=key not in required)


def _check_counts(facts, where: str) -> None:
    for category, groups in _mapping(facts, where).items():
        for group, counts in _mapping(groups, _key(where, category)).items():
            for value, count in _mapping(counts, _key(_key(where, category), group)).items():
                _expect(count, _COUNT, _key(_key(_key(where, category), group), value), nullable=False)


def _check_night(night, where: str) -> None:
    night = _mapping(night, where)
    for key in ("id", "bundle", "created", "saved"):
        _expect(night.get(key), _TEXT, _key(where, key))
    _expect(night.get("targets"), _COUNT, _key(where, "targets"))
    for j, group in enumerate(_listing(night.get("values", []), _key(where, "values"))):
        group_where = f"{where}.values[{j}]"
        _check_group(group, group_where)
        if "quantiles" in group:
            _numbers(group["quantiles"], _key(group_where, "quantiles"))
            _expect(group.get("n"), _COUNT, _key(group_where, "n"))
        elif "values" in group:
            _numbers(group["values"], _key(group_where, "values"))
    _check_counts(night.get("facts") or {}, _key(where, "facts"))


def _check_rule_rows(rows, where: str = "rule_stats") -> None:
    for i, row in enumerate(_listing(rows, where)):
        _check_group(row, f"{where}[{i}]", _RULE_REQUIRED)


def _check_document(path: Path, doc: dict) -> None:
    try:
        _expect(doc.get("name"), _TEXT, "name")
        _expect(doc.get("updated"), _TEXT, "updated")
        keep = doc.get("keep")
        if keep is not None and not (_fits(keep, _COUNT) and keep >= 1):
            raise _Corrupt(f"keep is {_kind_of(keep)}, not an integer >= 1")
        _check_rule_rows(doc.get("rule_stats", []))
        for i, row in enumerate(_listing(doc.get("stats", []), "stats")):
            _check_group(row, f"stats[{i}]")
        for category, groups in _mapping(doc.get("reference", {}), "reference").items():
            for group, entry in _mapping(groups, _key("reference", category)).items():
                where = _key(_key("reference", category), group)
                entry = _mapping(entry, where)
                _expect(entry.get("value"), _TEXT, _key(where, "value"))
                for key in ("count", "total"):
                    _expect(entry.get(key), _COUNT, _key(where, key))
        for i, night in enumerate(_listing(doc.get("nights", []), "nights")):
            _check_night(night, f"nights[{i}]")
    except _Corrupt as exc:
        raise BaselineError(f"{path}: corrupt baseline, {exc}") from None


def _check_rule_stats(path: Path, rows: list) -> None:
    try:
        _check_rule_rows(rows)
    except _Corrupt as exc:
        raise BaselineError(f"{path}: corrupt baseline, {exc}") from None


def _shorten(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quote(value, limit: int = 200) -> str:
    if isinstance(value, (dict, list)):
        return f"<{type(value).__name__}>"  # never rendered whole: it may be huge
    return _shorten(repr(value), limit)


def leading_rule_stats(path: str | Path) -> list | None:
    """`rule_stats` of a /2 file decoded from the file's beginning (header scalars, then rule_stats) without reading
    the nights; None when the file is not laid out that way, or is truncated or foreign (the caller then loads)."""
    decoder = json.JSONDecoder()
    chunk = 1 << 16
    try:
        with files.open_regular(path, MAX_FILE_BYTES) as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 64))
            if not handle.read().rstrip().endswith(b"}"):
                return None  # truncated (or not an object): the full load says what is wrong
            handle.seek(0)
            utf8 = codecs.getincrementaldecoder("utf-8")()
            state = {"buf": "", "eof": False}

            def more() -> bool:
                if state["eof"]:
                    return False
                data = handle.read(max(chunk, len(state["buf"])))  # doubling: linear in what is read
                state["eof"] = not data
                state["buf"] += utf8.decode(data, final=not data)
                return True

            def skip(i: int) -> int:  # index of the next non-blank character, reading on as needed
                while True:
                    buf = state["buf"]
                    while i < len(buf) and buf[i] in " \t\r\n":
                        i += 1
                    if i < len(buf) or not more():
                        return i

            def value(i: int):
                while True:
                    try:
                        found, end = decoder.raw_decode(state["buf"], i)
                        if end < len(state["buf"]) or state["eof"]:  # a number may go on in the next chunk
                            return found, end
                    except ValueError:
                        pass
                    if not more():
                        raise ValueError("truncated")

            header: dict = {}
            i = skip(0)
            if state["buf"][i:i + 1] != "{":
                return None
            i += 1
            while True:
                key, i = value(skip(i))
                i = skip(i)
                if not isinstance(key, str) or state["buf"][i:i + 1] != ":":
                    return None
                i = skip(i + 1)
                if key == "rule_stats":
                    if header.get("format") != FORMAT:
                        return None
                    rows, _ = value(i)
                    return rows if isinstance(rows, list) else None
                if state["buf"][i:i + 1] in ("[", "{"):
                    return None  # a container before rule_stats (a /1 file, another order): not the fast layout
                header[key], i = value(i)
                i = skip(i)
                if state["buf"][i:i + 1] != ",":
                    return None
                i += 1
    except (OSError, ValueError, RecursionError, files.UnsafeFileError):
        return None  # the full load then says what is wrong, naming the key


def stats_for_rules(path: str | Path) -> pd.DataFrame:
    """The coarse statistics as rules.kinds.deviation reads them: one row per (metric, kind, role, priority,
    size_bytes) with median, mad, n (and p10, p90, nights). Reads only the head of a /2 file (module docstring)."""
    rows = leading_rule_stats(path)
    if rows is not None:
        try:
            _check_rule_stats(Path(path), rows)
        except BaselineError:
            rows = None
    if rows is None:
        rows = load(path).get("rule_stats", [])
    frame = pd.DataFrame.from_records(rows)
    frame = frame.reindex(columns=RULE_COLUMNS)
    frame["priority"] = pd.array([_int_or_na(v) for v in frame["priority"]], dtype="Int64")
    frame["size_bytes"] = pd.array([_int_or_na(v) for v in frame["size_bytes"]], dtype="Int64")
    for column in ("median", "mad", "p10", "p90"):
        frame[column] = frame[column].astype("float64")
    frame["n"] = frame["n"].astype("int64")
    frame["role"] = frame["role"].astype("object").where(frame["role"].notna(), None)
    return frame.reset_index(drop=True)


def _int_or_na(value):
    return pd.NA if value is None or (isinstance(value, float) and math.isnan(value)) else int(value)


def summary(path: str | Path) -> dict:
    """A short description for `baseline list`."""
    doc = load(path)
    nights = doc.get("nights", [])
    return {
        "name": doc.get("name") or Path(path).stem, "path": str(path), "nights": len(nights),
        "keep": doc.get("keep"), "first": nights[0].get("created") if nights else None,
        "last": nights[-1].get("created") if nights else None, "groups": len(doc.get("rule_stats", [])),
        "updated": doc.get("updated"),
    }


def list_store(store: str | Path) -> list[dict]:
    """Every baseline of the store; a corrupt or foreign one is an entry with `error` (the others still list)."""
    out = []
    for path in _baseline_files(Path(store)):
        try:
            out.append(summary(path))
        except BaselineError as exc:
            out.append({"name": path.stem, "path": str(path), "error": str(exc)})
    return out


# --- one bundle → one night ------------------------------------------------------------------------------------


def night_from_bundle(bundle_path: str | Path) -> dict:
    """Analyse one bundle and reduce it to a night: value lists per fine group and counts of reference facts."""
    from rdmatool import bundle as bundle_io
    from rdmatool.analysis import analyse_path

    manifest = bundle_io.read_manifest(Path(bundle_path))
    facts = analyse_path(bundle_path).facts
    values = figures(facts)
    if not values:
        raise BundleError(f"{bundle_path}: no numeric figures to baseline")
    created = manifest.get("created") or ""
    where = str(Path(bundle_path).resolve())
    return {
        "id": f"{created}|{where}",
        "bundle": where,
        "created": created,
        "saved": _now(),
        "targets": len(manifest.get("targets", [])),
        "values": values,
        "facts": reference_counts(facts),
    }


def _attributes(facts: pd.DataFrame) -> tuple[dict, dict, dict, dict]:
    """(target, device) → ca_type, target → most common ca_type, (target, entity) → link rate, target → max rate."""
    cas = facts[(facts["metric"] == "ca_type") & facts["text"].notna()]
    by_device = {(t, str(e).split("/")[0]): x for t, e, x in zip(cas["target"], cas["entity"], cas["text"])}
    by_target: dict = {}
    for target, group in cas.groupby("target"):
        counts = Counter(group["text"])
        by_target[target] = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    links = facts[(facts["metric"] == "link_rate_gbps") & facts["value"].notna()]
    by_port = {(t, e): float(v) for t, e, v in zip(links["target"], links["entity"], links["value"])}
    max_rate = links.groupby("target")["value"].max().astype(float).to_dict()
    return by_device, by_target, by_port, max_rate


def _is_figure(metric: str) -> bool:
    if metric in _SKIP_METRICS:
        return False
    if metric.endswith(metrics.RATE_SUFFIX):
        return True
    known = metrics.GLOSSARY.get(metric)
    return known is None or known.kind is MetricKind.GAUGE


def figures(facts: pd.DataFrame) -> list[dict]:
    """The numeric figures of one facts table as value lists per fine group (sorted, deterministic)."""
    numeric = facts[facts["value"].notna() & np.isfinite(facts["value"].astype(float))]
    numeric = numeric[numeric["metric"].map(_is_figure)]
    if numeric.empty:
        return []
    by_device, by_target, by_port, max_rate = _attributes(facts)
    groups: dict[tuple, list[float]] = {}
    for row in numeric.itertuples(index=False):
        entity = str(row.entity) if row.entity is not None else ""
        ca = by_device.get((row.target, entity.split("/")[0])) or by_target.get(row.target)
        rate = None if row.metric == "link_rate_gbps" else by_port.get((row.target, entity), max_rate.get(row.target))
        key = (row.metric, _clean(row.kind), _clean(row.role), _clean(row.platform), ca,
               None if rate is None else float(rate), _int(row.priority), _int(row.size_bytes))
        groups.setdefault(key, []).append(float(row.value))
    out = []
    for key in sorted(groups, key=_sort_key):
        out.append({**dict(zip(FINE_KEYS, key)), "values": sorted(groups[key])})
    return out


def _clean(value):
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


def _int(value):
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return int(value)


def _sort_key(key: tuple) -> tuple:
    return tuple((0, "") if v is None else (1, v) if isinstance(v, str) else (2, f"{v:020.6f}") for v in key)


def reference_counts(facts: pd.DataFrame) -> dict[str, dict[str, dict[str, int]]]:
    """Counts of configuration facts in one bundle: {category: {group: {value: count}}}."""
    out: dict[str, dict[str, Counter]] = {}

    def add(category: str, group, value) -> None:
        if group is None or value is None:
            return
        out.setdefault(category, {}).setdefault(str(group), Counter())[str(value)] += 1

    by_device, _, _, _ = _attributes(facts)
    boards = facts[(facts["metric"] == "board_id") & facts["text"].notna()]
    board_of = {(t, str(e).split("/")[0]): x for t, e, x in zip(boards["target"], boards["entity"], boards["text"])}
    fw = facts[(facts["metric"] == "fw_version") & facts["text"].notna()]
    for target, entity, version in zip(fw["target"], fw["entity"], fw["text"]):
        device = (target, str(entity).split("/")[0])
        add("fw_version_by_ca_type", by_device.get(device), version)
        add("fw_version_by_board_id", board_of.get(device), version)
    hosts = facts[facts["kind"] == "host"]
    trust = hosts[(hosts["metric"] == "trust_mode") & hosts["text"].notna()]
    for role, mode in zip(trust["role"], trust["text"]):
        add("trust_mode_by_role", _clean(role) or "", mode)
    pfc = hosts[(hosts["metric"] == "pfc_enabled") & hosts["priority"].notna()]
    for _key, group in pfc.groupby(["target", "entity"], dropna=False):
        enabled = sorted(int(p) for p, v in zip(group["priority"], group["value"]) if v == 1)
        role = _clean(group["role"].iloc[0]) or ""
        add("pfc_priorities_by_role", role, ",".join(map(str, enabled)) or "none")
    ecn = facts[(facts["kind"] == "switch") & facts["metric"].isin(_ECN_METRICS)]
    for (_target, platform, entity), group in ecn.groupby(["target", "platform", "entity"], dropna=False):
        parts = []
        for metric, value, text in sorted(zip(group["metric"], group["value"], group["text"]),
                                          key=lambda r: _ECN_METRICS[r[0]]):
            shown = text if isinstance(text, str) else (f"{value:g}" if value == value else None)
            if shown is not None:
                parts.append(f"{_ECN_METRICS[metric]}={shown}")
        if parts:
            add("ecn_by_profile", f"{_clean(platform) or ''}/{entity}", ",".join(parts))
    return {c: {g: dict(sorted(v.items())) for g, v in sorted(groups.items())} for c, groups in sorted(out.items())}


# --- statistics over the kept nights ----------------------------------------------------------------------------


def sketch(values: list[float]) -> dict:
    """A fine group's figures of one night as stored: the raw values up to K, else K quantiles + the true count."""
    if len(values) <= SKETCH_POINTS:
        return {"values": sorted(float(v) for v in values)}
    arr = np.asarray(values, dtype=float)
    return {"quantiles": [float(q) for q in np.percentile(arr, SKETCH_PERCENTS)], "n": int(arr.size)}


def sketch_night(night: dict) -> dict:
    """Replace, in place, every group of the night with more than K raw values by its sketch (idempotent)."""
    groups = []
    for group in night.get("values", []):
        raw = group.get("values") if isinstance(group, dict) else None
        if isinstance(raw, list) and len(raw) > SKETCH_POINTS:
            group = {k: v for k, v in group.items() if k != "values"} | sketch(raw)
        groups.append(group)
    night["values"] = groups
    return night


def _points(group: dict) -> tuple[list[float], float, int]:
    """(stored points, weight of each, true count) of one night's fine group."""
    if "quantiles" in group:
        points = list(group.get("quantiles") or [])
        count = int(group.get("n") or len(points))
        return points, (count / len(points) if points else 1.0), count
    points = list(group.get("values") or [])
    return points, 1.0, len(points)


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """numpy's linear-interpolation quantile generalised to weights: a point of weight w stands for w copies
    (exactly the same as np.percentile on the expanded list when the weights are integers)."""
    order = np.argsort(values, kind="stable")
    x, w = values[order], weights[order]
    ends = np.cumsum(w) - 1.0  # last position of each point in the expanded list
    starts = ends - w + 1.0
    h = q * ends[-1]
    i = min(int(np.searchsorted(ends, h, side="left")), len(x) - 1)
    if i == 0 or h >= starts[i]:
        return float(x[i])
    return float(x[i - 1] + (h - ends[i - 1]) * (x[i] - x[i - 1]))


def robust_weighted(values: list[float], weights: list[float], n: int) -> dict:
    arr, w = np.asarray(values, dtype=float), np.asarray(weights, dtype=float)
    median = weighted_quantile(arr, w, 0.5)
    return {
        "median": median,
        "mad": weighted_quantile(np.abs(arr - median), w, 0.5),
        "p10": weighted_quantile(arr, w, 0.1),
        "p90": weighted_quantile(arr, w, 0.9),
        "n": int(n),
    }


def robust(values: list[float]) -> dict:
    arr = np.asarray(values, dtype=float)
    median = float(np.median(arr))
    return {
        "median": median,
        "mad": float(np.median(np.abs(arr - median))),
        "p10": float(np.percentile(arr, 10)),
        "p90": float(np.percentile(arr, 90)),
        "n": int(arr.size),
    }


def _pooled(nights: list[dict], keys: list[str]) -> list[dict]:
    """Statistics per group over the kept nights: exact from the raw values when no night of the group is a
    sketch, else weighted (module docstring)."""
    pools: dict[tuple, list[float]] = {}
    weights: dict[tuple, list[float]] = {}
    counts: dict[tuple, int] = {}
    seen: dict[tuple, set[int]] = {}
    for i, night in enumerate(nights):
        for group in night.get("values", []):
            key = tuple(group.get(k) for k in keys)
            points, weight, count = _points(group)
            pools.setdefault(key, []).extend(points)
            weights.setdefault(key, []).extend([weight] * len(points))
            counts[key] = counts.get(key, 0) + count
            seen.setdefault(key, set()).add(i)
    out = []
    for key in sorted(pools, key=_sort_key):
        if not pools[key]:
            continue
        exact = all(w == 1.0 for w in weights[key])
        stats = robust(pools[key]) if exact else robust_weighted(pools[key], weights[key], counts[key])
        out.append({**dict(zip(keys, key)), **stats, "nights": len(seen[key])})
    return out


def reference(nights: list[dict]) -> dict:
    pooled: dict[str, dict[str, Counter]] = {}
    for night in nights:
        for category, groups in (night.get("facts") or {}).items():
            for group, counts in groups.items():
                pooled.setdefault(category, {}).setdefault(group, Counter()).update(counts)
    out: dict = {}
    for category in sorted(pooled):
        for group in sorted(pooled[category]):
            counts = pooled[category][group]
            value, count = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
            out.setdefault(category, {})[group] = {"value": value, "count": count, "total": sum(counts.values())}
    return out


def rebuild(doc: dict) -> dict:
    """Sketch the large groups of the kept nights, then recompute stats, rule_stats and reference from them."""
    nights = [sketch_night(night) for night in doc["nights"]]
    doc["nights"] = nights
    doc["stats"] = _pooled(nights, FINE_KEYS)
    doc["rule_stats"] = _pooled(nights, RULE_KEYS)
    doc["reference"] = reference(nights)
    return doc


# --- writing ---------------------------------------------------------------------------------------------------


@contextmanager
def locked(store: Path) -> Iterator[None]:
    store.mkdir(parents=True, exist_ok=True)
    with open(store / LOCK_NAME, "a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def write_atomic(path: Path, doc: dict) -> None:
    """Temporary file in the same directory, fsync, os.replace, fsync of the directory. The keys are written in
    KEY_ORDER (header scalars, rule_stats, reference, stats, nights; any other key last) for `leading_rule_stats`."""
    doc = {k: doc[k] for k in KEY_ORDER if k in doc} | {k: v for k, v in doc.items() if k not in KEY_ORDER}
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    # mkstemp makes the file private; a baseline holds no secret and the on-call engineer must read what the
    # nightly job wrote.
    os.fchmod(fd, 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(doc, handle, indent=1, sort_keys=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def add_night(store: str | Path, name: str, night: dict, keep: int | None = None) -> dict:
    """Append one night to baseline NAME under the store lock; returns the written document."""
    if keep is not None and keep < 1:
        raise BaselineError(f"--keep must be at least 1, not {keep}")
    store = Path(store)
    path = path_of(store, name)
    try:
        with locked(store):
            if path.exists():
                doc = load(path)  # corrupt or foreign: BaselineError, and the file stays as it is
            else:
                doc = {"format": FORMAT, "name": name, "keep": DEFAULT_KEEP, "nights": []}
            keep = keep or int(doc.get("keep") or DEFAULT_KEEP)
            nights = [n for n in doc.get("nights", []) if n.get("id") != night["id"]]
            nights.append(night)
            nights.sort(key=lambda n: (str(n.get("created") or ""), str(n.get("saved") or "")))
            doc.update(format=FORMAT, name=name, keep=keep, updated=_now(), nights=nights[-keep:])
            rebuild(doc)
            write_atomic(path, doc)
    except OSError as exc:
        # A read-only store, a store path under a regular file, a full disk: one line, the file untouched.
        raise BaselineError(f"{path}: cannot save the baseline ({exc.strerror or exc})") from None
    return doc


def save(bundle_path: str | Path, store: str | Path = DEFAULT_STORE, name: str = DEFAULT_NAME,
         keep: int | None = None) -> dict:
    """Add one bundle's figures to baseline NAME of the store (created if absent)."""
    check_name(name)
    night = night_from_bundle(bundle_path)  # the expensive part, outside the lock
    return add_night(store, name, night, keep)


# --- comparing -------------------------------------------------------------------------------------------------


def diff(a: dict, b: dict, top: int = 20) -> dict:
    """The coarse groups whose medians moved most (relative change, then absolute) and changed reference facts."""
    def index(doc: dict) -> dict:
        return {tuple(r.get(k) for k in RULE_KEYS): r for r in doc.get("rule_stats", [])}

    left, right = index(a), index(b)
    moved = []
    for key in sorted(set(left) & set(right), key=_sort_key):
        m0, m1 = float(left[key]["median"]), float(right[key]["median"])
        change = m1 - m0
        if change == 0:
            continue
        relative = change / abs(m0) if m0 != 0 else math.copysign(math.inf, change)
        spread = float(left[key].get("mad") or 0.0) * 1.4826
        moved.append({**dict(zip(RULE_KEYS, key)), "median_a": m0, "median_b": m1, "change": change,
                      "relative": relative, "mads": change / spread if spread > 0 else None,
                      "n_a": left[key].get("n"), "n_b": right[key].get("n")})
    moved.sort(key=lambda r: (-abs(r["relative"]), -abs(r["change"])))
    facts = []
    ra, rb = a.get("reference") or {}, b.get("reference") or {}
    for category in sorted(set(ra) | set(rb)):
        ga, gb = ra.get(category) or {}, rb.get(category) or {}
        for group in sorted(set(ga) | set(gb)):
            va = (ga.get(group) or {}).get("value")
            vb = (gb.get(group) or {}).get("value")
            if va != vb:
                facts.append({"category": category, "group": group, "a": va, "b": vb})
    return {
        "moved": moved[:top] if top else moved, "moved_total": len(moved),
        "only_a": len(set(left) - set(right)), "only_b": len(set(right) - set(left)), "facts": facts,
    }


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
