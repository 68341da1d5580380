"""A bundle's per-peer perftest results as pair results, attributed like the gate's matrix, as facts.

A bundle may hold one perftest output per peer on a host: `perftest` qualified `<test>@<peer>`, the host being the
client and the peer the server (another writer's naming is read as that: rdmatool.bundle.peers). The samples keep them apart (entity `<test>@<peer>`, see
rdmatool.table.sample_columns.entity_namer). Judged one by one, a slow node would make each of its healthy partners look
slow too; so they are judged as the gate judges its matrix: `pair_results` reads them back as PairResults,
`attribute` (rdmatool.pairs.attribution, the gate's and `rdmatool perf`'s) tells bad nodes from bad links, and its
`facts` are what the playbook's verdict rules (playbooks/40-perftest.yaml) read. The per-peer facts themselves are
taken out of the facts: the attribution speaks for them.

With the cabling known (`placement`), a bandwidth matrix's slow pairs are grouped by the leaves of their ends as
the gate groups its own (rdmatool.pairs.paths): a slow inter-leaf path is one finding, not a bad link per pair.

A pair's bandwidth is the average of its largest message size (a `-a` sweep's small sizes never reach line rate);
a latency test's latencies are those of its smallest size. A node's expected bandwidth is the line rate of its
fastest active port (`link_rate_gbps`), as for the efficiency of a single perftest result.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from rdmatool.pairs import paths
from rdmatool.pairs.attribution import attribute, facts
from rdmatool.pairs.model import LAT_TESTS, PairResult
from rdmatool.table.analysis import FACT_COLUMNS, Analysis, stacked, with_facts
from rdmatool.table.facts import FactQuery
from rdmatool.table.sample_columns import PEER_MARK

# What one perftest output says, per sample metric (rdmatool.parsers.perftest).
PERFTEST_METRICS = ("bw_avg_gbps", "bw_peak_gbps", "msg_rate_mpps", "iterations", "lat_min_us", "lat_max_us",
                    "lat_typical_us", "lat_avg_us", "lat_stdev_us", "lat_p99_us", "lat_p999_us", "tool_error",
                    "perftest_test", "perftest_device", "perftest_link_type", "perftest_connection",
                    "perftest_data_exchange", "perftest_mtu", "perftest_gid_index", "perftest_qps")
_LAT_COLUMNS = ("lat_min_us", "lat_max_us", "lat_typical_us", "lat_avg_us", "lat_stdev_us", "lat_p99_us",
                "lat_p999_us")
DEFAULT_THRESHOLD = 0.9  # the gate's default fraction of line rate (rdmatool.gate.profile)


def per_peer_positions(query: FactQuery) -> np.ndarray:
    """Row positions of the facts that came from per-peer perftest outputs (entity `<test>@<peer>`)."""
    at = query.positions(list(PERFTEST_METRICS))
    if not len(at):
        return at
    entity = query.column("entity", at)
    return at[entity.map(lambda e: isinstance(e, str) and PEER_MARK in e).to_numpy(dtype=bool)]


def _size_order(size) -> float:
    return float("inf") if size is None or pd.isna(size) else float(size)


def pair_results(analysis) -> list[PairResult]:
    """One PairResult per (host, `<test>@<peer>`) of the bundle, in the facts' order."""
    query = FactQuery.of(analysis)
    at = per_peer_positions(query)
    if not len(at):
        return []
    rows = query.frame(at, ["target", "entity", "metric", "size_bytes", "value", "text"])
    out = []
    for (client, entity), own in rows.groupby(["target", "entity"], sort=False):
        test, _, server = entity.rpartition(PEER_MARK)
        by_metric = {m: part for m, part in own.groupby("metric", sort=False)}
        errors = [t for t in by_metric.get("tool_error", own.iloc[:0])["text"] if isinstance(t, str) and t]
        bw = peak = None
        lat: dict | None = None
        if "bw_avg_gbps" in by_metric:
            ranked = by_metric["bw_avg_gbps"].assign(order=by_metric["bw_avg_gbps"]["size_bytes"].map(_size_order))
            largest = ranked.sort_values("order", kind="stable").iloc[-1]
            size = None if pd.isna(largest["size_bytes"]) else int(largest["size_bytes"])
            bw = float(largest["value"]) if pd.notna(largest["value"]) else None
            peaks = by_metric.get("bw_peak_gbps")
            if peaks is not None:
                same = peaks[peaks["size_bytes"].map(_size_order) == largest["order"]]
                peak = float(same["value"].iloc[-1]) if len(same) and pd.notna(same["value"].iloc[-1]) else None
        else:
            size = None
            lat_rows = own[own["metric"].isin(_LAT_COLUMNS)]
            if len(lat_rows):
                smallest = min(lat_rows["size_bytes"].map(_size_order))
                first = lat_rows[lat_rows["size_bytes"].map(_size_order) == smallest]
                lat = {m: float(v) for m, v in zip(first["metric"], first["value"]) if pd.notna(v)}
                size = None if smallest == float("inf") else int(smallest)
        measured = bw is not None or bool(lat)
        error = " | ".join(dict.fromkeys(errors)) if errors and not measured else None
        out.append(PairResult(server=server, client=client, test=test, size_bytes=size, bw_avg_gbps=bw,
                              bw_peak_gbps=peak, lat=lat, error=error, round=0, server_output="", client_output="",
                              duration_s=0.0))
    return out


def expected_rates(analysis) -> dict[str, float]:
    """Each host's expected bandwidth: the line rate of its fastest port (Gb/s)."""
    rates = FactQuery.of(analysis).of_metric("link_rate_gbps")
    if rates.empty:
        return {}
    best = rates.groupby("target")["value"].max()
    return {str(t): float(v) for t, v in best.items() if pd.notna(v) and v > 0}


def tested_devices(analysis) -> dict[str, str]:
    """host -> the RDMA device its per-peer perftest clients ran on (the output's `Device : mlx5_0`)."""
    query = FactQuery.of(analysis)
    at = per_peer_positions(query)
    if not len(at):
        return {}
    rows = query.frame(at, ["target", "metric", "text"])
    rows = rows[rows["metric"] == "perftest_device"]
    return {str(t): d for t, d in zip(rows["target"], rows["text"]) if isinstance(d, str) and d}


def tested_leaves(analysis, placement: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """host -> the leaf its perftest ran through: the switch of the device its client outputs name, else the one
    switch all its NICs are cabled to; a host whose tested NIC's switch is not known has no leaf (never a guess)."""
    devices = tested_devices(analysis)
    out = {}
    for host, nics in placement.items():
        device = devices.get(host)
        if device is not None and device in nics:
            out[host] = nics[device]
        elif device is None and len(set(nics.values())) == 1:
            out[host] = next(iter(nics.values()))
    return out


def attribution_facts(analysis, threshold: float = DEFAULT_THRESHOLD,
                      placement: Mapping[str, Mapping[str, str]] | None = None) -> pd.DataFrame:
    """The attribution of the bundle's per-peer results as fact rows, one attribution per test (a bandwidth and a
    latency matrix are judged apart, as the gate's stages are); empty without per-peer results. `placement` (host ->
    NIC -> switch, rdmatool.topology.placement of the bundle's cabling): a bandwidth matrix's slow pairs grouped by
    the leaves of their ends, a slow inter-leaf path one finding instead of a bad link per pair (rdmatool.pairs.paths)."""
    results = pair_results(analysis)
    if not results:
        return pd.DataFrame(columns=FACT_COLUMNS)
    expected = expected_rates(analysis)
    leaf_of = {None: tested_leaves(analysis, placement)} if placement else {}
    roles = {t.get("name"): t.get("role") for t in getattr(analysis, "targets", None) or [] if isinstance(t, dict)}
    rows = []
    for test in dict.fromkeys(r.test for r in results):
        mine = [r for r in results if r.test == test]
        judged = attribute(mine, expected if test not in LAT_TESTS else None, threshold)
        if leaf_of and test not in LAT_TESTS:
            judged, found = paths.fold(mine, judged, leaf_of, {None: expected}, threshold, paths.uplink_ports(analysis))
            rows += found
        rows += facts(mine, judged, threshold)
    frame = pd.DataFrame(rows, columns=FACT_COLUMNS)
    hosts = frame["kind"] == "host"
    frame.loc[hosts, "role"] = frame.loc[hosts, "target"].map(roles)
    return frame.astype({"value": float, "window_s": float, "delta": float, "priority": "Int64",
                         "size_bytes": "Int64"})


def with_pair_attribution(analysis: Analysis, threshold: float = DEFAULT_THRESHOLD,
                          placement: Mapping[str, Mapping[str, str]] | None = None) -> Analysis:
    """The analysis with its per-peer perftest facts replaced by their attribution (a new Analysis; the one given is
    not changed). Without per-peer results, the analysis itself. `placement`: see `attribution_facts`."""
    query = FactQuery.of(analysis)
    per_peer = per_peer_positions(query)
    if not len(per_peer):
        return analysis
    found = attribution_facts(analysis, threshold, placement)
    keep = np.ones(len(query.facts), dtype=bool)
    keep[per_peer] = False
    kept = query.facts[keep]
    return with_facts(analysis, stacked(kept.reset_index(drop=True), found))
