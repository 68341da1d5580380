#!/usr/bin/python3
"""Slurm HealthCheckProgram: this node's fabric health (state and counters, no perftest), NHC-style: checked on the
node itself by `rdmatool gate --local` (no SSH, no inventory, no known_hosts; root, as slurmd runs it).

slurm.conf:  HealthCheckProgram=/etc/slurm/rdmatool/healthcheck.py
             HealthCheckInterval=300
             HealthCheckNodeState=ANY,CYCLE      # spread the checks over the interval
             (slurmd kills a health check after 60 s: keep HEALTHCHECK_BUDGET at 45 s or less)
Settings:    /etc/rdmatool/slurm.env (see rdmatool_slurm.py and README.md here)

slurmd names the node in SLURMD_NODENAME (several slurmd on one host each get their own); the local gate judges this
machine, and what it finds is this node's, whatever the machine's host name.

  gate passes        -> if the node is drained with rdmatool's own reason, it is resumed; otherwise nothing.
  gate fails         -> the node is drained with "rdmatool: <rule>: <summary>" (the reason is refreshed when the
                        finding changes), unless someone else drained it: their reason stays, and so does the drain.
  gate inconclusive  -> logged, nothing changed (a monitoring gap is not a node fault).
  gate cannot run    -> (not installed, usage error, internal error: exit 4 or a stage that broke, hang)
                        FAIL_CLOSED=yes: drained with "rdmatool: cannot run: ..." (resumed once it runs again);
                        FAIL_CLOSED=no: logged only.
  a node name that is not a plain name (letters, digits, ._-; no leading dot or dash) -> one line in syslog and the
                        exit code 1; it never reaches a path or a command, so there is no node to drain.

A node someone else drained is never resumed: only a reason that starts with "rdmatool:" is rdmatool's.
Slurm ignores this program's exit code; every decision is one line in syslog and LOGDIR/slurm.log.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

import rdmatool_slurm as rs  # noqa: E402 - found beside this script, which Slurm runs with no PYTHONPATH


def main() -> int:
    node = os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    try:
        rs.checked_name("SLURMD_NODENAME", node)
    except rs.BadName as exc:
        # the lock, the gate's files and scontrol all take the name: a `../x` would write outside LOGDIR
        rs.Log(None, "healthcheck")(f"{exc}; nothing checked", error=True)
        print(f"rdmatool healthcheck: {exc}", file=sys.stderr)
        return 1
    try:
        settings = rs.load_settings()
    except rs.SettingsError as exc:
        rs.Log(None, f"healthcheck {node}")(f"{exc}; nothing checked", error=True)
        return 0
    log = rs.Log(settings, f"healthcheck {node}")
    logdir = Path(settings["LOGDIR"])
    # slurmd starts the next check at HealthCheckInterval whether or not the last one has finished: on a slow
    # fabric they would pile up, so a check that finds the previous one still running leaves it to finish
    with rs.exclusive(logdir / f"health.{node}.lock") as mine:
        if not mine:
            log("the previous check is still running; skipped")
            return 0
        outcome = rs.run_gate(settings, [node], profile=settings["HEALTHCHECK_PROFILE"],
                              budget=float(settings["HEALTHCHECK_BUDGET"]), stem=logdir / f"health.{node}",
                              grace=rs.HEALTHCHECK_GRACE_S, local=True)
        scontrol = rs.Scontrol(settings["SCONTROL"])
        try:
            # the node as it is now, after the gate: someone may have drained it meanwhile
            act(scontrol, scontrol.node(node), outcome, settings["FAIL_CLOSED"] == "yes", log)
        except rs.ScontrolError as exc:
            log(f"{exc}; nothing changed", error=True)
    return 0


def act(scontrol: rs.Scontrol, node: rs.Node, outcome: rs.GateOutcome, fail_closed: bool, log: rs.Log) -> None:
    if outcome.code == rs.PASS:
        if node.drained_by_rdmatool:
            scontrol.resume(node.name)
            log(f"passed; resumed (was: {node.reason})")
        elif node.drained:
            log(f"passed; left drained by someone else ({node.reason})")
        return
    if outcome.code == rs.INCONCLUSIVE:
        log("inconclusive (no RDMA device or no data read, or out of budget); nothing changed")
        return
    if outcome.code == rs.FAIL:
        reason = rs.drain_reason(outcome, node.name)
    elif fail_closed:
        reason = f"{rs.REASON_PREFIX} cannot run: {outcome.error}"
    else:
        log(f"{outcome.error}; nothing changed (FAIL_CLOSED=no)", error=True)
        return
    reason = rs.one_line(reason)
    if node.drained and not node.drained_by_rdmatool:
        log(f"failed ({reason}); left as drained by someone else ({node.reason})")
    elif node.drained and node.reason.startswith(reason):
        log(f"failed again; still drained ({reason})")
    else:
        scontrol.drain([node.name], reason)
        log(f"drained: {reason}")


if __name__ == "__main__":
    sys.exit(main())
