"""The column codes' selections answer exactly what the string comparisons they replace answer."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rdmatool import column_codes

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


def _by_pandas(ids, keep: str) -> list[int]:
    return np.flatnonzero(~pd.Series(ids).duplicated(keep=keep).to_numpy()).tolist()


def test_first_and_last_of_each_equal_pandas_duplicated() -> None:
    rng = np.random.default_rng(7)
    cases = [
        rng.integers(0, 50, size=2000),  # dense ids, many repeats (series ids of a few snapshots)
        rng.integers(-1, 5, size=300),  # codes with missing (-1) as a value of its own
        np.concatenate([rng.permutation(1000), rng.permutation(1000)]),  # each id twice, shuffled
        np.array([10**12, 3, 10**12, 3, 7]),  # spread far wider than the rows: the hash path
        rng.integers(0, 2**31, size=50).astype(np.uint32),
        np.array(["b", "a", "b", None, "a", None], dtype=object),  # not integers: the hash path
        np.array([0.5, np.nan, 0.5, np.nan]),
        np.array([4]),
    ]
    for ids in cases:
        assert column_codes.first_of_each(ids).tolist() == _by_pandas(ids, "first"), ids
        assert column_codes.last_of_each(ids).tolist() == _by_pandas(ids, "last"), ids
    assert column_codes.first_of_each(np.zeros(0, dtype=np.int64)).tolist() == []
    assert column_codes.last_of_each(np.zeros(0, dtype=np.int64)).tolist() == []


def test_last_of_each_takes_the_latest_position_not_the_largest_value() -> None:
    ids = np.array([2, 0, 2, 1, 0, 2])
    assert column_codes.last_of_each(ids).tolist() == [3, 4, 5]
    assert column_codes.first_of_each(ids).tolist() == [0, 1, 3]
