"""Evaluate playbook rules over the facts table and turn hits into Findings, deterministically ordered."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import pandas as pd

from rdmatool import config
from rdmatool.metrics import GLOSSARY
from rdmatool.model import Finding, Severity, Suggestion
from rdmatool.outcome.result import finding_ids
from rdmatool.platforms.port_names import port_key
from rdmatool.present import units
from rdmatool.rules import registry
from rdmatool.rules.kinds import Context
from rdmatool.rules.playbook import Rule, for_site
from rdmatool.rules.ports import PortNames
from rdmatool.table.analysis import Analysis

SEVERITY_ORDER = {Severity.CRITICAL: 0, Severity.ERROR: 1, Severity.WARNING: 2, Severity.INFO: 3}
# (rule, one hit's evidence, analysis, profile=) → suggestions; the tuning package registers its calculators here.
Suggester = Callable[[Rule, dict, Analysis], list[Suggestion]]


def evaluate(
    analysis: Analysis,
    rules: list[Rule],
    baseline: pd.DataFrame | None = None,
    profile: dict | None = None,
    suggesters: dict[str, Suggester] | None = None,
) -> list[Finding]:
    # One site profile for the rules' selection and texts and for the suggesters: the one given, else the one the
    # rules were loaded with (playbook.load_dir).
    site = None if profile is None else checked_site(profile)
    rules = rules if site is None else [for_site(rule, site) for rule in rules]
    # The rules read the facts through the analysis' query, as the suggesters do: what one groups, the other reuses.
    ctx = Context(links=analysis.links, baseline=baseline, profile=site or {}, query=analysis.query)
    ports = PortNames(analysis.query)
    findings: list[Finding] = []
    facts = analysis.facts  # (a rule reads them through the query)
    for rule in rules:
        hit_frame = registry.KINDS[rule.kind].judge(facts, rule, ctx)
        if hit_frame.empty:
            continue
        # The same fact may come from two views (e.g. thresholds in both `nv show qos roce` and the port status):
        # one finding per place is enough.
        hit_frame = hit_frame.drop_duplicates(["target", "entity", "priority"])
        for hit in hit_frame.to_dict("records"):
            evidence = _evidence(rule, hit)
            # A host port's device, port number and netdev: the check commands take those, not `mlx5_0/1`.
            evidence.update(ports.of(evidence["target"], evidence["entity"]))
            # A verdict names its subject's other facts in the text too (kinds.verdict); the evidence names win.
            values = {**ports.unknown(evidence["target"], evidence["entity"]),
                      **(hit.get("names") if isinstance(hit.get("names"), dict) else {}), **evidence}
            shown = _units(rule, evidence)
            suggestions: list[Suggestion] = []
            for name in rule.suggest:
                calculator = (suggesters or {}).get(name)
                if calculator is not None:
                    suggestions.extend(calculator(rule, evidence, analysis, profile=site or rule.site))
            findings.append(Finding(
                rule=rule.id,
                severity=rule.severity,
                target=str(hit["target"]),
                entity=_clean(hit.get("entity")),
                symptom=_fill(rule.symptom, values, shown),
                cause=_fill(rule.cause, values, shown),
                check=_fill(rule.check, values, shown),
                fix=_fill(rule.fix, values, shown),
                evidence=evidence,
                suggestions=tuple(suggestions),
            ))
    kept = sorted(_without_replaced(findings, rules, ports), key=order)
    far_ends = _far_ends(analysis.links, ports) if any(r.explains_far_end for r in rules) else {}
    return _explained(kept, rules, ports, far_ends)


def checked_site(profile: dict) -> dict:
    """The site profile in effect (config.site_profile) with each site key checked as the configuration file's is:
    a profile handed in by a caller cannot put priority 9 in a command either."""
    site = config.site_profile(profile)
    for key, check in config.SITE_KEYS.items():
        problem = check(site[key]) if site.get(key) is not None else None
        if problem:
            raise config.ConfigError(f"site profile: site.{key} takes {problem}, not {site[key]!r}")
    return site


def _place(ports: PortNames, f: Finding) -> tuple:
    """A finding's target and port, whichever name of the port (RDMA port or netdev) it uses."""
    return f.target, ports.rdma_port(f.target, f.entity) or f.entity


def _without_replaced(findings: list[Finding], rules: list[Rule], ports: PortNames) -> list[Finding]:
    """Leave out the findings a finding of another rule says already (the rule's `replaces`): on the same target and
    port, whichever name of the port (RDMA port or netdev) each one uses. Errors on both ends of one cable are one
    link finding, not that finding plus the error counter of each end."""
    replaced = {r.id: set(r.replaces) for r in rules if r.replaces}
    if not replaced:
        return findings
    said = {(rule_id, _place(ports, f)) for f in findings if f.rule in replaced for rule_id in replaced[f.rule]}
    return [f for f in findings if (f.rule, _place(ports, f)) not in said]


def _cable_end(ports: PortNames, target, entity) -> tuple:
    """One end of a cable as both ends' facts can name it: a host port as its RDMA port, a switch port by its
    `port_key` (`Ethernet1/1` and `Eth1/1` are one port)."""
    rdma = ports.rdma_port(target, entity)
    if rdma is not None or ports.is_host(target):
        return target, rdma or entity
    return target, port_key(entity) if isinstance(entity, str) else entity


def _far_ends(links: pd.DataFrame | None, ports: PortNames) -> dict[tuple, tuple]:
    """Each cabled port → the port at the other end of its cable, both ways (the cabling the bundle's LLDP saw, as
    either end reported it)."""
    far: dict[tuple, tuple] = {}
    if links is None or links.empty:
        return far
    for host, host_port, switch, switch_port in zip(links["host"], links["host_port"], links["switch"],
                                                    links["switch_port"]):
        a, b = _cable_end(ports, host, host_port), _cable_end(ports, switch, switch_port)
        far.setdefault(a, b)
        far.setdefault(b, a)
    return far


def _explained(findings: list[Finding], rules: list[Rule], ports: PortNames,
               far_ends: dict[tuple, tuple] | None = None) -> list[Finding]:
    """Mark each finding another rule's finding explains with that finding's id: the rule's `explains` on the same
    target and port (the physical link down explains the port not Active), its `explains_far_end` on the port at the
    other end of the cable (a host's PFC storm explains the pause and drops of the switch port cabled to it). Every
    finding stays; the table folds them. Of several explaining findings, one on the port itself wins over one across
    the cable, then one at the same priority, else the first in report order; a chain (A explains B, B explains C)
    is followed to its first link, the one the table leads with."""
    explains = {r.id: set(r.explains) for r in rules if r.explains}
    across = {r.id: set(r.explains_far_end) for r in rules if r.explains_far_end} if far_ends else {}
    if not explains and not across:
        return findings
    ids = finding_ids(findings)
    by_place: dict[tuple, list[int]] = {}
    by_end: dict[tuple, list[int]] = {}
    for i, f in enumerate(findings):
        by_place.setdefault(_place(ports, f), []).append(i)
        if across:
            for entity in (f.entity, *_listed_ports(f)):
                by_end.setdefault(_cable_end(ports, f.target, entity), []).append(i)
    parent: dict[int, int] = {}
    for i, f in enumerate(findings):
        candidates = [j for j in by_place[_place(ports, f)] if f.rule in explains.get(findings[j].rule, ())]
        if not candidates and across:
            candidates = _across(f, findings, ports, far_ends, by_end, across)
        if candidates:
            priority = f.evidence.get("priority")
            same = [j for j in candidates if findings[j].evidence.get("priority") == priority]
            parent[i] = (same or candidates)[0]
    out = []
    for i, f in enumerate(findings):
        if i not in parent:
            out.append(f)
            continue
        root, seen = parent[i], {i}
        while root in parent and root not in seen:  # the playbook refuses cycles of rules; findings follow them
            seen.add(root)
            root = parent[root]
        out.append(replace(f, explained_by=ids[root]))
    return out


def _listed_ports(f: Finding) -> list[str]:
    """The ports a finding on a whole switch names in its record (a switch pausing its senders lists the ports it
    pauses them on): it stands at the near end of each of their cables too."""
    details = f.evidence.get("details") if f.entity is None else None
    listed = (details.get("paused") or []) if isinstance(details, dict) else []
    return [row["switch_port"] for row in listed if isinstance(row, dict) and isinstance(row.get("switch_port"), str)]


def _across(f: Finding, findings: list[Finding], ports: PortNames, far_ends: dict[tuple, tuple],
            by_end: dict[tuple, list[int]], across: dict[str, set[str]]) -> list[int]:
    """The findings at the far end of `f`'s cable that explain it (`explains_far_end`). A finding on a whole target
    that names its ports in `details.ports` (a switch whose ECN fires after PFC on these ports) is explained only
    when every one of them has an explaining finding across its cable: one port of its own keeps it a cause."""
    def explaining(entity) -> list[int]:
        far = far_ends.get(_cable_end(ports, f.target, entity))
        return [j for j in by_end.get(far, ()) if f.rule in across.get(findings[j].rule, ())]

    details = f.evidence.get("details")
    listed = details.get("ports") if f.entity is None and isinstance(details, dict) else None
    if not listed:
        return explaining(f.entity)
    each = [explaining(port.get("entity")) for port in listed]
    return list(dict.fromkeys(j for found in each for j in found)) if all(each) else []


def order(f: Finding) -> tuple:
    """The order findings are reported in: severity, then rule, target, entity and priority."""
    priority = f.evidence.get("priority")
    return (SEVERITY_ORDER[f.severity], f.rule, f.target, f.entity or "", -1 if priority is None else priority)


def _evidence(rule: Rule, hit: dict) -> dict:
    metric = rule.params.get("metric") or rule.params.get("numerator") or ",".join(rule.params.get("metrics", []))
    evidence = {
        "metric": metric,
        "target": str(hit["target"]),
        "entity": _clean(hit.get("entity")),
        "priority": None if _clean(hit.get("priority")) is None else int(hit["priority"]),
        "observed": _clean(hit.get("observed")),
        "expected": _clean(hit.get("expected")),
        "baseline": _clean(hit.get("baseline")),
        "window_s": _clean(hit.get("window_s")),
    }
    if isinstance(hit.get("details"), dict):  # a judge's record (kinds.verdict), kept whole
        evidence["details"] = hit["details"]
    return evidence


def _clean(value):
    """NaN/NA become None; numpy scalars become Python numbers (JSON-safe, deterministic printing)."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        value = value.item()
        if isinstance(value, float) and math.isnan(value):
            return None
    if isinstance(value, float):
        return round(value, 6)
    return value


class _Evidence(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


# A change seen between two snapshots whose read times are unknown (a bundle from another writer): the playbooks'
# "in {window_s} s" reads as what it is instead of "in - s".
_NO_WINDOW = ("between the snapshots (read times unknown)", "over an unknown window")


def _units(rule: Rule, evidence: dict) -> dict[str, str]:
    """Evidence name → the unit its value is shown in (`units.human`): `98.6 %`, `1.43 MiB`, `4.1 s`."""
    shown = {"window_s": "s"}
    metric = evidence.get("metric")
    if registry.KINDS[rule.kind].in_metric_units and metric in GLOSSARY:
        unit = units.unit_for(metric, GLOSSARY[metric].unit)
        if unit:
            shown.update(dict.fromkeys(("observed", "baseline", "expected"), unit))
    return shown


def _fill(text: str, evidence: dict, shown: dict[str, str] | None = None) -> str:
    """Plain `{name}` substitution from the evidence; unknown names stay as written (no format spec, no eval).
    A number named in `shown` is written in human units (rdmatool.present.units), and the unit the template writes after
    it (`{observed} bytes`) is dropped, the human form carrying its own."""
    shown = shown or {}
    if "window_s" in evidence and evidence["window_s"] is None and "{window_s}" in text:
        text = text.replace("in {window_s} s", _NO_WINDOW[0]).replace("{window_s} s", _NO_WINDOW[1])
    values = _Evidence({k: _short(v, shown.get(k)) for k, v in evidence.items()})
    out = []
    i = 0
    while i < len(text):
        start = text.find("{", i)
        if start < 0:
            out.append(text[i:])
            break
        end = text.find("}", start)
        if end < 0:
            out.append(text[i:])
            break
        out.append(text[i:start])
        key = text[start + 1:end]
        out.append(values[key] if key.isidentifier() else text[start:end + 1])
        i = end + 1
        unit = shown.get(key)
        if unit and key in evidence and _is_number(evidence[key]):
            i += next((len(w) for w in units.WRITTEN_UNITS.get(unit, ()) if text.startswith(w, i)
                       and not text[i + len(w):i + len(w) + 1].isalpha()), 0)
    return "".join(out)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _short(value, unit: str | None = None) -> str:
    if value is None:
        return "-"
    if unit and _is_number(value):
        return units.human(value, unit)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
