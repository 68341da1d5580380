"""The gate's perftest judgement, live or replayed: the attribution's facts (rdmatool.perf.attribution.facts) judged
by the playbooks' verdict rules of one stage, through the rules engine like any diagnosis."""

from __future__ import annotations

import pandas as pd

from rdmatool import frame as frames
from rdmatool.analysis import FACT_COLUMNS, Analysis
from rdmatool.gate import policy
from rdmatool.model import Finding
from rdmatool.perf import attribution as attributions
from rdmatool.perf.model import Attribution, PairResult
from rdmatool.rules import engine
from rdmatool.rules.playbook import Rule


def judge(results: list[PairResult], attribution: Attribution, rules: list[Rule], stage: str,
          threshold: float = 0.9) -> list[Finding]:
    """The findings of one perftest stage (bandwidth or latency): the stage's verdict rules over the attribution's
    facts, `threshold` being the fraction of a node's expected rate a pair must reach. The other rules of these
    stages read the perftest outputs of a bundle (diagnose), which a gate's matrix is not.

    Listed rule by rule as the playbooks order them, each rule's findings in the order of the attribution's subjects
    (its bad links as it sorted them, not as their `a<->b` names sort)."""
    rows = attributions.facts(results, attribution, threshold)
    mine = [r for r in rules if r.kind == "verdict" and policy.stage_of(r) == stage]
    found = engine.evaluate(analysis_of(rows), mine)
    rank = {rule.id: i for i, rule in enumerate(mine)}
    subjects: dict[tuple, int] = {}
    for row in rows:
        subjects.setdefault((row["target"], row["entity"]), len(subjects))
    return sorted(found, key=lambda f: (rank[f.rule], subjects.get((f.target, f.entity), len(subjects))))


def analysis_of(rows: list[dict]) -> Analysis:
    """Fact rows as an analysis the engine reads: no samples behind them, no cabling, no counter window."""
    facts = pd.DataFrame(rows, columns=FACT_COLUMNS).astype(
        {"value": float, "window_s": float, "delta": float, "priority": "Int64", "size_bytes": "Int64"})
    return Analysis(facts=facts, table=frames.SampleTable(frame=pd.DataFrame()), window_s=None)
