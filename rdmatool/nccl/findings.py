"""The recipe's and the log check's problems as facts, judged by the shipped nccl playbook (playbooks/60-nccl.yaml):
one `nccl_recipe_verdict` (or `nccl_log_verdict`) fact per problem on its target and port, beside the facts its
rule's text names. The rules are the `verdict` kind's (rdmatool.rules.kinds): the playbook says how loud each
problem is and what to do about it, the code only what it saw."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from rdmatool.model import Finding
from rdmatool.table.analysis import FACT_COLUMNS, Analysis, grown_by

VERDICT_METRICS = ("nccl_recipe_verdict", "nccl_log_verdict")


def problem_facts(problems, verdict_metric: str, roles: dict[str, str | None] | None = None) -> pd.DataFrame:
    """One row per problem (its verdict) and per fact its rule names, FACT_COLUMNS."""
    rows = []
    for p in problems:
        base = {"target": p.target, "kind": "host", "platform": "linux", "role": (roles or {}).get(p.target),
                "entity": p.entity, "priority": pd.NA, "size_bytes": pd.NA, "window_s": np.nan, "delta": np.nan,
                "flag": ""}
        rows.append({**base, "metric": verdict_metric, "value": np.nan, "text": p.verdict, "raw_key": "nccl"})
        for metric, value in p.facts.items():
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            rows.append({**base, "metric": metric, "value": float(value) if number else np.nan,
                         "text": None if number or value is None else str(value), "raw_key": "nccl"})
    if not rows:
        return pd.DataFrame(columns=FACT_COLUMNS)
    return pd.DataFrame(rows, columns=FACT_COLUMNS).astype({"priority": "Int64", "size_bytes": "Int64"})


def judged(analysis: Analysis | None, problems, verdict_metric: str, site: dict | None = None,
           playbooks_dir: str | None = None) -> list[Finding]:
    """The findings of the playbook rules that judge `verdict_metric` over the problems' facts (beside the
    analysis' own facts, or alone when there is no bundle: a log checked without one)."""
    from rdmatool.diagnose.pipeline import default_playbooks
    from rdmatool.rules import engine, playbook
    from rdmatool.table.facts import FactQuery

    if not problems:
        return []
    rules = [r for r in playbook.load_dir(playbooks_dir or default_playbooks())
             if r.kind == "verdict" and r.params.get("verdict") == verdict_metric]
    if analysis is None:
        facts = problem_facts(problems, verdict_metric)
        alone = SimpleNamespace(facts=facts, query=FactQuery(facts), links=pd.DataFrame(), targets=[])
        return engine.evaluate(alone, rules, profile=site)
    roles = {t.get("name"): t.get("role") for t in analysis.targets if isinstance(t, dict)}
    grown = grown_by(analysis, problem_facts(problems, verdict_metric, roles))
    return engine.evaluate(grown, rules, profile=site)


def finding_json(f: Finding) -> dict:
    return {"rule": f.rule, "severity": f.severity.value, "target": f.target, "entity": f.entity,
            "symptom": f.symptom, "cause": f.cause, "check": f.check, "fix": f.fix}


def findings_lines(found: list) -> list[str]:
    """The findings block of `nccl env`'s and `nccl check`'s text: one entry per finding, its symptom and fix
    (nothing when there is none)."""
    if not found:
        return []
    out = ["", "findings:"]
    for f in found:
        out.append(f"  {f.severity.value.upper()} {f.rule} {f.target}{' ' + f.entity if f.entity else ''}")
        out.append(f"      {f.symptom}")
        out.append(f"      fix: {f.fix}")
    return out
