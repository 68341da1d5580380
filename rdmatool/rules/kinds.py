"""One pure, vectorised function per rule kind: (facts, rule, context) → a frame of hits.

Every function returns columns HIT_COLUMNS: target, entity, priority, observed, expected, baseline, window_s. Nothing
here evaluates strings from playbooks; operators are looked up in a fixed table. The facts are read through the
context's FactQuery (rdmatool.table.facts): the analysis' own in a diagnosis, shared with the suggesters.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rdmatool.metrics import GLOSSARY, rate_name
from rdmatool.rules.port_up import without_down_switch_ports
from rdmatool.rules.rule import Rule
from rdmatool.table import column_codes
from rdmatool.table.facts import FactQuery

HIT_COLUMNS = ["target", "entity", "priority", "observed", "expected", "baseline", "window_s"]
_OPS: dict[str, Callable] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
}


@dataclass
class Context:
    """What a rule may look at besides the facts: cabling, the baseline's statistics and the site profile; and the
    query over the facts (the analysis' own in a diagnosis, else one built on first use for the facts in hand)."""

    links: pd.DataFrame = field(default_factory=pd.DataFrame)
    baseline: pd.DataFrame | None = None  # columns: metric, kind, role, priority, size_bytes, median, mad, n
    profile: dict = field(default_factory=dict)
    query: FactQuery | None = field(default=None, repr=False, compare=False)

    def query_of(self, facts) -> FactQuery:
        """The query over these facts: the context's own when it reads them."""
        if self.query is None or not self.query.reads(facts):
            self.query = FactQuery(facts)
        return self.query


def empty_hits() -> pd.DataFrame:
    return pd.DataFrame(columns=HIT_COLUMNS)


# --- shared selection ------------------------------------------------------------------------------------------


def rows(query: FactQuery, metric: str, field_name: str = "value", where: dict | None = None) -> pd.DataFrame:
    """The facts for one metric, already narrowed by `where`, with the compared number in `x`."""
    name = metric if field_name == "value" else rate_name(metric)
    part = query.take(query.select(name, where or {}))
    x = part["delta"] if field_name == "delta" else part["value"]
    return part.assign(x=x)


def matching_positions(query: FactQuery, metric: str, field_name: str, where: dict | None, textual: bool, op: str,
                       value) -> np.ndarray:
    """Row positions of rows() for which `compare(text or x, op, value)` holds: the test runs on the one column it
    reads, before any whole row is cut."""
    name = metric if field_name == "value" else rate_name(metric)
    at = query.select(name, where or {})
    subject = query.column("text" if textual else "delta" if field_name == "delta" else "value", at)
    return at[compare(subject, op, value).to_numpy(dtype=bool)]


def matching(query: FactQuery, metric: str, field_name: str, where: dict | None, textual: bool, op: str,
             value) -> pd.DataFrame:
    """rows() for which `compare(text or x, op, value)` holds."""
    part = query.take(matching_positions(query, metric, field_name, where, textual, op, value))
    return part.assign(x=part["delta"] if field_name == "delta" else part["value"])


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


def apply_also(part: pd.DataFrame, query: FactQuery, conditions: list[dict], where: dict) -> pd.DataFrame:
    """Keep rows for which every extra condition holds on the same target and entity (and priority if both have
    one) — or, with `scope: target`, on the target's total. Lets a rule say "pauses high AND marks low"."""
    for cond in conditions or []:
        narrowed = {k: v for k, v in where.items() if k not in ("priority", "entity", "raw_key")}
        field_name = cond.get("field", "value")
        cond_where = {**narrowed, **(cond.get("where") or {})}
        if cond.get("scope") == "target":
            other = rows(query, cond["metric"], field_name, cond_where)
            totals = other.groupby("target")["x"].sum(min_count=1)
            good = totals[compare(totals, cond["op"], cond["value"])].index
            part = part[part["target"].isin(set(good))]
            continue
        textual = isinstance(cond["value"], str)
        # only the three columns the join reads
        keep = query.frame(matching_positions(query, cond["metric"], field_name, cond_where, textual, cond["op"],
                                              cond["value"]), ["target", "entity", "priority"])
        keep = keep.rename(columns={"priority": "p_other"})
        # The join decides which rows of `part` stay; it reads only their label, target, entity and priority.
        merged = part.reset_index()[["index", "target", "entity", "priority"]].merge(keep, on=["target", "entity"],
                                                                                    how="inner")
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


# --- the kinds ---------------------------------------------------------------------------------------------------


def threshold(facts: pd.DataFrame, rule: Rule, ctx: Context) -> pd.DataFrame:
    p = rule.params
    field_name = p.get("field", "value" if rule.kind == "threshold" else "rate")
    query = ctx.query_of(facts)
    textual = isinstance(p["value"], str) or (
        isinstance(p["value"], list) and p["value"] and isinstance(p["value"][0], str))
    part = matching(query, p["metric"], field_name, rule.where, textual, p["op"], p["value"])
    part = apply_also(part, query, p.get("also"), rule.where)
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
    return hits(part, f"{_negate(p['op'])} {_shown(p['value'])}")


rate = threshold  # a rate rule is a threshold on `<metric>_per_s` (or its delta); the default field differs


def deviation(facts: pd.DataFrame, rule: Rule, ctx: Context) -> pd.DataFrame:
    """Robust deviation from the baseline: |x − median| > max(mad_factor·MAD·1.4826, min_deviation)."""
    if ctx.baseline is None or ctx.baseline.empty:
        return empty_hits()
    p = rule.params
    field_name = p.get("field", "value")
    metric = p["metric"] if field_name == "value" else rate_name(p["metric"])
    part = rows(ctx.query_of(facts), p["metric"], field_name, rule.where)
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
    query = ctx.query_of(facts)
    part = rows(query, p["metric"], "value", rule.where)
    part = apply_also(part, query, p.get("also"), rule.where)
    if part.empty:
        return empty_hits()
    group_cols = []
    for g in p.get("group_by") or []:
        if g in part.columns:
            group_cols.append(g)
        else:  # a metric used as an attribute (e.g. ca_type): its text on the same target and device
            attr = query.frame(query.positions(g), ["target", "entity", "text", "value"])
            attr = attr.assign(**{g: attr["text"].where(attr["text"].notna(), attr["value"].astype(str))})
            attr = attr.assign(device=_device(attr["entity"])).drop_duplicates(["target", "device"])
            part = part.assign(device=_device(part["entity"])).merge(
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
            if p.get("outlier_values"):  # only these departures are this rule's (other rules say the rest)
                bad = bad[bad["text"].isin(p["outlier_values"])]
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


def _device(entity: pd.Series) -> pd.Series:
    """The device of an RDMA port (`mlx5_0` of `mlx5_0/1`), NaN where the entity is no text: what
    `.str.split("/").str[0]` gives, decided once per distinct entity (a fleet has a few, over a million rows)."""
    codes, uniques = pd.factorize(entity.to_numpy(dtype=object), use_na_sentinel=False)
    devices = np.array([e.split("/", 1)[0] if isinstance(e, str) else np.nan for e in uniques] + [np.nan],
                       dtype=object)
    return pd.Series(devices[codes], index=entity.index, dtype=object, name=entity.name)


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
    query = ctx.query_of(facts)
    if mode == "expected":
        return _expected_mismatch(query, rule)
    if mode == "peer" and (ctx.links is None or ctx.links.empty):
        return empty_hits()  # no cabling known: no switch port to compare with
    part = rows(query, p["metric"], "value", rule.where)
    if part.empty:
        return empty_hits()
    part = part.assign(v=part["x"].where(part["x"].notna(), part["text"]))
    if mode == "metric":
        other = query.frame(query.positions(p["against_metric"]), ["target", "entity", "value", "text"])
        other = other.assign(w=other["value"].where(other["value"].notna(), other["text"]))
        merged = part.merge(other[["target", "entity", "w"]].drop_duplicates(["target", "entity"]),
                            on=["target", "entity"], how="inner")
        bad = merged[merged["v"].map(fmt) != merged["w"].map(fmt)]
        return hits(bad, bad["w"].map(lambda w: f"{p['against_metric']} {fmt(w)}"))
    if mode == "peer":
        return _peer_mismatch(part, query, ctx, p)
    if mode == "roles":
        return _roles_overlap(part, p)
    return empty_hits()


def _expected_mismatch(query: FactQuery, rule: Rule) -> pd.DataFrame:
    """The setting against the playbook's value (per priority or one for all). The test reads three columns; only
    the rows that fail it are cut from the facts."""
    at = without_down_switch_ports(query, query.select(rule.params["metric"], rule.where))
    if not len(at):
        return empty_hits()
    narrow = query.frame(at, ["priority", "value", "text"])
    v = narrow["value"].where(narrow["value"].notna(), narrow["text"])
    expected = rule.params.get("expected")
    exp = _per_value(narrow["priority"], lambda pr: _expected_for(expected, pr))
    bad_mask = exp.notna() & (v.astype(str) != exp.astype(str))
    numeric = pd.to_numeric(v, errors="coerce")
    exp_num = pd.to_numeric(exp, errors="coerce")
    bad_mask &= ~(numeric.notna() & exp_num.notna() & (numeric == exp_num))
    bad = query.take(at[bad_mask.to_numpy(dtype=bool)])
    return hits(bad.assign(x=bad["value"]), exp[bad_mask].astype(str))


def _per_value(column: pd.Series, fn) -> pd.Series:
    """`column.map(fn)`, with `fn` called once per distinct value instead of once per row (a fleet's priorities are
    eight numbers and a missing one, over hundreds of thousands of rows): the same values, of the same type."""
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    mapped = pd.Series(uniques, dtype=column.dtype).map(fn)
    return pd.Series(mapped.array.take(codes), index=column.index, name=column.name)


def _expected_for(expected, priority):
    if isinstance(expected, dict):
        if priority is not None and priority is not pd.NA and not pd.isna(priority) and int(priority) in expected:
            return expected[int(priority)]
        return expected.get("default")
    return expected


def _peer_mismatch(part: pd.DataFrame, query: FactQuery, ctx: Context, p: dict) -> pd.DataFrame:
    """A host setting against the same setting on the switch port it is cabled to (joined through LLDP)."""
    links = ctx.links
    if links is None or links.empty:
        return empty_hits()
    peer_metric = p.get("against_metric", p["metric"])
    hosts = part[part["kind"] == "host"].merge(links, left_on=["target", "entity"], right_on=["host", "host_port"])
    if "when_value" in p:  # only the host rows in this state matter (e.g. a priority the host made lossless)
        hosts = hosts[hosts["v"].map(fmt) == fmt(p["when_value"])]
    switch_side = query.of_metric(peer_metric)
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
    query = ctx.query_of(facts)
    num = rows(query, p["numerator"], field_name, rule.where)
    den = rows(query, p["denominator"], field_name, rule.where)
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
            "expected": f"{_negate(p['op'])} {_shown(p['value'])}", "baseline": None, "window_s": float(den["window_s"].median()),
        }])
    # size_bytes too: a perftest sweep's p99 at 1 MB over its typical latency at 2 B is no jitter
    keys = ["target", "entity", "priority", "size_bytes"]
    merged = num.merge(den[[*keys, "x"]].rename(columns={"x": "d"}), on=keys, how="inner")
    merged = merged[merged["d"] >= minimum]
    merged = merged.assign(x=merged["x"] / merged["d"])
    merged = merged[compare(merged["x"], p["op"], p["value"])]
    return hits(merged, f"{_negate(p['op'])} {_shown(p['value'])}")


def missing(facts: pd.DataFrame, rule: Rule, ctx: Context) -> pd.DataFrame:
    """Expected metrics absent on a target: monitoring gaps must show, never read as healthy."""
    p = rule.params
    query = ctx.query_of(facts)
    population = query.targets_where({k: v for k, v in rule.where.items() if k in ("kind", "role", "platform",
                                                                                   "link_layer")})
    targets = sorted(population - {"fabric"})
    wanted = list(p["metrics"])
    holders = {m: query.targets_with(m) for m in dict.fromkeys(wanted)}
    role_of = query.derived(("kinds.missing", "roles"), lambda: _roles(query)) if p.get("peers_have") else {}
    # The roles among each metric's holders: a target lacking the metric has a peer (same role) reporting it exactly
    # when its role is among them (it is no holder itself) — one set per metric, not one per target and metric.
    roles_holding = {m: {role_of.get(t) for t in held} for m, held in holders.items()} if role_of else {}
    out = []
    for target in targets:
        absent = [m for m in wanted if target not in holders[m]]
        if p.get("require_any") and len(absent) < len(wanted):
            continue
        if p.get("peers_have"):
            # a gap on a node whose peers (same role) all report it is the node's fault, not the monitoring's
            role = role_of.get(target)
            # (a NaN role equals no role, not even another NaN: such a node has no peers)
            absent = [m for m in absent if role == role and role in roles_holding.get(m, ())]
        if absent:
            out.append({"target": target, "entity": None, "priority": None, "observed": "absent: " + ", ".join(absent),
                        "expected": "present", "baseline": None, "window_s": np.nan})
    return pd.DataFrame(out, columns=HIT_COLUMNS) if out else empty_hits()


def _roles(query: FactQuery) -> dict:
    """target → role of its first fact (None when the inventory gives none: then every such target is a peer of the
    others). The first rows from the query's target codes: a hash of integers, not of a fleet's 8,000,000 strings."""
    first = column_codes.first_of_each(query.codes("target")[0])
    pairs = query.frame(first, ["target", "role"])
    return dict(zip(pairs["target"], pairs["role"].where(pairs["role"].notna(), None)))


def ecn_vs_pause(facts: pd.DataFrame, rule: Rule, ctx: Context) -> pd.DataFrame:
    """Ports paused a large share of the window on a priority while ECN marks few of their packets there: ECN
    fires after PFC (docs/tuning.md §2.5, row 6). Judged per port and priority, so one late port shows on a switch
    that marks elsewhere; `scope: target` makes one hit per target naming its late ports.

    The mark ratio is the port's ECN-marked packets over its transmitted packets in the window, on the same priority
    where the switch counts per priority, else the port's own total (a port-wide mark count over one priority's
    packets can only overstate the ratio: never a false alarm). A port without both counts is not judged. The ratio
    is of rates: a port's packet count may come from the far end of its cable (rdmatool.topology.far_end), over
    that end's window."""
    p = rule.params
    query = ctx.query_of(facts)
    paused = rows(query, p["metric"], "value", rule.where)
    paused = paused[paused["priority"].notna() & (paused["x"] > float(p["paused_above"]))]
    if paused.empty:
        return empty_hits()
    narrowed = {k: v for k, v in rule.where.items() if k not in ("priority", "entity", "raw_key")}
    targets = set(paused["target"])
    marks = _largest_deltas(query, ("ecn_marked_packets",), narrowed, targets)
    packets = _largest_deltas(query, ("tx_packets",), narrowed, targets)
    port_packets = _largest_deltas(query, ("roce_tx_packets",), narrowed, targets)  # RoCE-only, no per priority
    minimum = float(p.get("min_packets", 1000))
    found = []
    sources = paused["raw_key"] if "raw_key" in paused else [None] * len(paused)
    read_at: dict = {}  # (target, entity, priority) → where a pause share read at the far end of a cable came from
    for t, e, pr, x, w, src in zip(paused["target"], paused["entity"], paused["priority"], paused["x"],
                                   paused["window_s"] if "window_s" in paused else [np.nan] * len(paused), sources):
        prio = int(pr)
        m = marks.get((t, e, prio), marks.get((t, e, None)))
        n = packets.get((t, e, prio), port_packets.get((t, e, None), packets.get((t, e, None))))
        if m is None or n is None or n[0] < minimum:
            continue
        ratio = _marks_per_packet(m, n)
        if ratio < float(p["marked_below"]):
            found.append((t, e, prio, float(x), ratio, w))
            if isinstance(src, str) and src.startswith("far end "):
                read_at[(t, e, prio)] = src
    if not found:
        return empty_hits()
    expected = f"ECN marks >= {p['marked_below']} of packets before pauses pass {p['paused_above']} of the time"
    if p.get("scope", "entity") == "target":
        return _late_ports_by_target(found, expected)
    return pd.DataFrame([{"target": t, "entity": e, "priority": prio, "observed": x, "expected": expected,
                          "baseline": ratio, "window_s": w,
                          "details": {"pause_read_at": read_at[(t, e, prio)]} if (t, e, prio) in read_at else None}
                         for t, e, prio, x, ratio, w in found], columns=[*HIT_COLUMNS, "details"])


def _largest_deltas(query: FactQuery, metrics: tuple[str, ...], where: dict, targets: set) -> dict:
    """(target, entity, priority or None) → (delta, window) of the largest delta among the views of one count
    (two views of one counter, e.g. Cumulus port-stats and RoCE counters, are not added up)."""
    out: dict = {}
    for metric in metrics:
        part = rows(query, metric, "delta", where)
        part = part[part["target"].isin(targets) & part["x"].notna()]
        for t, e, pr, x, w in zip(part["target"], part["entity"], part["priority"], part["x"], part["window_s"]):
            key = (t, e, None if pd.isna(pr) else int(pr))
            if key not in out or float(x) > out[key][0]:
                out[key] = (float(x), float(w) if pd.notna(w) else np.nan)
    return out


def _marks_per_packet(marked: tuple, sent: tuple) -> float:
    """Marks per packet, as rates when both windows are known (they may differ: see ecn_vs_pause)."""
    (m, wm), (n, wn) = marked, sent
    if wm > 0 and wn > 0:
        return (m / wm) / (n / wn)
    return m / n


def _late_ports_by_target(found: list[tuple], expected: str) -> pd.DataFrame:
    """ecn_vs_pause with `scope: target`: one hit per target naming its late ports (`found`: (target, entity,
    priority, paused share, mark ratio, window) each)."""
    by_target: dict[str, list] = {}
    for t, e, prio, x, ratio, w in found:
        by_target.setdefault(t, []).append((e, prio, x, ratio, w))

    def hit(t: str, ports: list) -> dict:
        ordered = sorted(ports, key=lambda r: (str(r[0]), r[1]))
        # observed: the worst port's paused share, in the metric's own unit (a count of ports there read as
        # "100 % of the window"); the baseline names how many ports and each one's figures
        return {
            "target": t, "entity": None, "priority": None, "observed": max(x for _, _, x, _, _ in ports),
            "expected": expected,
            "baseline": f"{len(ports)} port(s): " + ", ".join(
                f"{e} priority {prio} (paused {x:.3g}, marked {ratio:.3g})" for e, prio, x, ratio, _ in ordered),
            "window_s": ports[0][4],
            # each late port as data: a storm at the far end of every one of them explains the finding
            # (rules.engine, `explains_far_end`)
            "details": {"ports": [{"entity": e, "priority": prio, "paused": x, "marked": ratio}
                                  for e, prio, x, ratio, _ in ordered]},
        }

    return pd.DataFrame([hit(t, ports) for t, ports in sorted(by_target.items())], columns=[*HIT_COLUMNS, "details"])


# What a verdict hit carries beyond HIT_COLUMNS: the judge's record (evidence `details`) and the subject's facts by
# metric (for the rule's text).
VERDICT_COLUMNS = ["details", "names"]


def verdict(facts: pd.DataFrame, rule: Rule, ctx: Context) -> pd.DataFrame:
    """An upstream judge's verdicts, stated as facts (the perftest attribution's: rdmatool.perf.attribution.facts):
    one hit per `verdict` fact whose text is `value`, on that fact's target and entity (its subject).

    Observed is the subject's first `metric` fact (its number, else its text). Expected is `>= <number> <unit>` from
    the subject's `at_least` fact (a pass line), or `<= <number> <unit>` from its `at_most` fact (a ceiling), when it
    has one, else `expected` as written (else none). `details` names a fact
    holding the judge's record as JSON: the evidence keeps it whole, as `details`. The rule's text may name any fact
    of the subject by its metric (`{perf_server}`): a hit carries them as `names`."""
    p = rule.params
    query = ctx.query_of(facts)
    judged = query.take(matching_positions(query, p["verdict"], "value", rule.where, True, "==", str(p["value"])))
    if judged.empty:
        return empty_hits()
    out = []
    for target, entity, priority in zip(judged["target"], judged["entity"], judged["priority"]):
        known = _subject(query, target, entity)
        expected = p.get("expected")
        for key, shown in (("at_least", ">= {:.1f}"), ("at_most", "<= {:g}")):
            line = known.get(p[key]) if key in p else None
            if isinstance(line, (int, float)) and not pd.isna(line):
                unit = GLOSSARY[p[key]].unit if p[key] in GLOSSARY else ""
                expected = f"{shown.format(line)} {unit}".rstrip()
        out.append({"target": target, "entity": entity, "priority": priority, "observed": known.get(p["metric"]),
                    "expected": expected, "baseline": None, "window_s": np.nan,
                    "details": _record(known.get(p["details"])) if "details" in p else None, "names": known})
    return pd.DataFrame(out, columns=[*HIT_COLUMNS, *VERDICT_COLUMNS])


def _subject(query: FactQuery, target, entity) -> dict:
    """Each metric of one target and entity → its first fact's number, else its text."""
    own = query.of_target(target)
    if own is None:
        return {}
    same = own["entity"].isna() if entity is None or pd.isna(entity) else own["entity"] == entity
    own = own[same.to_numpy(dtype=bool)]
    found: dict = {}
    for metric, value, text in zip(own["metric"], own["value"], own["text"]):
        found.setdefault(metric, text if pd.isna(value) else value)
    return found


def _record(text) -> dict | None:
    """A judge's record (JSON text of a mapping), None when there is none or it is no mapping."""
    if not isinstance(text, str):
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def fmt(value) -> str:
    """A number as an engineer writes it: 4096, not 4096.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _shown(value) -> str:  # noqa: ANN001 - a rule's value: a number, a word or a list of them
    """A rule's value as the evidence's `expected` text shows it: a list as `{Polling, Sleep}`, not Python's repr."""
    return "{" + ", ".join(map(str, value)) + "}" if isinstance(value, (list, tuple)) else str(value)


def _negate(op: str) -> str:
    """The healthy side of a trigger condition, for the evidence's `expected`."""
    return {">": "<=", ">=": "<", "<": ">=", "<=": ">", "==": "!=", "!=": "==", "in": "not in",
            "not_in": "in"}.get(op, op)
