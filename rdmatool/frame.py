"""Samples → one tidy pandas DataFrame; two snapshots → counter rates that survive wraps, resets and saturation.

Columns of the sample frame: snapshot, time (epoch s of the read), target, kind, platform, role, parser,
qualifier, entity, metric, priority, size_bytes, value, text, raw_key — plus `exact`, the counter value as a Python
int, because a 64-bit counter near its wrap does not fit a float's 53-bit mantissa.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import pandas as pd

from rdmatool import metrics, parsers
from rdmatool.bundle import Bundle
from rdmatool.errors import ParseError
from rdmatool.model import MetricKind

# Parsers whose output does not name the interface/port it is about emit these placeholders; the bundle's
# qualifier (what the command was run for) supplies the real name.
PLACEHOLDER_ENTITIES = {"netdev", "port"}
# perfquery knows only LID and port; the collector ran it per `<device>.<port>`, the name every other view uses.
_QUALIFIER_IS_ENTITY = {"perfquery"}

COLUMNS = [
    "snapshot", "time", "target", "kind", "platform", "role", "parser", "qualifier", "entity", "metric",
    "priority", "size_bytes", "value", "text", "raw_key", "exact",
]
KEY = ["target", "entity", "metric", "priority", "size_bytes", "raw_key"]
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


def from_bundle(bundle: Bundle) -> SampleTable:
    """Parse every output of a bundle; an unparsable output is recorded and the rest go on."""
    info = {t["name"]: t for t in bundle.targets}
    rows: list[tuple] = []
    failures: list[ParseFailure] = []
    known = set(parsers.names())
    for entry in bundle.entries:
        result = entry.result
        if result.parser not in known:
            failures.append(ParseFailure(entry.target, entry.snapshot, result.parser, result.qualifier,
                                         f"no parser named {result.parser!r}"))
            continue
        if result.exit_code not in (0, None) and not result.stdout.strip():
            continue  # a failed command with no output: already a collection failure, nothing to parse
        try:
            samples = parsers.parse(result.parser, result.stdout)
        except ParseError as exc:
            name = f"snapshots/{entry.snapshot}/{entry.target}/{result.parser}"
            failures.append(ParseFailure(entry.target, entry.snapshot, result.parser, result.qualifier,
                                         exc.located(name + (f".{result.qualifier}" if result.qualifier else ""))))
            continue
        t = info.get(entry.target, {})
        when = _epoch(result.started)
        for s in samples:
            entity = s.entity
            if result.qualifier and (entity in PLACEHOLDER_ENTITIES or result.parser in _QUALIFIER_IS_ENTITY):
                entity = result.qualifier.replace(".", "/") if result.parser in _QUALIFIER_IS_ENTITY else result.qualifier
            exact = s.value if isinstance(s.value, int) and not isinstance(s.value, bool) else None
            rows.append((
                entry.snapshot, when, entry.target, t.get("kind", "host"), t.get("platform", "linux"), t.get("role"),
                result.parser, result.qualifier, entity, s.metric, s.priority, s.size_bytes,
                None if s.value is None else float(s.value), s.text, s.raw_key, exact,
            ))
    frame = pd.DataFrame.from_records(rows, columns=COLUMNS)
    frame = _typed(frame)
    return SampleTable(frame, failures, list(bundle.failures), list(bundle.targets))


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    frame["priority"] = frame["priority"].astype("Int64")
    frame["size_bytes"] = frame["size_bytes"].astype("Int64")
    frame["value"] = frame["value"].astype("float64")
    frame["time"] = frame["time"].astype("float64")
    return frame


def _epoch(stamp: str | None) -> float:
    if not stamp:
        return float("nan")
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return float("nan")


def counter_mask(frame: pd.DataFrame) -> pd.Series:
    counters = {name for name, m in metrics.GLOSSARY.items() if m.kind is MetricKind.COUNTER}
    return frame["metric"].isin(counters)


def rates(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per counter seen in both the first and the last snapshot: delta, window and `<metric>_per_s`.

    `flag` says why a rate is absent or adjusted: `wrap32`/`wrap64` (counter wrapped: delta corrected), `reset`
    (value went down: reboot, driver reload, cleared counters — no rate), `saturated` (a legacy counter pinned at
    its maximum — no rate), `no_window` (read times unknown).
    """
    empty = pd.DataFrame(columns=[*KEY, "window_s", "delta", "rate", "flag", "previous", "current"])
    if frame.empty or frame["snapshot"].nunique() < 2:
        return empty
    first, last = frame["snapshot"].min(), frame["snapshot"].max()
    counters = frame[counter_mask(frame) & frame["value"].notna()]
    a = counters[counters["snapshot"] == first]
    b = counters[counters["snapshot"] == last]
    key = KEY
    a = a.drop_duplicates(key, keep="last")
    b = b.drop_duplicates(key, keep="last")
    merged = a[[*key, "time", "value", "exact"]].merge(
        b[[*key, "time", "value", "exact"]], on=key, suffixes=("_0", "_1"), how="inner"
    )
    if merged.empty:
        return empty
    window = (merged["time_1"] - merged["time_0"]).to_numpy()
    v0, v1 = merged["value_0"].to_numpy(), merged["value_1"].to_numpy()
    delta = v1 - v0
    flag = np.full(len(merged), "", dtype=object)
    down = np.flatnonzero(delta < 0)
    if len(down):
        exact0, exact1 = merged["exact_0"].to_numpy(), merged["exact_1"].to_numpy()
        for i in down:  # rare: decide wrap or reset on exact integers
            d, f = _went_down(exact0[i], exact1[i], v0[i], v1[i])
            delta[i], flag[i] = d, f
    saturated = _saturated_keys(frame)
    if saturated:
        keys = list(zip(merged["target"], merged["entity"], merged["metric"]))
        for i, k in enumerate(keys):
            if k in saturated:
                delta[i], flag[i] = np.nan, "saturated"
    bad_window = ~(window > 0)
    flag[bad_window & (flag == "")] = "no_window"
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(window > 0, delta / window, np.nan)
    out = merged[key].copy()
    out["window_s"] = window
    out["delta"] = delta
    out["rate"] = rate
    out["flag"] = flag
    out["previous"] = v0
    out["current"] = v1
    return out.reset_index(drop=True)


def _went_down(e0, e1, v0: float, v1: float) -> tuple[float, str]:
    old = int(e0) if e0 is not None and e0 == e0 else int(v0)
    new = int(e1) if e1 is not None and e1 == e1 else int(v1)
    # A wrap is only believable when the old value sat in the top half of the width and the new one in the
    # bottom half; anything else (a value merely lower) is a reset, and a reset has no rate.
    if U32 // 2 <= old < U32 and new < U32 // 2:
        return float(new + U32 - old), "wrap32"
    if U64 // 2 <= old < U64 and new < U64 // 2:
        return float(new + U64 - old), "wrap64"
    return float("nan"), "reset"


def _saturated_keys(frame: pd.DataFrame) -> set[tuple[str, str, str]]:
    marks = frame[frame["metric"] == "counter_saturated"]
    return {(t, e, m) for t, e, m in zip(marks["target"], marks["entity"], marks["text"]) if m}
