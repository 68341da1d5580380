"""The facts are a plain frame whose text columns are categoricals over the sample table's string pool: growing them
keeps them so and leaves the facts grown from as they were, and the query cuts rows with plain texts, exactly what
the same question put to the facts as plain objects gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rdmatool.table import analysis, frame
from rdmatool.table.facts import TEXT_COLUMNS, FactQuery, plain

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo-bundle"


@pytest.fixture(scope="module")
def demo() -> tuple[frame.SampleTable, analysis.Analysis]:
    table = frame.load(DEMO, write_store=False)
    return table, analysis.analyse(table)


def test_the_text_columns_are_categoricals_over_the_string_pool(demo) -> None:
    table, a = demo
    for c in (*TEXT_COLUMNS, "flag"):
        assert isinstance(a.facts[c].dtype, pd.CategoricalDtype), c
    for c in ("entity", "raw_key"):  # the pool's strings first, in the pool's order: the sample rows' codes
        pool = table.frame[c].cat.categories
        assert a.facts[c].cat.categories[:len(pool)].equals(pool), c
    assert {"symbol_errors_per_s", "counter_reset", "triage_verdict"} & set(a.facts["metric"].cat.categories)


def test_the_query_answers_as_over_the_plain_facts(demo) -> None:
    _, a = demo
    spelled = plain(a.facts)
    assert spelled["target"].dtype == object and spelled["flag"].dtype != "category"
    other = FactQuery(spelled)  # the same facts as plain objects
    rng = np.random.default_rng(7)
    at = np.sort(rng.choice(len(spelled), 200, replace=False))
    pd.testing.assert_frame_equal(a.query.take(at), spelled.take(at), check_exact=True)
    pd.testing.assert_frame_equal(a.query.frame(at, ["value", "target", "flag"]),
                                  spelled[["value", "target", "flag"]].take(at), check_exact=True)
    for metric in ("port_state", "link_layer", "triage_verdict", "no_such_metric"):
        pd.testing.assert_frame_equal(a.query.of_metric(metric), other.of_metric(metric), check_exact=True)
    assert a.query.targets() == other.targets() == set(spelled["target"])
    target = sorted(a.query.targets())[0]
    pd.testing.assert_frame_equal(a.query.rows(target=target), other.rows(target=target), check_exact=True)
    pd.testing.assert_frame_equal(a.query.rows(metric="port_state", entity=["mlx5_0"]),
                                  other.rows(metric="port_state", entity=["mlx5_0"]), check_exact=True)
    assert a.query.targets_where({"kind": "host"}) == other.targets_where({"kind": "host"})
    assert a.query.codes("metric")[0] is not None and len(a.query.codes("metric")[0]) == len(spelled)


def test_growing_keeps_the_categoricals_and_the_facts_grown_from(demo) -> None:
    _, a = demo
    before = plain(a.facts)
    one = before.iloc[:3].assign(metric="judge_one", text="first")
    two = before.iloc[3:5].assign(metric=["judge_two", None], text="second")
    grown_one, grown_two = analysis.grown_by(a, one), analysis.grown_by(a, two)
    for grown, part in ((grown_one, one), (grown_two, two)):
        assert isinstance(grown.facts["metric"].dtype, pd.CategoricalDtype)
        pd.testing.assert_frame_equal(plain(grown.facts), pd.concat([before, part], ignore_index=True),
                                      check_exact=True)
        assert FactQuery.of(grown) is grown.query and grown.query.reads(grown.facts)
    pd.testing.assert_frame_equal(plain(a.facts), before)  # the facts grown from are as they were
    assert "judge_one" not in set(a.facts["metric"].cat.categories)
    assert analysis.grown_by(a, one.iloc[0:0]) is a
