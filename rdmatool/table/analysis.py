"""The facts table the rules read: latest values, counter rates and the derived ratios, one tidy frame.

facts columns: target, kind, platform, role, entity, metric, priority, size_bytes, value, text, raw_key, window_s,
delta, flag. A counter appears twice: as its cumulative value (`metric`) and, with two snapshots, as
`<metric>_per_s` (value = rate; `delta` and `window_s` carry the raw change and the window it was seen over).
The rules and the suggesters read the facts through the analysis' one FactQuery (rdmatool.table.facts). The analysis holds
them as FactColumns (rdmatool.table.fact_columns): `Analysis.facts` is their frame, made on first read.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, is_dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from rdmatool.bundle import Bundle
from rdmatool.metrics import rate_name
from rdmatool.platforms.port_names import PortNames, system_name
from rdmatool.table import column_codes, fact_columns
from rdmatool.table import frame as frames
from rdmatool.table.facts import FactQuery
from rdmatool.table.held_frame import HeldFrame
from rdmatool.table.sample_columns import PEER_MARK
from rdmatool.table.triage import triage_facts

FACT_COLUMNS = fact_columns.FACT_COLUMNS


@dataclass
class Analysis:
    # The facts as a frame, whatever holds them: an analysis may be given FactColumns (what `analyse` gives it),
    # whose frame is made the first time someone reads `facts`; the rules, the triage and the suggesters ask through
    # the analysis' query instead, which reads the columns (rdmatool.table.facts).
    facts: pd.DataFrame = HeldFrame()  # type: ignore[assignment]
    table: frames.SampleTable
    window_s: float | None
    links: pd.DataFrame = field(default_factory=pd.DataFrame)  # host netdev ↔ switch port, from LLDP
    query: FactQuery = field(init=False, repr=False, compare=False)  # the look-ups over `facts`, for one diagnosis

    def __post_init__(self) -> None:
        self.query = FactQuery(self.fact_source)

    @property
    def fact_source(self) -> fact_columns.FactColumns | pd.DataFrame:
        """What holds the facts: FactColumns, or the frame itself. Read the facts through `query`, or `facts`."""
        return Analysis.__dict__["facts"].held(self)

    @property
    def targets(self) -> list[dict]:
        return self.table.targets


def grown_by(analysis, found: pd.DataFrame):
    """The analysis with `found` (a frame of FACT_COLUMNS) added after its facts: a new analysis, the one given is not
    changed; the same analysis when nothing was found. The facts are what `pd.concat([facts, found],
    ignore_index=True)` gives; FactColumns grow without being made into a frame."""
    if found.empty:
        return analysis
    source = getattr(analysis, "fact_source", None)
    if isinstance(analysis, Analysis) and isinstance(source, fact_columns.FactColumns):
        return replace(analysis, facts=source.grown(found))
    facts = pd.concat([analysis.facts, found], ignore_index=True)
    if is_dataclass(analysis):
        return replace(analysis, facts=facts)
    grown = copy.copy(analysis)  # an analysis-like object (tests, replays): the same, with the facts grown
    grown.facts, grown.query = facts, FactQuery(facts)
    return grown


def analyse_bundle(bundle: Bundle) -> Analysis:
    return analyse(frames.from_bundle(bundle))


def analyse_path(path: str | Path) -> Analysis:
    """A bundle directory's analysis, from its stored parsed samples where current (see rdmatool.table.samples_store).
    Its packet captures are added above this layer (rdmatool.capture.facts.analyse_with_captures)."""
    return analyse(frames.load(path))


def _in_snapshot_order(table: frames.SampleTable) -> tuple[pd.DataFrame, np.ndarray, dict]:
    """The sample rows, their series ids and the codes of their categorical text columns (the metric and the
    target factorized when they are not), snapshot by snapshot (a bundle's rows come that way already)."""
    samples = table.frame
    series = table.series if table.series is not None else frames.series_ids(samples)
    codes = {c: column_codes.of_categorical(samples[c]) for c in samples.columns
             if isinstance(samples[c].dtype, pd.CategoricalDtype)}
    for c in _CODED:
        if c in samples.columns and c not in codes:
            codes[c] = column_codes.factorized(samples[c].to_numpy())
    snapshot = samples["snapshot"].to_numpy() if "snapshot" in samples.columns else np.zeros(0)
    if len(snapshot) > 1 and not (snapshot[1:] >= snapshot[:-1]).all():
        order = np.argsort(snapshot, kind="stable")  # (rows out of snapshot order: a table built by hand)
        samples, series = samples.iloc[order].reset_index(drop=True), series[order]
        codes = {c: (row_codes[order], uniques) for c, (row_codes, uniques) in codes.items()}
    return samples, series, codes


_CODED = ("metric", "target")  # the columns the facts' query is handed as codes (FactQuery: no factorize of its own)


def _latest(samples: pd.DataFrame, series: np.ndarray) -> pd.DataFrame:
    """The last reading of each series: one row per series, never one for two (see sample_columns.series_of)."""
    last = frames.last_of_each(series)
    return column_codes.as_texts(samples[FACT_COLUMNS[:11]].take(last), frames.OBJECTS)


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
    # each series' latest reading
    last = frames.last_of_each(series)
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

    rates = frames.rate_arrays(samples, series)
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
        facts: fact_columns.FactColumns | pd.DataFrame = _Facts.empty()
    else:
        # The sample row of each latest value, rate and reset; room for the other parts and for the triage's few
        # facts per host (added once the rest is whole).
        rows = last if rates is None else np.concatenate([last, rates.rows, rates.rows[resets]])
        building = _Facts(samples, rows, len(rows) + len(derived) + len(efficiency) + 16 * len(meta) + 1024, codes)
        building.latest(samples, last, metric_codes == code_of.get("tool_error", -2), codes)
        if rates is not None:
            building.rates(samples, rates, resets, codes)
        facts = building.columns()
    if not derived.empty:
        facts = _extended(facts, derived)
    if not efficiency.empty:  # an empty frame's object columns would turn every column of the facts into objects
        facts = _extended(facts, efficiency)
    # Compute or communication (rdmatool.table.triage): NIC utilisation per port, and each GPU host's class with its figures.
    triage = triage_facts(samples, facts, codes, _fact_codes(facts))
    if not triage.empty:
        facts = _extended(facts, triage.reindex(columns=FACT_COLUMNS), integers=True)
    # Every target of the samples has its latest values among the facts; the other parts may add a few (`fabric`).
    named = set(meta["target"]).union(*(set(p["target"]) for p in (derived, efficiency, triage) if "target" in p))
    return Analysis(facts=facts, table=table, window_s=window, links=_links(lldp, named, latest_of("port_alias")))


def _fact_codes(facts: fact_columns.FactColumns | pd.DataFrame) -> dict | None:
    """The facts' metric and target codes when they are known without a pass over the strings (FactColumns)."""
    if isinstance(facts, fact_columns.FactColumns):
        return {c: facts.codes(c) for c in _CODED}
    return None


def _rates_frame(samples: pd.DataFrame, rates: frames.RateArrays, metrics: tuple[str, ...],
                 codes: dict) -> pd.DataFrame:
    """The rows of `frames.rates_with_rows` of these metrics, in their order (`codes`: the samples' metric codes)."""
    row_codes, uniques = codes["metric"]
    at = np.flatnonzero(column_codes.rows_of((row_codes[rates.rows], uniques), metrics))
    out = column_codes.as_texts(samples[frames.KEY].take(rates.rows[at])).reset_index(drop=True)
    for name in ("window", "delta", "rate", "flag", "previous", "current"):
        out["window_s" if name == "window" else name] = getattr(rates, name)[at]
    return out


_FLOAT_COLUMNS = fact_columns.FLOAT_COLUMNS
_INT_COLUMNS = fact_columns.INT_COLUMNS


def _nullable(column: pd.Series) -> pd.api.extensions.ExtensionArray:
    """A column as nullable integers (what the facts' priority and size_bytes are)."""
    return column.array if str(column.dtype) == "Int64" else column.astype("Int64").array


def _codes_at(samples: pd.DataFrame, codes: dict, column: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A sample column's codes at these rows and its distinct values (code -1: None): the table's own codes
    (SampleTable.codes), a categorical column's, else the values at those rows factorized."""
    known = column_codes.fitting(codes, column, len(samples))
    if known is not None:
        return known[0].take(rows), known[1]
    values = samples[column]
    if isinstance(values.dtype, pd.CategoricalDtype):
        return values.cat.codes.to_numpy().take(rows), np.asarray(values.cat.categories, dtype=object)
    texts = values.to_numpy(dtype=object).take(rows)
    found, uniques = pd.factorize(texts)
    uniques = list(np.asarray(uniques, dtype=object))
    missing = np.flatnonzero(found < 0)
    if len(missing):
        # A missing value other than None (NaN, pd.NA) gets a code of its own, one per kind, so that the facts
        # read it back as the kind of missing the samples hold.
        kinds: dict[type, int] = {}
        for i in missing.tolist():
            if texts[i] is not None:
                found[i] = kinds.setdefault(type(texts[i]), len(uniques) + len(kinds))
        uniques += [next(texts[i] for i in missing.tolist() if type(texts[i]) is kind) for kind in kinds]
    return found, np.array([*uniques, None], dtype=object)[:-1]


_THROUGH = ("entity", "raw_key", "platform")


class _Facts:
    """The facts as they are built: the latest values, the counter rates and the counter resets (nearly every fact)
    as the sample rows they come from — their text columns as the sample table's codes at those rows, their numbers
    in arrays with room for the few facts derived after them — then `columns()`, the FactColumns they are."""

    def __init__(self, samples: pd.DataFrame, rows: np.ndarray, capacity: int, codes: dict) -> None:
        """`rows`: the sample row of each base fact (the latest values, the rates, the resets), whose target, entity
        and the rest it takes; `codes`: the sample table's codes (SampleTable.codes)."""
        self.n_base = len(rows)
        self.rows = rows
        at = np.zeros(capacity, dtype=np.intp)
        at[:len(rows)] = rows
        self.codes = {}
        self.books = {}
        # Columns the facts take from the samples as they are and a diagnosis never reads whole: left in the table,
        # read through the rows (FactColumns), where the table's codes are there to read.
        self.through = {}
        for c in _THROUGH:
            known = column_codes.fitting(codes, c, len(samples))
            if known is not None:
                self.through[c] = known
        for c in fact_columns.TEXT_COLUMNS:
            if c in self.through:
                continue
            row_codes, values = _codes_at(samples, codes, c, rows)
            if c in ("metric", "text"):  # rates, resets and tool errors write codes of their own
                row_codes = row_codes.astype(np.int32 if len(values) < 2**30 else np.int64, copy=False)
                self.books[c] = _CodeBook(values)
            self.codes[c] = (row_codes, values)
        self.codes["flag"] = (np.zeros(len(rows), dtype=np.int16), np.array([""], dtype=object))
        self.books["flag"] = _CodeBook(self.codes["flag"][1])
        self.floats = {"value": samples["value"].to_numpy().take(at),
                       **{c: np.full(capacity, np.nan) for c in _FLOAT_COLUMNS if c != "value"}}
        self.ints = {c: _nullable(samples[c]) for c in _INT_COLUMNS}  # read through `rows` (FactColumns)
        self.capacity = capacity
        self.n = 0

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
            book = self.books["text"]
            self.codes["text"][0][self.n + np.flatnonzero(errors)] = [book.code(t) for t in last_text.tolist()]
        self.n += len(rows)

    def rates(self, samples: pd.DataFrame, rates: frames.RateArrays, resets: np.ndarray, sample_codes: dict) -> None:
        """One `<metric>_per_s` fact per rate, then a `counter_reset` fact per rate flagged `reset` (the next rows
        given): the counter's target, entity and the rest as its first reading says."""
        metric_codes, uniques = sample_codes["metric"]
        codes, present = pd.factorize(metric_codes[rates.rows])  # integers: the few counters named once each
        names = uniques[present]
        rate_names = [rate_name(m) for m in names]
        rate_codes = np.array([self.books["metric"].code(n) for n in rate_names], dtype=np.int64)
        reset_codes = np.array([self.books["text"].code(n) for n in names], dtype=np.int64)
        flag_codes, flags = pd.factorize(np.asarray(rates.flag, dtype=object))
        flag_table = np.array([self.books["flag"].code(f) for f in flags.tolist()], dtype=np.int64)
        metric, text, flag = self.codes["metric"][0], self.codes["text"][0], self.codes["flag"][0]
        for picked in (slice(None), resets):
            at = slice(self.n, self.n + len(rates.rows[picked]))
            if isinstance(picked, slice):
                metric[at] = rate_codes[codes]
                text[at] = -1  # None
                self.floats["value"][at] = rates.rate
            else:  # the reset counter's name in the text: what `_per_s` was added to
                metric[at] = self.books["metric"].code("counter_reset")
                text[at] = reset_codes[codes[picked]]
                self.floats["value"][at] = np.nan
            self.floats["window_s"][at] = rates.window[picked]
            self.floats["delta"][at] = rates.delta[picked]
            flag[at] = flag_table[flag_codes[picked]]
            self.n = at.stop

    def columns(self) -> fact_columns.FactColumns:
        """The facts built so far (the base rows), as FactColumns."""
        base = {c: (row_codes, self.books[c].values() if c in self.books else values)
                for c, (row_codes, values) in self.codes.items()}
        return fact_columns.FactColumns(self.n, base, self.floats, self.capacity, self.rows[:self.n], self.through,
                                        self.ints)

    @staticmethod
    def empty() -> pd.DataFrame:
        return pd.DataFrame(columns=FACT_COLUMNS).astype({c: "Int64" for c in _INT_COLUMNS})


def _extended(facts: fact_columns.FactColumns | pd.DataFrame, part: pd.DataFrame,
              integers: bool = False) -> fact_columns.FactColumns | pd.DataFrame:
    """The facts and then `part`'s (`integers`: its integer columns made nullable integers, as the facts' are,
    whatever they were), typed as `pd.concat` of the two types them."""
    if isinstance(facts, fact_columns.FactColumns):
        return facts.grown(part, integers)
    frame = fact_columns.stacked([facts, part])
    return frame.astype({c: "Int64" for c in _INT_COLUMNS}) if integers else frame


class _CodeBook:
    """One column's distinct values as the facts are built: the samples' own (their string pool) first, then each
    name the analysis adds (`<metric>_per_s`, `counter_reset`, a tool's joined complaints), each given the next
    code."""

    def __init__(self, uniques: np.ndarray) -> None:
        self._values = list(uniques.tolist())
        self._index = {value: code for code, value in enumerate(self._values)}

    def code(self, value) -> int:
        found = self._index.get(value)
        if found is None:
            found = self._index[value] = len(self._values)
            self._values.append(value)
        return found

    def values(self) -> np.ndarray:
        return np.array(self._values + [None], dtype=object)[:-1]  # an object array even of tuples or lists


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


def _links(lldp: pd.DataFrame, names: set, aliases: pd.DataFrame) -> pd.DataFrame:
    """Cabling from LLDP (lldp_neighbor facts) as seen by either end: host, host_port, switch, switch_port. `names`:
    every target of the facts. A switch port is named as the switch names it: a host's LLDP may show a SONiC port by
    its alias (`etp8`, the port ID SONiC sends), which `aliases` (port_alias facts) turn into `Ethernet28`."""
    own = PortNames.build((), zip(aliases["target"], aliases["entity"], aliases["text"]))
    rows = []
    for target, kind, entity, text in zip(lldp["target"], lldp["kind"], lldp["entity"], lldp["text"]):
        if not isinstance(text, str) or "|" not in text:
            continue
        remote, _, remote_port = text.partition("|")
        remote = system_name(remote, names)
        if kind == "switch":
            rows.append((remote, remote_port, target, entity))
        else:
            rows.append((target, entity, remote, own.name(remote, remote_port)))
    links = pd.DataFrame(rows, columns=["host", "host_port", "switch", "switch_port"])
    return links.drop_duplicates().reset_index(drop=True)
