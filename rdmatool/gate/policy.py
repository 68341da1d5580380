"""Pure gate decisions: which stage a rule belongs to (its playbook key), a stage's status, which nodes to drain and
why. The verdict is rdmatool.outcome.verdict's, as for a diagnosis: a stage that did not finish (UNFINISHED), or targets that
could not be read, are never a pass; and the gate fails (exit 1) only when it can name what failed (`gate_verdict`).
"""

from __future__ import annotations

from collections.abc import Sized
from dataclasses import dataclass, field

from rdmatool.model import Finding, Severity, Verdict
from rdmatool.outcome.verdict import HARD, verdict
from rdmatool.rules.playbook import Rule

# Stage statuses that leave the gate's verdict inconclusive; `error`: the stage itself broke (see `crashed`).
UNFINISHED = ("timeout", "inconclusive", "error")


def stage_of(rule: Rule) -> str:
    """state (one snapshot), counters (needs two), bandwidth or latency (needs perftest), incast (its own load): the
    rule's playbook key `stage`, checked at load (rdmatool.rules.playbook.STAGES)."""
    return rule.stage


@dataclass
class StageResult:
    name: str
    status: str  # passed | failed | warned | skipped | timeout | inconclusive | error
    duration_s: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    detail: str = ""
    # Hosts this stage did not test: condemned by an earlier stage (already on the drain list) or never read.
    excluded: list[str] = field(default_factory=list)
    figures: dict | None = None  # what the stage measured, for --json (the incast stage's groups)

    def as_json(self) -> dict:
        out = {"name": self.name, "status": self.status, "duration_s": round(self.duration_s, 3),
               "findings": len(self.findings), "detail": self.detail, "excluded": self.excluded}
        if self.figures is not None:
            out["figures"] = self.figures
        return out


@dataclass(frozen=True)
class Condemnation:
    """Why one node is on the drain list: the stage and the finding (rule, port, symptom) that put it there."""

    node: str
    stage: str
    rule: str
    entity: str | None
    symptom: str

    def as_json(self) -> dict:
        return {"node": self.node, "stage": self.stage, "rule": self.rule, "entity": self.entity,
                "symptom": self.symptom}


def stage_status(findings: list[Finding]) -> str:
    if any(f.severity in HARD for f in findings):
        return "failed"
    if any(f.severity is Severity.WARNING for f in findings):
        return "warned"
    return "passed"


def crashed(exc: BaseException) -> str:
    """A stage's one-line detail when its own code broke: a broken check proves nothing about the fabric, so the
    stage is `error` (never a pass, and no node is drained for it)."""
    text = " ".join(str(exc).split())[:200]
    return f"stage crashed: {type(exc).__name__}" + (f": {text}" if text else "")


def condemned(findings: list[Finding], host_names: set[str]) -> set[str]:
    """Hosts with an error or critical finding of their own: the later stages leave them out (they are drained
    already, and a pair with a broken node would only blame its healthy partner)."""
    return {f.target for f in findings if f.severity in HARD and f.target in host_names}


def drain_reasons(stages: list[StageResult], host_names: set[str],
                  bad_nodes: dict[str, tuple[str, ...]] | None = None) -> list[Condemnation]:
    """Every condemnation of every node, stage by stage: hosts with an error or critical finding of their own, and
    the nodes a perftest stage's attribution named bad (`bad_nodes`, by stage) even where no rule reported them
    (the rule skipped by the profile). Never a switch, never the two ends of a bad link (a link is the fabric's
    problem, not a node's)."""
    out: list[Condemnation] = []
    for stage in stages:
        named = set()
        for f in stage.findings:
            if f.severity in HARD and f.target in host_names:
                out.append(Condemnation(f.target, stage.name, f.rule, f.entity, f.symptom))
                named.add(f.target)
        for node in (bad_nodes or {}).get(stage.name, ()):
            if node not in named:
                out.append(Condemnation(node, stage.name, "perf_attribution", None,
                                        "named a bad node by the perftest attribution"))
    order = {s.name: i for i, s in enumerate(stages)}
    return sorted(out, key=lambda c: (c.node, order[c.stage]))


def drain_list(reasons: list[Condemnation]) -> list[str]:
    return sorted({c.node for c in reasons})


def gate_verdict(findings: list[Finding], stages: list[StageResult], missing: list[str], allow_missing: int,
                 drain: list[str], host_names: set[str], gaps: Sized = ()) -> Verdict:
    """rdmatool.outcome.verdict's verdict, and a failure only when it is named: nodes to drain, or a hard finding of the
    fabric (a switch, a link, `fabric`). A failure that names neither is not one the scheduler could act on, so the
    gate fails closed (inconclusive) instead of exiting 1. `gaps`: the tools missing on a target, a warning as in a
    diagnosis (rdmatool.outcome.failures.tool_gaps)."""
    unfinished = any(s.status in UNFINISHED for s in stages)
    decided = verdict(findings, missing, allow_missing, unfinished=unfinished, gaps=gaps)
    fabric_failure = any(f.severity in HARD and f.target not in host_names for f in findings)
    if decided is Verdict.FAIL and not drain and not fabric_failure:
        return Verdict.INCONCLUSIVE
    return decided
