"""Counter rates between two snapshots: plain growth, 32- and 64-bit wraps, resets and saturated counters."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from rdmatool.table import frame as frames


def _frame(rows: list[tuple]) -> pd.DataFrame:
    """rows: (snapshot, time, entity, metric, value[, text])."""
    records = []
    for row in rows:
        snapshot, time, entity, metric, value, *text = row
        records.append((snapshot, time, "gpu01", "host", "linux", "compute", "sysfs_counters", None, entity, metric,
                        None, None, None if value is None else float(value), text[0] if text else None, metric,
                        value if isinstance(value, int) else None))
    frame = pd.DataFrame.from_records(records, columns=frames.COLUMNS).astype(
        {"priority": "Int64", "size_bytes": "Int64", "value": "float64", "time": "float64"})
    frame["exact"] = pd.Series([r[-1] for r in records], dtype=object)  # Python ints, as the bundle loader keeps them
    return frame


def _one(rates: pd.DataFrame, metric: str) -> dict:
    found = rates[rates["metric"] == metric]
    assert len(found) == 1, found
    return found.iloc[0].to_dict()


def test_plain_growth_gives_delta_over_window() -> None:
    rates = frames.rates(_frame([(0, 100.0, "mlx5_0/1", "symbol_errors", 10), (1, 110.0, "mlx5_0/1", "symbol_errors", 60)]))
    row = _one(rates, "symbol_errors")
    assert row["delta"] == 50 and row["window_s"] == 10 and row["rate"] == 5 and row["flag"] == ""


def test_32bit_wrap_is_corrected() -> None:
    before = 2**32 - 100
    rates = frames.rates(_frame([(0, 0.0, "lid1/1", "port_xmit_packets", before), (1, 10.0, "lid1/1", "port_xmit_packets", 400)]))
    row = _one(rates, "port_xmit_packets")
    assert row["flag"] == "wrap32"
    assert row["delta"] == 500
    assert row["rate"] == 50


def test_64bit_wrap_is_corrected_on_exact_integers() -> None:
    before = 2**64 - 1000
    rates = frames.rates(_frame([(0, 0.0, "mlx5_0/1", "port_xmit_data_bytes", before),
                                 (1, 10.0, "mlx5_0/1", "port_xmit_data_bytes", 3000)]))
    row = _one(rates, "port_xmit_data_bytes")
    assert row["flag"] == "wrap64"
    assert row["delta"] == 4000


def test_reset_gives_no_rate_and_a_flag() -> None:
    rates = frames.rates(_frame([(0, 0.0, "eth2", "rx_pause_frames", 5_000_000), (1, 10.0, "eth2", "rx_pause_frames", 12)]))
    row = _one(rates, "rx_pause_frames")
    assert row["flag"] == "reset"
    assert math.isnan(row["rate"])


def test_small_value_going_down_is_a_reset_not_a_wrap() -> None:
    # 1000 → 10 must never be read as a 32-bit wrap (that would be a rate of ~4e8/s)
    rates = frames.rates(_frame([(0, 0.0, "mlx5_0/1", "link_downed", 1000), (1, 10.0, "mlx5_0/1", "link_downed", 10)]))
    assert _one(rates, "link_downed")["flag"] == "reset"


def test_saturated_counter_gives_no_rate() -> None:
    rows = [
        (0, 0.0, "mlx5_0/1", "link_downed", 255), (1, 10.0, "mlx5_0/1", "link_downed", 255),
        (0, 0.0, "mlx5_0/1", "counter_saturated", 1, "link_downed"),
    ]
    row = _one(frames.rates(_frame(rows)), "link_downed")
    assert row["flag"] == "saturated"
    assert math.isnan(row["rate"])


def test_gauges_and_single_snapshots_give_no_rates() -> None:
    assert frames.rates(_frame([(0, 0.0, "mlx5_0/1", "symbol_errors", 1)])).empty
    gauges = frames.rates(_frame([(0, 0.0, "mlx5_0/1", "link_rate_gbps", 400), (1, 10.0, "mlx5_0/1", "link_rate_gbps", 400)]))
    assert gauges.empty


@pytest.mark.parametrize(("before", "after", "flag"), [(2**31 + 5, 7, "wrap32"), (2**31 - 5, 7, "reset"), (2**63, 1, "wrap64")])
def test_wrap_needs_top_half_before_and_bottom_half_after(before: int, after: int, flag: str) -> None:
    rates = frames.rates(_frame([(0, 0.0, "x", "tx_packets", before), (1, 1.0, "x", "tx_packets", after)]))
    assert _one(rates, "tx_packets")["flag"] == flag
