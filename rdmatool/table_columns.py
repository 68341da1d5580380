"""TableColumns: a sample table's columns, its text columns spelled out only when someone reads them whole.

A fleet's sample table has 9,000,000 rows. Six of its columns are text as plain object arrays (entity, metric, text,
raw_key: a string code per row; role, qualifier: one value per output): 410 MB of pointers at 10,000 hosts, each
written once and first touched then — on the benchmark machine the page faults of that memory cost more than the
work — while the analysis only takes rows from them (a metric's rows, each target's first row, the rates' rows) and
selects by their codes (SampleTable.codes). So the loader (rdmatool.frame) hands them over as codes: a column is made
whole the first time someone reads it by name, and `take(at)` makes only the rows it is asked for. The frame itself
(`frame()`, what `SampleTable.frame` gives) is the one the table always was, made on first read.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


class TableColumns:
    """A sample table's columns (see the module's docstring). `ready`: columns as they go into the frame (arrays,
    categoricals, nullable integers); `coded`: a column as a code per row and its values, a trailing None for code -1;
    `per_output`: a column as one value per output, and `counts` the rows of each output."""

    def __init__(self, order: list[str], ready: dict, coded: dict[str, tuple[np.ndarray, np.ndarray]],
                 per_output: dict[str, np.ndarray], counts: np.ndarray) -> None:
        self.columns = pd.Index(order)
        self._ready, self._coded, self._per_output = ready, coded, per_output
        self._counts = counts
        self._ends = np.cumsum(counts)
        self._n = int(self._ends[-1]) if len(counts) else 0
        self.index = pd.RangeIndex(self._n)
        self._whole: dict[str, pd.Series] = {}
        self._frame: pd.DataFrame | None = None

    def __len__(self) -> int:
        return self._n

    @property
    def empty(self) -> bool:
        return self._n == 0 or len(self.columns) == 0

    def frame(self) -> pd.DataFrame:
        """The table as one frame (made on first use, then kept)."""
        if self._frame is None:
            self._frame = pd.DataFrame({name: self[name] for name in self.columns}, columns=self.columns, copy=False)
        return self._frame

    def frame_if_made(self) -> pd.DataFrame | None:
        return self._frame

    def __getitem__(self, key):
        """A column by name (made whole on first use, then kept), as `frame()[name]`; a list of names: those
        columns, whose rows `take` cuts."""
        if isinstance(key, str):
            if self._frame is not None:
                return self._frame[key]
            if key not in self._whole:
                if key not in self.columns:
                    raise KeyError(key)
                self._whole[key] = self._series(key, None, self.index)
            return self._whole[key]
        return _Selection(self, list(key))

    def take(self, at, columns: list[str] | None = None) -> pd.DataFrame:
        """The rows at these positions, every column (or `columns`): `frame().take(at)` (`frame()[columns]`)."""
        at = np.asarray(at, dtype=np.intp).reshape(-1)
        names = list(self.columns) if columns is None else columns
        if self._frame is not None:
            return self._frame[names].take(at)
        if len(at) and (at.min() < -self._n or at.max() >= self._n):
            raise IndexError(f"row positions out of bounds for {self._n} rows")
        if len(at) and at.min() < 0:
            at = np.where(at < 0, at + self._n, at)
        index = self.index.take(at)
        return pd.DataFrame({name: self._series(name, at, index) for name in names}, index=index, columns=names,
                            copy=False)

    def of_output(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """A column held as one value per output: (the values, each output's rows); None for any other column."""
        if name not in self._per_output:
            return None
        return self._per_output[name], self._counts

    def _series(self, name: str, at: np.ndarray | None, index: pd.Index) -> pd.Series:
        values = self._values(name, at)
        # Text stays plain objects, as the table always held it (pandas would infer its string type: a pass over every
        # value, and a column of another type).
        plain = isinstance(values, np.ndarray) and values.dtype == object
        return pd.Series(values, index=index, name=name, dtype=object if plain else None, copy=False)

    def _values(self, name: str, at: np.ndarray | None):
        if name in self._ready:
            column = self._ready[name]
            return column if at is None else column.take(at)
        if name in self._coded:
            codes, values = self._coded[name]
            return values.take(codes if at is None else codes.take(at))  # code -1 reads the trailing None
        values = self._per_output[name]
        if at is None:
            return np.repeat(values, self._counts)
        return values.take(np.searchsorted(self._ends, at, side="right"))  # each row's output


class _Selection:
    """Some columns of a TableColumns, as `frame[[...]]` would select them, for a `take` of their rows."""

    def __init__(self, table: TableColumns, columns: list[str]) -> None:
        missing = [c for c in columns if c not in table.columns]
        if missing:
            raise KeyError(missing)
        self.table, self.columns = table, pd.Index(columns)

    def take(self, at) -> pd.DataFrame:
        return self.table.take(at, list(self.columns))
