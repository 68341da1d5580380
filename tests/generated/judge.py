"""Diagnose a generated fabric the way `rdmatool diagnose BUNDLE` does with the site's configuration file, and say
what is wrong with the outcome: a healthy fabric must be silent, a fault named on its target and nothing else loud."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from rdmatool.diagnose.pipeline import diagnose_bundle
from rdmatool.model import Severity
from tests.generated.bundle_writer import write
from tests.generated.faults import CATALOGUE, Fault
from tests.generated.generate import generate
from tests.generated.model import Fabric

LOUD = {Severity.WARNING, Severity.ERROR, Severity.CRITICAL}


@dataclass
class Outcome:
    fabric: Fabric
    findings: list
    failures: list
    skipped: list[str]
    verdict: str

    def loud(self) -> list:
        return [f for f in self.findings if f.severity in LOUD and f.explained_by is None]

    def lines(self, findings: list | None = None) -> str:
        return "\n".join(f"  {f.severity.name} {f.rule} {f.target} {f.entity or ''}: {f.symptom[:160]}"
                         for f in (self.loud() if findings is None else findings))


def diagnose(fabric: Fabric, where: Path) -> Outcome:
    bundle = write(fabric, where / f"fabric-{fabric.seed}")
    skipped: list[str] = []
    result = diagnose_bundle(bundle, profile=fabric.site.config(), on_skipped=skipped.append)
    return Outcome(fabric, list(result.findings), list(result.failures), skipped, str(result.verdict))


def healthy_problems(outcome: Outcome) -> str | None:
    """Why a healthy fabric's diagnosis is wrong, or None."""
    problems = []
    if outcome.failures or outcome.skipped:
        problems.append(f"failures {outcome.failures[:3]} skipped {outcome.skipped[:3]}")
    if outcome.loud():
        problems.append("warnings on a healthy fabric:\n" + outcome.lines())
    return "\n".join(problems) or None


def faulted(fault: Fault, seed: int) -> tuple[Fabric, tuple] | None:
    """The first fabric from `seed` on that the fault fits (the same seed gives the same fabric and fault)."""
    for attempt in range(40):
        fabric = generate(seed * 100 + attempt, link_layer=fault.link_layer)
        injected = fault.apply(fabric, random.Random(seed * 100 + attempt))
        if injected is not None:
            return fabric, injected
    return None


def fault_problems(outcome: Outcome, injected: tuple) -> str | None:
    target, entity, rules = injected
    targets = set(target.split("|"))  # a cable's fault may be named on either end
    named = [f for f in outcome.findings if f.target in targets and f.rule in rules
             and (not entity or entity in (f.entity or ""))]
    problems = []
    if not named:
        problems.append(f"not named: expected one of {sorted(rules)} on {target} {entity}")
    others = [f for f in outcome.loud() if f.target not in targets]
    if others:
        problems.append("warnings elsewhere:\n" + outcome.lines(others))
    if outcome.failures or outcome.skipped:
        problems.append(f"failures {outcome.failures[:3]} skipped {outcome.skipped[:3]}")
    if problems:
        problems.append("all loud findings:\n" + outcome.lines())
    return "\n".join(problems) or None


FAULTS = {fault.name: fault for fault in CATALOGUE}
