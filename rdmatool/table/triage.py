"""Compute or communication? The first triage step of a slow training job, as facts (docs/tuning.md §6.3).

"Is the bottleneck compute, communication or data loading? GPU utilisation high with network utilisation low →
compute-bound; GPU low with network high → communication-bound; both low → data loading or scheduling."

From a bundle's samples and counter rates this module derives, per host:
- `nic_utilization` of each Active RDMA port: the busier direction of its PMA data counters over the window
  (Δbytes·8 / (W·R), the `util` of docs/tuning.md §7), against the port's own rate;
- the host's GPU figures: utilisation averaged over its GPUs and every reading (the host script reads the GPUs in
  both snapshots), and the share of GPU memory allocated (a job holds it; idle GPUs hold almost none);
- `triage_verdict`, one of VERDICTS, with the figures it was decided on (`triage_*` facts, entity `host`) and its
  evidence as JSON (`triage_record`). `playbooks/35-triage.yaml` turns the three classes into findings.

The thresholds are heuristics (H) of §6.3, kept here in THRESHOLDS and printed in every record. Pure pandas on
values: no I/O.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from rdmatool.table import column_codes

COLUMNS = [
    "target", "kind", "platform", "role", "entity", "metric", "priority", "size_bytes", "value", "text", "raw_key",
    "window_s", "delta", "flag",
]
ENTITY = "host"
VERDICTS = ("compute_bound", "communication_bound", "data_loading", "overlapped", "unclassified", "idle")
THRESHOLDS = {
    "gpu_busy_pct": 80.0,  # mean GPU utilisation at or above: the GPUs are the busy side
    "gpu_starved_pct": 50.0,  # below: the GPUs wait for something
    "network_busy": 0.6,  # busiest port at or above this share of its line rate over the window
    "network_quiet": 0.2,  # below
    "job_memory_pct": 10.0,  # GPU memory allocated at or above: a job is on the GPUs (else they are idle)
}
_DATA = ("port_xmit_data_bytes_per_s", "port_rcv_data_bytes_per_s")
# Counters whose growth says the host's own links or transport are not clean (the communication-bound warning).
NETWORK_ERRORS = (
    "symbol_errors", "link_error_recovery", "link_downed", "port_rcv_errors", "port_rcv_remote_physical_errors",
    "port_xmit_discards", "local_link_integrity_errors", "excessive_buffer_overrun_errors", "rx_crc_errors",
    "fec_uncorrectable_blocks", "rx_discards", "rx_out_of_buffer", "out_of_sequence", "packet_seq_err",
    "local_ack_timeout_err", "implied_nak_seq_err", "rnr_nak_retry_err",
)
_USABLE_FLAGS = ("", "wrap32", "wrap64")


def classify(gpu_pct: float, memory_pct: float, network: float) -> str:
    """The class of one host from its three figures (NaN network: no window, or no Active port to read)."""
    t = THRESHOLDS
    if gpu_pct >= t["gpu_busy_pct"]:
        if network < t["network_quiet"]:
            return "compute_bound"
        return "overlapped" if network >= t["network_busy"] else "unclassified"
    if not memory_pct >= t["job_memory_pct"]:  # NaN memory: no evidence of a job either
        return "idle"
    if gpu_pct < t["gpu_starved_pct"]:
        if network >= t["network_busy"]:
            return "communication_bound"
        if network < t["network_quiet"]:
            return "data_loading"
    return "unclassified"


# The fact columns the selections read (of a fleet's 600,000 port rows, taking all fourteen costs three times more):
# the few rows a fact is made from are taken whole at the end, by their positions.
_READ = ["target", "kind", "entity", "metric", "priority", "value", "text", "window_s", "delta", "flag"]
_ERRORS = [f"{m}_per_s" for m in NETWORK_ERRORS]


def _host_rows(frame: pd.DataFrame, metrics, codes: dict | None, columns: list[str]) -> pd.DataFrame:
    """The rows of these metrics on hosts, in the frame's order, with only these `columns` (and kind), labelled with
    their positions in the frame: the metrics first (a few thousand of 800,000 rows), so that neither the kind test
    nor the cut runs over the whole frame. `codes`: the frame's metric codes (column → (a code per row, the
    distinct values)), when known: an integer comparison instead of strings."""
    at = np.flatnonzero(column_codes.mask(frame, codes, "metric", metrics))
    names = list(dict.fromkeys([*columns, "kind"]))
    rows = frame[names].take(at).set_axis(at)
    rows = column_codes.as_texts(rows)
    return rows[(rows["kind"] == "host").to_numpy(dtype=bool)]


def nic_utilization(facts: pd.DataFrame, hosts: pd.DataFrame) -> pd.DataFrame:
    """One `nic_utilization` fact per Active RDMA port of a host with PMA data rates and a link rate, from the
    facts' host rows of the data rates, link rates and port states (`_host_rows` with `_READ`)."""
    rates = hosts[hosts["metric"].isin(_DATA).to_numpy() & hosts["flag"].isin(_USABLE_FLAGS).to_numpy()]
    if rates.empty:
        return pd.DataFrame(columns=COLUMNS)
    keys = ["target", "entity"]
    # sysfs and perfquery both read the same PMA counters: the busier reading of a port and direction stands
    busiest = rates.sort_values("value", ascending=False).drop_duplicates(keys)
    line = hosts[(hosts["metric"] == "link_rate_gbps").to_numpy()].groupby(keys)["value"].max()
    state = hosts[(hosts["metric"] == "port_state").to_numpy()].drop_duplicates(keys, keep="last")
    active = set(zip(state.loc[state["text"] == "Active", "target"], state.loc[state["text"] == "Active", "entity"]))
    joined = busiest.join(line.rename("line"), on=keys)
    joined = joined[(joined["line"] > 0).to_numpy() & [k in active for k in zip(joined["target"], joined["entity"])]]
    if joined.empty:
        return pd.DataFrame(columns=COLUMNS)
    util = joined["value"].astype(float) * 8 / (joined["line"].astype(float) * 1e9)
    whole = column_codes.as_texts(facts.take(joined.index.to_numpy()))  # the chosen rows, every column
    return whole.assign(metric="nic_utilization", value=util.to_numpy(), text=None, delta=np.nan, flag="",
                        raw_key=joined["metric"].str.removesuffix("_per_s").to_numpy() + "/link_rate_gbps")[COLUMNS]


def _gpu_figures(samples: pd.DataFrame, codes: dict | None = None) -> pd.DataFrame:
    """Per host and GPU: mean utilisation over the readings, and the share of memory allocated (percent)."""
    wanted = ("gpu_utilization_pct", "gpu_memory_used_bytes", "gpu_memory_total_bytes", "gpu_memory_used_pct")
    rows = _host_rows(samples, wanted, codes, ["target", "entity", "metric", "value"])
    rows = rows[rows["value"].notna().to_numpy()]
    if rows.empty:
        return pd.DataFrame(columns=["target", "entity", "util", "memory_pct"])
    table = rows.assign(value=rows["value"].astype(float)).pivot_table(
        index=["target", "entity"], columns="metric", values="value", aggfunc="mean")
    table = table.reindex(columns=list(wanted))
    memory = table["gpu_memory_used_bytes"] / table["gpu_memory_total_bytes"].where(table["gpu_memory_total_bytes"] > 0)
    memory = (memory * 100).fillna(table["gpu_memory_used_pct"])
    out = pd.DataFrame({"util": table["gpu_utilization_pct"], "memory_pct": memory}).reset_index()
    return out[out["util"].notna().to_numpy()]


def _network_errors(rows: pd.DataFrame) -> pd.Series:
    """Per host: the summed growth of its error counters over the window (`rows`: `_host_rows` of `_ERRORS`)."""
    rows = rows[rows["flag"].isin(_USABLE_FLAGS).to_numpy()]
    # one counter seen by two views (sysfs and perfquery) counts once
    rows = rows.drop_duplicates(["target", "entity", "metric", "priority"])
    return rows.groupby("target")["delta"].sum()


def triage_facts(samples: pd.DataFrame, facts: pd.DataFrame, sample_codes: dict | None = None) -> pd.DataFrame:
    """The triage facts of every host with GPU readings, plus `nic_utilization` of every host's RDMA ports.
    `sample_codes`: the samples' metric and target columns as codes (column → (a code per row, the distinct
    values)), when the caller has them; the facts' categorical columns are read by their codes: the selections are
    then integer comparisons."""
    # the host rows every figure is read from, in one selection over the facts
    hosts = _host_rows(facts, [*_DATA, "link_rate_gbps", "port_state", *_ERRORS], None, _READ)
    in_errors = hosts["metric"].isin(_ERRORS).to_numpy()
    ports = nic_utilization(facts, hosts[~in_errors])
    gpus = _gpu_figures(samples, sample_codes)
    if gpus.empty:
        return ports
    first = column_codes.first_rows(facts, None, "target")
    # each target's first fact (only four of its columns are read)
    meta = column_codes.as_texts(facts[["target", "kind", "platform", "role"]].take(first)).set_index("target")
    window = hosts[hosts["metric"].isin(_DATA).to_numpy()][["target", "window_s"]].groupby("target")["window_s"]
    window = window.median().to_dict()  # looked up once per host: a dictionary, not a Series
    errors = _network_errors(hosts[in_errors]).to_dict()
    # One pass over plain values per host (a 1,000-host bundle: no per-host pandas selection).
    per_gpu: dict[str, list[tuple]] = {}
    # (plain lists: iterating pandas' string columns element by element costs more than the loop's own work)
    for target, entity, util, memory in zip(gpus["target"].tolist(), gpus["entity"].tolist(), gpus["util"].tolist(),
                                            gpus["memory_pct"].tolist()):
        per_gpu.setdefault(target, []).append((entity, float(util), float(memory)))
    per_port: dict[str, dict[str, float]] = {}
    for target, entity, value in zip(ports["target"].tolist(), ports["entity"].tolist(), ports["value"].tolist()):
        per_port.setdefault(target, {})[entity] = round(float(value), 4)
    busiest = {t: max(p.items(), key=lambda kv: kv[1]) for t, p in per_port.items()}
    # The facts column by column: a frame of 80,000 dictionaries costs more.
    columns: dict[str, list] = {c: [] for c in ("target", "metric", "value", "text", "window_s", "delta")}
    for target in sorted(per_gpu):
        own = per_gpu[target]
        gpu_pct = float(np.mean([u for _, u, _ in own]))
        memories = [m for _, _, m in own if m == m]
        memory_pct = float(np.mean(memories)) if memories else float("nan")
        port, network = busiest.get(target, (None, float("nan")))
        grown = float(errors.get(target, 0.0))
        verdict = classify(gpu_pct, memory_pct, network)
        record = {
            "verdict": verdict, "thresholds": THRESHOLDS,
            "gpus": {e: {"utilization_pct": round(u, 2), "memory_used_pct": None if m != m else round(m, 2)}
                     for e, u, m in own},
            "ports": per_port.get(target, {}), "network_errors": grown,
        }
        metrics, values, texts = zip(
            ("triage_verdict", np.nan, verdict),
            ("triage_gpu_utilization_pct", round(gpu_pct, 2), None),
            ("triage_gpu_memory_used_pct", round(memory_pct, 2), None),
            ("triage_gpus", float(len(own)), None),
            ("triage_nic_utilization", network, None),
            ("triage_nic_port", np.nan, port),
            ("triage_network_errors", grown, None),
            ("triage_record", np.nan, json.dumps(record, sort_keys=True)),
        )
        columns["target"] += [target] * len(metrics)
        columns["metric"] += metrics
        columns["value"] += values
        columns["text"] += texts
        columns["window_s"] += [float(window.get(target, np.nan))] * len(metrics)
        columns["delta"] += [grown if m == "triage_network_errors" else np.nan for m in metrics]
    count = len(columns["target"])
    out = {**columns, "entity": [ENTITY] * count, "raw_key": ["triage"] * count, "flag": [""] * count}
    frame = pd.DataFrame(out).join(meta, on="target")
    # nullable integers, as in the facts: an object column here would make the analysis re-coerce 800,000 facts
    frame = frame.assign(priority=pd.NA, size_bytes=pd.NA)[COLUMNS].astype({"priority": "Int64", "size_bytes": "Int64"})
    return pd.concat([ports, frame], ignore_index=True) if not ports.empty else frame
