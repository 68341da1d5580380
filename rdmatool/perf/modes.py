"""`rdmatool perf run`'s pair modes in an open perf session: the gate's rounds with confirmation (`pairs`, and
`topology` with the rounds a schedule choice gives), or every pair of a plan judged at once (`ring`, `all-pairs`);
and the run's files. The storage mode is rdmatool.perf.storage."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rdmatool.model import Target
from rdmatool.perf import schedule
from rdmatool.perf.attribution import attribute
from rdmatool.perf.engine import PerfSession, run_gate_perf, run_schedule
from rdmatool.perf.model import NOT_RUN, Attribution, PairResult, PerfOptions
from rdmatool.perf.output import write_results

GATE_MODES = ("pairs", "topology")  # rounds with distinct partners, then a confirmation round


def measure(session: PerfSession, hosts: list[Target], options: PerfOptions, mode: str, *,
            expected_gbps: float | None = None, rounds: int = 3, threshold: float = 0.9, seed: int = 0,
            progress: Callable[[str], None] | None = None, choice=None) -> tuple[list[PairResult], Attribution]:  # noqa: ANN001 - a schedule choice
    """The pair results and their attribution. `expected_gbps`: one rate for every host (default: each host's line
    rate); `choice`: the topology mode's rounds (rdmatool.gate.schedule_choice). The hosts the session did not
    reach are `missing` in the attribution."""
    expected = session.expected_gbps()
    if expected_gbps is not None:
        expected = dict.fromkeys(session.hosts, expected_gbps)
    if mode in GATE_MODES:
        return run_gate_perf(hosts, options, expected, rounds=rounds, session=session, threshold=threshold,
                             seed=seed, progress=progress, **(choice.engine_args() if choice else {}))
    plan = (schedule.all_pairs if mode == "all-pairs" else schedule.ring)(session.reachable)
    results = run_schedule(hosts, plan, options, session=session, progress=progress)
    attribution = attribute(results, expected, threshold)
    return results, replace(attribution, missing=tuple(sorted(set(attribution.missing) | set(session.missing))))


def write_run(folder: Path, results: list[PairResult], attribution: Attribution, discovered: dict,
              untested: dict[str, dict[str, str]], figures: dict | None = None) -> None:
    """The matrix CSVs, heatmap and attribution (rdmatool.perf.output), `discovery.json` (what each host has, and
    the NICs not tested with why) and, for a topology schedule, `schedule.json` (what it could find)."""
    write_results(results, attribution, folder)
    (folder / "discovery.json").write_text(json.dumps({**discovered, "_untested_nics": untested}, indent=2) + "\n")
    if figures is not None:
        (folder / "schedule.json").write_text(json.dumps(figures, indent=2) + "\n")


def inconclusive(results: list[PairResult], attribution: Attribution) -> bool:
    """Errors, hosts missing, suspects or pairs not run: the run could not say every pair is at speed."""
    return bool(attribution.errors or attribution.missing or attribution.suspects
                or any(r.error and r.error.startswith(NOT_RUN) for r in results))
