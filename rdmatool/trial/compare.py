"""What changed and whether it helped: the configuration changes between the two sides (rdmatool.bundle_ops.diff), each
figure's effect, and the verdict. The figures are a run's own (rdmatool.trial.runs): under load from a gate's
incast stage when its bundle has one, else from the bundle's perftest results and counters; the two are not mixed.

An effect is real when each side has at least two runs, the ranges of the two sides' runs do not overlap, and the
medians differ by at least MIN_RELATIVE of BEFORE's median (and an absolute floor per figure): a difference inside
the runs' own spread is noise, not an improvement. With three runs a side, non-overlapping ranges happen by chance
once in ten trials of a change that did nothing; more runs make that rarer.

The verdict judges the decisive figures (p99 latency and pause fraction lower is better, goodput and fairness
higher); ECN marks and CNPs are context (a lower ECN threshold is meant to mark more). `helped`: at least one
decisive figure better, none worse (keep, exit 0); `hurt`: one worse, none better (revert, exit 1); else
`inconclusive` (exit 3): no measurable effect, better and worse at once, too few runs, or no configuration change to
credit. The changes of one trial are judged together: they cannot be told apart.
"""

from __future__ import annotations

import numpy as np

from rdmatool.bundle_ops.diff import diff
from rdmatool.trial.runs import KEYED, Run, keyed_means

SCHEMA = "rdmatool-trial/1"
MIN_RELATIVE = 0.05
MIN_RUNS = 2
# name, label, unit, which way is better (None: context), absolute floor of a real effect
FIGURES = (
    ("p99_latency_us", "p99 latency", "µs", "lower", 0.05),
    ("pause_fraction", "pause fraction", "share", "lower", 1e-4),
    ("ecn_mark_ratio", "ECN mark ratio", "share", None, 1e-4),
    ("cnp_per_s", "CNP rate", "/s", None, 1.0),
    ("goodput_gbps", "goodput", "Gb/s", "higher", 1.0),
    ("fairness", "fairness (Jain)", "index", "higher", 0.01),
)
EXIT = {"helped": 0, "hurt": 1, "inconclusive": 3}


def _spread(values: list[float]) -> dict | None:
    return {"median": float(np.median(values)), "min": min(values), "max": max(values), "n": len(values),
            "values": values} if values else None


def effect(name: str, label: str, unit: str, better: str | None, floor: float, before: list, after: list) -> dict:
    b = [float(v) for v in before if v is not None]
    a = [float(v) for v in after if v is not None]
    out = {"figure": name, "label": label, "unit": unit, "better": better, "before": _spread(b), "after": _spread(a),
           "change": None, "relative": None}
    if not b or not a:
        return {**out, "effect": "not measured"}
    mb, ma = out["before"]["median"], out["after"]["median"]
    out["change"] = ma - mb
    out["relative"] = (ma - mb) / abs(mb) if mb else None
    if len(b) < MIN_RUNS or len(a) < MIN_RUNS:
        return {**out, "effect": "unproven"}
    apart = max(b) < min(a) or max(a) < min(b)
    large = abs(ma - mb) >= max(MIN_RELATIVE * abs(mb), floor)
    if not (apart and large):
        return {**out, "effect": "noise"}
    if better is None:
        return {**out, "effect": "changed"}
    return {**out, "effect": "better" if (ma < mb) == (better == "lower") else "worse"}


def effects(before: list[Run], after: list[Run]) -> list[dict]:
    out = []
    for name, label, unit, better, floor in FIGURES:
        if name in KEYED:
            means = keyed_means([*before, *after], name)
            b, a = means[: len(before)], means[len(before):]
        else:
            b, a = [r.figures.get(name) for r in before], [r.figures.get(name) for r in after]
        out.append(effect(name, label, unit, better, floor, b, a))
    return out


def _side_drift(runs: list[Run], side: str) -> list[str]:
    """The runs of one side should share one configuration: a change among them is named."""
    notes = []
    for run in runs[1:]:
        changed = diff(runs[0].analysis, run.analysis, runs[0].path, run.path, rates=False).config
        if changed:
            c = changed[0]
            notes.append(f"{side}'s runs differ in configuration: {run.path} has {c['target']} {c['entity']} "
                         f"{c['setting']} {c['after']} where {runs[0].path} has {c['before']}"
                         + (f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""))
    return notes


def verdict(found: list[dict], changes: list[dict], notes: list[str], before: list[Run], after: list[Run]) -> dict:
    better = [e for e in found if e["effect"] == "better"]
    worse = [e for e in found if e["effect"] == "worse"]

    def said(items: list[dict]) -> str:
        return ", ".join(f"{e['label']} {abs(e['relative']):.0%} {'lower' if e['change'] < 0 else 'higher'}"
                         if e["relative"] is not None else e["label"] for e in items)

    if len(before) < MIN_RUNS or len(after) < MIN_RUNS:
        return {"verdict": "inconclusive", "action": "repeat",
                "reason": f"{len(before)} run(s) before and {len(after)} after: at least {MIN_RUNS} a side (3 or more "
                          f"better) are needed to tell an effect from the runs' own spread"}
    if any(n.startswith(("BEFORE's runs differ", "AFTER's runs differ")) for n in notes):
        return {"verdict": "inconclusive", "action": "repeat",
                "reason": "the runs of one side do not share one configuration (see the notes)"}
    if len({r.source for r in (*before, *after)}) > 1:
        return {"verdict": "inconclusive", "action": "repeat",
                "reason": "some runs hold a gate's incast figures (under load) and others not: they do not measure "
                          "the same thing"}
    if not changes:
        return {"verdict": "inconclusive", "action": "none",
                "reason": "no configuration change between BEFORE and AFTER" + (
                    f"; yet {said(better + worse)} moved: the load or the fabric differ" if better or worse else "")}
    if better and worse:
        return {"verdict": "inconclusive", "action": "decide",
                "reason": f"better: {said(better)}; worse: {said(worse)}"}
    if better:
        return {"verdict": "helped", "action": "keep", "reason": said(better)}
    if worse:
        return {"verdict": "hurt", "action": "revert", "reason": said(worse)}
    return {"verdict": "inconclusive", "action": "inconclusive",
            "reason": "no measurable effect: every decisive figure moved within the runs' spread"}


def _side(name: str, runs: list[Run]) -> dict:
    sources = {r.source for r in runs}
    return {"path": name, "runs": [r.path for r in runs], "source": sources.pop() if len(sources) == 1 else "mixed"}


def trial(before: list[Run], after: list[Run], site: dict, before_name: str = "BEFORE",
          after_name: str = "AFTER") -> dict:
    """The trial's result: the configuration changes (last run before vs first run after: the two closest in time),
    the effects, the verdict and, for a change to revert, the commands restoring BEFORE's values."""
    from rdmatool.trial.revert import revert

    between = diff(before[-1].analysis, after[0].analysis, before[-1].path, after[0].path, rates=False)
    notes = _side_drift(before, "BEFORE") + _side_drift(after, "AFTER")
    targets = between.targets
    if targets.get("added") or targets.get("removed"):
        notes.append(f"the targets differ: added {', '.join(targets['added']) or 'none'}, removed "
                     f"{', '.join(targets['removed']) or 'none'}")
    found = effects(before, after)
    judged = verdict(found, between.config, notes, before, after)
    action = judged["action"] if judged["verdict"] in ("helped", "hurt") else "inconclusive"
    changes = [{**c, "action": action} for c in between.config]
    result = {
        "schema": SCHEMA,
        "before": _side(before_name, before),
        "after": _side(after_name, after),
        "changes": changes,
        "effects": found,
        "notes": notes,
        **judged,
        "revert": revert(between.config, before[-1].analysis.facts, site) if judged["verdict"] == "hurt" else [],
    }
    return result
