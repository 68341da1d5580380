"""The watch's textfiles (rdmatool.watch.textfile): the lines rendered once and kept say exactly what the export's
own families say (`rdmatool export prometheus`: names, labels, units), interval after interval."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from prometheus_client.parser import text_string_to_metric_families

from rdmatool.metrics import RATE_SUFFIX
from rdmatool.report.prometheus import Export
from rdmatool.report.prometheus.families import fact_families
from rdmatool.table.analysis import FACT_COLUMNS
from rdmatool.watch import textfile
from rdmatool.watch.history import History, Shape, is_gauge
from rdmatool.watch.light import Reading


def _reading(host: str, i: int, state: str = "ACTIVE") -> Reading:
    counters = {("ens1f0np0", "rx_pause_frames", 3): 100.0 * i, ("mlx5_1/1", "cnp_sent", None): 7.0 * i,
                ("mlx5_0/1", "symbol_errors", None): 0.0, ("ens1f0np0", "rx_discards", None): 3.0 * i * i}
    gauges = {("ib_send_lat@rail_mlx5_1", "lat_p99_us", None): 4.0 + i}
    return Reading(host, 100.0 + 10 * i, counters, {("mlx5_1/1", "port_state"): state}, gauges)


def _reference(history: History, rates: dict, read: list[str]) -> dict[str | None, set]:
    """The export's own families of the same readings (what the watch wrote before its lines were kept)."""
    rows = []
    for key, row in history.index.items():
        target, entity, metric, priority = key
        if target not in read or np.isnan(history.last_value[row]):
            continue
        base = {"target": target, "kind": "host", "platform": None, "role": None, "entity": entity,
                "priority": None if priority < 0 else priority, "size_bytes": None, "text": None, "raw_key": None,
                "window_s": np.nan, "delta": np.nan, "flag": ""}
        rows.append({**base, "metric": metric, "value": float(history.last_value[row])})
        if key in rates and not is_gauge(metric):
            rows.append({**base, "metric": metric + RATE_SUFFIX, "value": rates[key]})
    for target in read:
        for joined, text in history.states.get(target, {}).items():
            entity, _, metric = joined.partition("\t")
            rows.append({"target": target, "kind": "host", "platform": None, "role": None, "entity": entity,
                         "metric": metric, "priority": None, "size_bytes": None, "value": np.nan, "text": text,
                         "raw_key": None, "window_s": np.nan, "delta": np.nan, "flag": ""})
    facts = pd.DataFrame(rows, columns=FACT_COLUMNS).astype({"priority": "Int64", "size_bytes": "Int64",
                                                             "value": float, "window_s": float, "delta": float})
    export = Export(fact_families(facts), ["gpu01", "gpu02"], None)
    return {t: _samples(export.target_text(t)) for t in ("gpu01", "gpu02")}


def _samples(text: str) -> set:
    return {(s.name, tuple(sorted(s.labels.items())), round(s.value, 9)) for family in
            text_string_to_metric_families(text) for s in family.samples if "watch_" not in s.name}


def test_the_kept_lines_are_the_export_families_interval_after_interval(tmp_path: Path) -> None:
    history, cache = History(Shape(20, 4, 5)), textfile.Textfiles()
    for i in range(4):
        state = "DOWN" if i == 3 else "ACTIVE"  # a state that changes is rendered again
        readings = [_reading("gpu01", i, state), _reading("gpu02", i)]
        if i == 2:
            readings[1] = Reading("gpu02", 120.0, {**readings[1].counters, ("ens1f0np0", "tx_discards", None): 1.0})
        fabric = Reading("fabric", 100.0 + 10 * i, gauges={("ib_send_lat@cross_leaf", "lat_p99_us", None): 6.0,
                                                            ("ib_send_lat@cross_leaf", "watch_lat_p99_us", None): 8.5})
        rates = history.record(100.0 + 10 * i, [*readings, fabric])
        read = ["gpu01", "gpu02", "fabric"]
        finding = {"target": "gpu02", "rule": "watch_periodic_spike", "severity": "warning"}
        assert textfile.write(tmp_path, history, read, ["gpu01", "gpu02"], [finding], 1e9, cache) == []
        expected = _reference(history, rates, read)
        for host in ("gpu01", "gpu02"):
            text = (tmp_path / f"rdmatool-{host}.prom").read_text()
            assert _samples(text) == expected[host], (i, host)
    node = (tmp_path / "rdmatool-gpu02.prom").read_text()
    assert 'rdmatool_rx_pause_frames_per_second{netdev="ens1f0np0",priority="3",target="gpu02"} 10.0' in node
    assert 'rdmatool_lat_p99_seconds{peer="rail_mlx5_1",target="gpu02",test="ib_send_lat"} 7e-06' in node
    assert 'rdmatool_watch_findings{rule="watch_periodic_spike",severity="warning",target="gpu02"} 1.0' in node
    assert 'value="DOWN"' in (tmp_path / "rdmatool-gpu01.prom").read_text()
    fleet = (tmp_path / "rdmatool.prom").read_text()
    assert 'rdmatool_watch_probe_latency_seconds{class="cross_leaf",quantile="0.99",target="fabric",' \
           'test="ib_send_lat"} 8.5e-06' in fleet
    assert 'rdmatool_lat_p99_seconds{peer="cross_leaf",target="fabric",test="ib_send_lat"} 6e-06' in fleet
    assert "rdmatool_watch_targets_read 2.0" in fleet
    assert len(list(text_string_to_metric_families(fleet))) >= 5  # a valid exposition


def test_a_files_values_are_written_as_prometheus_client_writes_them() -> None:
    from prometheus_client.utils import floatToGoString

    rng = np.random.default_rng(7)
    edges = [0.0, -0.0, 1.0, 5e-324, 1e-5, 999_999.9999999999, 1e6, 1_000_000.5, 123_456_789.125, 2.0**53,
             9_999_999_999_999_998.0, 1e16, 1.5e16, 1e300, -1e7, float("inf"), float("-inf"), float("nan")]
    values = np.array(edges + list(10.0 ** rng.uniform(-8, 20, 3000)) + list(rng.integers(0, 2**60, 3000)),
                      dtype=float)
    assert textfile.go_strings(values) == [floatToGoString(v) for v in values.tolist()]
