"""FactColumns: an analysis' facts kept as columns, spelled out as a frame only when someone asks for all of it.

Nearly every fact is a sample row: a series' latest reading or a counter's rate (8,000,000 of them at 10,000 hosts).
As a frame their eight text columns alone are 512 MB of pointers, each written once and first touched then (on the
benchmark machine the page faults of that memory cost more than the rest of the facts), yet a diagnosis reads a few
metrics or a few targets at a time (rdmatool.table.facts.FactQuery). So the facts are held as:
- the base rows (the first `n_base`): each text column a code per fact into the column's distinct values, taken from
  the sample table's own codes at the facts' sample rows (-1: None);
- the tail (the facts added after them: derived ratios, efficiency, triage, a judge's verdicts): plain object arrays;
- value, window_s, delta: one array over both, with room for the tail to grow; priority and size_bytes: the base
  rows' and the tail's apart.
Columns the base rows take as they are from the sample table (priority and size_bytes always; entity, raw_key,
platform when the table has their codes) are left there: given the sample rows of the base facts (`rows`), such a
column is read through them, at the positions asked for, and a text column is spelled out over every base row only
when something reads it whole. A fleet's diagnosis reads none of them whole: 200 MB of columns at 10,000 hosts that
were written once and never read.

`take(at)` and `column(name, at)` are exactly what the frame's `take(at)` and `frame[name].take(at)` are, and
`frame()` is the frame itself (made once, on first use). Two tails never share rows: a FactColumns grown from one
that was already grown elsewhere copies instead of writing into the other's room.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rdmatool.table import column_codes

FACT_COLUMNS = [
    "target", "kind", "platform", "role", "entity", "metric", "priority", "size_bytes", "value", "text", "raw_key",
    "window_s", "delta", "flag",
]
TEXT_COLUMNS = ("target", "kind", "platform", "role", "entity", "metric", "text", "raw_key")
FLOAT_COLUMNS = ("value", "window_s", "delta")
INT_COLUMNS = ("priority", "size_bytes")
CODED = (*TEXT_COLUMNS, "flag")  # base rows as codes, tail as objects
# The type pandas gives a column of text assigned from one string (the facts' `flag`): object, or its string type.
FLAG_DTYPE = pd.DataFrame(index=[0]).assign(flag="")["flag"].dtype


def flag_array(objects: np.ndarray):
    """The facts' `flag` column from an object array of its strings, typed as pandas types an assigned string."""
    if isinstance(FLAG_DTYPE, pd.StringDtype):
        return pd.arrays.StringArray(objects, dtype=FLAG_DTYPE)
    return objects


def fits(part: pd.DataFrame, integers: bool) -> bool:
    """Whether a frame of facts goes into the columns with every column keeping the type pandas would give the facts
    (what `pd.concat` of the facts and `part` would give). `integers`: its integer columns are made nullable
    integers first."""
    if list(part.columns) != FACT_COLUMNS:
        return False
    if any(not isinstance(part[c].dtype, np.dtype) or part[c].dtype.kind not in "fiu" for c in FLOAT_COLUMNS):
        return False  # a float column with objects or nullable floats would change the facts' column
    if not integers and any(str(part[c].dtype) != "Int64" for c in INT_COLUMNS):
        return False
    return part["flag"].dtype == FLAG_DTYPE


class FactColumns:
    """The facts (FACT_COLUMNS) as columns; see the module's docstring."""

    columns = pd.Index(FACT_COLUMNS)

    def __init__(self, n_base: int, base: dict[str, tuple[np.ndarray, np.ndarray]], floats: dict[str, np.ndarray],
                 capacity: int, rows: np.ndarray, through: dict[str, tuple[np.ndarray, np.ndarray]],
                 ints: dict[str, pd.arrays.IntegerArray]) -> None:
        """`rows`: the base facts' sample rows; `base`: CODED columns' codes over the base rows and their distinct
        values (an object array); `through`: the other CODED columns as the sample table's codes over its rows and
        their distinct values; `floats`: arrays of `capacity` rows whose first `n_base` are the base rows'; `ints`:
        the integer columns as the sample table's. `through` and `ints` are read through `rows`."""
        self.n = self.n_base = n_base
        self._sample_rows = rows
        self._codes = {c: codes for c, (codes, _) in base.items()}
        # the sample table's codes of the columns read through `rows` (spelled out into _codes when read whole)
        self._through = {c: codes for c, (codes, _) in through.items()}
        # the distinct values and a trailing None: code -1 reads None
        self._values = {c: np.append(np.asarray(values, dtype=object), None)
                        for c, (_, values) in (*base.items(), *through.items())}
        self._tail = {c: np.empty(capacity - n_base, dtype=object) for c in CODED}
        self._floats = floats
        # the integer columns: the base rows' (the sample table's, read through `rows`) and the tail's
        self._int_base = dict(ints)
        self._ints = {c: _na_ints(capacity - n_base) for c in ints}
        self._used = [n_base]  # shared by every FactColumns writing into these arrays: how far they are written
        self._frame: pd.DataFrame | None = None
        self._fact_codes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._index = pd.RangeIndex(n_base)

    def __len__(self) -> int:
        return self.n

    @property
    def capacity(self) -> int:
        return len(self._floats["value"])

    # --- growing -------------------------------------------------------------------------------------------------

    def grown(self, part: pd.DataFrame, integers: bool = False) -> FactColumns | pd.DataFrame:
        """These facts and then `part`'s (a frame of FACT_COLUMNS; `integers`: its integer columns made nullable
        integers whatever they were), as `pd.concat([facts, part], ignore_index=True)` types them. A part whose
        column types would make pandas type a column differently is concatenated to the frame instead: a frame."""
        if not fits(part, integers):
            frame = stacked([self.frame(), part])
            return frame.astype({c: "Int64" for c in INT_COLUMNS}) if integers else frame
        if integers:
            part = part.astype({c: "Int64" for c in INT_COLUMNS})
        end = self.n + len(part)
        out = self._writable(end)
        at = slice(self.n, end)
        tail_at = slice(self.n - self.n_base, end - self.n_base)
        for c in CODED:
            out._tail[c][tail_at] = part[c].to_numpy(dtype=object)
        for c in FLOAT_COLUMNS:
            out._floats[c][at] = part[c].to_numpy(dtype=np.float64)
        for c in INT_COLUMNS:
            out._ints[c][tail_at] = part[c].array
        out.n = end
        out._used[0] = end
        out._index = pd.RangeIndex(end)
        return out

    def _writable(self, end: int) -> FactColumns:
        """A FactColumns with these facts whose arrays have room up to row `end` that no other FactColumns writes:
        these arrays when nothing was written past this one's rows, else copies."""
        out = FactColumns.__new__(FactColumns)
        out.__dict__.update(self.__dict__)
        out._frame, out._fact_codes = None, {}
        if self._used[0] == self.n and end <= self.capacity:
            return out
        capacity = max(end, self.n + (self.n - self.n_base) + 1024)
        tail_rows = capacity - self.n_base
        out._tail = {c: _resized(t[:self.n - self.n_base], tail_rows, None) for c, t in self._tail.items()}
        out._floats = {c: _resized(a[:self.n], capacity, np.nan) for c, a in self._floats.items()}
        used = self.n - self.n_base
        out._ints = {c: _na_ints(tail_rows) for c in INT_COLUMNS}
        for c in INT_COLUMNS:
            out._ints[c][:used] = self._ints[c][:used]
        out._used = [self.n]
        return out

    # --- reading -------------------------------------------------------------------------------------------------

    def frame(self) -> pd.DataFrame:
        """Every fact as one frame (made on first use, then kept)."""
        if self._frame is None:
            self._frame = self._rows(np.arange(self.n), self._index)
        return self._frame

    def take(self, at, columns: list[str] | None = None) -> pd.DataFrame:
        """The facts at these row positions, every column (or `columns`): `frame().take(at)` (`frame()[columns]`)."""
        at = self._positions(at)
        if self._frame is not None:
            return self._frame.take(at) if columns is None else self._frame[columns].take(at)
        return self._rows(at, self._index.take(at), columns)

    def column(self, name: str, at) -> pd.Series:
        """One column at these row positions: `frame()[name].take(at)`."""
        at = self._positions(at)
        if self._frame is not None:
            return self._frame[name].take(at)
        return self._series(name, at, self._index.take(at))

    def labels(self, at) -> pd.Index:
        """The frame's row labels at these positions: `frame().index.take(at)`."""
        at = self._positions(at)
        return self._frame.index.take(at) if self._frame is not None else self._index.take(at)

    def none(self) -> pd.DataFrame:
        """No fact, every column: `frame().iloc[0:0]`."""
        if self._frame is not None:
            return self._frame.iloc[0:0]
        return self._rows(np.zeros(0, dtype=np.intp), self._index[0:0])

    def frame_if_made(self) -> pd.DataFrame | None:
        return self._frame

    def codes(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """A text column's codes (-1 where missing) and its distinct values (column_codes.Codes): the base rows'
        as taken, the tail's looked up among them (a value first met in the tail gets the next code)."""
        if name not in self._fact_codes:
            if name not in TEXT_COLUMNS:
                self._fact_codes[name] = column_codes.factorized(self.column(name, np.arange(self.n)).to_numpy())
            else:
                self._fact_codes[name] = self._coded(name)
        return self._fact_codes[name]

    def isin(self, name: str, wanted) -> np.ndarray:
        """Which facts hold one of `wanted` in column `name` (a boolean array): `frame()[name].isin(wanted)`, by the
        codes for a text column and plain (hashable, present) values."""
        wanted = list(wanted)
        if name in TEXT_COLUMNS and self._frame is None and not any(pd.isna(w) for w in wanted):
            try:
                names = set(wanted)
                values = self._values[name][:-1]
                hits = np.flatnonzero(np.fromiter((v in names for v in values.tolist()), dtype=bool,
                                                  count=len(values)))
            except TypeError:  # an unhashable value: compared as pandas compares them
                pass
            else:
                base = np.isin(self._base_codes(name), hits)
                tail = pd.Series(self._tail[name][:self.n - self.n_base], dtype=object).isin(wanted).to_numpy()
                return np.concatenate([base, tail])
        return self.column(name, np.arange(self.n)).isin(wanted).to_numpy(dtype=bool)

    def distinct(self, name: str) -> set:
        """The values of a column as a set: `set(frame()[name].unique())`."""
        if name in TEXT_COLUMNS and self._frame is None:
            present = np.unique(self._base_codes(name)) if self.n_base else np.zeros(0, dtype=np.intp)
            found = set(self._values[name][present].tolist())
            return found | set(pd.unique(pd.Series(self._tail[name][:self.n - self.n_base], dtype=object)))
        return set(self.column(name, np.arange(self.n)).unique())

    # --- inside --------------------------------------------------------------------------------------------------

    def _positions(self, at) -> np.ndarray:
        at = np.asarray(at, dtype=np.intp).reshape(-1)
        if len(at) and (at.min() < -self.n or at.max() >= self.n):
            raise IndexError(f"fact positions out of bounds for {self.n} facts")
        return np.where(at < 0, at + self.n, at) if len(at) and at.min() < 0 else at

    def _rows(self, at: np.ndarray, index: pd.Index, columns: list[str] | None = None) -> pd.DataFrame:
        names = FACT_COLUMNS if columns is None else columns
        return pd.DataFrame({c: self._series(c, at, index) for c in names}, index=index, columns=names, copy=False)

    def _series(self, name: str, at: np.ndarray, index: pd.Index) -> pd.Series:
        # Text stays plain objects, as the frame always held it (pandas would infer its string type: a pass over
        # every value, and a column of another type).
        dtype = object if name in TEXT_COLUMNS else None
        return pd.Series(self._array(name, at), index=index, name=name, dtype=dtype, copy=False)

    def _array(self, name: str, at: np.ndarray):
        if name in FLOAT_COLUMNS:
            return self._floats[name][:self.n].take(at)
        if name in INT_COLUMNS:
            return self._ints_at(name, at)
        texts = self._texts(name, at)
        return flag_array(texts) if name == "flag" else texts

    def _texts(self, name: str, at: np.ndarray) -> np.ndarray:
        """An object array of a CODED column's values at these positions."""
        values = self._values[name]
        in_base = at < self.n_base
        if in_base.all():
            return values.take(self._base_codes_at(name, at))  # -1 reads the trailing None
        out = np.empty(len(at), dtype=object)
        out[in_base] = values.take(self._base_codes_at(name, at[in_base]))
        out[~in_base] = self._tail[name].take(at[~in_base] - self.n_base)
        return out

    def _base_codes(self, name: str) -> np.ndarray:
        """A CODED column's codes over every base row (spelled out, once, for a column of `through`)."""
        codes = self._codes.get(name)
        if codes is None:
            codes = self._codes[name] = self._through[name].take(self._sample_rows)
        return codes

    def _base_codes_at(self, name: str, at: np.ndarray) -> np.ndarray:
        """A CODED column's codes at these base positions."""
        codes = self._codes.get(name)
        return codes.take(at) if codes is not None else self._through[name].take(self._sample_rows.take(at))

    def _ints_at(self, name: str, at: np.ndarray) -> pd.arrays.IntegerArray:
        """An integer column at these positions: the base rows' (the samples' at their rows) and the tail's, in the
        order asked."""
        base, tail = self._int_base[name], self._ints[name]
        in_base = at < self.n_base

        def of_base(positions: np.ndarray) -> pd.arrays.IntegerArray:
            return base.take(self._sample_rows.take(positions))

        if in_base.all():
            return of_base(at)
        if not in_base.any():
            return tail.take(at - self.n_base)
        first, rest = np.flatnonzero(in_base), np.flatnonzero(~in_base)
        both = type(tail)._concat_same_type([of_base(at[first]), tail.take(at[rest] - self.n_base)])
        order = np.empty(len(at), dtype=np.intp)
        order[first] = np.arange(len(first))
        order[rest] = len(first) + np.arange(len(rest))
        return both.take(order)

    def _coded(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        codes, values = self._base_codes(name), self._values[name][:-1]
        tail = self._tail[name][:self.n - self.n_base]
        if not len(tail):
            return codes, values
        tail_codes, uniques = column_codes.factorized(tail)
        index = {v: i for i, v in enumerate(values.tolist())}
        extra: list = []
        mapped = []
        for v in uniques.tolist():
            code = index.get(v)
            if code is None:
                code = index[v] = len(values) + len(extra)
                extra.append(v)
            mapped.append(code)
        all_values = np.concatenate([values, np.array([*extra, None], dtype=object)[:-1]]) if extra else values
        # in the base codes' own type when it holds every code (a fleet's targets: int16, not 64 MB of int64)
        dtype = codes.dtype if len(all_values) < np.iinfo(codes.dtype).max else np.int64
        table = np.array([*mapped, -1], dtype=dtype)
        return np.concatenate([codes.astype(dtype, copy=False), table[tail_codes]]), all_values


def _na_ints(rows: int) -> pd.arrays.IntegerArray:
    """`rows` missing nullable integers (the facts' priority and size_bytes of rows not written yet)."""
    return pd.arrays.IntegerArray(np.zeros(rows, dtype=np.int64), np.ones(rows, dtype=bool))


def _resized(array: np.ndarray, rows: int, fill) -> np.ndarray:
    out = np.empty(rows, dtype=array.dtype)
    out[:len(array)] = array
    out[len(array):] = fill
    return out


def stacked(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """`pd.concat(parts, ignore_index=True)` of frames with the same columns, made column by column: the frame concat
    copies parts whose columns lie in differently shaped blocks through a slow path (2 s instead of 0.3 s for the
    8,000,000 facts of 10,000 hosts). Each column gets the type pd.concat gives it (it is pd.concat, per column)."""
    columns = parts[0].columns
    if any(not p.columns.equals(columns) for p in parts[1:]):
        return pd.concat(parts, ignore_index=True)
    return pd.DataFrame({c: pd.concat([p[c] for p in parts], ignore_index=True) for c in columns}, columns=columns,
                        copy=False)
