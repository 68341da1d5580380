"""The gate's perftest judgement, live or replayed: the attribution's facts (rdmatool.perf.attribution.facts) and,
with the cabling known, the bandwidth pairs grouped by path class (rdmatool.topology.paths) judged by the playbooks'
verdict rules of one stage, through the rules engine like any diagnosis."""

from __future__ import annotations

import pandas as pd

from rdmatool.gate import policy
from rdmatool.model import Finding
from rdmatool.pairs import paths
from rdmatool.perf import attribution as attributions
from rdmatool.perf.model import Attribution, PairResult
from rdmatool.rules import engine
from rdmatool.rules.playbook import Rule
from rdmatool.table import frame as frames
from rdmatool.table.analysis import FACT_COLUMNS, Analysis
from rdmatool.topology import Link
from rdmatool.topology.paths import path_class_facts


def judge(results: list[PairResult], attribution: Attribution, rules: list[Rule], stage: str,
          threshold: float = 0.9, latency=None,
          cabling: tuple[list[Link], dict[str, set[str]]] | dict[str, tuple] | None = None) -> list[Finding]:
    """The findings of one perftest stage (bandwidth or latency): the stage's verdict rules over the attribution's
    facts, `threshold` being the fraction of a node's expected rate a pair must reach, and, with the profile's
    `latency` ceilings, each measured pair's latency against them (`latency_facts`). The other rules of these
    stages read the perftest outputs of a bundle (diagnose), which a gate's matrix is not. With `cabling` (the links
    of the NICs tested, and each leaf's uplinks) a bandwidth stage's pairs are grouped by path class too, so that a
    class systematically slower than the others is named on the leaf that explains it (`path_class_slow`); a
    rail-aligned stage gives rail -> cabling, each rail's pairs classed apart.

    Listed rule by rule as the playbooks order them, each rule's findings in the order of the attribution's subjects
    (its bad links as it sorted them, not as their `a<->b` names sort)."""
    rows = latency_facts(results, latency) if latency is not None else []
    per_rail = (cabling if isinstance(cabling, dict) else {None: cabling}) if cabling is not None else {}
    if per_rail and stage == "bandwidth":
        attribution, found = inter_leaf(results, attribution, threshold, cabling)
        rows += found
    rows += attributions.facts(results, attribution, threshold)
    if per_rail and stage == "bandwidth":
        # rail-aligned: rail -> its cabling, each rail's pairs classed on the leaves of that rail's NICs
        for rail, (links, spines) in per_rail.items():
            mine = results if rail is None else [r for r in results if r.rail == rail]
            rows += path_class_facts(mine, links, spines).to_dict("records")
    mine = [r for r in rules if r.kind == "verdict" and policy.stage_of(r) == stage]
    found = engine.evaluate(analysis_of(rows), mine)
    rank = {rule.id: i for i, rule in enumerate(mine)}
    subjects: dict[tuple, int] = {}
    for row in rows:
        subjects.setdefault((row["target"], row["entity"]), len(subjects))
    return sorted(found, key=lambda f: (rank[f.rule], subjects.get((f.target, f.entity), len(subjects))))


def inter_leaf(results: list[PairResult], attribution: Attribution, threshold: float,
               cabling: tuple[list[Link], dict[str, set[str]]] | dict[str, tuple] | None
               ) -> tuple[Attribution, list[dict]]:
    """Slow pairs grouped by the leaves of their ends (rdmatool.pairs.paths, as a diagnosis groups a bundle's): the
    attribution without the bad links a slow inter-leaf path explains, and the paths' facts — one finding per path,
    not a bad link per pair crossing it. Without cabling, the attribution as it is."""
    if cabling is None:
        return attribution, []
    per_rail = cabling if isinstance(cabling, dict) else {None: cabling}
    leaf_of = {rail: {link.host: link.switch for link in links} for rail, (links, _) in per_rail.items()}
    return paths.fold(results, attribution, leaf_of, expected_per_rail(attribution), threshold)


def expected_per_rail(attribution: Attribution) -> dict[str | None, dict | None]:
    """rail -> each host's expected rate as the attribution judged it (rail None: the single rail's)."""
    evidence = attribution.evidence or {}
    out: dict[str | None, dict | None] = {None: evidence.get("_expected_gbps") or None}
    for rail, record in (evidence.get("_rails") or {}).items():
        if isinstance(record, dict):
            out[rail] = record.get("expected_gbps") or None
    return out


def analysis_of(rows: list[dict]) -> Analysis:
    """Fact rows as an analysis the engine reads: no samples behind them, no cabling, no counter window."""
    facts = pd.DataFrame(rows, columns=FACT_COLUMNS).astype(
        {"value": float, "window_s": float, "delta": float, "priority": "Int64", "size_bytes": "Int64"})
    return Analysis(facts=facts, table=frames.SampleTable(frame=pd.DataFrame()), window_s=None)


def latency_facts(results: list[PairResult], ceilings) -> list[dict]:
    """Each measured pair's latency against the profile's ceilings (`max_p99_us`, `max_p999_over_typical`), as
    facts of the fabric: a pair's latency is the path's, not one node's (node blame comes from the attribution).
    The verdicts are the profile's decision; playbooks/40-perftest.yaml says what each means."""
    rows = []

    def row(pair: str, metric: str, value=None, text=None) -> None:
        rows.append({**dict.fromkeys(FACT_COLUMNS), "target": "fabric", "kind": "fabric", "entity": pair,
                     "metric": metric, "value": value, "text": text, "flag": ""})

    for r in results:
        if not r.ok or not r.lat:
            continue
        p99, p999, typical = r.lat.get("lat_p99_us"), r.lat.get("lat_p999_us"), r.lat.get("lat_typical_us")
        pair = f"{r.client}->{r.server}"
        for metric, text in (("perf_client", r.client), ("perf_server", r.server), ("perf_test", r.test)):
            row(pair, metric, text=text)
        if p99 is not None:
            row(pair, "perf_lat_verdict", text="high" if p99 > ceilings.max_p99_us else "ok")
            row(pair, "lat_p99_us", float(p99))
            row(pair, "perf_lat_ceiling_us", float(ceilings.max_p99_us))
        if p999 is not None and typical:
            ratio = p999 / typical
            row(pair, "perf_jitter_verdict", text="jitter" if ratio > ceilings.max_p999_over_typical else "ok")
            row(pair, "lat_p999_over_typical", round(ratio, 3))
            row(pair, "perf_jitter_ceiling", float(ceilings.max_p999_over_typical))
    return rows
