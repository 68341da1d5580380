"""Playbook loading and validation: YAML in, frozen Rule objects out, or PlaybookError `FILE:LINE: message`.

A rule names its kind and plain parameters; nothing in a playbook is ever evaluated as code. Text fields may hold
`{placeholders}` filled from the evidence (target, entity, priority, observed, expected, baseline, window_s) by plain
string substitution.
"""

from __future__ import annotations

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
_ID = re.compile(r"^[a-z][a-z0-9_]*$")
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
    if not isinstance(rule_id, str) or not _ID.match(rule_id):
        raise fail(f"rule id {rule_id!r} must be lower_snake_case")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise fail(f"rule {rule_id}: unknown kind {kind!r} (one of {', '.join(KINDS)})")
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
        raise fail(f"rule {rule_id}: unknown parameter(s) {sorted(unknown)} for kind {kind}")
    missing = _REQUIRED[kind] - set(params)
    if missing:
        raise fail(f"rule {rule_id}: kind {kind} needs {sorted(missing)}")
    _check_metrics(params, fail, rule_id)
    _check_operators(params, fail, rule_id)
    where_filter = raw.get("where") or {}
    if not isinstance(where_filter, dict) or set(where_filter) - WHERE_KEYS:
        raise fail(f"rule {rule_id}: `where` takes {sorted(WHERE_KEYS)}")
    suggest = raw.get("suggest") or ()
    suggest = (suggest,) if isinstance(suggest, str) else tuple(suggest)
    return Rule(
        id=rule_id, kind=kind, severity=severity, symptom=raw["symptom"].strip(), cause=raw["cause"].strip(),
        check=raw["check"].strip(), fix=raw["fix"].strip(), params=_plain(params), where=_plain(where_filter),
        suggest=suggest, source=where,
    )


def _metric_names(params: dict) -> list[str]:
    names = [params[k] for k in ("metric", "numerator", "denominator", "against_metric") if k in params]
    names += list(params.get("metrics") or [])
    names += [c.get("metric") for c in params.get("also") or [] if isinstance(c, dict)]
    return names


def _check_metrics(params: dict, fail, rule_id: str) -> None:
    for name in _metric_names(params):
        if not isinstance(name, str) or not metrics.is_known(name):
            raise fail(f"rule {rule_id}: unknown metric {name!r} (not in the glossary)")
    for key in ("field",):
        if key in params and params[key] not in FIELDS:
            raise fail(f"rule {rule_id}: field must be one of {FIELDS}")


def _check_operators(params: dict, fail, rule_id: str) -> None:
    ops = [params["op"]] if "op" in params else []
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
            raise fail(f"rule {rule_id}: unknown operator {op!r} (one of {' '.join(OPERATORS)})")


def _plain(value: Any) -> Any:
    """LineDicts back to plain dicts, so rules compare and print as ordinary data."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
