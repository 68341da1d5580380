"""The outcome of a diagnosis, in the one JSON shape every renderer and consumer shares."""

from __future__ import annotations

from dataclasses import dataclass, field

from rdmatool.model import Finding, Verdict


@dataclass
class DiagnoseResult:
    verdict: Verdict
    findings: list[Finding]
    failures: list[dict]
    source: str = ""
    window_s: float | None = None
    extra: dict = field(default_factory=dict)

    def as_json(self) -> dict:
        return {
            "verdict": self.verdict.value,
            "findings": [finding_json(f) for f in self.findings],
            "failures": self.failures,
            **self.extra,
        }


def finding_json(f: Finding) -> dict:
    return {
        "rule": f.rule,
        "severity": f.severity.value,
        "target": f.target,
        "entity": f.entity,
        "symptom": f.symptom,
        "cause": f.cause,
        "check": f.check,
        "fix": f.fix,
        "evidence": f.evidence,
        "suggestions": [
            {"setting": s.setting, "current": s.current, "proposed": s.proposed, "rationale": s.rationale,
             "commands": s.commands}
            for s in f.suggestions
        ],
    }
