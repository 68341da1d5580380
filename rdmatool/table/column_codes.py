"""A table column as integer codes: (a code per row, -1 where missing; the distinct values, an object array).

A fleet's sample and fact tables hold millions of rows but a few hundred metrics and a few thousand targets: selecting
rows by metric, or finding each target's first row, is an integer comparison or a hash of integers instead of one over
millions of Python strings. Both tables' text columns are categoricals (their codes are the codes).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

Codes = tuple[np.ndarray, np.ndarray]
_BLOCK = 1 << 20  # rows per `looked_up` block


def factorized(values) -> Codes:
    """A column's codes (-1 where missing) and its distinct values in order of appearance."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return codes, np.asarray(uniques, dtype=object)


def of_categorical(values: pd.Series) -> Codes:
    """A categorical column's codes and its categories as an object array."""
    return values.cat.codes.to_numpy(), np.asarray(values.cat.categories, dtype=object)


def fitting(codes: dict | None, column: str, rows: int, frame=None) -> Codes | None:
    """The column's codes from `codes` (column → Codes) when they are the codes of exactly `rows` rows — the table
    they travel with — else those of the frame's column when it is a categorical, else None (compare the strings)."""
    if codes and column in codes and len(codes[column][0]) == rows:
        return codes[column]
    if isinstance(frame, pd.DataFrame) and column in frame.columns and isinstance(frame[column].dtype,
                                                                                   pd.CategoricalDtype):
        return of_categorical(frame[column])
    return None


def rows_of(codes: Codes, wanted) -> np.ndarray:
    """A boolean mask of the rows whose value is one of `wanted`."""
    row_codes, uniques = codes
    names = set(wanted)
    hits = np.flatnonzero(np.fromiter((u in names for u in uniques.tolist()), dtype=bool, count=len(uniques)))
    if len(hits) == 1:
        return row_codes == hits[0]
    # A lookup of each row's code in a table of the wanted ones (code -1 reads the table's last entry, False): one
    # pass, five times faster than np.isin over a fleet's 8,000,000 codes.
    table = np.zeros(len(uniques) + 1, dtype=bool)
    table[hits] = True
    return looked_up(table, row_codes)


def looked_up(table: np.ndarray, row_codes: np.ndarray) -> np.ndarray:
    """`table.take(row_codes)`, a block of rows at a time: numpy makes int32 indices int64 first, 72 MB of fresh
    memory at a fleet's 9,000,000 rows whose first touch costs more than the lookup; a block's 8 MB is reused."""
    if len(row_codes) <= _BLOCK or row_codes.dtype == np.intp:
        return table.take(row_codes)
    out = np.empty(len(row_codes), dtype=table.dtype)
    for start in range(0, len(row_codes), _BLOCK):
        table.take(row_codes[start:start + _BLOCK], out=out[start:start + _BLOCK])
    return out


def mask(frame: pd.DataFrame, codes: dict | None, column: str, wanted) -> np.ndarray:
    """Which rows of the frame hold one of `wanted` in `column`: by its codes when they fit the frame, else by
    comparing the strings."""
    known = fitting(codes, column, len(frame), frame)
    return rows_of(known, wanted) if known is not None else frame[column].isin(wanted).to_numpy(dtype=bool)


def first_rows(frame: pd.DataFrame, codes: dict | None, column: str) -> np.ndarray:
    """The position of the first row of each distinct value of `column`, ascending: a hash of the codes when they fit
    the frame, else of the strings."""
    known = fitting(codes, column, len(frame), frame)
    return first_of_each(known[0] if known is not None else frame[column].to_numpy())


def first_of_each(values: np.ndarray) -> np.ndarray:
    """The position of the first occurrence of each distinct value (a missing one included), ascending."""
    # (copy=False: pandas would copy the 9,000,000 codes of a fleet's table first)
    return np.flatnonzero(~pd.Series(values, copy=False).duplicated().to_numpy())


def as_texts(part: pd.DataFrame, columns=None) -> pd.DataFrame:
    """A few rows of the table with its categorical columns (or those of them in `columns`) as plain object columns,
    None where missing: what the facts hold."""
    plain = {c: texts(part[c]) for c in part.columns
             if isinstance(part[c].dtype, pd.CategoricalDtype) and (columns is None or c in columns)}
    return part.assign(**plain) if plain else part


# categories → their values as objects and a trailing None (code -1): made once per categories, not per cut (a
# diagnosis cuts rows of the facts hundreds of times, each column over the same pool of 20,000 strings)
_SPELLED: dict[int, tuple[pd.Index, np.ndarray]] = {}


def spelled(values: pd.Categorical, at: np.ndarray | None = None) -> np.ndarray:
    """A categorical's values (at these positions) as an object array, None where missing (code -1)."""
    categories = values.categories
    known = _SPELLED.get(id(categories))
    if known is None or known[0] is not categories:
        if len(_SPELLED) > 64:
            _SPELLED.clear()
        known = _SPELLED[id(categories)] = (categories, np.append(np.asarray(categories, dtype=object), None))
    return known[1].take(values.codes if at is None else values.codes.take(at))


def texts(values: pd.Series) -> pd.Series:
    """A categorical column as plain objects, None where missing (code -1)."""
    return pd.Series(spelled(values.array), index=values.index, name=values.name, dtype=object, copy=False)
