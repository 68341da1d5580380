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


def _in_snapshot_order(table: frames.SampleTable) -> tuple[pd.DataFrame, np.ndarray]:
    """The sample rows and their series ids, snapshot by snapshot (a bundle's rows come that way already)."""
    samples = table.frame
    series = table.series if table.series is not None else frames.series_ids(samples)
    snapshot = samples["snapshot"].to_numpy()
    if len(snapshot) > 1 and not (snapshot[1:] >= snapshot[:-1]).all():
        order = np.argsort(snapshot, kind="stable")
        samples, series = samples.iloc[order].reset_index(drop=True), series[order]
    return samples, series


def _latest(samples: pd.DataFrame, series: np.ndarray) -> pd.DataFrame:
    """The last reading of each series: one row per series, never one for two (see sample_columns.series_of)."""
    return samples.loc[~pd.Series(series).duplicated(keep="last").to_numpy(), FACT_COLUMNS[:11]]


def latest_values(table: frames.SampleTable) -> pd.DataFrame:
    """The latest value of every series of a sample table (the first eleven fact columns)."""
    return _latest(*_in_snapshot_order(table))


def analyse(table: frames.SampleTable) -> Analysis:
    samples, series = _in_snapshot_order(table)
    meta = samples[["target", "kind", "platform", "role"]].drop_duplicates("target")
    latest = _latest(samples, series)
    # Gauges and states (perftest results, link rates, LLDP, tool errors) live only among the latest values:
    # one pass names their metrics, then each selection is an integer comparison.
    metric_codes, metric_names = pd.factorize(latest["metric"].to_numpy())
    code_of = {name: code for code, name in enumerate(metric_names)}

    def latest_of(metric: str) -> pd.DataFrame:
        return latest[metric_codes == code_of.get(metric, -2)]

    errors = metric_codes == code_of.get("tool_error", -2)
    if errors.any():
        # A tool that complained twice ("Couldn't connect ...", then "Unable to open ...") keeps both messages, first
        # first: the first is usually the cause, the rest its consequences.
        every = samples[(samples["metric"] == "tool_error").to_numpy()]
        joined = every.groupby(frames.KEY, dropna=False, sort=False)["text"].transform(
            lambda texts: " | ".join(dict.fromkeys(t for t in texts if isinstance(t, str))))
        last_text = joined[~every.duplicated(frames.KEY, keep="last")]
        text = latest["text"].copy()
        text[errors] = last_text.to_numpy()
        latest = latest.assign(text=text)
    latest = latest.assign(window_s=np.nan, delta=np.nan, flag="")
    parts = [latest]
    rates, first_rows = frames.rates_with_rows(samples, series)
    window = None
    if not rates.empty:
        windows = rates["window_s"].to_numpy(dtype=float)
        windows = windows[windows > 0]  # no read times: no window (NaN), never a RuntimeWarning on stderr
        window = float(np.median(windows)) if len(windows) else None
        rate_rows = rates.assign(**{c: pd.Series(samples[c].to_numpy()[first_rows], dtype=object, index=rates.index)
                                    for c in ("kind", "platform", "role")})
        names = {m: rate_name(m) for m in rate_rows["metric"].unique()}
        rate_rows = rate_rows.assign(metric=rate_rows["metric"].map(names), value=rate_rows["rate"], text=None)
        parts.append(rate_rows[FACT_COLUMNS])
        resets = rate_rows[rate_rows["flag"] == "reset"]
        if not resets.empty:
            parts.append(resets.assign(metric="counter_reset", text=resets["metric"].str.removesuffix("_per_s"),
                                       value=np.nan)[FACT_COLUMNS])
        parts.append(_derived(rates, meta))
    kept = [p for p in parts if not p.empty]  # a bundle without outputs (a capture alone) has no facts of its own
    facts = pd.concat(kept, ignore_index=True) if kept else pd.DataFrame(columns=FACT_COLUMNS)
    facts["priority"] = facts["priority"].astype("Int64")
    facts["size_bytes"] = facts["size_bytes"].astype("Int64")
    efficiency = _efficiency(latest_of("bw_avg_gbps"), latest_of("link_rate_gbps"))
    if not efficiency.empty:  # an empty frame's object columns would turn every column of the facts into objects
        facts = pd.concat([facts, efficiency], ignore_index=True)
    # Compute or communication (rdmatool.triage): NIC utilisation per port, and each GPU host's class with its figures.
    triage = triage_facts(samples, facts)
    if not triage.empty:
        facts = pd.concat([facts, triage.reindex(columns=FACT_COLUMNS)], ignore_index=True)
        facts = facts.astype({"priority": "Int64", "size_bytes": "Int64"})
    return Analysis(facts=facts, table=table, window_s=window, links=_links(latest_of("lldp_neighbor"), facts))


def _derived(rates: pd.DataFrame, meta: pd.DataFrame) -> pd.DataFrame:
    """Paused fraction per port/priority, ECN mark ratio, and the fleet's CNP handled/sent ratio."""
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
            "text": None, "raw_key": "cnp_handled/cnp_sent", "window_s": float(usable["window_s"].median()),
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


def _links(lldp: pd.DataFrame, facts: pd.DataFrame) -> pd.DataFrame:
    """Cabling from LLDP (lldp_neighbor facts) as seen by either end: host, host_port, switch, switch_port."""
    rows = []
    names = set(facts["target"].unique())
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
