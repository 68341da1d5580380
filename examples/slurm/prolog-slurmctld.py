#!/usr/bin/python3
"""Slurm PrologSlurmctld: gate the whole allocation on fabric health once, on the controller, before the job runs.

slurm.conf:  PrologSlurmctld=/etc/slurm/rdmatool/prolog-slurmctld.py
             PrologEpilogTimeout=300        # longer than GATE_BUDGET + 60 s
Settings:    /etc/rdmatool/slurm.env (see rdmatool_slurm.py and README.md here)

  gate passes         -> exit 0, the job starts.
  gate fails          -> each node the gate names is drained with its own reason ("rdmatool: <rule>: <summary>"),
                         then the job is requeued: it starts again on other nodes (and is gated there again).
                         A failure that names no node (a bad link, a fabric-level finding) holds the job instead:
                         requeuing it would only land it on the same fabric.
  gate inconclusive   -> logged; the job runs (ON_INCONCLUSIVE=hold holds it instead). Nothing is drained.
  gate cannot run     -> (rdmatool missing, bad inventory, an internal error: exit 4 or a stage that broke, hang)
                         the job is held with the error as its AdminComment (FAIL_CLOSED=yes, the default) or runs
                         (FAIL_CLOSED=no). Nothing is drained.
  a job id, restart count or node name that is not a plain name (letters, digits, ._-) -> never used in a path or a
                         command: the prolog fails (exit 1: Slurm requeues or cancels the job), whatever FAIL_CLOSED.

The script itself exits 0 whenever it did what it decided: a PrologSlurmctld that fails makes Slurm requeue or
cancel the job, which is only the fallback here when scontrol itself refuses the requeue (an interactive job).
It never exits non-zero because of one node's fault, and no node is drained that the gate did not name.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

import rdmatool_slurm as rs  # noqa: E402 - found beside this script, which Slurm runs with no PYTHONPATH


def main() -> int:
    job = os.environ.get("SLURM_JOB_ID", "")
    nodelist = os.environ.get("SLURM_JOB_NODELIST", "")
    restart = os.environ.get("SLURM_JOB_RESTART_COUNT") or "0"
    try:
        for what, value in (("SLURM_JOB_ID", job), ("SLURM_JOB_RESTART_COUNT", restart)):
            if value:
                rs.checked_name(what, value)
        if nodelist:
            rs.checked_hostlist("SLURM_JOB_NODELIST", nodelist)
    except rs.BadName as exc:
        # no path, log tag or scontrol call may take it; failing the prolog is how Slurm holds back the job then
        rs.Log(None, "prolog")(f"{exc}; failing the prolog", error=True)
        print(f"rdmatool prolog: {exc}", file=sys.stderr)
        return 1
    try:
        settings = rs.load_settings()
    except rs.SettingsError as exc:
        log = rs.Log(None, f"prolog job {job}")
        log(f"{exc}; holding the job", error=True)
        return _hold(rs.Scontrol(rs.DEFAULTS["SCONTROL"]), job, f"rdmatool: cannot run: {exc}", log)
    log = rs.Log(settings, f"prolog job {job}")
    scontrol = rs.Scontrol(settings["SCONTROL"])
    if not job or not nodelist:
        log("no SLURM_JOB_ID or SLURM_JOB_NODELIST: not run by slurmctld as PrologSlurmctld; nothing done", True)
        return 0
    try:
        nodes = scontrol.hostnames(nodelist)
    except rs.ScontrolError as exc:
        log(f"{exc}; the job runs ungated", error=True)
        return 0
    try:
        nodes = [rs.checked_name("a node of SLURM_JOB_NODELIST", node) for node in nodes]
    except rs.BadName as exc:
        log(f"{exc}; holding the job", error=True)
        return _hold(scontrol, job, f"rdmatool: cannot run: {exc}", log)
    # one set of gate files per attempt: a requeued job is gated again, and the first attempt says why it was
    stem = Path(settings["LOGDIR"]) / f"gate.{job}.{restart}"
    outcome = rs.run_gate(settings, nodes, profile=settings["GATE_PROFILE"],
                          budget=float(settings["GATE_BUDGET"]), stem=stem, junit=True)
    if outcome.code == rs.PASS:
        log(f"gate passed on {nodelist} ({len(nodes)} nodes)")
        return 0
    if outcome.code == rs.INCONCLUSIVE:
        why = _missing(outcome)
        if settings["ON_INCONCLUSIVE"] == "hold":
            log(f"gate inconclusive on {nodelist} ({why}); holding the job (ON_INCONCLUSIVE=hold)")
            return _hold(scontrol, job, f"rdmatool: gate inconclusive: {why}; see {stem}.json", log)
        log(f"gate inconclusive on {nodelist} ({why}); nothing drained, the job runs")
        return 0
    if outcome.code == rs.FAIL:
        return _failed(scontrol, job, nodes, outcome, stem, log)
    if settings["FAIL_CLOSED"] == "yes":
        log(f"{outcome.error}; holding the job (FAIL_CLOSED=yes)", error=True)
        return _hold(scontrol, job, f"rdmatool: gate could not run: {outcome.error}", log)
    log(f"{outcome.error}; the job runs ungated (FAIL_CLOSED=no)", error=True)
    return 0


def _failed(scontrol: rs.Scontrol, job: str, nodes: list[str], outcome: rs.GateOutcome, stem: Path,
            log: rs.Log) -> int:
    """Drain exactly the allocation's nodes the gate named, each with its own reason, then requeue the job."""
    named = [n for n in outcome.drain if n in nodes]
    if set(outcome.drain) - set(named):
        log(f"the gate named nodes outside the job, left alone: {' '.join(sorted(set(outcome.drain) - set(named)))}")
    by_reason: dict[str, list[str]] = {}
    for node in named:
        by_reason.setdefault(rs.drain_reason(outcome, node), []).append(node)
    drained = []
    for reason, group in by_reason.items():
        try:
            scontrol.drain(group, reason)
            drained += group
            log(f"drained {','.join(group)}: {reason}")
        except rs.ScontrolError as exc:
            log(f"could not drain {','.join(group)}: {exc}", error=True)
    if not drained:
        summary = _fabric_summary(outcome)
        log(f"gate failed on {','.join(nodes)} with no node to drain ({summary}); holding the job")
        return _hold(scontrol, job, f"rdmatool: gate failed, no node to drain: {summary}; see {stem}.json", log)
    try:
        scontrol.requeue(job)
    except rs.ScontrolError as exc:
        # an interactive job cannot be requeued: failing the prolog makes Slurm cancel it (batch: requeue it)
        log(f"could not requeue: {exc}; failing the prolog so that Slurm requeues or cancels the job", error=True)
        return 1
    _comment(scontrol, job, f"rdmatool: requeued, drained {','.join(drained)}; see {stem}.json", log)
    log(f"requeued (drained {','.join(drained)})")
    return 0


def _hold(scontrol: rs.Scontrol, job: str, comment: str, log: rs.Log) -> int:
    try:
        scontrol.requeue_held(job, comment)
    except rs.ScontrolError as exc:
        log(f"could not hold the job: {exc}; failing the prolog so that Slurm does not start it", error=True)
        return 1
    log(f"held: {comment}")
    return 0


def _comment(scontrol: rs.Scontrol, job: str, comment: str, log: rs.Log) -> None:
    try:
        scontrol.comment(job, comment)
    except rs.ScontrolError as exc:
        log(f"could not set the job's AdminComment: {exc}", error=True)


def _missing(outcome: rs.GateOutcome) -> str:
    failures = outcome.payload.get("failures") or []
    names = sorted({str(f.get("target")) for f in failures if isinstance(f, dict)})
    if names:
        return "unreachable or no data: " + " ".join(names[:10]) + (" ..." if len(names) > 10 else "")
    stages = [s for s in outcome.payload.get("stages", []) if s.get("status") not in ("passed", "skipped")]
    return "; ".join(f"{s.get('name')} {s.get('status')}" for s in stages) or "no detail"


def _fabric_summary(outcome: rs.GateOutcome) -> str:
    hard = [f for f in outcome.payload.get("findings", []) if f.get("severity") in ("error", "critical")]
    if not hard:
        return "no finding"
    return f"{hard[0].get('rule')}: {hard[0].get('symptom')}" + (f" (+{len(hard) - 1} more)" if len(hard) > 1
                                                                    else "")


if __name__ == "__main__":
    sys.exit(main())
