"""The rule kinds decide per distinct value what they used to decide per row (a fleet has a few priorities and
entities over a million facts): the same answers, of the same types, for any column."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from rdmatool.rules import kinds

_PRIORITIES = st.lists(st.one_of(st.none(), st.integers(min_value=0, max_value=7)), max_size=12)
_EXPECTED = st.one_of(
    st.none(), st.integers(0, 9), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=3),
    st.dictionaries(st.one_of(st.integers(0, 7), st.just("default")),
                    st.one_of(st.none(), st.integers(0, 9), st.floats(allow_nan=False), st.text(max_size=3)),
                    max_size=4))


@settings(max_examples=300, deadline=None)
@given(_PRIORITIES, _EXPECTED, st.sampled_from(["Int64", "object", "float64"]))
def test_the_expected_value_per_priority_is_the_per_row_map(priorities, expected, dtype) -> None:
    column = pd.Series(priorities, dtype=dtype, index=np.arange(len(priorities)) * 2 + 5, name="priority")

    def fn(pr):
        return kinds._expected_for(expected, pr)

    pd.testing.assert_series_equal(kinds._per_value(column, fn), column.map(fn))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.just(np.nan), st.integers(0, 3),
                          st.sampled_from(["mlx5_0/1", "mlx5_0/2", "mlx5_1/1", "eth0", "a/b/c", "/x", ""])),
                max_size=12))
def test_the_device_of_each_entity_is_what_the_per_row_split_gives(entities) -> None:
    entity = pd.Series(entities, dtype=object, index=np.arange(len(entities))[::-1], name="entity")
    per_row = pd.Series([e.split("/", 1)[0] if isinstance(e, str) else np.nan for e in entity], index=entity.index,
                        dtype=object, name="entity")
    pd.testing.assert_series_equal(kinds._device(entity), per_row)
