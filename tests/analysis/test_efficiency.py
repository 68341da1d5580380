"""Bandwidth efficiency: measured Gb/s over the line rate, judged on large messages only (reference §6.2)."""

from __future__ import annotations

import pandas as pd

from rdmatool.table.analysis import FACT_COLUMNS, _efficiency


def _fact(metric: str, value: float, size: int | None = None, entity: str = "ib_write_bw") -> dict:
    row = dict.fromkeys(FACT_COLUMNS)
    row.update(target="gpu01", kind="host", platform="linux", entity=entity, metric=metric, value=value,
               size_bytes=size, flag="")
    return row


def test_small_messages_are_not_judged_against_line_rate() -> None:
    facts = pd.DataFrame([
        _fact("link_rate_gbps", 400.0, entity="mlx5_0/1"),
        _fact("bw_avg_gbps", 0.4, 2),
        _fact("bw_avg_gbps", 180.0, 65536),
        _fact("bw_avg_gbps", 392.0, 1048576),
    ], columns=FACT_COLUMNS)
    facts["size_bytes"] = facts["size_bytes"].astype("Int64")
    out = _efficiency(facts[facts["metric"] == "bw_avg_gbps"], facts[facts["metric"] == "link_rate_gbps"])
    assert sorted(zip(out["size_bytes"].tolist(), out["value"].round(3).tolist())) == [(65536, 0.45), (1048576, 0.98)]
    assert set(out["metric"]) == {"bw_efficiency"}
