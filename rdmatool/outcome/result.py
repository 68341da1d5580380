"""The outcome of a diagnosis, in the one JSON shape every renderer and consumer shares.

The shape is public: `schema` names its version, its JSON Schema ships in rdmatool/schemas (`diagnose`), and
docs/json-schemas.md says what may change without a new version. Each suggestion is listed once, with the
findings it answers (by their `id`); each finding also lists its own suggestions.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from rdmatool.model import Finding, Severity, Suggestion, Verdict

SCHEMA = "rdmatool-diagnosis/1"  # equal to the `schema` const of rdmatool/schemas/diagnose.schema.json (tested)
HARD = (Severity.CRITICAL, Severity.ERROR)


@dataclass
class DiagnoseResult:
    verdict: Verdict
    findings: list[Finding]
    failures: list[dict]
    source: str = ""
    window_s: float | None = None
    extra: dict = field(default_factory=dict)
    # What the reading had to assume or skip (read times from the manifest; noise lines the parsers skipped), one
    # line each: nothing is hidden from whoever reads the diagnosis.
    notes: list[str] = field(default_factory=list)
    no_data: str | None = None  # why there was nothing to judge (rdmatool.outcome.verdict.no_data), one line
    # The host targets read: a node to drain is a host with an error or critical finding of its own (a switch is
    # fixed, not drained).
    hosts: list[str] = field(default_factory=list)

    @property
    def drain(self) -> list[str]:
        """Hosts with an error or critical finding of their own, in the order of the hosts."""
        hard = {f.target for f in self.findings if f.severity in HARD}
        return [h for h in self.hosts if h in hard]

    @property
    def unreachable(self) -> list[str]:
        """Targets that could not be reached at all (failures of kind `connection`), once each."""
        return unreachable_targets(self.failures)

    def as_json(self, schema: str = SCHEMA) -> dict:
        """`schema`: the version tag of the output this is part of (`rdmatool pcap` adds its summary to it)."""
        judged = judged_json(self.findings, self.failures)
        return {
            "schema": schema,
            "verdict": self.verdict.value,
            "counts": judged["counts"],
            "drain": self.drain,
            "unreachable": judged["unreachable"],
            "findings": judged["findings"],
            "suggestions": judged["suggestions"],
            "failures": self.failures,
            "notes": self.notes,
            **self.extra,
        }


def judged_json(findings: list[Finding], failures: list[dict]) -> dict:
    """What a diagnosis says of its findings, in the shapes of its JSON, for every output that judges (the gate's
    too): `counts` per severity, the `unreachable` targets, the `findings` each with its id, and the `suggestions`
    each once with the ids of the findings it answers."""
    ids = finding_ids(findings)
    return {
        "counts": {s.value: sum(1 for f in findings if f.severity is s) for s in Severity},
        "unreachable": unreachable_targets(failures),
        "findings": [{"id": i, **finding_json(f)} for i, f in zip(ids, findings)],
        "suggestions": [{**suggestion_json(s), "findings": answered} for s, answered in unique_suggestions(findings, ids)],
    }


def unreachable_targets(failures: list[dict]) -> list[str]:
    """Targets that could not be reached at all (failures of kind `connection`), once each."""
    return list(dict.fromkeys(str(f.get("target", "")) for f in failures if f.get("kind") == "connection"))


def finding_ids(findings: list[Finding]) -> list[str]:
    """A name for each finding, unique in its list: `rule:target[:entity][:priority]` (what makes it a place)."""
    ids: list[str] = []
    seen: dict[str, int] = {}
    for f in findings:
        base = ":".join(str(x) for x in (f.rule, f.target, f.entity, f.evidence.get("priority")) if x is not None)
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return ids


def suggestion_key(s: Suggestion, finding: Finding) -> tuple:
    """One change on one device: the same setting to the same value with the same commands, whichever findings
    asked for it."""
    return (s.target or finding.target, s.setting, s.proposed,
            tuple((platform, tuple(commands)) for platform, commands in sorted(s.commands.items())))


def unique_suggestions(findings: list[Finding], ids: list[str] | None = None) -> list[tuple[Suggestion, list[str]]]:
    """Each suggestion once, in the order first met, with the ids of the findings it answers. A suggestion without
    a target is made on its finding's target: that target is filled in."""
    ids = ids if ids is not None else finding_ids(findings)
    found: dict[tuple, tuple[Suggestion, list[str]]] = {}
    for finding_id, f in zip(ids, findings):
        for s in f.suggestions:
            key = suggestion_key(s, f)
            if key not in found:
                found[key] = (s if s.target else _with_target(s, f.target), [])
            if finding_id not in found[key][1]:
                found[key][1].append(finding_id)
    return list(found.values())


def _with_target(s: Suggestion, target: str) -> Suggestion:
    return replace(s, target=target)


def suggestion_json(s: Suggestion) -> dict:
    return {"setting": s.setting, "target": s.target, "current": s.current, "proposed": s.proposed,
            "rationale": s.rationale, "commands": s.commands, "devices": s.devices}


def finding_json(f: Finding) -> dict:
    out = {
        "rule": f.rule,
        "severity": f.severity.value,
        "target": f.target,
        "entity": f.entity,
        "symptom": f.symptom,
        "cause": f.cause,
        "check": f.check,
        "fix": f.fix,
        "evidence": f.evidence,
        "suggestions": [suggestion_json(s) for s in f.suggestions],
    }
    if f.explained_by:  # added within version 1: present only on a finding another one explains
        out["explained_by"] = f.explained_by
    return out
