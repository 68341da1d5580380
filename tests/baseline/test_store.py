"""Baseline store: statistics over nights, keep-N, reference facts, locking, corrupt files, the rules' view."""

from __future__ import annotations

import json
import statistics
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rdmatool import baseline
from rdmatool.errors import BaselineError
from rdmatool.model import Severity
from rdmatool.rules import kinds
from rdmatool.rules.playbook import Rule
from tests.baseline._bundles import Host, Switch, pause_rate, write_bundle


def _mad(values: list[float]) -> float:
    m = statistics.median(values)
    return statistics.median([abs(v - m) for v in values])


def _fleet(night: int) -> list[Host]:
    """Four compute hosts and one storage host whose figures differ per host and per night."""
    hosts = []
    for i in range(4):
        hosts.append(Host(f"gpu{i:02d}", bw={65536: 90.0 + i + night * 0.5, 1048576: 95.0 + 2 * i - night},
                          pauses=(1000 * i, 1000 * i + 10 * (i + 1) * (night + 1))))
    hosts.append(Host("stor01", role="storage", bw={65536: 40.0 + night}, pauses=(0, 20 * night)))
    return hosts


def _rule_row(doc_or_frame, metric: str, role: str, priority=None, size=None) -> dict:
    rows = doc_or_frame if isinstance(doc_or_frame, list) else doc_or_frame["rule_stats"]
    found = [r for r in rows if r["metric"] == metric and r["role"] == role and r["kind"] == "host"
             and r["priority"] == priority and r["size_bytes"] == size]
    assert len(found) == 1, found
    return found[0]


@pytest.fixture()
def nights(tmp_path: Path) -> list[tuple[Path, list[Host]]]:
    out = []
    for night in range(4):
        hosts = _fleet(night)
        out.append((write_bundle(tmp_path / f"bundle-{night}", hosts, [Switch()], night=night), hosts))
    return out


def test_statistics_pool_every_kept_night(tmp_path: Path, nights) -> None:
    store = tmp_path / "store"
    for path, _ in nights:
        doc = baseline.save(path, store)
    assert [n["created"][:10] for n in doc["nights"]] == ["2024-05-01", "2024-05-02", "2024-05-03", "2024-05-04"]
    for size in (65536, 1048576):
        pooled = [h.bw[size] for _, hosts in nights for h in hosts if h.role == "compute"]
        row = _rule_row(doc, "bw_avg_gbps", "compute", size=size)
        assert row["median"] == statistics.median(pooled)
        assert row["mad"] == _mad(pooled)
        assert row["n"] == len(pooled) == 16
        assert row["nights"] == 4
        assert row["p10"] == pytest.approx(float(np.percentile(pooled, 10)))
    rates = [pause_rate(h) for _, hosts in nights for h in hosts if h.role == "compute"]
    row = _rule_row(doc, "rx_pause_frames_per_s", "compute", priority=3)
    assert (row["median"], row["mad"], row["n"]) == (statistics.median(rates), _mad(rates), len(rates))
    storage = [h.bw[65536] for _, hosts in nights for h in hosts if h.role == "storage"]
    row = _rule_row(doc, "bw_avg_gbps", "storage", size=65536)
    assert (row["median"], row["mad"], row["n"]) == (statistics.median(storage), _mad(storage), 4)
    # cumulative counters never become figures, their rates do
    assert not [r for r in doc["rule_stats"] if r["metric"] in ("rx_pause_frames", "port_xmit_wait")]


def test_keep_prunes_the_oldest_nights(tmp_path: Path, nights) -> None:
    store = tmp_path / "store"
    # saved newest first: pruning goes by the bundle's date, not by the order of saving
    for path, _ in reversed(nights):
        doc = baseline.save(path, store, keep=2)
    assert doc["keep"] == 2
    assert [n["bundle"] for n in doc["nights"]] == [str(nights[2][0]), str(nights[3][0])]
    kept = [h.bw[65536] for _, hosts in nights[2:] for h in hosts if h.role == "compute"]
    row = _rule_row(doc, "bw_avg_gbps", "compute", size=65536)
    assert (row["median"], row["mad"], row["n"], row["nights"]) == (statistics.median(kept), _mad(kept), 8, 2)
    # the stored keep applies when --keep is not given again
    extra = write_bundle(tmp_path / "bundle-9", _fleet(9), night=9)
    doc = baseline.save(extra, store)
    assert doc["keep"] == 2 and [n["bundle"] for n in doc["nights"]] == [str(nights[3][0]), str(extra)]


def test_saving_the_same_bundle_twice_is_one_night(tmp_path: Path, nights) -> None:
    store = tmp_path / "store"
    baseline.save(nights[0][0], store)
    doc = baseline.save(nights[0][0], store)
    assert len(doc["nights"]) == 1
    assert _rule_row(doc, "bw_avg_gbps", "compute", size=65536)["n"] == 4


def test_fine_groups_split_by_nic_model_and_link_rate(tmp_path: Path) -> None:
    hosts = [Host("a1", bw={65536: 90.0}), Host("a2", bw={65536: 92.0}),
             Host("b1", ca_type="MT4125", link_rate=200, bw={65536: 45.0}),
             Host("b2", ca_type="MT4125", link_rate=200, bw={65536: 47.0})]
    doc = baseline.save(write_bundle(tmp_path / "b", hosts), tmp_path / "store")
    fine = {(r["ca_type"], r["link_rate_gbps"]): r for r in doc["stats"]
            if r["metric"] == "bw_avg_gbps" and r["size_bytes"] == 65536}
    assert fine[("MT4129", 400.0)]["median"] == statistics.median([90.0, 92.0])
    assert fine[("MT4125", 200.0)]["median"] == statistics.median([45.0, 47.0])
    assert fine[("MT4125", 200.0)]["platform"] == "linux"
    coarse = _rule_row(doc, "bw_avg_gbps", "compute", size=65536)
    assert coarse["median"] == statistics.median([90.0, 92.0, 45.0, 47.0]) and coarse["n"] == 4


def test_reference_facts_are_fleet_majorities(tmp_path: Path) -> None:
    hosts = [Host(f"h{i}", fw="28.39.1002") for i in range(3)] + [Host("odd", fw="28.36.1010", trust="pcp", pfc=(3, 4))]
    hosts.append(Host("s1", role="storage", pfc=()))
    doc = baseline.save(write_bundle(tmp_path / "b", hosts, [Switch(kmin=51200)]), tmp_path / "store")
    ref = doc["reference"]
    assert ref["fw_version_by_ca_type"]["MT4129"] == {"value": "28.39.1002", "count": 4, "total": 5}
    assert ref["fw_version_by_board_id"]["MT_0000000838"]["value"] == "28.39.1002"
    assert ref["trust_mode_by_role"]["compute"] == {"value": "dscp", "count": 3, "total": 4}
    assert ref["pfc_priorities_by_role"]["compute"]["value"] == "3"
    assert ref["pfc_priorities_by_role"]["storage"]["value"] == "none"
    assert ref["ecn_by_profile"]["sonic/ROCE_LOSSLESS"]["value"] == \
        "enabled=1,max=409600,min=51200,mode=ecn_green,pmax=20"


def test_diff_ranks_moved_medians_and_changed_facts(tmp_path: Path) -> None:
    store = tmp_path / "store"
    before = [Host(f"h{i}", bw={65536: 90.0 + i, 1048576: 95.0}) for i in range(4)]
    after = [Host(f"h{i}", fw="28.40.1000", bw={65536: 60.0 + i, 1048576: 94.0}) for i in range(4)]
    baseline.save(write_bundle(tmp_path / "a", before), store, name="before")
    baseline.save(write_bundle(tmp_path / "b", after, night=1), store, name="after")
    result = baseline.diff(baseline.load(baseline.resolve("before", store)), baseline.load(baseline.resolve("after", store)))
    top = result["moved"][0]
    assert top["size_bytes"] == 65536 and top["metric"] in ("bw_avg_gbps", "bw_peak_gbps", "bw_efficiency")
    small = next(r for r in result["moved"] if r["metric"] == "bw_avg_gbps" and r["size_bytes"] == 65536)
    m0, m1 = statistics.median([90.0 + i for i in range(4)]), statistics.median([60.0 + i for i in range(4)])
    assert (small["median_a"], small["median_b"], small["change"]) == (m0, m1, m1 - m0)
    big = next(r for r in result["moved"] if r["metric"] == "bw_avg_gbps" and r["size_bytes"] == 1048576)
    assert result["moved"].index(small) < result["moved"].index(big)
    assert {"category": "fw_version_by_ca_type", "group": "MT4129", "a": "28.39.1002", "b": "28.40.1000"} \
        in result["facts"]


def test_two_concurrent_saves_both_land(tmp_path: Path, nights) -> None:
    store = tmp_path / "store"
    prepared = [baseline.night_from_bundle(path) for path, _ in nights]
    start = threading.Barrier(len(prepared))
    errors: list[BaseException] = []

    def run(night: dict) -> None:
        try:
            start.wait()
            baseline.add_night(store, "default", night)
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n,)) for n in prepared]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    doc = baseline.load(store / "default.json")
    assert sorted(n["id"] for n in doc["nights"]) == sorted(n["id"] for n in prepared)
    assert not [p for p in store.iterdir() if p.name.endswith(".tmp")]


def test_corrupt_or_foreign_file_is_one_line_and_never_overwritten(tmp_path: Path, nights) -> None:
    store = tmp_path / "store"
    baseline.save(nights[0][0], store, name="good")
    bad = store / "bad.json"
    bad.write_text('{"format": "rdmatool-baseline/1", "nights": [', encoding="utf-8")
    foreign = store / "other.json"
    foreign.write_text(json.dumps({"format": "someone-else/3"}), encoding="utf-8")
    for path in (bad, foreign):
        with pytest.raises(BaselineError) as caught:
            baseline.load(path)
        assert str(caught.value).startswith(f"{path}: ") and "\n" not in str(caught.value)
    before = bad.read_bytes()
    with pytest.raises(BaselineError, match="bad.json"):
        baseline.save(nights[1][0], store, name="bad")
    assert bad.read_bytes() == before
    listed = {e["name"]: e for e in baseline.list_store(store)}
    assert len(listed["good"]["nights"]) == 1 and "error" in listed["bad"] and "error" in listed["other"]
    assert baseline.save(nights[1][0], store, name="good")["nights"][-1]["bundle"] == str(nights[1][0])


def test_resolve_name_path_and_errors(tmp_path: Path, nights) -> None:
    store = tmp_path / "store"
    baseline.save(nights[0][0], store)
    assert baseline.resolve("default", store) == store / "default.json"
    assert baseline.resolve(str(store / "default.json"), "elsewhere") == store / "default.json"
    assert baseline.resolve(str(store), "elsewhere") == store / "default.json"
    with pytest.raises(BaselineError, match="no baseline named 'nope'"):
        baseline.resolve("nope", store)
    with pytest.raises(BaselineError, match="baseline name"):
        baseline.save(nights[0][0], store, name="../escape")


def test_stats_for_rules_feeds_the_deviation_rule(tmp_path: Path, nights) -> None:
    store = tmp_path / "store"
    for path, _ in nights:
        baseline.save(path, store)
    stats = baseline.stats_for_rules(baseline.resolve("default", store))
    assert list(stats.columns[:8]) == ["metric", "kind", "role", "priority", "size_bytes", "median", "mad", "n"]
    assert not stats.duplicated(["metric", "kind", "role", "priority", "size_bytes"]).any()
    assert str(stats["priority"].dtype) == "Int64" and str(stats["size_bytes"].dtype) == "Int64"
    # a host that dropped to a third of its bandwidth is found; the others are not
    from rdmatool import bundle as bundle_io
    from rdmatool.table.analysis import analyse_bundle

    slow = [Host("gpu00", bw={65536: 30.0, 1048576: 30.0}), Host("gpu01", bw={65536: 91.0, 1048576: 94.0})]
    facts = analyse_bundle(bundle_io.read(write_bundle(tmp_path / "today", slow, night=7))).facts
    rule = Rule("bw", "deviation", Severity.WARNING, "", "", "", "",
                params={"metric": "bw_avg_gbps", "direction": "below", "mad_factor": 5, "min_deviation": 5})
    hit = kinds.deviation(facts, rule, kinds.Context(baseline=stats))
    assert set(hit["target"]) == {"gpu00"} and len(hit) == 2
    expected = stats[(stats["metric"] == "bw_avg_gbps") & (stats["role"] == "compute")]["median"]
    assert sorted(hit["baseline"]) == sorted(expected)
    assert isinstance(stats, pd.DataFrame)
