"""The facts table the rules read: latest values, counter rates and the derived ratios, one tidy frame.

facts columns: target, kind, platform, role, entity, metric, priority, size_bytes, value, text, raw_key, window_s,
delta, flag. A counter appears twice: as its cumulative value (`metric`) and, with two snapshots, as
`<metric>_per_s` (value = rate; `delta` and `window_s` carry the raw change and the window it was seen over).
The rules and the suggesters read the facts through the analysis' one FactQuery (rdmatool.facts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rdmatool import column_codes
from rdmatool import frame as frames
from rdmatool.bundle import Bundle
from rdmatool.facts import FactQuery
from rdmatool.metrics import rate_name
from rdmatool.sample_columns import PEER_MARK
from rdmatool.triage import triage_facts

FACT_COLUMNS = [
    "target", "kind", "platform", "role", "entity", "metric", "priority", "size_bytes", "value", "text", "raw_key",
    "window_s", "delta", "flag",
]


@dataclass
class Analysis:
    facts: pd.DataFrame
    table: frames.SampleTable
    window_s: float | None
    links: pd.DataFrame = field(default_factory=pd.DataFrame)  # host netdev ↔ switch port, from LLDP
    query: FactQuery = field(init=False, repr=False, compare=False)  # the look-ups over `facts`, for one diagnosis

    def __post_init__(self) -> None:
        self.query = FactQuery(self.facts)

    @property
    def targets(self) -> list[dict]:
        return self.table.targets


def analyse_bundle(bundle: Bundle) -> Analysis:
    return analyse(frames.from_bundle(bundle))


def analyse_path(path: str | Path) -> Analysis:
    """A bundle directory's analysis, from its stored parsed samples where current (see rdmatool.samples_store).
    Its packet captures are added above this layer (rdmatool.capture.facts.analyse_with_captures)."""
    return analyse(frames.load(path))


def _in_snapshot_order(table: frames.SampleTable) -> tuple[pd.DataFrame, np.ndarray, dict]:
    """The sample rows, their series ids and their metric and target codes (SampleTable.codes, computed when the
    table has none), snapshot by snapshot (a bundle's rows come that way already)."""
    samples = table.frame
    series = table.series if table.series is not None else frames.series_ids(samples)
    codes = dict(table.codes or {})
    for c in _CODED:  # a column the loader did not code (or coded for other rows) is factorized here
        if c in samples.columns and column_codes.fitting(codes, c, len(samples)) is None:
            codes[c] = column_codes.factorized(samples[c].to_numpy())
    snapshot = samples["snapshot"].to_numpy()
    if len(snapshot) > 1 and not (snapshot[1:] >= snapshot[:-1]).all():
        order = np.argsort(snapshot, kind="stable")
        samples, series = samples.iloc[order].reset_index(drop=True), series[order]
        codes = {c: (row_codes[order], uniques) for c, (row_codes, uniques) in codes.items()}
    return samples, series, codes


_CODED = ("metric", "target")  # the columns the facts' query is handed as codes (FactQuery: no factorize of its own)


def _latest(samples: pd.DataFrame, series: np.ndarray) -> pd.DataFrame:
    """The last reading of each series: one row per series, never one for two (see sample_columns.series_of)."""
    last = np.flatnonzero(~pd.Series(series).duplicated(keep="last").to_numpy())
    return samples[FACT_COLUMNS[:11]].take(last)  # only the columns kept are cut


def latest_values(table: frames.SampleTable) -> pd.DataFrame:
    """The latest value of every series of a sample table (the first eleven fact columns)."""
    samples, series, _ = _in_snapshot_order(table)
    return _latest(samples, series)


# What the derived facts are computed from (`_derived`): only these rates are cut into a frame for it.
_DERIVED_FROM = ("rx_pause_duration_us", "tx_pause_duration_us", "ecn_marked_packets", "tx_packets", "rx_packets",
                 "cnp_sent", "cnp_handled")
_USABLE_FLAGS = ("", "wrap32", "wrap64")


def analyse(table: frames.SampleTable) -> Analysis:
    samples, series, codes = _in_snapshot_order(table)
    # each target's first row: a hash of integer codes, not of 9,000,000 Python strings
    first = column_codes.first_rows(samples, codes, "target")
    # as plain texts: the facts derived from it are objects like the rest of the facts (column_codes.as_texts)
    meta = column_codes.as_texts(samples[["target", "kind", "platform", "role"]].take(first))
    last = np.flatnonzero(~pd.Series(series).duplicated(keep="last").to_numpy())  # each series' latest reading
    # Gauges and states (perftest results, link rates, LLDP, tool errors) live only among the latest values:
    # each selection is an integer comparison of the metric's codes.
    sample_metric, metric_names = codes["metric"]
    metric_codes = sample_metric[last]
    code_of = {name: code for code, name in enumerate(metric_names.tolist())}

    def latest_of(metric: str) -> pd.DataFrame:
        """The latest values of one metric (few rows), as the facts hold them."""
        at = last[metric_codes == code_of.get(metric, -2)]
        latest = column_codes.as_texts(samples[FACT_COLUMNS[:11]].take(at))
        return latest.assign(window_s=np.nan, delta=np.nan, flag="")

    rates = frames.rate_arrays(samples, series, codes)
    resets = np.zeros(0, dtype=np.intp) if rates is None else np.flatnonzero(rates.flag == "reset")
    derived = pd.DataFrame(columns=FACT_COLUMNS)
    window = None
    if rates is not None:
        windows = rates.window[rates.window > 0]  # no read times: no window (NaN), never a RuntimeWarning
        window = float(np.median(windows)) if len(windows) else None
        derived = _derived(_rates_frame(samples, rates, _DERIVED_FROM, codes), meta,
                           float(pd.Series(rates.window[np.isin(rates.flag, _USABLE_FLAGS)]).median()))
    efficiency = _efficiency(latest_of("bw_avg_gbps"), latest_of("link_rate_gbps"))
    lldp = latest_of("lldp_neighbor")
    if not len(last):  # no outputs (a capture alone): no facts of its own
        facts = _Facts.empty()
    else:
        # The sample row of each latest value, rate and reset; room for the other parts and for the triage's few
        # facts per host (added once the rest is whole).
        rows = last if rates is None else np.concatenate([last, rates.rows, rates.rows[resets]])
        facts = _Facts(samples, rows, len(rows) + len(derived) + len(efficiency) + 16 * len(meta) + 1024, codes)
        facts.latest(samples, last, metric_codes == code_of.get("tool_error", -2), codes)
        if rates is not None:
            facts.rates(samples, rates, resets, codes)
    if not derived.empty:
        facts.extend(derived)
    if not efficiency.empty:  # an empty frame's object columns would turn every column of the facts into objects
        facts.extend(efficiency)
    # Compute or communication (rdmatool.triage): NIC utilisation per port, and each GPU host's class with its figures.
    triage = triage_facts(samples, facts.frame(), codes, facts.codes())
    if not triage.empty:
        facts.extend(triage.reindex(columns=FACT_COLUMNS), integers=True)
    # Every target of the samples has its latest values among the facts; the other parts may add a few (`fabric`).
    named = set(meta["target"]).union(*(set(p["target"]) for p in (derived, efficiency, triage) if "target" in p))
    analysis = Analysis(facts=facts.frame(), table=table, window_s=window, links=_links(lldp, named))
    # The facts' metric and target codes, known as they were built: the query need not factorize 8,000,000 strings.
    analysis.query = FactQuery(analysis.facts, facts.codes())
    return analysis


def _rates_frame(samples: pd.DataFrame, rates: frames.RateArrays, metrics: tuple[str, ...],
                 codes: dict) -> pd.DataFrame:
    """The rows of `frames.rates_with_rows` of these metrics, in their order (`codes`: the samples' metric codes)."""
    row_codes, uniques = codes["metric"]
    at = np.flatnonzero(column_codes.rows_of((row_codes[rates.rows], uniques), metrics))
    out = column_codes.as_texts(samples[frames.KEY].take(rates.rows[at])).reset_index(drop=True)
    for name in ("window", "delta", "rate", "flag", "previous", "current"):
        out["window_s" if name == "window" else name] = getattr(rates, name)[at]
    return out


# The type pandas gives a column of text assigned from one string (the facts' `flag`): object, or its string type.
_FLAG_DTYPE = pd.DataFrame(index=[0]).assign(flag="")["flag"].dtype
_OBJECT_COLUMNS = ("target", "kind", "platform", "role", "entity", "metric", "text", "raw_key")
_FLOAT_COLUMNS = ("value", "window_s", "delta")
_INT_COLUMNS = ("priority", "size_bytes")


def _nullable(column: pd.Series) -> pd.api.extensions.ExtensionArray:
    """A column as nullable integers (what the facts' priority and size_bytes are)."""
    return column.array if str(column.dtype) == "Int64" else column.astype("Int64").array


class _Facts:
    """The facts as they are built: the latest values and the counter rates (nearly every fact) taken from the sample
    rows straight into arrays with room for the few facts derived after them, each part written once — at 10,000
    hosts, 8,000,000 facts whose text columns cost seconds per copy. `frame()` is the facts so far, sharing these
    arrays. A part whose column types would make pandas type a column differently than it types the facts' (what
    `pd.concat` of the parts would give) is concatenated as a frame instead, and so is all that follows it."""

    def __init__(self, samples: pd.DataFrame, rows: np.ndarray, capacity: int, codes: dict) -> None:
        """`rows`: the sample row of each of the first facts, whose target, entity and the rest it takes (the facts
        after them take the first sample row's until they are written); `codes`: the samples' metric and target
        codes (the facts' own are kept alongside, `codes()`)."""
        at = np.zeros(capacity, dtype=np.intp)
        at[:len(rows)] = rows
        self.books = {c: _CodeBook(codes[c][1]) for c in _CODED}
        self.code_arrays = {c: codes[c][0].take(at).astype(np.int64, copy=False) for c in _CODED}
        self._frozen_codes: dict[str, list[np.ndarray]] | None = None
        # One take per column: the column allocated and written in one pass (an empty object array is first
        # filled with None, a pass of its own over 64 MB at 10,000 hosts).
        self.objects = {c: column_codes.texts_at(samples[c], at) for c in _OBJECT_COLUMNS}
        self.objects["flag"] = np.full(capacity, "", dtype=object)
        self.floats = {"value": samples["value"].to_numpy().take(at),
                       **{c: np.full(capacity, np.nan) for c in _FLOAT_COLUMNS if c != "value"}}
        self.ints = {c: _nullable(samples[c]).take(at) for c in _INT_COLUMNS}
        self.n = 0
        self._frame: pd.DataFrame | None = None

    @classmethod
    def empty(cls) -> _Facts:
        facts = cls.__new__(cls)
        facts.n, facts._frame = 0, pd.DataFrame(columns=FACT_COLUMNS).astype({c: "Int64" for c in _INT_COLUMNS})
        facts.books = {c: _CodeBook(np.array([], dtype=object)) for c in _CODED}
        facts._frozen_codes = {c: [np.zeros(0, dtype=np.int64)] for c in _CODED}
        return facts

    def latest(self, samples: pd.DataFrame, rows: np.ndarray, errors: np.ndarray, codes: dict) -> None:
        """The latest value of each series (`rows`, the first rows given): as the samples say, with no window, no
        delta, no flag; `errors`: which of them are tool errors."""
        if errors.any():
            # A tool that complained twice ("Couldn't connect ...", then "Unable to open ...") keeps both messages,
            # first first: the first is usually the cause, the rest its consequences.
            errors_at = np.flatnonzero(column_codes.rows_of(codes["metric"], ["tool_error"]))
            every = column_codes.as_texts(samples.take(errors_at))
            joined = every.groupby(frames.KEY, dropna=False, sort=False)["text"].transform(
                lambda texts: " | ".join(dict.fromkeys(t for t in texts if isinstance(t, str))))
            last_text = joined[~every.duplicated(frames.KEY, keep="last")]
            self.objects["text"][self.n + np.flatnonzero(errors)] = last_text.to_numpy()
        self.n += len(rows)

    def rates(self, samples: pd.DataFrame, rates: frames.RateArrays, resets: np.ndarray, sample_codes: dict) -> None:
        """One `<metric>_per_s` fact per rate, then a `counter_reset` fact per rate flagged `reset` (the next rows
        given): the counter's target, entity and the rest as its first reading says."""
        metric_codes, uniques = sample_codes["metric"]
        codes, present = pd.factorize(metric_codes[rates.rows])  # integers: the few counters named once each
        names = uniques[present]
        rate_names = np.array([rate_name(m) for m in names], dtype=object)
        book = self.books["metric"]
        rate_codes = np.array([book.code(n) for n in rate_names], dtype=np.int64)
        for picked in (slice(None), resets):
            at = slice(self.n, self.n + len(rates.rows[picked]))
            if isinstance(picked, slice):
                self.code_arrays["metric"][at] = rate_codes[codes]
                self.objects["metric"][at] = rate_names[codes]
                self.objects["text"][at] = None
                self.floats["value"][at] = rates.rate
            else:  # the reset counter's name in the text: what `_per_s` was added to
                self.code_arrays["metric"][at] = book.code("counter_reset")
                self.objects["metric"][at] = "counter_reset"
                self.objects["text"][at] = np.array([n.removesuffix("_per_s") for n in rate_names],
                                                    dtype=object)[codes[picked]]
                self.floats["value"][at] = np.nan
            self.floats["window_s"][at] = rates.window[picked]
            self.floats["delta"][at] = rates.delta[picked]
            self.objects["flag"][at] = rates.flag[picked]
            self.n = at.stop

    def extend(self, part: pd.DataFrame, integers: bool = False) -> None:
        """Append a frame of FACT_COLUMNS; `integers`: its integer columns are made nullable integers (as the facts'
        are) whatever they were."""
        part_codes = {c: self.books[c].codes_of(part[c].to_numpy(dtype=object)) for c in _CODED}
        if self._frame is None and self._fits(part, integers):
            if integers:
                part = part.astype({c: "Int64" for c in _INT_COLUMNS})
            at = slice(self.n, self.n + len(part))
            for c in _CODED:
                self.code_arrays[c][at] = part_codes[c]
            for c in _OBJECT_COLUMNS:
                self.objects[c][at] = part[c].to_numpy(dtype=object)
            for c in _FLOAT_COLUMNS:
                self.floats[c][at] = part[c].to_numpy(dtype=np.float64)
            for c in _INT_COLUMNS:
                self.ints[c][at] = part[c].array
            self.objects["flag"][at] = part["flag"].to_numpy(dtype=object)
            self.n = at.stop
            return
        if self._frozen_codes is None:  # from here on the facts are a frame: their codes are parts too
            self._frozen_codes = {c: [self.code_arrays[c][:self.n]] for c in _CODED}
        for c in _CODED:
            self._frozen_codes[c].append(part_codes[c])
        frame = _stacked([self.frame(), part])
        self._frame = frame.astype({c: "Int64" for c in _INT_COLUMNS}) if integers else frame

    def codes(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The facts' metric and target codes so far, as FactQuery takes them: column → (a code per fact, -1 for
        none; the distinct values)."""
        if self._frozen_codes is not None:
            arrays = {c: np.concatenate(parts) for c, parts in self._frozen_codes.items()}
        else:
            arrays = {c: self.code_arrays[c][:self.n] for c in _CODED}
        return {c: (arrays[c], self.books[c].values()) for c in _CODED}

    def _fits(self, part: pd.DataFrame, integers: bool) -> bool:
        """Whether `part` goes into the arrays with every column keeping the type pandas would give the facts."""
        if self.n + len(part) > len(self.objects["flag"]) or list(part.columns) != FACT_COLUMNS:
            return False
        if any(not isinstance(part[c].dtype, np.dtype) or part[c].dtype.kind not in "fiu" for c in _FLOAT_COLUMNS):
            return False  # a float column with objects or nullable floats would change the facts' column
        if not integers and any(str(part[c].dtype) != "Int64" for c in _INT_COLUMNS):
            return False
        return part["flag"].dtype == _FLAG_DTYPE

    def frame(self) -> pd.DataFrame:
        if self._frame is not None:
            return self._frame
        n = self.n
        columns = {c: self.objects[c][:n] for c in _OBJECT_COLUMNS}
        columns.update({c: self.floats[c][:n] for c in _FLOAT_COLUMNS})
        columns.update({c: self.ints[c][:n] for c in _INT_COLUMNS})
        flag = self.objects["flag"][:n]
        columns["flag"] = pd.arrays.StringArray(flag, dtype=_FLAG_DTYPE) if isinstance(_FLAG_DTYPE, pd.StringDtype) \
            else flag
        return pd.DataFrame({c: pd.Series(columns[c], dtype=object, copy=False) if c in _OBJECT_COLUMNS
                             else columns[c] for c in FACT_COLUMNS}, columns=FACT_COLUMNS, copy=False)


class _CodeBook:
    """One column's distinct values as the facts are built: the samples' own (their string pool) first, then each
    name the analysis adds (`<metric>_per_s`, the derived metrics, `fabric`), each given the next code."""

    def __init__(self, uniques: np.ndarray) -> None:
        self._values = list(uniques.tolist())
        self._index = {value: code for code, value in enumerate(self._values)}

    def code(self, value) -> int:
        found = self._index.get(value)
        if found is None:
            found = self._index[value] = len(self._values)
            self._values.append(value)
        return found

    def codes_of(self, values: np.ndarray) -> np.ndarray:
        """The codes of a column of values (-1 for a missing one), new values added."""
        row_codes, uniques = column_codes.factorized(values)
        table = np.array([self.code(v) for v in uniques.tolist()] + [-1], dtype=np.int64)
        return table[row_codes]  # code -1 (missing) reads the trailing -1

    def values(self) -> np.ndarray:
        return np.array(self._values + [None], dtype=object)[:-1]  # an object array even of tuples or lists


def _stacked(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """`pd.concat(parts, ignore_index=True)` of frames with the same columns, made column by column: the frame concat
    copies parts whose columns lie in differently shaped blocks through a slow path (2 s instead of 0.3 s for the
    8,000,000 facts of 10,000 hosts). Each column gets the type pd.concat gives it (it is pd.concat, per column)."""
    columns = parts[0].columns
    if any(not p.columns.equals(columns) for p in parts[1:]):
        return pd.concat(parts, ignore_index=True)
    return pd.DataFrame({c: pd.concat([p[c] for p in parts], ignore_index=True) for c in columns}, columns=columns,
                        copy=False)


def _derived(rates: pd.DataFrame, meta: pd.DataFrame, fleet_window: float) -> pd.DataFrame:
    """Paused fraction per port/priority, ECN mark ratio, and the fleet's CNP handled/sent ratio. `rates`: those of
    rates_with_rows that these are made of (at least); `fleet_window`: the median window of every usable rate."""
    usable = rates[rates["flag"].isin(["", "wrap32", "wrap64"])]
    # one pass names the metrics; each selection below is then a take of its own rows
    by_metric = pd.Series(np.arange(len(usable))).groupby(usable["metric"].to_numpy(), sort=False).indices

    def metric(*names: str) -> pd.DataFrame:
        rows = [by_metric[n] for n in names if n in by_metric]
        return usable.iloc[np.sort(np.concatenate(rows))] if rows else usable.iloc[:0]

    out = []
    for src, dst in (("rx_pause_duration_us", "rx_pause_fraction"), ("tx_pause_duration_us", "tx_pause_fraction")):
        part = metric(src)
        if not part.empty:
            out.append(part.assign(metric=dst, value=(part["delta"] / (part["window_s"] * 1e6)).clip(upper=1.0)))
    marks = metric("ecn_marked_packets")
    if not marks.empty:
        keys = ["target", "entity", "priority"]
        packets = metric("tx_packets", "rx_packets").sort_values("metric", ascending=False)
        packets = packets.drop_duplicates(keys)[[*keys, "delta"]].rename(columns={"delta": "packets"})
        joined = marks.merge(packets, on=keys, how="inner")
        joined = joined[joined["packets"] > 0]
        if not joined.empty:
            out.append(joined.assign(metric="ecn_mark_ratio", value=joined["delta"] / joined["packets"]))
    sent = metric("cnp_sent")["delta"].sum()
    handled = metric("cnp_handled")["delta"].sum()
    frames_out = [p.drop(columns=["rate", "previous", "current"], errors="ignore") for p in out]
    result = pd.concat(frames_out, ignore_index=True) if frames_out else pd.DataFrame(columns=FACT_COLUMNS)
    if not result.empty:
        result = result.merge(meta, on="target", how="left").assign(text=None, flag="")
    if sent > 0:
        fleet = pd.DataFrame([{
            "target": "fabric", "kind": "fabric", "platform": None, "role": None, "entity": "fabric",
            "metric": "cnp_handled_ratio", "priority": pd.NA, "size_bytes": pd.NA, "value": handled / sent,
            "text": None, "raw_key": "cnp_handled/cnp_sent", "window_s": fleet_window,
            "delta": np.nan, "flag": "",
        }])
        result = pd.concat([result, fleet], ignore_index=True) if not result.empty else fleet
    if result.empty:
        return pd.DataFrame(columns=FACT_COLUMNS)
    # The facts' integer columns stay nullable integers: an object column here would make the concat of 700,000
    # facts re-coerce them row by row.
    return result.reindex(columns=FACT_COLUMNS).astype({"priority": "Int64", "size_bytes": "Int64"})


def _efficiency(bw: pd.DataFrame, link_rates: pd.DataFrame) -> pd.DataFrame:
    """Measured perftest bandwidth (bw_avg_gbps facts) over the line rate of the host's fastest active port (the one
    it ran on, from link_rate_gbps facts)."""
    # Only large messages can reach line rate (docs/tuning.md §6.2): a -a sweep's 2-byte row is no bandwidth problem.
    bw = bw[~(bw["size_bytes"].fillna(1 << 20) < 65536)]
    # A result against one peer (entity `<test>@<peer>`) is the pair's, not this host's: the pair attribution judges
    # those (rdmatool.pairs.bundle_results), else a slow node's healthy partners would look slow too.
    bw = bw[~bw["entity"].map(lambda e: isinstance(e, str) and PEER_MARK in e).to_numpy(dtype=bool)]
    if bw.empty:
        return pd.DataFrame(columns=FACT_COLUMNS)
    rates = link_rates.groupby("target")["value"].max()
    joined = bw.assign(line=bw["target"].map(rates))
    joined = joined[joined["line"] > 0]
    return joined.assign(metric="bw_efficiency", value=joined["value"] / joined["line"],
                         raw_key="bw_avg_gbps/link_rate_gbps")[FACT_COLUMNS]


def _links(lldp: pd.DataFrame, names: set) -> pd.DataFrame:
    """Cabling from LLDP (lldp_neighbor facts) as seen by either end: host, host_port, switch, switch_port. `names`:
    every target of the facts."""
    rows = []
    for target, kind, entity, text in zip(lldp["target"], lldp["kind"], lldp["entity"], lldp["text"]):
        if not isinstance(text, str) or "|" not in text:
            continue
        remote, _, remote_port = text.partition("|")
        remote = remote.split(".")[0] if remote not in names else remote
        if kind == "switch":
            rows.append((remote, remote_port, target, entity))
        else:
            rows.append((target, entity, remote, remote_port))
    links = pd.DataFrame(rows, columns=["host", "host_port", "switch", "switch_port"])
    return links.drop_duplicates().reset_index(drop=True)
