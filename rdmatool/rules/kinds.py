"""One pure, vectorised function per rule kind: (facts, rule, context) → a frame of hits.

Every function returns columns HIT_COLUMNS: target, entity, priority, observed, expected, baseline, window_s. Nothing
here evaluates strings from playbooks; operators are looked up in a fixed table.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rdmatool.metrics import rate_name
from rdmatool.rules.playbook import Rule

HIT_COLUMNS = ["target", "entity", "priority", "observed", "expected", "baseline", "window_s"]
_OPS: dict[str, Callable] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
}


class FactIndex:
    """Row positions of one facts frame per metric, built once per evaluation.

    A fleet's facts run to hundreds of thousands of rows and the rules ask for a few metrics each; comparing every
    row's metric name for every question made the rules stage take seconds. Selections through the index keep the
    facts' row order and labels, so they are the very frames a boolean mask would give.
    """

    def __init__(self, facts: pd.DataFrame):
        self.facts = facts
        self._by_metric: dict = _positions(facts, "metric")
        self._target_codes: np.ndarray | None = None
        self._target_names: np.ndarray | None = None
        self._targets_where: dict[str, set] = {}

    def positions(self, names) -> np.ndarray:
        """Ascending row positions of one metric or of several."""
        if isinstance(names, str):
            return self._by_metric.get(names, _NO_ROWS)
        found = [self._by_metric[n] for n in dict.fromkeys(names) if n in self._by_metric]
        if not found:
            return _NO_ROWS
        return found[0] if len(found) == 1 else np.sort(np.concatenate(found))

    def metric_rows(self, names) -> pd.DataFrame:
        return self.facts.take(self.positions(names))

    def targets_where(self, where: dict) -> set:
        """The targets with at least one fact row passing `where` (the `missing` kind's population)."""
        row_keys = {k: v for k, v in where.items() if k != "link_layer"}
        key = repr(sorted(row_keys.items()))
        if key not in self._targets_where:
            if self._target_codes is None:
                codes, names = pd.factorize(self.facts["target"])
                self._target_codes, self._target_names = codes, np.asarray(names, dtype=object)
            codes = self._target_codes
            keep = codes >= 0
            for k, wanted in row_keys.items():
                keep &= self.facts[k].isin(wanted if isinstance(wanted, list) else [wanted]).to_numpy(dtype=bool)
            seen = np.bincount(codes[keep], minlength=len(self._target_names)) > 0
            self._targets_where[key] = set(self._target_names[seen])
        found = self._targets_where[key]
        if "link_layer" in where:
            wanted = where["link_layer"]
            found = found & _layer_targets(self.metric_rows("link_layer"), wanted if isinstance(wanted, list)
                                           else [wanted])
        return found


_NO_ROWS = np.array([], dtype=np.intp)


def _positions(facts: pd.DataFrame, column: str) -> dict:
    if column not in facts.columns or facts.empty:
        return {}
    return {name: np.asarray(at, dtype=np.intp) for name, at in facts.groupby(column, sort=False).indices.items()}


def _layer_targets(layers: pd.DataFrame, allowed: list) -> set:
    return set(layers.loc[layers["text"].isin(allowed), "target"])


@dataclass
class Context:
    """What a rule may look at besides the facts: cabling, the baseline's statistics and the site profile; and the
    facts' index, built on first use for the facts frame in hand."""

    links: pd.DataFrame = field(default_factory=pd.DataFrame)
    baseline: pd.DataFrame | None = None  # columns: metric, kind, role, priority, size_bytes, median, mad, n
    profile: dict = field(default_factory=dict)
    index: FactIndex | None = field(default=None, repr=False, compare=False)

    def index_of(self, facts: pd.DataFrame) -> FactIndex:
        if self.index is None or self.index.facts is not facts:
            self.index = FactIndex(facts)
        return self.index


def empty_hits() -> pd.DataFrame:
    return pd.DataFrame(columns=HIT_COLUMNS)


# --- shared selection ------------------------------------------------------------------------------------------


def rows(facts: pd.DataFrame, metric: str, field_name: str = "value", where: dict | None = None,
         index: FactIndex | None = None) -> pd.DataFrame:
    """The facts for one metric, already narrowed by `where`, with the compared number in `x`."""
    name = metric if field_name == "value" else rate_name(metric)
    part = index.metric_rows(name) if index is not None else facts[facts["metric"] == name]
    part = apply_where(part, facts, where or {}, index)
    x = part["delta"] if field_name == "delta" else part["value"]
    return part.assign(x=x)


def apply_where(part: pd.DataFrame, facts: pd.DataFrame, where: dict, index: FactIndex | None = None) -> pd.DataFrame:
    for key, wanted in where.items():
        allowed = wanted if isinstance(wanted, list) else [wanted]
        if key == "link_layer":
            layers = index.metric_rows("link_layer") if index is not None else facts[facts["metric"] == "link_layer"]
            part = part[part["target"].isin(_layer_targets(layers, allowed))]
        elif key == "priority":
            part = part[part["priority"].isin(allowed)]
        else:
            part = part[part[key].isin(allowed)]
    return part


def compare(series: pd.Series, op: str, value) -> pd.Series:
    if op in ("in", "not_in"):
        hit = series.isin(value if isinstance(value, list) else [value])
        return hit if op == "in" else ~hit & series.notna()
    if isinstance(value, str):
        text = series.astype("string")
        return _OPS[op](text, value).fillna(False).astype(bool)
    numbers = pd.to_numeric(series, errors="coerce")
    return _OPS[op](numbers, value).fillna(False).astype(bool) & numbers.notna()


def observed_of(part: pd.DataFrame) -> pd.Series:
    """The observed thing: the number when there is one, else the text."""
    return part["x"].where(part["x"].notna(), part["text"]) if "text" in part else part["x"]


def apply_also(part: pd.DataFrame, facts: pd.DataFrame, conditions: list[dict], where: dict,
               index: FactIndex | None = None) -> pd.DataFrame:
    """Keep rows for which every extra condition holds on the same target and entity (and priority if both have
    one) — or, with `scope: target`, on the target's total. Lets a rule say "pauses high AND marks low"."""
    for cond in conditions or []:
        narrowed = {k: v for k, v in where.items() if k not in ("priority", "entity", "raw_key")}
        other = rows(facts, cond["metric"], cond.get("field", "value"), {**narrowed, **(cond.get("where") or {})},
                     index)
        if cond.get("scope") == "target":
            totals = other.groupby("target")["x"].sum(min_count=1)
            good = totals[compare(totals, cond["op"], cond["value"])].index
            part = part[part["target"].isin(set(good))]
            continue
        subject = other["text"] if isinstance(cond["value"], str) else other["x"]
        other = other[compare(subject, cond["op"], cond["value"])]
        keep = other[["target", "entity", "priority"]].rename(columns={"priority": "p_other"})
        merged = part.reset_index().merge(keep, on=["target", "entity"], how="inner")
        same_priority = merged["priority"].isna() | merged["p_other"].isna() | (merged["priority"] == merged["p_other"])
        part = part.loc[sorted(set(merged.loc[same_priority, "index"]))]
    return part


def hits(part: pd.DataFrame, expected, baseline=None) -> pd.DataFrame:
    out = pd.DataFrame({
        "target": part["target"].to_numpy(),
        "entity": part["entity"].to_numpy(),
        "priority": part["priority"].to_numpy(),
        "observed": observed_of(part).to_numpy(),
        "expected": expected if not isinstance(expected, pd.Series) else expected.to_numpy(),
        "baseline": baseline if not isinstance(baseline, pd.Series) else baseline.to_numpy(),
        "window_s": part["window_s"].to_numpy() if "window_s" in part else np.nan,
    })
    return out


def _expected_text(op: str, value) -> str:
    return f"{op} {value}"


# --- the kinds ---------------------------------------------------------------------------------------------------


def threshold(facts: pd.DataFrame, rule: Rule, ctx: Context) -> pd.DataFrame:
    p = rule.params
    field_name = p.get("field", "value" if rule.kind == "threshold" else "rate")
    index = ctx.index_of(facts)
    part = rows(facts, p["metric"], field_name, rule.where, index)
    subject = part["text"] if isinstance(p["value"], str) or (
        isinstance(p["value"], list) and p["value"] and isinstance(p["value"][0], str)) else part["x"]
    part = part[compare(subject, p["op"], p["value"])]
    part = apply_also(part, facts, p.get("also"), rule.where, index)
    if part.empty:
        return empty_hits()
    aggregate = p.get("aggregate")
    if aggregate:
        keys = list(p.get("group_by") or ["target", "entity"])
        counted = part.groupby(keys, dropna=False).size().rename("count").reset_index()
        counted = counted[compare(counted["count"], aggregate.get("op", ">="), aggregate["value"])]
        if counted.empty:
            return empty_hits()
        return pd.DataFrame({
            "target": counted["target"], "entity": counted.get("entity", pd.Series([None] * len(counted))),
            "priority": None, "observed": counted["count"],
            "expected": f"count {_negate(aggregate.get('op', '>='))} {aggregate['value']}", "baseline": None,
            "window_s": np.nan,
        })
    return hits(part, f"{_negate(p['op'])} {p['value']}")


rate = threshold  # a rate rule is a threshold on `<metric>_per_s` (or its delta); the default field differs


def deviation(facts: pd.DataFrame, rule: Rule, ctx: Context) -> pd.DataFrame:
    """Robust deviation from the baseline: |x − median| > max(mad_factor·MAD·1.4826, min_deviation)."""
    if ctx.baseline is None or ctx.baseline.empty:
        return empty_hits()
    p = rule.params
    field_name = p.get("field", "value")
    metric = p["metric"] if field_name == "value" else rate_name(p["metric"])
    part = rows(facts, p["metric"], field_name, rule.where, ctx.index_of(facts))
    stats = ctx.baseline[ctx.baseline["metric"] == metric]
    if part.empty or stats.empty:
        return empty_hits()
    keys = ["kind", "role", "priority", "size_bytes"]
    left = part.assign(**{k: part[k].astype("object").where(part[k].notna(), "") for k in keys})
    right = stats.assign(**{k: stats[k].astype("object").where(stats[k].notna(), "") for k in keys})
    merged = left.merge(right[[*keys, "median", "mad", "n"]], on=keys, how="inner")
    merged = merged[merged["n"] >= p.get("min_baseline_n", 3)]
    merged = merged.assign(priority=merged["priority"].replace("", None))  # "" was only a join key for "none"
    spread = np.maximum(merged["mad"].to_numpy(dtype=float) * 1.4826 * p.get("mad_factor", 5.0),
                        float(p.get("min_deviation", 0.0)))
    diff = merged["x"].to_numpy(dtype=float) - merged["median"].to_numpy(dtype=float)
    direction = p.get("direction", "both")
    if direction == "below":
        bad = diff < -spread
    elif direction == "above":
        bad = diff > spread
    else:
        bad = np.abs(diff) > spread
    merged = merged[bad]
    if merged.empty:
        return empty_hits()
    expected = [f"within ±{s:.4g} of baseline" for s in spread[bad]]
    return hits(merged, expected, merged["median"])


def fleet_outlier(facts: pd.DataFrame, rule: Rule, ctx: Context) -> pd.DataFrame:
    """Against the fleet's majority (text) or median (numbers), within groups of comparable things."""
    p = rule.params
    index = ctx.index_of(facts)
    part = rows(facts, p["metric"], "value", rule.where, index)
    part = apply_also(part, facts, p.get("also"), rule.where, index)
    if part.empty:
        return empty_hits()
    group_cols = []
    for g in p.get("group_by") or []:
        if g in part.columns:
            group_cols.append(g)
        else:  # a metric used as an attribute (e.g. ca_type): its text on the same target and device
            attr = index.metric_rows(g)[["target", "entity", "text", "value"]]
            attr = attr.assign(**{g: attr["text"].where(attr["text"].notna(), attr["value"].astype(str))})
            attr = attr.assign(device=attr["entity"].str.split("/").str[0]).drop_duplicates(["target", "device"])
            part = part.assign(device=part["entity"].str.split("/").str[0]).merge(
                attr[["target", "device", g]], on=["target", "device"], how="inner")  # ungroupable rows drop out
            group_cols.append(g)
    part = part.assign(_group=_group_key(part, group_cols) if group_cols else "all")
    min_group = int(p.get("min_group", 3))
    textual = part["x"].isna().all()
    out = []
    for _, group in part.groupby("_group", sort=True):
        if group["target"].nunique() < min_group:
            continue
        if textual:
            counts = group["text"].value_counts()
            if len(counts) < 2 or counts.iloc[0] == counts.iloc[1]:
                continue  # no majority, nothing to call an outlier
            majority = counts.index[0]
            bad = group[group["text"] != majority]
            out.append(hits(bad.assign(x=np.nan), f"fleet majority {majority}", majority))
        else:
            median = float(group["x"].median())
            tolerance = abs(median) * float(p.get("tolerance_pct", 10.0)) / 100.0
            direction = p.get("direction", "both")
            diff = group["x"] - median
            bad_mask = diff < -tolerance if direction == "below" else diff > tolerance if direction == "above" \
                else diff.abs() > tolerance
            bad = group[bad_mask]
            out.append(hits(bad, f"fleet median {median:g} ±{p.get('tolerance_pct', 10.0)}%", median))
    out = [o for o in out if not o.empty]
    return pd.concat(out, ignore_index=True) if out else empty_hits()


def _group_key(part: pd.DataFrame, columns: list[str]) -> pd.Series:
    """The columns' values as text joined by `|` ("" for a missing one), one string per row, built column-wise."""
    texts = [part[c].astype(object).fillna("").astype(str) for c in columns]
    key = texts[0]
    for text in texts[1:]:
        key = key + "|" + text
    return key


def mismatch(facts: pd.DataFrame, rule: Rule, ctx: Context) -> pd.DataFrame:
    p = rule.params
    mode = p.get("compare") or ("peer" if p.get("against") else "metric" if p.get("against_metric") else "expected")
    index = ctx.index_of(facts)
    part = rows(facts, p["metric"], "value", rule.where, index)
    if part.empty:
        return empty_hits()
    part = part.assign(v=part["x"].where(part["x"].notna(), part["text"]))
    if mode == "metric":
        other = index.metric_rows(p["against_metric"])
        other = other.assign(w=other["value"].where(other["value"].notna(), other["text"]))
        merged = part.merge(other[["target", "entity", "w"]].drop_duplicates(["target", "entity"]),
                            on=["target", "entity"], how="inner")
        bad = merged[merged["v"].map(fmt) != merged["w"].map(fmt)]
        return hits(bad, bad["w"].map(lambda w: f"{p['against_metric']} {fmt(w)}"))
    if mode == "expected":
        expected = p.get("expected")
        exp = part["priority"].map(lambda pr: _expected_for(expected, pr))
        bad_mask = exp.notna() & (part["v"].astype(str) != exp.astype(str))
        numeric = pd.to_numeric(part["v"], errors="coerce")
        exp_num = pd.to_numeric(exp, errors="coerce")
        bad_mask &= ~(numeric.notna() & exp_num.notna() & (numeric == exp_num))
        bad = part[bad_mask]
        return hits(bad, exp[bad_mask].astype(str))
    if mode == "peer":
        return _peer_mismatch(part, facts, ctx, p)
    if mode == "roles":
        return _roles_overlap(part, p)
    return empty_hits()


def _expected_for(expected, priority):
    if isinstance(expected, dict):
        if priority is not None and priority is not pd.NA and not pd.isna(priority) and int(priority) in expected:
            return expected[int(priority)]
        return expected.get("default")
    return expected


def _peer_mismatch(part: pd.DataFrame, facts: pd.DataFrame, ctx: Context, p: dict) -> pd.DataFrame:
    """A host setting against the same setting on the switch port it is cabled to (joined through LLDP)."""
    links = ctx.links
    if links is None or links.empty:
        return empty_hits()
    peer_metric = p.get("against_metric", p["metric"])
    hosts = part[part["kind"] == "host"].merge(links, left_on=["target", "entity"], right_on=["host", "host_port"])
    if "when_value" in p:  # only the host rows in this state matter (e.g. a priority the host made lossless)
        hosts = hosts[hosts["v"].map(fmt) == fmt(p["when_value"])]
    switch_side = ctx.index_of(facts).metric_rows(peer_metric)
    switch_side = switch_side[switch_side["kind"] == "switch"]
    switch_side = switch_side.assign(w=switch_side["value"].where(switch_side["value"].notna(), switch_side["text"]))
    merged = hosts.merge(
        switch_side[["target", "entity", "priority", "w"]].rename(columns={"target": "switch", "entity": "switch_port"}),
        on=["switch", "switch_port", "priority"], how="inner",
    )
    bad = merged[merged["v"].map(fmt) != merged["w"].map(fmt)]
    return hits(bad, bad.apply(lambda r: f"{fmt(r['w'])} on {r['switch']} {r['switch_port']}", axis=1)
                if not bad.empty else [])


def _roles_overlap(part: pd.DataFrame, p: dict) -> pd.DataFrame:
    """Two roles (training and storage) sharing a lossless priority: the pitfall of one PFC class for both."""
    roles = p.get("expected") or ["compute", "storage"]
    enabled = part[pd.to_numeric(part["v"], errors="coerce") == 1]
    first = set(enabled.loc[enabled["role"] == roles[0], "priority"].dropna().astype(int))
    second = set(enabled.loc[enabled["role"] == roles[1], "priority"].dropna().astype(int))
    shared = sorted(first & second)
    if not shared:
        return empty_hits()
    bad = enabled[(enabled["role"] == roles[1]) & enabled["priority"].isin(shared)].drop_duplicates("target")
    return hits(bad.assign(x=np.nan), f"storage on its own lossless priority, not {shared}",
                f"{roles[0]} uses {sorted(first)}")


def ratio(facts: pd.DataFrame, rule: Rule, ctx: Context) -> pd.DataFrame:
    p = rule.params
    field_name = p.get("field", "delta")
    index = ctx.index_of(facts)
    num = rows(facts, p["numerator"], field_name, rule.where, index)
    den = rows(facts, p["denominator"], field_name, rule.where, index)
    if num.empty or den.empty:
        return empty_hits()
    minimum = float(p.get("min_denominator", 1))
    if p.get("scope", "entity") == "fleet":
        total_den = float(den["x"].sum())
        if total_den < minimum:
            return empty_hits()
        value = float(num["x"].sum()) / total_den
        if not compare(pd.Series([value]), p["op"], p["value"]).iloc[0]:
            return empty_hits()
        return pd.DataFrame([{
            "target": "fabric", "entity": None, "priority": None, "observed": value,
            "expected": f"{_negate(p['op'])} {p['value']}", "baseline": None, "window_s": float(den["window_s"].median()),
        }])
    # size_bytes too: a perftest sweep's p99 at 1 MB over its typical latency at 2 B is no jitter
    keys = ["target", "entity", "priority", "size_bytes"]
    merged = num.merge(den[[*keys, "x"]].rename(columns={"x": "d"}), on=keys, how="inner")
    merged = merged[merged["d"] >= minimum]
    merged = merged.assign(x=merged["x"] / merged["d"])
    merged = merged[compare(merged["x"], p["op"], p["value"])]
    return hits(merged, f"{_negate(p['op'])} {p['value']}")


def missing(facts: pd.DataFrame, rule: Rule, ctx: Context) -> pd.DataFrame:
    """Expected metrics absent on a target: monitoring gaps must show, never read as healthy."""
    p = rule.params
    index = ctx.index_of(facts)
    population = index.targets_where({k: v for k, v in rule.where.items() if k in ("kind", "role", "platform",
                                                                                   "link_layer")})
    targets = sorted(population - {"fabric"})
    wanted = list(p["metrics"])
    present: dict = {}
    at = index.positions(wanted)
    for target, metric in zip(facts["target"].take(at), facts["metric"].take(at)):
        present.setdefault(target, set()).add(metric)
    out = []
    for target in targets:
        have = present.get(target, set())
        absent = [m for m in wanted if m not in have]
        if p.get("require_any") and len(absent) < len(wanted):
            continue
        if absent:
            out.append({"target": target, "entity": None, "priority": None, "observed": "absent: " + ", ".join(absent),
                        "expected": "present", "baseline": None, "window_s": np.nan})
    return pd.DataFrame(out, columns=HIT_COLUMNS) if out else empty_hits()


def fmt(value) -> str:
    """A number as an engineer writes it: 4096, not 4096.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _negate(op: str) -> str:
    """The healthy side of a trigger condition, for the evidence's `expected`."""
    return {">": "<=", ">=": "<", "<": ">=", "<=": ">", "==": "!=", "!=": "==", "in": "not in",
            "not_in": "in"}.get(op, op)


KIND_FUNCTIONS: dict[str, Callable[[pd.DataFrame, Rule, Context], pd.DataFrame]] = {
    "threshold": threshold,
    "rate": rate,
    "deviation": deviation,
    "fleet_outlier": fleet_outlier,
    "mismatch": mismatch,
    "ratio": ratio,
    "missing": missing,
}
