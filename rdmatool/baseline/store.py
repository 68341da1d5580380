"""The store on disk: names and paths, reading and checking baseline files, the rule view, locking and saving.

The layout and the rules each file follows are in the package docstring (rdmatool.baseline).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from rdmatool import files
from rdmatool.baseline.figures import night_from_bundle, utc_now
from rdmatool.baseline.stats import RULE_COLUMNS, RULE_KEYS, rebuild, sketch_night
from rdmatool.baseline.verdicts import VERDICTS, counted, judged, trim
from rdmatool.baseline.verdicts import summary as night_summary
from rdmatool.errors import BaselineError

FORMAT = "rdmatool-baseline/2"
FORMAT_V1 = "rdmatool-baseline/1"  # still read: converted on load
RULES_FORMAT = "rdmatool-baseline-rules/1"
HEADER_KEYS = ["format", "name", "keep", "updated"]
# Header scalars, then rule_stats, then the bulk: a reader that wants only the head of the file (rdmatool versions
# that have no rule view file read it that way) stops early.
KEY_ORDER = [*HEADER_KEYS, "rule_stats", "reference", "stats", "nights"]
DEFAULT_STORE = "baselines"
DEFAULT_NAME = "default"
DEFAULT_KEEP = 30
LOCK_NAME = ".lock"
RULES_SUFFIX = ".rules.json"
FILE_MODE = 0o644  # a baseline holds no secret, and the on-call engineer must read what the nightly job wrote
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}")  # fullmatch: `$` would let a trailing newline in
MAX_FILE_BYTES = 64 * 1024 * 1024  # a 1,000-host baseline of 30 nights is a few MB; a bigger file is not ours


# --- names and paths ---------------------------------------------------------------------------------------------


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name.endswith(".json"):
        raise BaselineError(f"{_quote(name)}: a baseline name is letters, digits, '.', '_', '-' (no path, no .json)")
    return name


def path_of(store: str | Path, name: str) -> Path:
    return Path(store) / f"{check_name(name)}.json"


def rules_path_of(path: str | Path) -> Path:
    """The rule view file of the baseline file at `path`: `.NAME.rules.json` beside `NAME.json`. Hidden, so that
    no baseline name can be the same file and listing the store never shows it."""
    path = Path(path)
    stem = path.name[: -len(".json")] if path.name.endswith(".json") else path.name
    return path.with_name(f".{stem}{RULES_SUFFIX}")


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
    """The baseline files of a store: `*.json` but the hidden ones (the lock, rule views, temporary files)."""
    if not store.is_dir():
        return []
    return sorted(p for p in store.glob("*.json") if p.is_file() and not p.name.startswith("."))


def summary(path: str | Path) -> dict:
    """What `baseline list` says of one baseline: its nights, each with its verdict and whether it counts."""
    doc = load(path)
    nights = doc.get("nights", [])
    return {
        "name": doc.get("name") or Path(path).stem, "path": str(path), "keep": doc.get("keep"),
        "first": nights[0].get("created") if nights else None,
        "last": nights[-1].get("created") if nights else None, "groups": len(doc.get("rule_stats", [])),
        "updated": doc.get("updated"), "counted": sum(1 for n in nights if counted(n)),
        "nights": [night_summary(n) for n in nights],
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
    _check_diagnosis(night, where)
    for j, group in enumerate(_listing(night.get("values", []), _key(where, "values"))):
        group_where = f"{where}.values[{j}]"
        _check_group(group, group_where)
        if "quantiles" in group:
            _numbers(group["quantiles"], _key(group_where, "quantiles"))
            _expect(group.get("n"), _COUNT, _key(group_where, "n"))
        elif "values" in group:
            _numbers(group["values"], _key(group_where, "values"))
    _check_counts(night.get("facts") or {}, _key(where, "facts"))


def _check_diagnosis(night: dict, where: str) -> None:
    """The verdict `baseline save` recorded (rdmatool.baseline.verdicts): it decides whether the night counts."""
    if "included_by_hand" in night and not isinstance(night["included_by_hand"], bool):
        raise _Corrupt(f"{_key(where, 'included_by_hand')} is {_kind_of(night['included_by_hand'])}, not a boolean")
    if night.get("diagnosis") is None:
        return
    where = _key(where, "diagnosis")
    diagnosis = _mapping(night["diagnosis"], where)
    if diagnosis.get("verdict") not in VERDICTS:
        raise _Corrupt(f"{_key(where, 'verdict')} is {_kind_of(diagnosis.get('verdict'))}, not one of "
                       f"{', '.join(VERDICTS)}")
    _expect(diagnosis.get("failures"), _COUNT, _key(where, "failures"))
    for severity, count in _mapping(diagnosis.get("counts") or {}, _key(where, "counts")).items():
        _expect(count, _COUNT, _key(_key(where, "counts"), severity), nullable=False)


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


def _shorten(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quote(value, limit: int = 200) -> str:
    if isinstance(value, (dict, list)):
        return f"<{type(value).__name__}>"  # never rendered whole: it may be huge
    return _shorten(repr(value), limit)


# --- the rule view ---------------------------------------------------------------------------------------------


def read_rule_view(path: str | Path) -> list | None:
    """The `rule_stats` rows of the rule view file of the baseline at `path`, checked; None when there is none or
    it cannot be used: unreadable, corrupt, foreign, or not written for the baseline file as it is now (the caller
    then loads the baseline itself, which is the truth: the view is only a copy of its `rule_stats`)."""
    path = Path(path)
    try:
        data = files.read_regular_bytes(rules_path_of(path), MAX_FILE_BYTES)
        # after the view: a save replaces the baseline, then its view, so a view read first is never newer
        now = os.lstat(path)
        view = json.loads(data.decode("utf-8"))
    except (OSError, ValueError, RecursionError, files.UnsafeFileError):
        return None
    if not stat.S_ISREG(now.st_mode) or not isinstance(view, dict) or view.get("format") != RULES_FORMAT:
        return None
    of, rows = view.get("of"), view.get("rule_stats")
    if not isinstance(of, dict) or not isinstance(rows, list) or not _same_int(of.get("bytes"), now.st_size):
        return None
    if not _same_int(of.get("mtime_ns"), now.st_mtime_ns) and not _same_content(path, of.get("sha256")):
        return None
    try:
        _check_rule_rows(rows)
    except _Corrupt:
        return None
    return rows


def _same_int(stored, actual: int) -> bool:
    return type(stored) is int and stored == actual


def _same_content(path: Path, digest) -> bool:
    """Whether the baseline file holds the bytes the view was written for: a copy, a restore or a checkout keeps
    the content and changes the modification time, and the view still applies (a few ms for a few MB)."""
    if not isinstance(digest, str):
        return False
    try:
        data = files.read_regular_bytes(path, MAX_FILE_BYTES)
    except (OSError, files.UnsafeFileError):
        return False
    return hashlib.sha256(data).hexdigest() == digest


def stats_for_rules(path: str | Path) -> pd.DataFrame:
    """The coarse statistics as rules.kinds.deviation reads them: one row per (metric, kind, role, priority,
    size_bytes) with median, mad, n (and p10, p90, nights). Read from the rule view file when it is usable, else
    from the baseline itself (package docstring); never writes."""
    rows = read_rule_view(path)
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


def write_document(path: Path, doc: dict) -> None:
    """Write baseline `doc` at `path`, then its rule view beside it, each atomically (rdmatool.files.write_atomic).
    The caller holds the store lock. Keys in KEY_ORDER, any other key last."""
    doc = {k: doc[k] for k in KEY_ORDER if k in doc} | {k: v for k, v in doc.items() if k not in KEY_ORDER}
    data = (json.dumps(doc, indent=1) + "\n").encode("utf-8")
    files.write_atomic(path, data, FILE_MODE)
    written = os.lstat(path)
    view = {"format": RULES_FORMAT, "baseline": path.name,
            "of": {"bytes": written.st_size, "mtime_ns": written.st_mtime_ns,
                   "sha256": hashlib.sha256(data).hexdigest()},
            "rule_stats": doc.get("rule_stats", [])}
    view_path = rules_path_of(path)
    try:
        files.write_atomic(view_path, (json.dumps(view) + "\n").encode("utf-8"), FILE_MODE)
    except OSError as exc:
        # The night is saved; the old view no longer matches the file, so it is not used (read_rule_view).
        raise BaselineError(f"{path}: saved, but its rule view {view_path.name} cannot be written "
                            f"({exc.strerror or exc}); diagnoses read the whole baseline until the next save") from None


def add_night(store: str | Path, name: str, night: dict, keep: int | None = None) -> dict:
    """Append one night to baseline NAME under the store lock; returns the written document. The store keeps the
    newest `keep` nights that count and the newest `keep` that do not (rdmatool.baseline.verdicts.trim)."""
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
            doc.update(format=FORMAT, name=name, keep=keep, updated=utc_now(), nights=trim(nights, keep))
            rebuild(doc)
            write_document(path, doc)
    except OSError as exc:
        # A read-only store, a store path under a regular file, a full disk: one line, the baseline file as it was.
        raise BaselineError(f"{path}: cannot save the baseline ({exc.strerror or exc})") from None
    return doc


def save(bundle_path: str | Path, store: str | Path = DEFAULT_STORE, name: str = DEFAULT_NAME,
         keep: int | None = None, diagnosis: dict | None = None, include_failed: bool = False) -> dict:
    """Add one bundle's figures to baseline NAME of the store (created if absent). `diagnosis`: the bundle's verdict
    (rdmatool.baseline.verdicts.record, of the diagnosis without a baseline), which decides whether the night
    counts; `include_failed` counts a failing night anyway. Without a diagnosis the night counts, as it always did."""
    check_name(name)
    night = judged(night_from_bundle(bundle_path), diagnosis, include_failed)  # the expensive part, outside the lock
    return add_night(store, name, night, keep)
