"""FactQuery: every selection is the frame a boolean mask over the whole facts gives (same rows, order and labels),
and one query serves a whole diagnosis through the analysis."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pandas.testing as pdt

from rdmatool.table import frame as frames
from rdmatool.table.analysis import FACT_COLUMNS, Analysis
from rdmatool.table.facts import FactQuery


def _fact(target, kind, platform, entity, metric, value=None, text=None, priority=None) -> dict:
    return {"target": target, "kind": kind, "platform": platform, "role": "compute" if kind == "host" else None,
            "entity": entity, "metric": metric, "priority": priority, "size_bytes": None, "value": value,
            "text": text, "raw_key": metric, "window_s": None, "delta": None, "flag": ""}


def _facts() -> pd.DataFrame:
    rows = [
        _fact("gpu01", "host", "linux", "mlx5_0/1", "netdev", text="ens1f0np0"),
        _fact("leaf1", "switch", "sonic", "Ethernet0", "pfc_enabled", 1, priority=3),
        _fact("gpu01", "host", "linux", "ens1f0np0", "pfc_enabled", 0, priority=3),
        _fact("gpu01", "host", "linux", "mlx5_0/1", "link_layer", text="Ethernet"),
        _fact("gpu02", "host", "linux", "mlx5_0/1", "link_layer", text="InfiniBand"),
        _fact("gpu01", "host", "linux", "ens1f0np0", "pfc_enabled", 1, priority=4),
        _fact("gpu02", "host", "linux", "mlx5_0/1", "link_rate_gbps", 400.0),
        _fact("gpu01", "host", "linux", "mlx5_0/1", "link_rate_gbps", 100.0),
        _fact("gpu01", "host", "linux", "ens1f0np0", "trust_mode", text="pcp"),
    ]
    facts = pd.DataFrame(rows, columns=FACT_COLUMNS)
    facts.index = facts.index * 10  # labels that are not positions: selections must keep them
    return facts.astype({"priority": "Int64", "size_bytes": "Int64"})


def test_by_metric_is_the_masked_frame():
    facts = _facts()
    query = FactQuery(facts)
    pdt.assert_frame_equal(query.of_metric("pfc_enabled"), facts[facts["metric"] == "pfc_enabled"])
    both = query.of_metric(["link_rate_gbps", "netdev", "link_rate_gbps"])
    pdt.assert_frame_equal(both, facts[facts["metric"].isin(["link_rate_gbps", "netdev"])])
    assert query.positions("absent").size == 0 and query.of_metric(["absent"]).empty
    pdt.assert_frame_equal(query.frame(query.positions("pfc_enabled"), ["target", "priority"]),
                           facts.loc[facts["metric"] == "pfc_enabled", ["target", "priority"]])


def test_select_and_targets_where():
    facts = _facts()
    query = FactQuery(facts)
    at = query.select("pfc_enabled", {"kind": "host", "priority": [3]})
    pdt.assert_frame_equal(query.take(at), facts.loc[[20]])
    assert query.of_metric("link_rate_gbps").loc[
        query.column("target", query.positions("link_rate_gbps")).isin(query.layer_targets(["Ethernet"]))
    ]["target"].tolist() == ["gpu01"]
    assert list(query.take(query.select("link_rate_gbps", {"link_layer": "Ethernet"}))["target"]) == ["gpu01"]
    assert query.targets_where({"kind": "host"}) == {"gpu01", "gpu02"}
    assert query.targets_where({"kind": "host", "link_layer": ["InfiniBand"]}) == {"gpu02"}
    assert query.targets_with("trust_mode") == {"gpu01"}


def test_by_target_is_the_masked_frame():
    facts = _facts()
    query = FactQuery(facts)
    pdt.assert_frame_equal(query.of_target("gpu01"), facts[facts["target"] == "gpu01"])
    assert query.of_target("nobody") is None
    mask = (facts["target"] == "gpu01") & facts["metric"].isin(["link_rate_gbps", "pfc_enabled"])
    pdt.assert_frame_equal(query.of_target_metric("gpu01", ["link_rate_gbps", "pfc_enabled"]), facts[mask])
    pdt.assert_frame_equal(query.rows("gpu01", "ens1f0np0", "pfc_enabled", 4), facts.loc[[50]])
    pdt.assert_frame_equal(query.rows(metric="link_rate_gbps"), facts[facts["metric"] == "link_rate_gbps"])
    assert query.rows("nobody").empty


def test_single_values_and_what_a_target_is():
    query = FactQuery(_facts())
    assert [v for v, _ in query.values("gpu01", "ens1f0np0", "pfc_enabled")] == [0.0, 1.0]
    assert [v for v, _ in query.values("gpu01", "ens1f0np0", "pfc_enabled", 4)] == [1.0]
    assert [t for _, t in query.values("gpu01", "ens1f0np0", "trust_mode")] == ["pcp"]
    assert query.values("gpu01", "ens1f0np0", "pfc_enabled", 7) == []
    assert query.values("nobody", "x", "y") == []
    assert query.kind_platform("leaf1") == ("switch", "sonic")
    assert query.kind_platform("nobody") is None
    assert query.entity_with_text("gpu01", "netdev", "ens1f0np0") == "mlx5_0/1"
    assert query.entity_with_text("gpu01", "netdev", None) is None


def test_empty_facts_answer_nothing():
    query = FactQuery(pd.DataFrame())
    assert query.positions("x").size == 0
    assert query.of_target("gpu01") is None
    assert query.rows("gpu01", metric="x").empty
    assert query.values("gpu01", "e", "m") == []
    assert query.kind_platform("gpu01") is None


def test_one_query_per_analysis():
    facts = _facts()
    analysis = Analysis(facts=facts, table=frames.SampleTable(pd.DataFrame(columns=frames.COLUMNS)),
                        window_s=None)
    assert isinstance(analysis.query, FactQuery) and analysis.query.facts is facts
    assert FactQuery.of(analysis) is analysis.query
    # an object that only carries facts gets a query of its own; one without facts, an empty one
    plain = SimpleNamespace(facts=facts)
    assert FactQuery.of(plain).facts is facts and FactQuery.of(plain) is not FactQuery.of(plain)
    assert FactQuery.of(object()).facts.empty
    assert np.array_equal(FactQuery.of(plain).positions("trust_mode"), [8])
