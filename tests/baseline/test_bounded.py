"""Bounded nights (large groups stored as quantile sketches), the rule view and reading /1 files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rdmatool import baseline
from rdmatool.errors import BaselineError

BIG = 5000  # values of the large group per night
KEYS = {"kind": "host", "role": "compute", "platform": "linux", "ca_type": "MT4129", "link_rate_gbps": 400.0,
        "priority": None}


def _night(i: int, big: np.ndarray, small: list[float]) -> dict:
    groups = [{"metric": "bw_avg_gbps", **KEYS, "size_bytes": 65536, "values": sorted(big.tolist())},
              {"metric": "lat_avg_us", **KEYS, "size_bytes": None, "values": sorted(small)}]
    return {"id": f"n{i}", "bundle": f"/b{i}", "created": f"2024-05-0{i + 1}T00:00:00+00:00",
            "saved": f"2024-05-0{i + 1}T00:00:01+00:00", "targets": BIG, "values": groups,
            "facts": {"trust_mode_by_role": {"compute": {"dscp": BIG}}}}


@pytest.fixture()
def big_store(tmp_path: Path):
    rng = np.random.default_rng(7)
    bigs = [rng.normal(90.0 + i, 4.0, BIG) for i in range(3)]
    smalls = [[2.0 + i, 2.5, 3.0 + 0.25 * i, 4.0] for i in range(3)]
    store = tmp_path / "store"
    for i in range(3):
        doc = baseline.add_night(store, "default", _night(i, bigs[i], smalls[i]))
    return store, doc, np.concatenate(bigs), [v for s in smalls for v in s]


def _row(rows, metric: str) -> dict:
    (row,) = [r for r in rows if r["metric"] == metric]
    return row


def test_large_groups_are_sketched_small_and_close(big_store) -> None:
    store, doc, pooled, small = big_store
    path = store / "default.json"
    # 3 x 5,000 raw values were ~1.3 MB in /1; sketched, the whole file stays small
    assert path.stat().st_size < 20_000
    stored = baseline.load(path)
    assert stored["format"] == "rdmatool-baseline/2"
    for night in stored["nights"]:
        group = next(g for g in night["values"] if g["metric"] == "bw_avg_gbps")
        assert "values" not in group and group["n"] == BIG and len(group["quantiles"]) == baseline.SKETCH_POINTS
        raw = next(g for g in night["values"] if g["metric"] == "lat_avg_us")
        assert "quantiles" not in raw and len(raw["values"]) == 4
    row = _row(stored["rule_stats"], "bw_avg_gbps")
    median = float(np.median(pooled))
    mad = float(np.median(np.abs(pooled - median)))
    assert row["n"] == 3 * BIG and row["nights"] == 3
    # stated tolerance (module docstring): median within 0.1 MAD, MAD within 15 %, p10/p90 within 0.3 MAD
    assert abs(row["median"] - median) <= 0.1 * mad
    assert abs(row["mad"] - mad) <= 0.15 * mad
    assert abs(row["p10"] - np.percentile(pooled, 10)) <= 0.3 * mad
    assert abs(row["p90"] - np.percentile(pooled, 90)) <= 0.3 * mad
    # the small group next to it stays exact
    exact = baseline.robust(small)
    row = _row(stored["rule_stats"], "lat_avg_us")
    assert (row["median"], row["mad"], row["p10"], row["p90"], row["n"]) == \
        (exact["median"], exact["mad"], exact["p10"], exact["p90"], 12)


def test_weighted_quantile_is_numpy_on_integer_weights() -> None:
    rng = np.random.default_rng(3)
    values = rng.normal(size=40)
    weights = rng.integers(1, 5, size=40)
    expanded = np.repeat(values, weights)
    for q in (0.0, 0.1, 0.37, 0.5, 0.9, 1.0):
        got = baseline.weighted_quantile(values, weights.astype(float), q)
        assert got == pytest.approx(float(np.quantile(expanded, q)), abs=1e-12)


def test_stats_for_rules_reads_only_the_rule_view(big_store, monkeypatch) -> None:
    store, doc, _, _ = big_store
    path = store / "default.json"
    full = baseline.stats_for_rules(path)
    expected = pd.DataFrame.from_records(doc["rule_stats"])
    assert list(full["metric"]) == list(expected["metric"]) and list(full["n"]) == list(expected["n"])
    assert list(full["median"]) == list(expected["median"]) and list(full["mad"]) == list(expected["mad"])
    assert baseline.read_rule_view(path) == doc["rule_stats"]

    def no_full_parse(_path):
        raise AssertionError("stats_for_rules parsed the whole file")

    monkeypatch.setattr(baseline.store, "load", no_full_parse)
    pd.testing.assert_frame_equal(baseline.stats_for_rules(path), full)


def test_files_without_a_rule_view_fall_back_to_the_full_parse(big_store, tmp_path: Path) -> None:
    store, doc, _, _ = big_store
    path = store / "default.json"
    fast = baseline.stats_for_rules(path)
    stored = json.loads(path.read_text(encoding="utf-8"))
    # nights before rule_stats (rewritten by another tool), no view beside it: same rows, through load
    reordered = tmp_path / "reordered.json"
    reordered.write_text(json.dumps({k: stored[k] for k in ("format", "name", "nights", "stats", "rule_stats",
                                                            "reference", "keep", "updated")}), encoding="utf-8")
    assert baseline.read_rule_view(reordered) is None
    pd.testing.assert_frame_equal(baseline.stats_for_rules(reordered), fast)
    # the store's own file truncated after its save: its view no longer matches it and is not used
    data = path.read_bytes()
    path.write_bytes(data[: data.index(b'"nights"') + 20])
    assert baseline.read_rule_view(path) is None
    with pytest.raises(BaselineError, match="corrupt baseline"):
        baseline.stats_for_rules(path)
    # a foreign format: refused, not read
    foreign = tmp_path / "foreign.json"
    foreign.write_text(data.decode("utf-8").replace("rdmatool-baseline/2", "someone-else/9", 1), encoding="utf-8")
    with pytest.raises(BaselineError, match="someone-else/9"):
        baseline.stats_for_rules(foreign)
    # a rule_stats entry without the rule columns: the full load's error
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"format": baseline.FORMAT, "rule_stats": [{"metric": "x"}], "nights": []}),
                      encoding="utf-8")
    with pytest.raises(BaselineError, match="lacks"):
        baseline.stats_for_rules(broken)


def test_a_v1_file_loads_and_the_next_save_writes_v2(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    store = tmp_path / "store"
    store.mkdir()
    raw = [sorted(rng.normal(50.0, 2.0, 100).tolist()) for _ in range(2)]
    nights = [{**_night(i, np.asarray(raw[i]), [1.0, 2.0]), "values": [
        {"metric": "bw_avg_gbps", **KEYS, "size_bytes": 65536, "values": raw[i]}]} for i in range(2)]
    exact = baseline.robust(raw[0] + raw[1])
    rule_stats = [{"metric": "bw_avg_gbps", "kind": "host", "role": "compute", "priority": None,
                   "size_bytes": 65536, **exact, "nights": 2}]
    v1 = {"format": "rdmatool-baseline/1", "name": "old", "keep": 30, "nights": nights, "updated": "2024-05-02",
          "stats": [], "rule_stats": rule_stats, "reference": {}}
    path = store / "old.json"
    path.write_text(json.dumps(v1, indent=1), encoding="utf-8")
    doc = baseline.load(path)
    assert doc["format"] == baseline.FORMAT and doc["rule_stats"] == rule_stats  # stored statistics kept as they are
    assert all("quantiles" in n["values"][0] and n["values"][0]["n"] == 100 for n in doc["nights"])
    frame = baseline.stats_for_rules(path)
    assert (frame["median"].iloc[0], frame["n"].iloc[0]) == (exact["median"], 200)
    assert len(baseline.list_store(store)[0]["nights"]) == 2
    assert baseline.read_rule_view(path) is None
    doc = baseline.add_night(store, "old", _night(2, rng.normal(50.0, 2.0, 100), [1.0]))
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["format"] == "rdmatool-baseline/2" and list(written)[:5] == [*baseline.HEADER_KEYS, "rule_stats"]
    assert _row(written["rule_stats"], "bw_avg_gbps")["n"] == 300
    assert baseline.read_rule_view(path) == written["rule_stats"]


def test_shipped_demo_baseline_is_v2_and_feeds_the_rules() -> None:
    path = Path(__file__).resolve().parents[2] / "baselines" / "demo-healthy.json"
    before = sorted((p.name, p.stat().st_mtime_ns) for p in path.parent.iterdir())
    rows = baseline.load(path)["rule_stats"]
    frame = baseline.stats_for_rules(path)
    assert rows and list(frame["metric"]) == [r["metric"] for r in rows]
    assert list(frame["median"]) == [r["median"] for r in rows] and list(frame["n"]) == [r["n"] for r in rows]
    # reading, with or without a rule view beside it, never writes into the store
    assert sorted((p.name, p.stat().st_mtime_ns) for p in path.parent.iterdir()) == before
