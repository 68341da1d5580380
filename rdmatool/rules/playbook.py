"""Playbook loading and validation: YAML in, frozen Rule objects out, or PlaybookError `FILE:LINE: message`.

A rule names its kind and plain parameters; nothing in a playbook is ever evaluated as code. Text fields may hold
`{placeholders}` filled from the evidence (metric, target, entity, priority, observed, expected, baseline, window_s)
by plain string substitution; `{site.KEY}` templates name the site profile's values (the RoCE / CNP class:
rdmatool.rules.site_templates), filled when the playbook loads and again for each site it is evaluated with, and an
unknown KEY is a `FILE:LINE` error. Values are checked as well as keys: a choice outside its closed set, a `where` value
that cannot match its column, or a mismatch rule whose mode is unclear would otherwise silently mean something else,
so each is refused here. playbooks/README.md is the operator's reference for the format.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from rdmatool import config, metrics, yamlio
from rdmatool.errors import PlaybookError
from rdmatool.model import Platform, Severity, TargetKind
from rdmatool.rules import registry, site_templates
from rdmatool.rules.rule import Rule

KINDS = tuple(registry.KINDS)  # the names, in the registry's order (its error messages list them)
OPERATORS = (">", ">=", "<", "<=", "==", "!=", "in", "not_in")
FIELDS = ("value", "rate", "delta")
# The columns of the facts (analysis.FACT_COLUMNS) a `where` may filter on, plus link_layer (a target's link_layer
# fact). The facts have no `parser` column, so a parser is no filter key.
WHERE_KEYS = {"kind", "role", "platform", "priority", "entity", "raw_key", "link_layer"}
# The columns of the facts a `group_by` may group on; fleet_outlier also takes a metric name (kinds.fleet_outlier).
GROUP_COLUMNS = ("target", "entity", "priority", "size_bytes", "kind", "role", "platform", "raw_key")
_ID = re.compile(r"[a-z][a-z0-9_]{0,127}")  # fullmatch: `$` would also accept a trailing newline
_COMMON = {"id", "kind", "severity", "symptom", "cause", "check", "fix", "where", "suggest", "replaces",
           "explains", "explains_far_end", "stage"}
# The gate's stages (rdmatool.gate.run), by what a rule needs: one snapshot, two (growth in a window), the perftest
# bandwidth or latency results, the incast stage's own load.
STAGES = ("state", "counters", "bandwidth", "latency", "incast")
# A rule without `stage` (a playbook written before the key) gets the stage the gate used to infer from its metric:
# these sets and prefixes are that inference, kept for such playbooks only; the shipped rules all name their stage.
_COUNTER_METRICS = {"rx_pause_fraction", "tx_pause_fraction", "ecn_mark_ratio", "cnp_handled_ratio",
                    "link_host_errors", "link_switch_errors"}  # growth in the window (rdmatool.topology.link_errors)
_BANDWIDTH_METRICS = {"bw_efficiency", "bw_avg_gbps", "bw_peak_gbps", "msg_rate_mpps", "busbw_gbps",
                      "path_class_median_gbps"}

# What each parameter must be, from what rules/kinds.py does with it; checked at load, so that a wrong type is a
# `FILE:LINE` error here instead of a pandas traceback in the middle of a diagnosis. Types only (and the closed
# sets kinds.py chooses from): which metrics exist and which operators apply are checked separately.
_TEXT = "a string"
_NUMBER = "a number"
_INTEGER = "an integer"
_BOOLEAN = "true or false"
_TEXTS = "a list of strings"
_SCALAR = "a string or a number"
_VALUE = "a string, a number or a list of them"
_EXPECTED = "a string, a number, a list of them, or a mapping of priorities 0-7 (and `default`) to one"
_CONDITIONS = "a list of conditions (mappings)"
_AGGREGATE = "a mapping with `value` (a number) and optionally `op`"
_WHERE = "a mapping of filter keys to a string, a number or a list of them"
PARAM_TYPES: dict[str, str] = {
    "metric": _TEXT, "numerator": _TEXT, "denominator": _TEXT, "against_metric": _TEXT, "against": _TEXT,
    "metrics": _TEXTS, "group_by": _TEXTS, "outlier_values": _TEXTS,
    "op": _TEXT, "field": _TEXT, "direction": _TEXT, "compare": _TEXT, "scope": _TEXT,
    "value": _VALUE, "expected": _EXPECTED, "when_value": _SCALAR,
    "min_deviation": _NUMBER, "mad_factor": _NUMBER, "min_baseline_n": _NUMBER, "tolerance_pct": _NUMBER,
    "min_denominator": _NUMBER, "min_group": _INTEGER,
    "require_any": _BOOLEAN,
    "peers_have": _BOOLEAN,
    "also": _CONDITIONS, "aggregate": _AGGREGATE,
    "verdict": _TEXT, "at_least": _TEXT, "at_most": _TEXT, "details": _TEXT,
    "paused_above": _NUMBER, "marked_below": _NUMBER, "min_packets": _NUMBER,
}
_KIND_PARAM_TYPES: dict[tuple[str, str], str] = {("ratio", "value"): _NUMBER}  # a ratio is compared as a number
# The closed sets kinds.py picks from; anything else would silently mean the default.
PARAM_CHOICES: dict[str, tuple[str, ...]] = {
    "direction": ("both", "above", "below"),
    "compare": ("expected", "peer", "metric", "roles"),
    "scope": ("entity", "fleet"),
    "field": FIELDS,
    "against": ("switch",),  # the only peer kinds.py joins with: the switch port a host port is cabled to
}
# Narrower sets for one kind: deviation looks the baseline up under the metric (value) or its rate, so a delta would
# be compared with the statistics of a rate.
_KIND_PARAM_CHOICES: dict[tuple[str, str], tuple[str, ...]] = {
    ("deviation", "field"): ("value", "rate"),
    ("ecn_vs_pause", "metric"): ("rx_pause_fraction", "tx_pause_fraction"),  # what kinds.ecn_vs_pause compares
    ("ecn_vs_pause", "scope"): ("entity", "target"),
    ("pauses_sent_vs_marks", "metric"): ("tx_pause_fraction",),  # the switch's own share; rules.pausing
}
# The modes of a mismatch rule (kinds.mismatch): the keys each one needs and the ones it may also take. Without
# `compare`, the keys given choose the mode, so they must point at exactly one.
MISMATCH_MODES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "expected": (frozenset({"expected"}), frozenset()),
    "peer": (frozenset(), frozenset({"against", "against_metric", "when_value"})),
    "metric": (frozenset({"against_metric"}), frozenset()),
    "roles": (frozenset(), frozenset({"expected"})),
}
_MODE_OF_KEY = {"against": "peer", "against_metric": "metric", "expected": "expected", "when_value": "peer"}
# `where` values: each key is compared with one column of the facts, so a value of another type never matches.
_PRIORITY = "an integer 0-7 or a list of them"
# A missing rule picks the targets to judge, not facts: it reads only the keys that describe a target.
_KIND_WHERE_KEYS: dict[str, set[str]] = {"missing": {"kind", "role", "platform", "link_layer"}}
_WHERE_CHOICES: dict[str, tuple[str, ...]] = {
    "kind": tuple(k.value for k in TargetKind),
    "platform": tuple(p.value for p in Platform),
}
# Accepted and then never shown anywhere, they would make a rule look documented to its author only; the text an
# operator reads belongs in symptom / cause / check / fix.
_NOT_SHOWN = ("description", "ref")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, str) or _is_number(value)


def _is_where(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and (_is_scalar(v) or (isinstance(v, list) and all(_is_scalar(x) for x in v)))
        for k, v in value.items())


def _is_priority(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 7


def _where_problem(where_filter: dict, keys: set[str] = WHERE_KEYS) -> str | None:
    """What is wrong with one `where` mapping, or None: unknown keys, or a value that cannot match its column."""
    unknown = set(where_filter) - keys
    if unknown:
        return f"unknown `where` key(s) {sorted(map(str, unknown))} (one of {', '.join(sorted(keys))})"
    for key, value in where_filter.items():
        values = value if isinstance(value, list) else [value]
        if key == "priority":
            if not values or not all(_is_priority(v) for v in values):
                return f"`where` key `priority` takes {_PRIORITY}, not {yamlio.quote(value)}"
        elif not values or not all(isinstance(v, str) for v in values):
            return f"`where` key `{key}` takes a string or a list of strings, not {yamlio.quote(value)}"
        elif key in _WHERE_CHOICES and set(values) - set(_WHERE_CHOICES[key]):
            return (f"`where` key `{key}` takes {', '.join(_WHERE_CHOICES[key])} (or a list of them), not "
                    f"{yamlio.quote(value)}")
    return None


def _fits(value: Any, expected: str) -> bool:
    if expected == _TEXT:
        return isinstance(value, str)
    if expected == _NUMBER:
        return _is_number(value)
    if expected == _INTEGER:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == _BOOLEAN:
        return isinstance(value, bool)
    if expected == _TEXTS:
        return isinstance(value, list) and all(isinstance(x, str) for x in value)
    if expected == _SCALAR:
        return _is_scalar(value)
    if expected == _VALUE:
        return _is_scalar(value) or (isinstance(value, list) and all(_is_scalar(x) for x in value))
    if expected == _EXPECTED:
        if isinstance(value, dict):
            return all((k == "default" or _is_priority(k)) and _is_scalar(v) for k, v in value.items())
        return _fits(value, _VALUE)
    if expected == _CONDITIONS:
        return isinstance(value, list) and all(isinstance(c, dict) for c in value)
    if expected == _AGGREGATE:
        return isinstance(value, dict) and _is_number(value.get("value")) and set(value) <= {"op", "value"} and (
            isinstance(value.get("op", ">="), str))
    if expected == _WHERE:
        return _is_where(value)
    raise AssertionError(expected)


def for_site(rule: Rule, site: dict) -> Rule:
    """The rule as it reads for a site profile: its templates filled from `site` (the same rule when it has none or
    was filled from this very profile). The values were checked at load; the site's are checked by the config."""
    if rule.site == site:
        return rule
    if rule.template is None:
        return replace(rule, site=site)
    raw = site_templates.fill(rule.template, site)
    params = {k: v for k, v in raw.items() if k not in _COMMON}
    return replace(rule, symptom=raw["symptom"].strip(), cause=raw["cause"].strip(), check=raw["check"].strip(),
                   fix=raw["fix"].strip(), params=params, where=raw.get("where") or {}, site=site)


def site_of(rules: list[Rule]) -> dict:
    """The site profile a list of rules was loaded with (the defaults when it is empty)."""
    return next((rule.site for rule in rules if rule.site), None) or config.site_profile()


def load_dir(directory: str | Path, site: dict | None = None) -> list[Rule]:
    """Every playbook of a directory, its templates filled from the site profile (the defaults when None)."""
    profile = config.site_profile(site)
    root = Path(directory)
    if not root.is_dir():
        raise PlaybookError(f"{root}: no such playbook directory")
    files = sorted([*root.glob("*.yaml"), *root.glob("*.yml")])
    if not files:
        raise PlaybookError(f"{root}: no playbooks (*.yaml) in this directory")
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for path in files:
        for rule in load_file(path, profile):
            if rule.id in seen:
                raise PlaybookError(f"{rule.source}: rule id {rule.id!r} already defined at {seen[rule.id]}")
            seen[rule.id] = rule.source
            rules.append(rule)
    for rule in rules:
        for key in ("replaces", "explains", "explains_far_end"):
            unknown = [name for name in getattr(rule, key) if name not in seen]
            if unknown:
                raise PlaybookError(f"{rule.source}: rule {rule.id}: `{key}` names no rule of {root}: "
                                    f"{', '.join(unknown)}")
    _check_explains_acyclic(rules)
    return rules


def _check_explains_acyclic(rules: list[Rule]) -> None:
    """`explains` chains (on one port or across a cable: `explains_far_end`) fold into the first rule of the chain; a
    cycle has no first rule, so it is refused (at the rule where the walk comes back)."""
    explains = {r.id: (*r.explains, *r.explains_far_end) for r in rules}
    by_id = {r.id: r for r in rules}
    done: set[str] = set()

    def walk(rule_id: str, path: list[str]) -> None:
        if rule_id in path:
            cycle = path[path.index(rule_id):] + [rule_id]
            raise PlaybookError(f"{by_id[rule_id].source}: rule {rule_id}: `explains` goes round in a circle: "
                                f"{' → '.join(cycle)}")
        if rule_id in done:
            return
        for other in explains.get(rule_id, ()):
            walk(other, [*path, rule_id])
        done.add(rule_id)

    for rule in rules:
        walk(rule.id, [])


def load_file(path: Path, site: dict | None = None) -> list[Rule]:
    profile = site if site is not None else config.site_profile()
    try:
        data = yamlio.load(path)
    except yamlio.YamlError as exc:
        raise PlaybookError(str(exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        raise PlaybookError(f"{path}:1: a playbook is a mapping with a `rules` list")
    return [_rule(path, raw, profile) for raw in data["rules"]]


def _rule(path: Path, raw: Any, site: dict) -> Rule:
    """One rule of a playbook, checked in the order an author meets the problems: its id and kind, its texts and
    severity, its kind's parameters, its `where`, the rules it names, its stage."""
    where = f"{path}:{yamlio.line_of(raw) or 1}"

    def fail(message: str) -> PlaybookError:
        return PlaybookError(f"{where}: {message}")

    if not isinstance(raw, dict):
        raise fail("each rule must be a mapping")
    rule_id = raw.get("id")
    if not isinstance(rule_id, str) or not _ID.fullmatch(rule_id):
        raise fail(f"rule id {yamlio.quote(rule_id)} must be lower_snake_case")
    kind = raw.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise fail(f"rule {rule_id}: unknown kind {yamlio.quote(kind)} (one of {', '.join(KINDS)})")
    raw, template = _for_the_site(path, raw, rule_id, site)  # checked from here on as it reads for the site
    _check_texts(raw, fail, rule_id)
    try:
        severity = Severity(str(raw.get("severity", "")).lower())
    except ValueError:
        raise fail(f"rule {rule_id}: severity must be one of {', '.join(s.value for s in Severity)}") from None
    params = {k: v for k, v in raw.items() if k not in _COMMON}
    _check_params(path, params, kind, fail, rule_id)
    where_filter = _where_of(path, raw, kind, fail, rule_id)
    suggest, replaces, explains, far_end = _named(path, raw, fail, rule_id)
    stage = raw.get("stage", _default_stage(kind, params))
    if stage not in STAGES:
        raise fail(f"rule {rule_id}: `stage` must be one of {', '.join(STAGES)}, not {yamlio.quote(stage)}")
    return Rule(
        id=rule_id, kind=kind, severity=severity, symptom=raw["symptom"].strip(), cause=raw["cause"].strip(),
        check=raw["check"].strip(), fix=raw["fix"].strip(), params=_plain(params), where=_plain(where_filter),
        suggest=suggest, replaces=tuple(replaces), explains=tuple(explains), explains_far_end=tuple(far_end),
        source=where, site=site, template=template, stage=stage,
    )


def _check_texts(raw: dict, fail, rule_id: str) -> None:
    """What the operator reads: symptom, cause, check and fix, each given; no field the operator never sees."""
    for name in (name for name in _NOT_SHOWN if name in raw):
        raise fail(f"rule {rule_id}: `{name}` is not shown to the operator; write what the operator needs in "
                   "symptom, cause, check or fix (a citation such as \"(rdmatool docs tuning row 1)\" in the text)")
    for text_field in ("symptom", "cause", "check", "fix"):
        if not isinstance(raw.get(text_field), str) or not raw[text_field].strip():
            raise fail(f"rule {rule_id}: missing field {text_field!r}")


def _check_params(path: Path, params: dict, kind: str, fail, rule_id: str) -> None:
    """The kind's parameters: none unknown, none missing, each of its type, and what they name (metrics,
    operators, group_by columns) known."""
    unknown = set(params) - registry.KINDS[kind].params
    if unknown:
        raise fail(f"rule {rule_id}: unknown parameter(s) {yamlio.shorten(str(sorted(unknown, key=str)))} for kind "
                   f"{kind}")
    missing = registry.KINDS[kind].required - set(params)
    if missing:
        raise fail(f"rule {rule_id}: kind {kind} needs {sorted(missing)}")
    _check_types(path, params, kind, fail, rule_id)
    if kind == "mismatch":
        _check_mismatch_mode(params, fail, rule_id)
    if kind == "threshold" and "group_by" in params and "aggregate" not in params:
        raise fail(f"rule {rule_id}: `group_by` of a threshold rule groups its `aggregate` count; add `aggregate` "
                   "or drop `group_by`")
    if kind == "threshold" and "target" not in params.get("group_by", ["target"]):
        raise fail(f"rule {rule_id}: the `group_by` of an `aggregate` count must include target")
    for name in params.get("group_by") or []:
        if name not in GROUP_COLUMNS and not (kind == "fleet_outlier" and metrics.is_known(name)):
            also = " or a glossary metric" if kind == "fleet_outlier" else ""
            raise fail(f"rule {rule_id}: `group_by` takes {', '.join(GROUP_COLUMNS)}{also}, not {yamlio.quote(name)}")
    _check_metrics(params, fail, rule_id)
    _check_operators(params, fail, rule_id)
    _check_numeric_values(params, kind, fail, rule_id)


def _where_of(path: Path, raw: dict, kind: str, fail, rule_id: str) -> dict:
    """The rule's `where` filter ({} without one), with the keys its kind reads."""
    where_filter = raw.get("where") or {}
    if not _is_where(where_filter):
        raise _located(path, where_filter, fail, f"rule {rule_id}: `where` must be {_WHERE}, not "
                                                 f"{yamlio.quote(where_filter)}")
    problem = _where_problem(where_filter, _KIND_WHERE_KEYS.get(kind, WHERE_KEYS))
    if problem:
        raise _located(path, where_filter, fail, f"rule {rule_id}: {problem}")
    return where_filter


def _named(path: Path, raw: dict, fail, rule_id: str) -> tuple[tuple, list, list, list]:
    """What the rule names beside its finding: `suggest` (a string or a list, as a tuple), and the other rules it
    `replaces`, `explains` (not both of one rule) or `explains_far_end`, never itself."""
    suggest = raw.get("suggest") or []
    if not (isinstance(suggest, str) or _fits(suggest, _TEXTS)):
        raise _located(path, suggest, fail, f"rule {rule_id}: `suggest` must be a string or {_TEXTS}, not "
                                            f"{yamlio.quote(suggest)}")
    suggest = (suggest,) if isinstance(suggest, str) else tuple(suggest)
    replaces = raw.get("replaces") or []
    if not _fits(replaces, _TEXTS) or rule_id in replaces:
        raise _located(path, replaces, fail, f"rule {rule_id}: `replaces` must be {_TEXTS} naming other rules, not "
                                             f"{yamlio.quote(replaces)}")
    explains = raw.get("explains") or []
    if not _fits(explains, _TEXTS) or rule_id in explains:
        raise _located(path, explains, fail, f"rule {rule_id}: `explains` must be {_TEXTS} naming other rules, not "
                                             f"{yamlio.quote(explains)}")
    both = sorted(set(explains) & set(replaces))
    if both:  # a finding is either left out (replaces) or kept and folded (explains), not both
        raise fail(f"rule {rule_id}: {', '.join(both)} both in `replaces` and in `explains`; name each in one")
    far_end = raw.get("explains_far_end") or []
    if not _fits(far_end, _TEXTS) or rule_id in far_end:
        raise _located(path, far_end, fail, f"rule {rule_id}: `explains_far_end` must be {_TEXTS} naming other rules, "
                                            f"not {yamlio.quote(far_end)}")
    return suggest, replaces, explains, far_end


def _default_stage(kind: str, params: dict) -> str:
    """The stage of a rule that names none, as the gate inferred it before the `stage` key existed."""
    metric = params.get("metric") or params.get("numerator") or ""
    metric = metric if isinstance(metric, str) else ""
    if metric.startswith("incast_"):
        return "incast"
    if metric in _BANDWIDTH_METRICS:
        return "bandwidth"
    if metric.startswith("lat_"):
        return "latency"
    if kind == "verdict" and str(params.get("verdict", "")).startswith("perf_"):
        return "bandwidth"  # a perftest attribution verdict on what no perftest metric measures (a pair's tool_error)
    if kind in ("rate", "ratio") or params.get("field") in ("rate", "delta") or metric in _COUNTER_METRICS:
        return "counters"
    if any(c.get("field") in ("rate", "delta") for c in params.get("also") or []):
        return "counters"
    return "state"


def _for_the_site(path: Path, raw: dict, rule_id: str, site: dict) -> tuple[dict, dict | None]:
    """(the rule as it reads for the site, the rule as written when it names site values `{site.KEY}`, else None).
    An unknown KEY is an error at the line that writes it; a priority filter filled from the site is a priority."""
    bad = site_templates.unknown(raw)
    if bad is not None:
        line = site_templates.line_of(path, bad, yamlio.line_of(raw) or 1)
        raise PlaybookError(f"{path}:{line}: rule {rule_id}: unknown site value {{site.{bad}}} (one of "
                            f"{', '.join('{site.' + k + '}' for k in site_templates.KEYS)})")
    if not site_templates.names(raw):
        return raw, None
    return site_templates.fill(raw, site), _plain(raw)


def _located(path: Path, value: Any, fail, message: str) -> PlaybookError:
    """The error at the line of the offending mapping when it is one (a nested `value: {x: 1}`), else the rule's."""
    line = yamlio.line_of(value)
    return PlaybookError(f"{path}:{line}: {message}") if line else fail(message)


def _check_types(path: Path, params: dict, kind: str, fail, rule_id: str) -> None:
    for name, value in params.items():
        expected = _KIND_PARAM_TYPES.get((kind, name)) or PARAM_TYPES[name]
        if not _fits(value, expected):
            raise _located(path, value, fail, f"rule {rule_id}: `{name}` must be {expected}, not {yamlio.quote(value)}")
        choices = _KIND_PARAM_CHOICES.get((kind, name)) or PARAM_CHOICES.get(name)
        if choices and value not in choices:
            raise fail(f"rule {rule_id}: `{name}` must be one of {', '.join(choices)}, not {yamlio.quote(value)}")
    if isinstance(params.get("value"), list) and params.get("op") not in ("in", "not_in"):
        raise fail(f"rule {rule_id}: a list `value` needs op in or not_in")
    if params.get("compare") == "roles" and "expected" in params and not (
            _fits(params["expected"], _TEXTS) and len(params["expected"]) == 2):
        raise fail(f"rule {rule_id}: with compare: roles, `expected` is the two roles [training, storage]")
    for cond in params.get("also") or []:
        for name, expected in (("metric", _TEXT), ("op", _TEXT), ("value", _VALUE), ("field", _TEXT),
                               ("scope", _TEXT), ("where", _WHERE)):
            if name in cond and not _fits(cond[name], expected):
                raise _located(path, cond[name], fail, f"rule {rule_id}: `{name}` of an `also` condition must be "
                                                       f"{expected}, not {yamlio.quote(cond[name])}")
        if isinstance(cond.get("value"), list) and cond.get("op") not in ("in", "not_in"):
            raise fail(f"rule {rule_id}: a list `value` needs op in or not_in")
        # kinds.apply_also reads text only for a single string, and sums numbers for scope: target
        if isinstance(cond.get("value"), list) and any(isinstance(v, str) for v in cond["value"]):
            raise fail(f"rule {rule_id}: an `also` condition compares a list `value` with numbers only; for text, "
                       "use one string with == or !=")
        if cond.get("scope") == "target" and not _is_number(cond.get("value")):
            raise fail(f"rule {rule_id}: an `also` condition with scope: target compares the target's total with a "
                       f"number, not {yamlio.quote(cond.get('value'))}")
        problem = _where_problem(cond["where"]) if isinstance(cond.get("where"), dict) else None
        if problem:
            raise _located(path, cond["where"], fail, f"rule {rule_id}: an `also` condition's {problem}")


def _check_mismatch_mode(params: dict, fail, rule_id: str) -> None:
    """One mode, named by `compare` or by the keys given, and exactly the keys that mode reads."""
    given = {k for k in _MODE_OF_KEY if k in params}
    mode = params.get("compare")
    if mode is None:
        implied = {_MODE_OF_KEY[k] for k in given}
        if len(implied) > 1:
            keys = ", ".join(f"`{k}` ({_MODE_OF_KEY[k]})" for k in sorted(given))
            raise fail(f"rule {rule_id}: mismatch mode is ambiguous: {keys}; name it with compare: "
                       f"{' or '.join(sorted(implied))}")
        if not implied:
            raise fail(f"rule {rule_id}: a mismatch rule compares with `expected` (a value), `against: switch` (the "
                       "cabled switch port), `against_metric` (another metric) or `compare: roles`; none is given")
        (mode,) = implied
    needs, may = MISMATCH_MODES[mode]
    missing = needs - given
    if missing:
        raise fail(f"rule {rule_id}: compare: {mode} needs {', '.join(f'`{k}`' for k in sorted(missing))}")
    extra = given - needs - may
    if extra:
        raise fail(f"rule {rule_id}: compare: {mode} does not read {', '.join(f'`{k}`' for k in sorted(extra))}"
                   f" (it takes {', '.join(f'`{k}`' for k in sorted(needs | may)) or 'no other key'})")
    if mode == "expected" and isinstance(params["expected"], list):
        raise fail(f"rule {rule_id}: with compare: expected, `expected` is one value or a mapping of priorities to "
                   f"values, not a list {yamlio.quote(params['expected'])}")


def _metric_names(params: dict) -> list[str]:
    names = [params[k] for k in ("metric", "numerator", "denominator", "against_metric") if k in params]
    names += list(params.get("metrics") or [])
    names += [c.get("metric") for c in params.get("also") or [] if isinstance(c, dict)]
    return names


def _check_metrics(params: dict, fail, rule_id: str) -> None:
    for name in _metric_names(params):
        if not isinstance(name, str) or not metrics.is_known(name):
            raise fail(f"rule {rule_id}: unknown metric {yamlio.quote(name)} (not in the glossary)")


def _check_numeric_values(params: dict, kind: str, fail, rule_id: str) -> None:
    """A `value` compared with a counter or a gauge (or with a rate or delta) is a finite number: `value: lots` or
    "nan" would compare as text, match nothing, and the rule would pass forever. Text is for state metrics."""
    compared = [params] if kind in ("threshold", "rate") else []
    compared += [c for c in params.get("also") or [] if isinstance(c, dict)]
    for cond in compared:
        metric, value = cond.get("metric"), cond.get("value")
        default_field = "rate" if cond is params and kind == "rate" else "value"
        state = metric in metrics.GLOSSARY and metrics.GLOSSARY[metric].kind is metrics.STATE
        if state and cond.get("field", default_field) == "value":
            continue
        values = value if isinstance(value, list) else [value]
        if not all(_is_number(v) for v in values):
            raise fail(f"rule {rule_id}: `value` compared with {metric} must be a finite number, not "
                       f"{yamlio.quote(value)}")


def _check_operators(params: dict, fail, rule_id: str) -> None:
    ops = [params["op"]] if "op" in params else []
    if isinstance(params.get("aggregate"), dict):
        ops.append(params["aggregate"].get("op", ">="))
    for cond in params.get("also") or []:
        if not isinstance(cond, dict) or not {"metric", "op", "value"} <= set(cond):
            raise fail(f"rule {rule_id}: each `also` condition needs metric, op and value")
        if set(cond) - {"metric", "op", "value", "field", "scope", "where"} or cond.get("scope", "entity") not in (
                "entity", "target"):
            raise fail(f"rule {rule_id}: an `also` condition takes metric, op, value, field, scope (entity|target)"
                       " and where")
        if cond.get("field", "value") not in FIELDS:
            raise fail(f"rule {rule_id}: `field` of an `also` condition must be one of {', '.join(FIELDS)}, not "
                       f"{yamlio.quote(cond['field'])}")
        ops.append(cond["op"])
    for op in ops:
        if op not in OPERATORS:
            raise fail(f"rule {rule_id}: unknown operator {yamlio.quote(op)} (one of {' '.join(OPERATORS)})")


def _plain(value: Any) -> Any:
    """LineDicts back to plain dicts, so rules compare and print as ordinary data."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
