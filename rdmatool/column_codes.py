"""A table column as integer codes: (a code per row, -1 where missing; the distinct values, an object array).

A fleet's sample and fact tables hold millions of rows but a few hundred metrics and a few thousand targets. Selecting
rows by metric, or finding each target's first row, is then an integer comparison or a hash of integers instead of one
over millions of Python strings. The sample table gets its codes from the store's string pool, the facts from the
analysis; the frame, the triage, the analysis and the facts' query all select through the helpers here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

Codes = tuple[np.ndarray, np.ndarray]


def factorized(values) -> Codes:
    """A column's codes (-1 where missing) and its distinct values in order of appearance."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return codes, np.asarray(uniques, dtype=object)


def fitting(codes: dict | None, column: str, rows: int) -> Codes | None:
    """The column's codes from a table's `codes` (column → Codes) when they are the codes of exactly `rows` rows —
    the table they travel with — else None (a frame cut or sorted since: compare the strings)."""
    if codes and column in codes and len(codes[column][0]) == rows:
        return codes[column]
    return None


def rows_of(codes: Codes, wanted) -> np.ndarray:
    """A boolean mask of the rows whose value is one of `wanted`."""
    row_codes, uniques = codes
    names = set(wanted)
    hits = np.flatnonzero(np.fromiter((u in names for u in uniques.tolist()), dtype=bool, count=len(uniques)))
    if len(hits) == 1:
        return row_codes == hits[0]
    return np.isin(row_codes, hits)


def mask(frame: pd.DataFrame, codes: dict | None, column: str, wanted) -> np.ndarray:
    """Which rows of the frame hold one of `wanted` in `column`: by its codes when they fit the frame, else by
    comparing the strings."""
    known = fitting(codes, column, len(frame))
    if known is not None:
        return rows_of(known, wanted)
    return frame[column].isin(wanted).to_numpy(dtype=bool)


def first_rows(frame: pd.DataFrame, codes: dict | None, column: str) -> np.ndarray:
    """The position of the first row of each distinct value of `column`, ascending: by the codes when they fit the
    frame, else a hash of the strings."""
    known = fitting(codes, column, len(frame))
    if known is not None:
        return first_of_each(known[0])
    return np.flatnonzero(~pd.Series(frame[column].to_numpy()).duplicated().to_numpy())


def first_of_each(ids: np.ndarray) -> np.ndarray:
    """The position of the first occurrence of each distinct value of an array, ascending (as pandas' `duplicated`
    keeps them; a missing code, -1, is one value like any other)."""
    return _extreme_of_each(ids, last=False)


def last_of_each(ids: np.ndarray) -> np.ndarray:
    """The position of the last occurrence of each distinct value of an array, ascending (each series' latest reading
    of rows in snapshot order)."""
    return _extreme_of_each(ids, last=True)


def _extreme_of_each(ids: np.ndarray, last: bool) -> np.ndarray:
    """Integer ids in a dense range (codes, series ids) are bucketed by value with one unbuffered `maximum.at` /
    `minimum.at`: at 9,000,000 rows about a third of the time of a hash table (pandas' `duplicated`), which is
    kept for anything else (strings, floats, ids spread far wider than the rows)."""
    ids = np.asarray(ids)
    n = len(ids)
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    if ids.dtype.kind not in "iu":
        return np.flatnonzero(~pd.Series(ids).duplicated(keep="last" if last else "first").to_numpy())
    low, high = int(ids.min()), int(ids.max())
    if high - low > 4 * n + 1024:
        return np.flatnonzero(~pd.Series(ids).duplicated(keep="last" if last else "first").to_numpy())
    buckets = (ids - low).astype(np.intp, copy=False)
    positions = np.arange(n, dtype=np.intp)
    if last:
        chosen = np.full(high - low + 1, -1, dtype=np.intp)
        np.maximum.at(chosen, buckets, positions)
        chosen = chosen[chosen >= 0]
    else:
        chosen = np.full(high - low + 1, n, dtype=np.intp)
        np.minimum.at(chosen, buckets, positions)
        chosen = chosen[chosen < n]
    keep = np.zeros(n, dtype=bool)
    keep[chosen] = True
    return np.flatnonzero(keep)
