"""The facts table the rules read (FACT_COLUMNS): latest values, counter rates and the derived ratios, one frame.

A counter appears twice: as its cumulative value (`metric`) and, with two snapshots, as `<metric>_per_s` (value =
rate; `delta` and `window_s` carry the raw change and the window it was seen over). Nearly every fact is a sample
row (8,000,000 at 10,000 hosts), so the text columns are categoricals as the sample table's are: its codes at that
row over its string pool, the names the analysis adds (`<metric>_per_s`, `counter_reset`, joined tool errors)
appended. The rules and the suggesters read the facts through the analysis' FactQuery (rdmatool.table.facts).
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
from rdmatool.table import column_codes
from rdmatool.table import frame as frames
from rdmatool.table.facts import FACT_COLUMNS, INT_COLUMNS, TEXT_COLUMNS, FactQuery
from rdmatool.table.sample_columns import PEER_MARK
from rdmatool.table.triage import triage_facts


@dataclass
class Analysis:
    facts: pd.DataFrame  # FACT_COLUMNS; read them through `query`
    table: frames.SampleTable
    window_s: float | None
    links: pd.DataFrame = field(default_factory=pd.DataFrame)  # host netdev ↔ switch port, from LLDP
    query: FactQuery = field(init=False, repr=False, compare=False)  # the look-ups over `facts`, for one diagnosis

    def __post_init__(self) -> None:
        self.query = FactQuery(self.facts)

    @property
    def targets(self) -> list[dict]:
        return self.table.targets


def stacked(facts: pd.DataFrame, *parts: pd.DataFrame) -> pd.DataFrame:
    """`pd.concat([facts, *parts], ignore_index=True)` column by column, except that a categorical column of the
    facts stays one: the parts' values are coded among its categories, a new value appended to them."""
    parts = tuple(p for p in parts if len(p))
    if not parts:
        return facts
    if any(not p.columns.equals(facts.columns) for p in parts):
        return pd.concat([facts, *parts], ignore_index=True)
    return _joined({c: facts[c] for c in facts.columns}, parts)


def _joined(columns: dict, parts) -> pd.DataFrame:
    """`stacked` of the facts' columns (name → Series or array) and parts with the same columns. `columns` is emptied
    as they are joined: what only it held is freed one column at a time, not once all are copied."""
    out = {}
    for c in list(columns):
        column = pd.Series(columns.pop(c), copy=False)
        if isinstance(column.dtype, pd.CategoricalDtype):
            out[c] = _appended(column.array, np.concatenate([p[c].to_numpy(dtype=object) for p in parts]))
        else:
            out[c] = pd.concat([column, *(p[c] for p in parts)], ignore_index=True)
        del column
    return pd.DataFrame(out, copy=False)


def _appended(coded: pd.Categorical, values: np.ndarray) -> pd.Categorical:
    """A categorical with `values` (objects, None or NaN where missing) after its own rows."""
    categories = coded.categories
    present = values[~pd.isna(values)]
    new = pd.Index(pd.unique(present), dtype=object).difference(categories, sort=False) if len(present) else []
    dtype = pd.CategoricalDtype(categories.append(pd.Index(new, dtype=object))) if len(new) else coded.dtype
    codes = coded.codes if len(dtype.categories) < np.iinfo(coded.codes.dtype).max else coded.codes.astype(np.int32)
    added = dtype.categories.get_indexer(values).astype(codes.dtype)
    return pd.Categorical.from_codes(np.concatenate([codes, added]), dtype=dtype, validate=False)


def with_facts(analysis, facts: pd.DataFrame):
    """A copy of the analysis (or of an analysis-like object: tests, replays) holding these facts and their query."""
    if is_dataclass(analysis):
        return replace(analysis, facts=facts)
    other = copy.copy(analysis)
    other.facts, other.query = facts, FactQuery(facts)
    return other


def grown_by(analysis, found: pd.DataFrame):
    """The analysis with `found` (FACT_COLUMNS) added after its facts: a new one; the same when nothing was found."""
    return analysis if found.empty else with_facts(analysis, stacked(analysis.facts, found))


def analyse_bundle(bundle: Bundle) -> Analysis:
    return analyse(frames.from_bundle(bundle))


def analyse_path(path: str | Path) -> Analysis:
    """A bundle directory's analysis (its packet captures: rdmatool.capture.facts.analyse_with_captures)."""
    return analyse(frames.load(path))


def _in_snapshot_order(table: frames.SampleTable) -> tuple[pd.DataFrame, np.ndarray, dict]:
    """The sample rows, their series ids and the codes of their categorical text columns (the metric and the
    target factorized when they are not), snapshot by snapshot (a bundle's rows come that way already)."""
    samples = table.frame
    series = table.series if table.series is not None else frames.series_ids(samples)
    codes = {c: column_codes.of_categorical(samples[c]) for c in samples.columns
             if isinstance(samples[c].dtype, pd.CategoricalDtype)}
    for c in ("metric", "target"):  # the columns the analysis selects by codes
        if c in samples.columns and c not in codes:
            codes[c] = column_codes.factorized(samples[c].to_numpy())
    snapshot = samples["snapshot"].to_numpy() if "snapshot" in samples.columns else np.zeros(0)
    if len(snapshot) > 1 and not (snapshot[1:] >= snapshot[:-1]).all():
        order = np.argsort(snapshot, kind="stable")  # (rows out of snapshot order: a table built by hand)
        samples, series = samples.iloc[order].reset_index(drop=True), series[order]
        codes = {c: (row_codes[order], uniques) for c, (row_codes, uniques) in codes.items()}
    return samples, series, codes


def _latest(samples: pd.DataFrame, series: np.ndarray) -> pd.DataFrame:
    """The last reading of each series: one row per series, never one for two (see sample_columns.series_of)."""
    return column_codes.as_texts(samples[FACT_COLUMNS[:11]].take(frames.last_of_each(series)), frames.OBJECTS)


def latest_values(table: frames.SampleTable) -> pd.DataFrame:
    """The latest value of every series of a sample table (the first eleven fact columns)."""
    return _latest(*_in_snapshot_order(table)[:2])


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
    last = frames.last_of_each(series)  # each series' latest reading
    # Gauges and states (perftest results, link rates, LLDP, tool errors) live only among the latest values:
    # each selection is an integer comparison of the metric's codes.
    sample_metric, metric_names = codes["metric"]
    metric_codes = sample_metric[last]
    code_of = {name: code for code, name in enumerate(metric_names.tolist())}

    def latest_of(metric: str) -> pd.DataFrame:  # (few rows), as the facts hold them
        latest = column_codes.as_texts(samples[FACT_COLUMNS[:11]].take(last[metric_codes == code_of.get(metric, -2)]))
        return latest.assign(window_s=np.nan, delta=np.nan, flag="")

    rates = frames.rate_arrays(samples, series)
    derived = pd.DataFrame(columns=FACT_COLUMNS)
    window = None
    if rates is not None:
        windows = rates.window[rates.window > 0]  # no read times: no window (NaN), never a RuntimeWarning
        window = float(np.median(windows)) if len(windows) else None
        from_rows = column_codes.rows_of((codes["metric"][0][rates.rows], codes["metric"][1]), _DERIVED_FROM)
        derived = _derived(frames.rate_rows(samples, rates, np.flatnonzero(from_rows)), meta,
                           float(pd.Series(rates.window[np.isin(rates.flag, _USABLE_FLAGS)]).median()))
    efficiency = _efficiency(latest_of("bw_avg_gbps"), latest_of("link_rate_gbps"))
    lldp = latest_of("lldp_neighbor")
    columns = _base_facts(samples, last, metric_codes == code_of.get("tool_error", -2), rates, codes)
    # Compute or communication (rdmatool.table.triage): NIC utilisation per port, and each GPU host's class with its
    # figures. It reads rates, link rates and port states only: the base facts hold every one of them.
    triage = triage_facts(samples, pd.DataFrame(columns, copy=False), codes).reindex(columns=FACT_COLUMNS)
    triage = triage.astype({c: "Int64" for c in INT_COLUMNS})
    parts = [p for p in (derived, efficiency, triage) if len(p)]  # (an empty part's types would count)
    facts = _joined(columns, parts) if parts else pd.DataFrame(columns, copy=False)
    # Every target of the samples has its latest values among the facts; the other parts may add a few (`fabric`).
    named = set(meta["target"]).union(*(set(p["target"]) for p in (derived, efficiency, triage) if "target" in p))
    return Analysis(facts=facts, table=table, window_s=window, links=_links(lldp, named, latest_of("port_alias")))


def _base_facts(samples: pd.DataFrame, last: np.ndarray, errors: np.ndarray, rates: frames.RateArrays | None,
                codes: dict) -> dict:
    """The columns (FACT_COLUMNS) of the latest value of each series (`last`; `errors`: which are tool errors),
    then one `<metric>_per_s` fact per rate and a `counter_reset` fact per rate flagged `reset`: each the sample row
    it comes from, its text columns that row's codes (the counter's target and entity as its first reading says)."""
    no_rows = np.zeros(0, dtype=np.intp)
    rate_rows = no_rows if rates is None else rates.rows
    resets = no_rows if rates is None else np.flatnonzero(rates.flag == "reset")
    rows = np.concatenate([last, rate_rows, rate_rows[resets]])
    n_last, n_rates = len(last), len(rate_rows)
    out: dict = {}
    kept = {c: samples[c].dtype for c in TEXT_COLUMNS if isinstance(samples[c].dtype, pd.CategoricalDtype)}
    for c in TEXT_COLUMNS:
        row_codes, categories = codes[c] if c in codes else column_codes.factorized(samples[c].to_numpy())
        out[c] = [row_codes.take(rows), kept[c].categories if c in kept else pd.Index(categories, dtype=object)]
    for c in ("metric", "text"):  # written below, with codes of their own
        out[c][0] = out[c][0].astype(np.int32, copy=False)
    if errors.any():
        # A tool that complained twice ("Couldn't connect ...", then "Unable to open ...") keeps both messages,
        # first first: the first is usually the cause, the rest its consequences.
        every = column_codes.as_texts(samples.take(np.flatnonzero(column_codes.rows_of(codes["metric"],
                                                                                       ["tool_error"]))))
        joined = every.groupby(frames.KEY, dropna=False, sort=False)["text"].transform(
            lambda texts: " | ".join(dict.fromkeys(t for t in texts if isinstance(t, str))))
        last_text = joined[~every.duplicated(frames.KEY, keep="last")].tolist()
        out["text"][0][np.flatnonzero(errors)] = _codes_of(out["text"], last_text)
    value = samples["value"].to_numpy().take(rows)
    window_s, delta = np.full(len(rows), np.nan), np.full(len(rows), np.nan)
    flags, flag_names = np.zeros(len(rows), dtype=np.int32), [pd.Index([""], dtype=object)]
    if rates is not None:
        at, reset_at = slice(n_last, n_last + n_rates), slice(n_last + n_rates, len(rows))
        # each rate's counter (its first reading's metric): integers, the few counters named once each
        counter, present = pd.factorize(out["metric"][0][at])
        names = out["metric"][1].take(present).tolist()
        out["metric"][0][at] = _codes_of(out["metric"], [rate_name(m) for m in names])[counter]
        out["metric"][0][reset_at] = _codes_of(out["metric"], ["counter_reset"])[0]
        out["text"][0][at] = -1  # None
        out["text"][0][reset_at] = _codes_of(out["text"], names)[counter[resets]]  # what `_per_s` was added to
        flag, named = pd.factorize(np.asarray(rates.flag, dtype=object))
        flag = _codes_of(flag_names, named.tolist())[flag]
        flags[n_last:] = np.concatenate([flag, flag[resets]])
        value[n_last:] = np.concatenate([rates.rate, np.full(len(resets), np.nan)])
        window_s[n_last:] = np.concatenate([rates.window, rates.window[resets]])
        delta[n_last:] = np.concatenate([rates.delta, rates.delta[resets]])
    out["flag"] = [flags, flag_names[0]]
    # (a column whose categories the facts did not add to keeps the samples' type: the pool, not a copy of it)
    facts = {c: pd.Categorical.from_codes(row_codes, validate=False, dtype=kept[c] if c in kept and categories is
                                          kept[c].categories else pd.CategoricalDtype(categories))
             for c, (row_codes, categories) in out.items()}
    facts.update(value=value, window_s=window_s, delta=delta)
    facts.update({c: samples[c].astype("Int64").array.take(rows) for c in INT_COLUMNS})
    return {c: facts[c] for c in FACT_COLUMNS}


def _codes_of(column: list, names: list) -> np.ndarray:
    """The codes of these names in a column being built ([codes, categories] or [categories]), new names appended
    to its categories."""
    categories = column[-1]
    new = [n for n in dict.fromkeys(names) if n not in categories]
    if new:
        categories = column[-1] = categories.append(pd.Index(new, dtype=object))
    return categories.get_indexer(names)


def _derived(rates: pd.DataFrame, meta: pd.DataFrame, fleet_window: float) -> pd.DataFrame:
    """Paused fraction per port/priority, ECN mark ratio, and the fleet's CNP handled/sent ratio. `rates`: those of
    rates_with_rows that these are made of (at least); `fleet_window`: the median window of every usable rate."""
    usable = rates[rates["flag"].isin(_USABLE_FLAGS)]
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
    result = pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=FACT_COLUMNS)
    if not result.empty:
        result = result.merge(meta, on="target", how="left").assign(text=None, flag="")
    if sent > 0:
        fleet = pd.DataFrame([{
            "target": "fabric", "kind": "fabric", "platform": None, "role": None, "entity": "fabric",
            "metric": "cnp_handled_ratio", "priority": pd.NA, "size_bytes": pd.NA, "value": handled / sent,
            "text": None, "raw_key": "cnp_handled/cnp_sent", "window_s": fleet_window, "delta": np.nan, "flag": ""}])
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
