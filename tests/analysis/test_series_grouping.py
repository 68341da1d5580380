"""Each series' last row and the pairing of two snapshots' series, by sorting the ids, answer exactly what the pandas
hashes they replace answer: for ids in runs (a loader's table), in any order, repeated, negative or not numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from rdmatool.table import frame as frames

_IDS = st.lists(st.integers(min_value=-(2**62), max_value=2**62), max_size=60)
_SMALL_IDS = st.lists(st.integers(min_value=0, max_value=6), max_size=60)  # many repeats


def _hashed_last(series: np.ndarray, rows: np.ndarray) -> np.ndarray:
    return rows[~pd.Series(series[rows]).duplicated(keep="last").to_numpy()]


@settings(max_examples=300, deadline=None)
@given(st.one_of(_IDS, _SMALL_IDS), st.data())
def test_last_of_each_equals_the_hash(ids: list[int], data) -> None:
    series = np.array(ids, dtype=np.int64)
    every = np.arange(len(series))
    assert frames.last_of_each(series).tolist() == _hashed_last(series, every).tolist()
    chosen = sorted(data.draw(st.sets(st.integers(0, max(len(series) - 1, 0)), max_size=len(series))))
    rows = np.array([r for r in chosen if r < len(series)], dtype=np.intp)
    assert frames.last_of_each(series, rows).tolist() == _hashed_last(series, rows).tolist()


def test_last_of_each_keeps_the_last_of_repeats_in_row_order() -> None:
    series = np.array([7, 3, 7, 7, 3, 9], dtype=np.int64)
    assert frames.last_of_each(series).tolist() == [3, 4, 5]
    assert frames.last_of_each(series, np.array([0, 1, 2])).tolist() == [1, 2]
    assert frames.last_of_each(series, np.array([], dtype=np.intp)).tolist() == []


def test_last_of_each_of_ids_that_are_not_numbers_hashes_them() -> None:
    series = np.array(["b", "a", "b", None], dtype=object)
    assert frames.last_of_each(series).tolist() == [1, 2, 3]


@settings(max_examples=300, deadline=None)
@given(st.one_of(_IDS, _SMALL_IDS), st.one_of(_IDS, _SMALL_IDS))
def test_positions_in_equals_get_indexer(haystack: list[int], needles: list[int]) -> None:
    distinct = np.array(list(dict.fromkeys(haystack)), dtype=np.int64)  # what it is given: one row per series
    asked = np.array(needles, dtype=np.int64)
    expected = pd.Index(distinct).get_indexer(asked)
    found = frames.positions_in(distinct, asked)
    assert found.tolist() == expected.tolist()
    assert (found >= 0).sum() == np.isin(asked, distinct).sum()


def test_positions_in_of_a_snapshot_pair() -> None:
    first = np.array([40, 10, 30], dtype=np.int64)
    last = np.array([10, 20, 30, 40], dtype=np.int64)
    assert frames.positions_in(last, first).tolist() == [3, 0, 2]
    assert frames.positions_in(last[:0], first).tolist() == [-1, -1, -1]
