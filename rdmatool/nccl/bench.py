"""An nccl-tests `all_reduce_perf` run with the recipe, judged: the pure half of the gate's nccl stage
(rdmatool.gate.nccl_stage runs it over SSH).

Which nodes run (the first hosts with a recipe), with what environment (each node's own recipe, the profile's
`env` laid over it: the variables a site's jobs really set), against what line rate (the least, over the nodes, of
the summed rates of a node's compute rails, from the facts), and what the output says: the bus bandwidth at the
size measured (rdmatool.parsers.nccl_tests) and, from the NCCL_DEBUG=INFO records the run asks for
(rdmatool.parsers.nccl_debug), what NCCL chose on each node, checked against its recipe (rdmatool.nccl.log). The
figures are facts of `fabric` (a collective's bandwidth belongs to all its nodes at once), the log's departures
facts of their host; the nccl playbook judges both (playbooks/60-nccl.yaml).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace
from types import SimpleNamespace

import numpy as np
import pandas as pd

from rdmatool import commands
from rdmatool.errors import ParseError
from rdmatool.nccl import log
from rdmatool.nccl.findings import problem_facts
from rdmatool.nccl.recipe import HostRecipe, Recipe
from rdmatool.table.analysis import FACT_COLUMNS
from rdmatool.table.facts import plain

BENCH_METRICS = ("nccl_busbw_efficiency", "nccl_line_gbps", "nccl_run", "busbw_gbps")
LOG_VERDICT = "nccl_log_verdict"


@dataclass
class Node:
    name: str
    address: str
    recipe: HostRecipe
    env: dict[str, str]  # what the run sets: the recipe's, with the profile's overrides
    line_gbps: float | None  # the summed rates of its compute rails (None: no rate read)

    def as_json(self) -> dict:
        return {"host": self.name, "rails": [p.name for p in self.recipe.rails], "recipe": self.recipe.env(),
                "env": self.env, "line_gbps": self.line_gbps}


@dataclass
class Outcome:
    """What one run printed: the bus bandwidth at its largest size (out of place), the footer's average, the tool's
    own errors, and the NCCL processes its records describe."""

    busbw_gbps: float | None = None
    avg_busbw_gbps: float | None = None
    size_bytes: int | None = None
    errors: list[str] = field(default_factory=list)
    processes: list[log.Process] = field(default_factory=list)


def pick(built: Recipe, facts: pd.DataFrame, hosts: list[tuple[str, str]], wanted: int,
         overrides: dict[str, str]) -> tuple[list[Node], dict[str, str]]:
    """The first `wanted` of `hosts` (name, address) with a recipe, each with its run environment; the hosts passed
    over with why (no recipe: the recipe says why)."""
    recipes = {h.name: h for h in built.hosts}
    rates = _rail_rates(facts)
    nodes, passed = [], {}
    for name, address in hosts:
        own = recipes.get(name)
        if own is None:
            passed[name] = built.skipped.get(name, "no recipe")
            continue
        env = {**own.env(), **overrides}
        refused = _refused(env)
        if refused:  # a device's name in the recipe that the audited command would refuse: this host alone is out
            passed[name] = f"recipe value {refused} is not one the nccl-tests command takes"
            continue
        if len(nodes) < wanted:
            line = [rates.get((name, p.entity)) for p in own.rails]
            total = sum(v for v in line if v) if any(line) else None
            nodes.append(Node(name, address, own, env, total))
    return nodes, passed


def _refused(env: dict[str, str]) -> str | None:
    """`NAME=value` (shown as a Python literal: printable) of the first variable rdmatool.commands.nccl_tests_command
    would refuse, else None. The recipe's values name the host's own devices, which its output said."""
    refused = commands.refused_nccl_env(env)
    return ascii(f"{refused[0]}={refused[1]}")[:120] if refused is not None else None


def _rail_rates(facts: pd.DataFrame) -> dict[tuple[str, str], float]:
    """(host, `device/port`) → the port's rate in Gb/s as read (link_rate_gbps)."""
    rows = plain(facts[facts["metric"] == "link_rate_gbps"])
    out: dict[tuple[str, str], float] = {}
    for target, entity, value in zip(rows["target"], rows["entity"], rows["value"], strict=False):
        if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
            out.setdefault((target, str(entity)), float(value))
    return out


def line_gbps(nodes: list[Node]) -> float | None:
    """What an all_reduce across these nodes can reach: a ring moves its bus bandwidth through every node's rails,
    so the slowest node's summed rail rate bounds it."""
    rates = [n.line_gbps for n in nodes]
    return None if not rates or any(r is None for r in rates) else min(rates)


def read(text: str) -> Outcome:
    """The run's output: its table (one size) and its NCCL records. No table: the errors say why."""
    from rdmatool.parsers import nccl_debug, nccl_tests

    out = Outcome()
    try:
        samples = nccl_tests.parse(text)
    except ParseError as exc:
        samples = []
        out.errors.append(exc.message)
    out.errors += [s.text for s in samples if s.metric == "tool_error" and s.text]
    rows = [s for s in samples if s.metric == "busbw_gbps" and s.entity == "out_of_place" and s.value is not None]
    if rows:
        largest = max(rows, key=lambda s: s.size_bytes or 0)
        out.busbw_gbps, out.size_bytes = float(largest.value), largest.size_bytes
    averages = [s.value for s in samples if s.metric == "avg_busbw_gbps" and s.value is not None]
    out.avg_busbw_gbps = float(averages[0]) if averages else None
    try:
        out.processes = log.read(nccl_debug.parse(text), "all_reduce_perf")
    except ParseError:
        out.processes = []  # no NCCL record at all: the run never reached NCCL (the errors say why)
    return out


def recipe_text(nodes: list[Node]) -> str:
    """The environment the run used, as one line: once when every node has the same, else per node."""
    envs = {n.name: " ".join(f"{k}={v}" for k, v in n.env.items()) for n in nodes}
    if len(set(envs.values())) == 1:
        return next(iter(envs.values())) or "(no variable set)"
    return "; ".join(f"{name}: {env or '(no variable set)'}" for name, env in envs.items())


def run_name(nodes: list[Node]) -> str:
    return "all_reduce_perf " + ",".join(n.name for n in nodes)


def figure_facts(nodes: list[Node], outcome: Outcome) -> list[dict]:
    """The run's figures as facts of `fabric`, entity the run (`all_reduce_perf gpu01,gpu02`)."""
    line = line_gbps(nodes)
    if outcome.busbw_gbps is None or not line:
        return []
    base = {**dict.fromkeys(FACT_COLUMNS), "target": "fabric", "kind": "fabric", "platform": None, "role": None,
            "entity": run_name(nodes), "priority": pd.NA, "size_bytes": pd.NA, "window_s": np.nan, "delta": np.nan,
            "flag": "", "raw_key": "nccl"}

    def row(metric: str, value=None, text=None) -> dict:
        return {**base, "metric": metric, "value": np.nan if value is None else float(value), "text": text}

    return [row("nccl_busbw_efficiency", round(outcome.busbw_gbps / line, 4)), row("busbw_gbps", outcome.busbw_gbps),
            row("nccl_line_gbps", line), row("nccl_run", text=recipe_text(nodes))]


def judge(nodes: list[Node], built: Recipe, outcome: Outcome, rules, site: dict | None = None) -> list:
    """The nccl playbook's findings on the run: its bus bandwidth against the line rate (the threshold rules on
    BENCH_METRICS), and each node's NCCL choices against its recipe (the `nccl_log_verdict` rules)."""
    from rdmatool.rules import engine
    from rdmatool.table.facts import FactQuery

    problems = log.check(attributed(nodes, outcome), built, site)
    frames = [problem_facts(problems, LOG_VERDICT, {n.name: n.recipe.role for n in nodes}),
              pd.DataFrame(figure_facts(nodes, outcome), columns=FACT_COLUMNS)]
    facts = pd.concat([f for f in frames if not f.empty], ignore_index=True) if any(
        not f.empty for f in frames) else pd.DataFrame(columns=FACT_COLUMNS)
    if facts.empty:
        return []
    facts = facts.astype({"value": float, "window_s": float, "delta": float, "priority": "Int64",
                          "size_bytes": "Int64"})
    mine = [r for r in rules if (r.kind == "verdict" and r.params.get("verdict") == LOG_VERDICT)
            or (r.kind != "verdict" and r.params.get("metric") in BENCH_METRICS)]
    alone = SimpleNamespace(facts=facts, query=FactQuery(facts), links=pd.DataFrame(), targets=[])
    return [_named(f, nodes, outcome) for f in engine.evaluate(alone, mine, profile=site)]


def attributed(nodes: list[Node], outcome: Outcome) -> list[log.Process]:
    """The processes the log may be judged by, per host: a record's host is the hostname the process printed, which
    its node sets. The run starts one process per node, so a record naming a host outside the run, or a node named
    by two processes, cannot be believed: those are left unjudged (never another host's finding, never a drain)
    and said in the outcome's errors."""
    names = {n.name: n.name for n in nodes} | {n.name.split(".", 1)[0]: n.name for n in nodes}
    node_of = [names.get(p.host) or names.get(p.host.split(".", 1)[0]) for p in outcome.processes]
    claims = Counter(n for n in node_of if n is not None)
    kept = [p for p, n in zip(outcome.processes, node_of, strict=True) if n is not None and claims[n] == 1]
    stray = sorted({p.host for p, n in zip(outcome.processes, node_of, strict=True) if n is None})
    twice = sorted(n for n, k in claims.items() if k > 1)
    if stray:
        outcome.errors.append(f"NCCL records of hosts outside the run not judged: {ascii(stray[:5])[1:-1]}")
    if twice:
        outcome.errors.append(f"several processes claim {', '.join(twice[:5])}: their NCCL records not judged")
    return kept


def _named(found, nodes: list[Node], outcome: Outcome):
    """A finding on the run's figures with the run's other figures in its text: a threshold rule fills only its
    own metric, and the text of the nccl playbook's rule names the bus bandwidth, the line rate and the recipe."""
    if found.target != "fabric":
        return found
    line = line_gbps(nodes)
    values = {"busbw_gbps": f"{outcome.busbw_gbps:.1f}" if outcome.busbw_gbps is not None else "-",
              "nccl_line_gbps": f"{line:g}" if line else "-", "nccl_run": recipe_text(nodes)}

    def fill(text: str) -> str:
        for name, value in values.items():
            text = text.replace("{" + name + "}", value)
        return text

    return replace(found, symptom=fill(found.symptom), cause=fill(found.cause), check=fill(found.check),
                   fix=fill(found.fix), evidence={**found.evidence, **values})


def summary(nodes: list[Node], outcome: Outcome) -> str:
    """The stage's detail: the run, its recipe, and what it reached."""
    head = f"{run_name(nodes)} ({recipe_text(nodes)})"
    line = line_gbps(nodes)
    if outcome.busbw_gbps is None:
        why = "; ".join(dict.fromkeys(outcome.errors)) or "no result table"
        return f"{head}: no bus bandwidth ({why[:300]})"
    share = f", {100 * outcome.busbw_gbps / line:.1f} % of {line:g} Gb/s" if line else ", no line rate read"
    said = "; ".join(dict.fromkeys(outcome.errors))
    return f"{head}: bus bandwidth {outcome.busbw_gbps:.1f} Gb/s{share}" + (f" ({said[:300]})" if said else "")
