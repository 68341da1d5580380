"""Playbook loading and validation: YAML in, frozen Rule objects out, or PlaybookError `FILE:LINE: message`.

A rule names its kind and plain parameters; nothing in a playbook is ever evaluated as code. Text fields may hold
`{placeholders}` filled from the evidence (target, entity, priority, observed, expected, baseline, window_s) by plain
string substitution.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rdmatool import metrics, yamlio
from rdmatool.errors import PlaybookError
from rdmatool.model import Severity

KINDS = ("threshold", "rate", "deviation", "fleet_outlier", "mismatch", "ratio", "missing")
OPERATORS = (">", ">=", "<", "<=", "==", "!=", "in", "not_in")
FIELDS = ("value", "rate", "delta")
WHERE_KEYS = {"kind", "role", "platform", "priority", "entity", "raw_key", "link_layer", "parser"}
_ID = re.compile(r"[a-z][a-z0-9_]{0,127}")  # fullmatch: `$` would also accept a trailing newline
_COMMON = {"id", "kind", "severity", "symptom", "cause", "check", "fix", "where", "suggest", "description", "ref"}
_PARAMS: dict[str, set[str]] = {
    "threshold": {"metric", "op", "value", "field", "also", "aggregate", "group_by"},
    "rate": {"metric", "op", "value", "field", "also"},
    "deviation": {"metric", "field", "min_deviation", "direction", "mad_factor", "min_baseline_n"},
    "fleet_outlier": {"metric", "group_by", "min_group", "tolerance_pct", "direction", "also"},
    "mismatch": {"metric", "against", "against_metric", "expected", "compare", "when_value"},
    "ratio": {"numerator", "denominator", "op", "value", "scope", "min_denominator", "field"},
    "missing": {"metrics", "require_any"},
}
_REQUIRED: dict[str, set[str]] = {
    "threshold": {"metric", "op", "value"},
    "rate": {"metric", "op", "value"},
    "deviation": {"metric"},
    "fleet_outlier": {"metric"},
    "mismatch": {"metric"},
    "ratio": {"numerator", "denominator", "op", "value"},
    "missing": {"metrics"},
}

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
_EXPECTED = "a string, a number, a list of them, or a mapping of priorities (and `default`) to one"
_CONDITIONS = "a list of conditions (mappings)"
_AGGREGATE = "a mapping with `value` (a number) and optionally `op`"
_WHERE = "a mapping of filter keys to a string, a number or a list of them"
PARAM_TYPES: dict[str, str] = {
    "metric": _TEXT, "numerator": _TEXT, "denominator": _TEXT, "against_metric": _TEXT, "against": _TEXT,
    "metrics": _TEXTS, "group_by": _TEXTS,
    "op": _TEXT, "field": _TEXT, "direction": _TEXT, "compare": _TEXT, "scope": _TEXT,
    "value": _VALUE, "expected": _EXPECTED, "when_value": _SCALAR,
    "min_deviation": _NUMBER, "mad_factor": _NUMBER, "min_baseline_n": _NUMBER, "tolerance_pct": _NUMBER,
    "min_denominator": _NUMBER, "min_group": _INTEGER,
    "require_any": _BOOLEAN,
    "also": _CONDITIONS, "aggregate": _AGGREGATE,
}
_KIND_PARAM_TYPES: dict[tuple[str, str], str] = {("ratio", "value"): _NUMBER}  # a ratio is compared as a number
# The closed sets kinds.py picks from; anything else would silently mean the default.
PARAM_CHOICES: dict[str, tuple[str, ...]] = {
    "direction": ("both", "above", "below"),
    "compare": ("expected", "peer", "metric", "roles"),
    "scope": ("entity", "fleet"),
}
_COMMON_TYPES = {"description": _TEXT, "ref": _TEXT}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, str) or _is_number(value)


def _is_where(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and (_is_scalar(v) or (isinstance(v, list) and all(_is_scalar(x) for x in v)))
        for k, v in value.items())


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
            return all((k == "default" or (isinstance(k, int) and not isinstance(k, bool))) and _is_scalar(v)
                       for k, v in value.items())
        return _fits(value, _VALUE)
    if expected == _CONDITIONS:
        return isinstance(value, list) and all(isinstance(c, dict) for c in value)
    if expected == _AGGREGATE:
        return isinstance(value, dict) and _is_number(value.get("value")) and set(value) <= {"op", "value"} and (
            isinstance(value.get("op", ">="), str))
    if expected == _WHERE:
        return _is_where(value)
    raise AssertionError(expected)


@dataclass(frozen=True)
class Condition:
    metric: str
    op: str
    value: Any
    field: str = "value"


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str
    severity: Severity
    symptom: str
    cause: str
    check: str
    fix: str
    params: dict = field(default_factory=dict, hash=False, compare=False)
    where: dict = field(default_factory=dict, hash=False, compare=False)
    suggest: tuple[str, ...] = ()
    source: str = ""  # FILE:LINE, for messages about the rule itself


def load_dir(directory: str | Path) -> list[Rule]:
    root = Path(directory)
    if not root.is_dir():
        raise PlaybookError(f"{root}: no such playbook directory")
    files = sorted([*root.glob("*.yaml"), *root.glob("*.yml")])
    if not files:
        raise PlaybookError(f"{root}: no playbooks (*.yaml) in this directory")
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for path in files:
        for rule in load_file(path):
            if rule.id in seen:
                raise PlaybookError(f"{rule.source}: rule id {rule.id!r} already defined at {seen[rule.id]}")
            seen[rule.id] = rule.source
            rules.append(rule)
    return rules


def load_file(path: Path) -> list[Rule]:
    try:
        data = yamlio.load(path)
    except yamlio.YamlError as exc:
        raise PlaybookError(str(exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        raise PlaybookError(f"{path}:1: a playbook is a mapping with a `rules` list")
    return [_rule(path, raw) for raw in data["rules"]]


def _rule(path: Path, raw: Any) -> Rule:
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
    for text_field in ("symptom", "cause", "check", "fix"):
        if not isinstance(raw.get(text_field), str) or not raw[text_field].strip():
            raise fail(f"rule {rule_id}: missing field {text_field!r}")
    try:
        severity = Severity(str(raw.get("severity", "")).lower())
    except ValueError:
        raise fail(f"rule {rule_id}: severity must be one of {', '.join(s.value for s in Severity)}") from None
    params = {k: v for k, v in raw.items() if k not in _COMMON}
    unknown = set(params) - _PARAMS[kind]
    if unknown:
        raise fail(f"rule {rule_id}: unknown parameter(s) {yamlio.shorten(str(sorted(unknown, key=str)))} for kind "
                   f"{kind}")
    missing = _REQUIRED[kind] - set(params)
    if missing:
        raise fail(f"rule {rule_id}: kind {kind} needs {sorted(missing)}")
    _check_types(path, raw, params, kind, fail, rule_id)
    _check_metrics(params, fail, rule_id)
    _check_operators(params, fail, rule_id)
    where_filter = raw.get("where") or {}
    if not isinstance(where_filter, dict) or set(where_filter) - WHERE_KEYS:
        raise fail(f"rule {rule_id}: `where` takes {sorted(WHERE_KEYS)}")
    if not _is_where(where_filter):
        raise _located(path, where_filter, fail, f"rule {rule_id}: `where` must be {_WHERE}")
    suggest = raw.get("suggest") or []
    if not (isinstance(suggest, str) or _fits(suggest, _TEXTS)):
        raise _located(path, suggest, fail, f"rule {rule_id}: `suggest` must be a string or {_TEXTS}, not "
                                            f"{yamlio.quote(suggest)}")
    suggest = (suggest,) if isinstance(suggest, str) else tuple(suggest)
    return Rule(
        id=rule_id, kind=kind, severity=severity, symptom=raw["symptom"].strip(), cause=raw["cause"].strip(),
        check=raw["check"].strip(), fix=raw["fix"].strip(), params=_plain(params), where=_plain(where_filter),
        suggest=suggest, source=where,
    )


def _located(path: Path, value: Any, fail, message: str) -> PlaybookError:
    """The error at the line of the offending mapping when it is one (a nested `value: {x: 1}`), else the rule's."""
    line = yamlio.line_of(value)
    return PlaybookError(f"{path}:{line}: {message}") if line else fail(message)


def _check_types(path: Path, raw: dict, params: dict, kind: str, fail, rule_id: str) -> None:
    for name, value in params.items():
        expected = _KIND_PARAM_TYPES.get((kind, name)) or PARAM_TYPES[name]
        if not _fits(value, expected):
            raise _located(path, value, fail, f"rule {rule_id}: `{name}` must be {expected}, not {yamlio.quote(value)}")
        choices = PARAM_CHOICES.get(name)
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
        if isinstance(cond.get("where"), dict) and set(cond["where"]) - WHERE_KEYS:
            raise fail(f"rule {rule_id}: `where` takes {sorted(WHERE_KEYS)}")
    for name, expected in _COMMON_TYPES.items():
        if name in raw and not _fits(raw[name], expected):
            raise fail(f"rule {rule_id}: `{name}` must be {expected}, not {yamlio.quote(raw[name])}")


def _metric_names(params: dict) -> list[str]:
    names = [params[k] for k in ("metric", "numerator", "denominator", "against_metric") if k in params]
    names += list(params.get("metrics") or [])
    names += [c.get("metric") for c in params.get("also") or [] if isinstance(c, dict)]
    return names


def _check_metrics(params: dict, fail, rule_id: str) -> None:
    for name in _metric_names(params):
        if not isinstance(name, str) or not metrics.is_known(name):
            raise fail(f"rule {rule_id}: unknown metric {yamlio.quote(name)} (not in the glossary)")
    for key in ("field",):
        if key in params and params[key] not in FIELDS:
            raise fail(f"rule {rule_id}: field must be one of {FIELDS}")


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
            raise fail(f"rule {rule_id}: field must be one of {FIELDS}")
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
