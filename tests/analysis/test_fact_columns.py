"""FactColumns (rdmatool.table.fact_columns): an analysis' facts held as columns answer every question exactly as the frame
they stand for would, grow without disturbing the facts they grew from, and a diagnosis never makes them into one
frame."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rdmatool.diagnose.pipeline import diagnose_analysis
from rdmatool.table import analysis, fact_columns, frame
from rdmatool.table.facts import FactQuery
from tests.pods import bundle as pods

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo-bundle"


@pytest.fixture(scope="module")
def pod_path(tmp_path_factory) -> Path:
    pod = pods.healthy_pod()
    pods.bump(pod.host("gpu02").port("mlx5_0").pma, "symbol_error", -50)  # a reset
    pods.bump(pod.host("gpu03").port("mlx5_0").pma, "port_xmit_discards", 700)
    return pods.write(pod, tmp_path_factory.mktemp("pod") / "b")


def built(path: Path) -> analysis.Analysis:
    return analysis.analyse(frame.load(path, write_store=False))


def held(a: analysis.Analysis) -> fact_columns.FactColumns:
    source = a.fact_source
    assert isinstance(source, fact_columns.FactColumns)
    return source


@pytest.mark.parametrize("which", ["pod", "demo"])
def test_every_question_is_answered_as_the_frame_would(which: str, pod_path: Path) -> None:
    a = built(pod_path if which == "pod" else DEMO)
    columns = held(a)
    whole = columns.frame()  # made here, compared with what the columns gave before it was made
    fresh = held(built(pod_path if which == "pod" else DEMO))
    assert fresh.frame_if_made() is None
    rng = np.random.default_rng(7)
    n = len(whole)
    tail = np.arange(fresh.n_base, n)  # the derived, efficiency and triage facts
    assert len(tail) > 0
    for at in (rng.choice(n, 200, replace=False), np.sort(rng.choice(n, 200, replace=False)), tail,
               np.array([n - 1, 0, -1]), np.zeros(0, dtype=np.intp)):
        pd.testing.assert_frame_equal(fresh.take(at), whole.take(at), check_exact=True)
        some = ["value", "target", "priority", "flag"]  # a few columns, in an order of their own
        pd.testing.assert_frame_equal(fresh.take(at, some), whole[some].take(at), check_exact=True)
        for name in fact_columns.FACT_COLUMNS:
            pd.testing.assert_series_equal(fresh.column(name, at), whole[name].take(at), check_exact=True)
        assert fresh.labels(at).equals(whole.index.take(at))
    pd.testing.assert_frame_equal(fresh.none(), whole.iloc[0:0])
    for name, wanted in (("kind", ["host"]), ("role", ["compute"]), ("platform", ["linux", "sonic"]),
                         ("metric", ["port_state", "triage_verdict"]), ("text", ["Active"]), ("priority", [3]),
                         ("target", [whole["target"].iloc[-1]])):
        hits = fresh.isin(name, wanted)
        assert (hits == whole[name].isin(wanted).to_numpy()).all(), name
        assert hits.any(), name  # each question has an answer: a broken isin cannot pass as "nothing matched"
    for name in ("target", "role", "text", "flag"):
        assert fresh.distinct(name) == set(whole[name].unique()), name
    for name in ("metric", "target", "entity"):
        codes, uniques = fresh.codes(name)
        assert len(set(uniques.tolist())) == len(uniques)
        named = np.array([*uniques.tolist(), None], dtype=object)[codes]
        assert (named == whole[name].to_numpy(dtype=object)).all(), name
    with pytest.raises(IndexError):
        fresh.take([n])
    assert fresh.frame_if_made() is None  # nothing above needed the whole frame


def test_the_query_over_columns_answers_as_the_query_over_the_frame(pod_path: Path) -> None:
    a = built(pod_path)
    lazy, plain = a.query, FactQuery(held(a).frame().copy())
    targets = sorted(plain.targets())
    assert lazy.targets() == set(targets) and len(targets) > 2
    for metric in ("port_state", "symbol_errors_per_s", "counter_reset", "triage_verdict", "no_such_metric"):
        assert list(lazy.positions(metric)) == list(plain.positions(metric)), metric
        pd.testing.assert_frame_equal(lazy.of_metric(metric), plain.of_metric(metric))
    where = {"kind": "host", "link_layer": ["InfiniBand", "Ethernet"]}
    assert lazy.targets_where(where) == plain.targets_where(where) != set()
    assert list(lazy.select("port_state", {"kind": "host"})) == list(plain.select("port_state", {"kind": "host"}))
    for target in targets:
        pd.testing.assert_frame_equal(lazy.rows(target=target, metric=["port_state", "link_rate_gbps"]),
                                      plain.rows(target=target, metric=["port_state", "link_rate_gbps"]))
        assert lazy.kind_platform(target) == plain.kind_platform(target)
    pd.testing.assert_frame_equal(lazy.rows(target="nobody"), plain.rows(target="nobody"))
    at = lazy.positions("port_state")
    pd.testing.assert_frame_equal(lazy.frame(at, ["target", "entity", "text"]),
                                  plain.frame(at, ["target", "entity", "text"]))


def test_growing_twice_from_the_same_facts_keeps_both_apart() -> None:
    """Two judges grow the same analysis: neither one's facts may be written over by the other's."""
    a = built(DEMO)
    columns = held(a)
    before = columns.frame().copy()
    one = before.iloc[:3].assign(metric="judge_one", text="first")
    two = before.iloc[3:5].assign(metric="judge_two", text="second")
    grown_one = columns.grown(one)
    grown_two = columns.grown(two)
    assert isinstance(grown_one, fact_columns.FactColumns) and isinstance(grown_two, fact_columns.FactColumns)
    pd.testing.assert_frame_equal(grown_one.frame(), pd.concat([before, one], ignore_index=True))
    pd.testing.assert_frame_equal(grown_two.frame(), pd.concat([before, two], ignore_index=True))
    pd.testing.assert_frame_equal(columns.frame(), before)  # the facts grown from are as they were
    # and one grown past its room copies rather than failing
    big = pd.concat([before] * 2, ignore_index=True).iloc[:columns.capacity]
    grown_big = grown_one.grown(big)
    assert len(grown_big) == len(before) + 3 + len(big)
    pd.testing.assert_frame_equal(grown_big.take([len(before) + 3]), big.iloc[[0]].set_axis([len(before) + 3]))


def test_a_part_the_columns_cannot_hold_as_typed_is_concatenated_as_pandas_would() -> None:
    """A part whose value column is text: the facts become the frame pd.concat makes, codes and all."""
    columns = held(built(DEMO))
    before = columns.frame().copy()
    odd = before.iloc[:2].assign(value=["a", "b"], metric=["a_new_metric", None])
    grown = columns.grown(odd)
    assert isinstance(grown, pd.DataFrame)
    pd.testing.assert_frame_equal(grown, pd.concat([before, odd], ignore_index=True))


def test_a_diagnosis_never_makes_the_whole_frame(pod_path: Path) -> None:
    a = built(pod_path)
    result = diagnose_analysis(a)
    assert result.findings  # the pod has a reset and discards to report
    assert held(a).frame_if_made() is None
    assert {f.target for f in result.findings} >= {"gpu03"}
    # nor spells out the columns the facts read from the samples through their rows (but platform: a fabric with
    # switches has its judges pick them by platform)
    assert not set(held(a)._codes) & {"entity", "raw_key"}


def test_columns_read_through_the_sample_rows_are_the_samples_at_those_rows(pod_path: Path) -> None:
    """entity, raw_key, platform, priority and size_bytes of the base facts are read through their sample rows: at
    any positions, whole, and after a growth, they are what the samples hold at those rows."""
    table = frame.load(pod_path, write_store=False)
    a = analysis.analyse(table)
    columns = held(a)
    samples, _, _ = analysis._in_snapshot_order(table)
    rows = columns._sample_rows
    assert rows is not None and len(rows) == columns.n_base
    rng = np.random.default_rng(3)
    at = rng.choice(columns.n_base, 300, replace=False)
    for name in ("entity", "raw_key", "platform", "priority", "size_bytes"):
        expected = samples[name].to_numpy(dtype=object).take(rows.take(at))
        got = columns.column(name, at).to_numpy(dtype=object)
        assert [None if pd.isna(x) else x for x in got] == [None if pd.isna(x) else x for x in expected], name
    grown = columns.grown(columns.take(np.arange(5)).reset_index(drop=True))
    mixed = np.array([grown.n - 1, 0, grown.n - 5, 7])
    pd.testing.assert_frame_equal(grown.take(mixed).reset_index(drop=True),
                                  pd.concat([columns.frame(), columns.take(np.arange(5))], ignore_index=True)
                                  .take(mixed).reset_index(drop=True), check_exact=True)
    codes, uniques = columns.codes("entity")  # read whole: spelled out once, the same values
    assert (np.array([*uniques.tolist(), None], dtype=object)[codes]
            == columns.frame()["entity"].to_numpy(dtype=object)).all()


def test_the_analysis_gives_its_facts_as_a_frame_on_first_read(pod_path: Path) -> None:
    a = built(pod_path)
    assert held(a).frame_if_made() is None
    facts = a.facts
    assert isinstance(facts, pd.DataFrame) and list(facts.columns) == fact_columns.FACT_COLUMNS
    assert a.facts is facts  # made once
    assert a.query.reads(facts) and a.query.reads(a.fact_source)
    assert FactQuery.of(a) is a.query
