"""FactQuery: the one way the rules and the suggesters ask questions of an analysis' facts.

A fleet's facts run to millions of rows. The rules ask for a few metrics each, fleet-wide; the suggesters for a few
values of a few targets, many times over. So the query groups the row positions by metric and by target on first
use (from the categoricals' codes) and answers from those groups; one query lives on the analysis for a whole
diagnosis. Every selection keeps the facts' order and labels, with plain texts (`plain`): the frame a boolean mask
over the facts spelled out would give, whoever reads it cannot tell how it was found.
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
INT_COLUMNS = ("priority", "size_bytes")
# The type pandas gives a column of text assigned from one string (what `flag` reads as): object, or its string type.
FLAG_DTYPE = pd.DataFrame(index=[0]).assign(flag="")["flag"].dtype


def plain(part: pd.DataFrame) -> pd.DataFrame:
    """Rows of the facts with their categorical columns as plain objects, None where missing, and a categorical
    `flag` as a string column: what the rules and the suggesters read."""
    if not any(isinstance(dtype, pd.CategoricalDtype) for dtype in part.dtypes):
        return part
    return _cut(part, None, part.columns)


def _cut(facts: pd.DataFrame, at: np.ndarray | None, columns) -> pd.DataFrame:
    """These columns of the facts at these row positions (all rows: None), with plain texts (`plain`)."""
    index = facts.index if at is None else facts.index.take(at)
    return pd.DataFrame({c: _spelled(facts[c], at, index) for c in columns}, index=index, columns=columns, copy=False)


def _spelled(column: pd.Series, at: np.ndarray | None, index: pd.Index) -> pd.Series:
    values = column.array
    if isinstance(values, pd.Categorical):
        return pd.Series(column_codes.spelled(values, at), index=index, name=column.name, copy=False,
                         dtype=FLAG_DTYPE if column.name == "flag" else object)
    return pd.Series(values if at is None else values.take(at), index=index, name=column.name, dtype=column.dtype,
                     copy=False)


_NO_ROWS = np.array([], dtype=np.intp)


def _as_list(wanted) -> list:
    return wanted if isinstance(wanted, list) else [wanted]


def _positions(codes: np.ndarray, uniques: np.ndarray) -> dict:
    """Each value → the ascending row positions holding it (`groupby(column).indices`), from the column's codes: one
    stable sort of few distinct codes (a radix sort) instead of the group-by machinery (a second at 8,000,000)."""
    if not len(codes):
        return {}
    present = codes >= 0
    at = np.flatnonzero(present) if not present.all() else None
    codes = codes[present] if at is not None else codes
    narrow = codes.astype(np.int16 if len(uniques) < 2**15 else np.int32, copy=False)
    order = np.argsort(narrow, kind="stable")
    if at is not None:
        order = at[order]
    ends = np.cumsum(np.bincount(codes, minlength=len(uniques)))
    order = order.astype(np.intp, copy=False)
    return {name: order[end - count:end] for name, end, count in zip(uniques.tolist(), ends.tolist(),
                                                                     np.diff(ends, prepend=0).tolist()) if count}


class FactQuery:
    """Row look-ups over one facts frame: by metric, by target, by (target, entity, metric, priority); lazily."""

    def __init__(self, facts: pd.DataFrame):
        self.source = facts
        self._by_metric: dict | None = None  # metric → row positions
        self._by_target: dict | None = None  # target → row positions
        self._layers: dict[str, set] = {}
        self._targets_where: dict[str, set] = {}
        self._codes: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # column → its codes and distinct values
        self._target_frames: dict = {}  # target → its rows
        self._target_metrics: dict = {}  # target → {metric: positions within the target's rows}
        self._target_values: dict = {}  # target → {(entity, metric, priority or None): [(value, text), ...]}
        self._targets: set | None = None
        self._derived: dict = {}

    @property
    def facts(self) -> pd.DataFrame:
        """Every fact, as the analysis holds them (categorical text columns)."""
        return self.source

    def reads(self, facts) -> bool:
        """Whether this query is over these facts."""
        return facts is self.source

    def empty(self) -> bool:
        """`facts.empty`: no fact, or no column."""
        return len(self.source) == 0 or len(self.source.columns) == 0

    @classmethod
    def of(cls, analysis) -> FactQuery:
        """The query of an analysis; for an object that only carries `facts` (or nothing), one built for it."""
        query = getattr(analysis, "query", None)
        facts = getattr(analysis, "facts", None)
        if not isinstance(facts, pd.DataFrame):
            facts = pd.DataFrame()
        if isinstance(query, FactQuery) and query.reads(facts):
            return query
        return cls(facts)

    # --- the whole fleet, by metric (the rules) --------------------------------------------------------------------

    def positions(self, metrics) -> np.ndarray:
        """Ascending row positions of one metric or of several."""
        if self._by_metric is None:
            self._by_metric = _positions(*self.codes("metric")) if "metric" in self.source.columns else {}
        if isinstance(metrics, str):
            return self._by_metric.get(metrics, _NO_ROWS)
        found = [self._by_metric[n] for n in dict.fromkeys(metrics) if n in self._by_metric]
        if not found:
            return _NO_ROWS
        return found[0] if len(found) == 1 else np.sort(np.concatenate(found))

    def take(self, at: np.ndarray) -> pd.DataFrame:
        """The facts' rows at these positions, every column."""
        return _cut(self.source, at, self.source.columns)

    def of_metric(self, metrics) -> pd.DataFrame:
        """Every row of one metric or of several."""
        return self.take(self.positions(metrics))

    def column(self, name: str, at: np.ndarray) -> pd.Series:
        """One column at these row positions (labels kept): to test before whole rows are cut."""
        return _spelled(self.source[name], at, self.source.index.take(at))

    def frame(self, at: np.ndarray, columns: list[str]) -> pd.DataFrame:
        """Some columns at these row positions: `take(at)[columns]` without cutting the others."""
        return _cut(self.source, at, columns)

    def select(self, metric: str, where: dict) -> np.ndarray:
        """Row positions of one metric's facts whose columns hold `where`'s values (a value or a list);
        `link_layer` keeps the targets with a link_layer fact among its values."""
        at = self.positions(metric)
        for key, wanted in where.items():
            if key == "link_layer":
                ok = self.column("target", at).isin(self.layer_targets(_as_list(wanted)))
            else:
                ok = self.column(key, at).isin(_as_list(wanted))
            at = at[ok.to_numpy(dtype=bool)]
        return at

    def layer_targets(self, allowed: list) -> set:
        """Targets with a link_layer fact among `allowed` (e.g. Ethernet)."""
        key = repr(allowed)
        if key not in self._layers:
            layers = self.of_metric("link_layer")
            self._layers[key] = set(layers.loc[layers["text"].isin(allowed), "target"])
        return self._layers[key]

    def targets_where(self, where: dict) -> set:
        """The targets with at least one fact passing `where` (select()'s filters, of any metric)."""
        row_keys = {k: v for k, v in where.items() if k != "link_layer"}
        key = repr(sorted(row_keys.items()))
        if key not in self._targets_where:
            keep = np.ones(len(self.source), dtype=bool)
            for k, wanted in row_keys.items():
                keep &= self.source[k].isin(_as_list(wanted)).to_numpy(dtype=bool)
            self._targets_where[key] = {t for t, at in self.target_positions().items() if keep[at].any()}
        found = self._targets_where[key]
        if "link_layer" in where:
            found = found & self.layer_targets(_as_list(where["link_layer"]))
        return found

    def codes(self, column: str) -> tuple[np.ndarray, np.ndarray]:
        """The column's codes (-1 where missing) and distinct values: a categorical's own, else factorized once."""
        if column not in self._codes:
            known = column_codes.fitting(None, column, len(self.source), self.source)
            self._codes[column] = known if known is not None else column_codes.factorized(self.source[column])
        return self._codes[column]

    def targets_with(self, metric: str) -> set:
        """The targets holding at least one fact of this metric."""
        return set(self.column("target", self.positions(metric)).unique())

    def targets(self) -> set:
        """Every target holding a fact. Computed once: do not change the set returned."""
        if self._targets is None:
            self._targets = set()
            if "target" in self.source.columns:
                codes, uniques = self.codes("target")
                seen = np.bincount(codes + 1, minlength=len(uniques) + 1) > 0  # (code -1: a missing target)
                self._targets = set(np.append(np.array([None], dtype=object), uniques)[seen].tolist())
        return self._targets

    def derived(self, key, compute):
        """`compute()`, once per query and key: what several steps derive alike (the cabling). Do not change it."""
        if key not in self._derived:
            self._derived[key] = compute()
        return self._derived[key]

    # --- one target at a time (the suggesters) ---------------------------------------------------------------------

    def target_positions(self) -> dict:
        """Each target → its ascending row positions."""
        if self._by_target is None:
            self._by_target = _positions(*self.codes("target")) if "target" in self.source.columns else {}
        return self._by_target

    def of_target(self, target) -> pd.DataFrame | None:
        """The target's rows, None for a target without facts (cut on first use: a diagnosis asks about a few)."""
        frame = self._target_frames.get(target)
        if frame is None:
            at = self.target_positions().get(target)
            if at is None:
                return None
            frame = self._target_frames[target] = self.take(at)
        return frame

    def of_target_metric(self, target, metrics) -> pd.DataFrame:
        """The target's rows of these metrics, in the facts' order."""
        frame = self.of_target(target)
        if frame is None:
            return self._none()
        at = self._target_metrics.get(target)
        if at is None:
            at = self._target_metrics[target] = frame.groupby("metric", sort=False).indices if len(frame) else {}
        found = [at[m] for m in dict.fromkeys(metrics) if m in at]
        return frame.take(np.sort(np.concatenate(found)) if len(found) > 1 else found[0] if found else [])

    def rows(self, target=None, entity=None, metric=None, priority=None) -> pd.DataFrame:
        """The facts matching every given field (a name or a list, tuple or set of names; `priority` one number).
        A target given by name is answered from its own rows; without one, the whole fleet's."""
        if self.empty() or "metric" not in self.source.columns:
            return self._none()
        if isinstance(target, str):
            if metric is not None:
                df = self.of_target_metric(target, metric if isinstance(metric, (list, tuple, set)) else [metric])
                metric = None
            else:
                df = self.of_target(target)
                df = self._none() if df is None else df
            target = None
        else:
            df = self.facts
        mask = pd.Series(True, index=df.index)
        for column, wanted in (("target", target), ("entity", entity), ("metric", metric)):
            if wanted is not None:
                if column not in df.columns:
                    return self._none()
                mask &= df[column].isin(wanted if isinstance(wanted, (list, tuple, set)) else [wanted])
        if priority is not None:
            if "priority" not in df.columns:
                return self._none()
            mask &= pd.to_numeric(df["priority"], errors="coerce") == priority
        return plain(df[mask])

    def _none(self) -> pd.DataFrame:
        """No fact, every column: `facts.iloc[0:0]`."""
        return plain(self.source.iloc[0:0])

    def values(self, target: str, entity: str, metric: str, priority=None) -> list[tuple]:
        """(value, text) of each fact of one target, entity and metric (and priority, when given), in order; from a
        dictionary per target built on its first question."""
        index = self._target_values.get(target)
        if index is None:
            frame = self.of_target(target)
            index = {}
            if frame is not None and {"entity", "metric", "priority", "value", "text"} <= set(frame.columns):
                priorities = pd.to_numeric(frame["priority"], errors="coerce")
                for e, m, p, v, t in zip(frame["entity"], frame["metric"], priorities, frame["value"], frame["text"]):
                    index.setdefault((e, m, None), []).append((v, t))
                    if pd.notna(p):
                        index.setdefault((e, m, int(p)), []).append((v, t))
            self._target_values[target] = index
        return index.get((entity, metric, None if priority is None else int(priority)), [])

    def kind_platform(self, target) -> tuple | None:
        """(kind, platform) as the target's first fact states them, None for a target without facts."""
        def found() -> tuple | None:
            frame = self.rows(target=target)
            return None if frame.empty else tuple(frame[c].iloc[0] if c in frame.columns else None
                                                  for c in ("kind", "platform"))
        return self.derived(("kind_platform", target), found) if isinstance(target, str) else found()

    def entity_with_text(self, target, metric: str, text):
        """The entity of the target's first `metric` fact whose text is `text` (e.g. the RDMA port of a netdev)."""
        def found():
            frame = self.rows(target=target, metric=metric)
            hits = frame if frame.empty else frame[frame["text"] == text]
            return None if hits.empty else hits["entity"].iloc[0]
        if isinstance(target, str) and (text is None or isinstance(text, str)):
            return self.derived(("entity_with_text", target, metric, text), found)
        return found()
