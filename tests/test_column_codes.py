"""The column codes' selections answer exactly what the string comparisons they replace answer."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rdmatool.table import column_codes

FRAME = pd.DataFrame({
    "metric": ["rx_bytes", "tx_bytes", None, "rx_bytes", "port_state", "tx_bytes", "rx_bytes"],
    "target": ["h2", "h1", "h1", "h2", None, "h3", "h1"],
})


def _codes() -> dict:
    return {c: column_codes.factorized(FRAME[c].to_numpy()) for c in FRAME.columns}


def test_factorized_gives_minus_one_for_missing_and_values_in_order_of_appearance() -> None:
    codes, uniques = column_codes.factorized(FRAME["metric"].to_numpy())
    assert list(uniques) == ["rx_bytes", "tx_bytes", "port_state"]
    assert codes.tolist() == [0, 1, -1, 0, 2, 1, 0]


def test_mask_by_codes_equals_the_string_comparison() -> None:
    for wanted in (["rx_bytes"], ["rx_bytes", "port_state"], ["absent"], []):
        by_codes = column_codes.mask(FRAME, _codes(), "metric", wanted)
        by_strings = column_codes.mask(FRAME, None, "metric", wanted)
        assert by_codes.tolist() == FRAME["metric"].isin(wanted).tolist() == by_strings.tolist()


def test_codes_of_other_rows_are_not_used() -> None:
    # codes of a longer table (the frame was cut since): the strings decide, not the stale codes
    stale = {"metric": (np.zeros(len(FRAME) + 1, dtype=np.intp), np.array(["tx_bytes"], dtype=object))}
    assert column_codes.fitting(stale, "metric", len(FRAME)) is None
    assert column_codes.mask(FRAME, stale, "metric", ["tx_bytes"]).tolist() == [False, True, False, False, False,
                                                                               True, False]


def test_first_rows_by_codes_equals_each_values_first_row() -> None:
    expected = np.flatnonzero(~FRAME["target"].duplicated().to_numpy()).tolist()
    assert expected == [0, 1, 4, 5]
    assert column_codes.first_rows(FRAME, _codes(), "target").tolist() == expected
    assert column_codes.first_rows(FRAME, None, "target").tolist() == expected


def test_as_texts_turns_categories_back_into_objects_and_leaves_the_rest() -> None:
    part = pd.DataFrame({"target": pd.Categorical(["b", "a", "b"]), "value": [1.0, 2.0, 3.0],
                         "role": pd.Series(["x", None, "y"], dtype=object)})
    plain = column_codes.as_texts(part)
    assert plain["target"].dtype == object and plain["target"].tolist() == ["b", "a", "b"]
    assert plain["value"].dtype == np.float64 and plain["role"].tolist() == ["x", None, "y"]
    # grouped by name in name order, as object columns group (categories group in the order met)
    assert list(plain.groupby("target", sort=True).groups) == ["a", "b"]


def test_a_categorical_column_selects_by_its_own_codes_and_reads_back_none_where_missing() -> None:
    """A table's text column held as categories (the sample table's, over the store's pool): the mask and the first
    rows come from its codes, exactly as the strings say; cut rows read as objects, None (not NaN) where missing."""
    pool = ["port_state", "rx_bytes", "tx_bytes", "h1", "h2", "h3"]  # a pool in its own order, unused values too
    coded = pd.DataFrame({c: pd.Categorical(FRAME[c], categories=pool) for c in FRAME.columns})
    assert coded["metric"].cat.codes.tolist() == [1, 2, -1, 1, 0, 2, 1]
    for wanted in (["rx_bytes"], ["rx_bytes", "port_state"], ["absent"], []):
        assert column_codes.mask(coded, None, "metric", wanted).tolist() == FRAME["metric"].isin(wanted).tolist()
    assert column_codes.first_rows(coded, None, "target").tolist() == [0, 1, 4, 5]
    plain = column_codes.as_texts(coded.take([2, 4]))
    assert plain["metric"].dtype == object and plain["metric"].tolist() == [None, "port_state"]
    assert plain["target"].tolist() == ["h1", None] and plain.index.tolist() == [2, 4]
    only = column_codes.as_texts(coded, ("metric",))  # the columns named, the rest left categories
    assert only["metric"].dtype == object and isinstance(only["target"].dtype, pd.CategoricalDtype)


def test_a_lookup_by_blocks_equals_one_take(monkeypatch) -> None:
    rng = np.random.default_rng(3)
    table = rng.random(50) < 0.5
    row_codes = rng.integers(-1, 49, size=1000).astype(np.int32)
    expected = table.take(row_codes)
    assert column_codes.looked_up(table, row_codes).tolist() == expected.tolist()
    monkeypatch.setattr(column_codes, "_BLOCK", 64)  # blocks of 64 rows, the last one short
    assert column_codes.looked_up(table, row_codes).tolist() == expected.tolist()
    assert column_codes.looked_up(table, row_codes[:0]).tolist() == []
