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
    # What the reading had to assume or skip (read times from the manifest; noise lines the parsers skipped), one
    # line each: nothing is hidden from whoever reads the diagnosis.
    notes: list[str] = field(default_factory=list)
    no_data: str | None = None  # why there was nothing to judge (rdmatool.verdict.no_data), one line

    def as_json(self) -> dict:
        return {
            "verdict": self.verdict.value,
            "findings": [finding_json(f) for f in self.findings],
            "failures": self.failures,
            "notes": self.notes,
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
            {"setting": s.setting, "target": s.target, "current": s.current, "proposed": s.proposed,
             "rationale": s.rationale, "commands": s.commands}
            for s in f.suggestions
        ],
    }
