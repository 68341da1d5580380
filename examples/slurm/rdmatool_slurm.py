"""What the Slurm wiring shares: its settings, one run of `rdmatool gate`, drain reasons, scontrol, the log.

Standard library only: Slurm runs these scripts with an empty environment (no PATH, no virtualenv), under the
system's /usr/bin/python3, and rdmatool is called as a program, never imported. `install.sh` puts this file beside
`prolog-slurmctld.py` and `healthcheck.py` (README.md in this folder).

Two kinds of gate: the prolog's reaches the job's nodes over SSH from the controller (the inventory, the service
user's key and known_hosts); the health check's is `rdmatool gate --local` on the node itself (no SSH, no
inventory, no known_hosts), whose one target is named after this machine and is reported under the Slurm node name.

Settings are `KEY=VALUE` lines in /etc/rdmatool/slurm.env (or the file named by RDMATOOL_SLURM_CONFIG); the file is
read as data, never sourced by a shell. The defaults below are what an unset key means.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import syslog
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

CONFIG_ENV = "RDMATOOL_SLURM_CONFIG"
DEFAULT_CONFIG = "/etc/rdmatool/slurm.env"
# Slurm gives its scripts no PATH: where rdmatool (the README's /opt/rdmatool venv) and scontrol usually are.
SEARCH_PATH = "/opt/rdmatool/bin:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
DEFAULTS = {
    "RDMATOOL": "rdmatool",            # a path, or a name looked up in SEARCH_PATH
    "INVENTORY": "/etc/rdmatool/inventory.yaml",   # the prolog's gate (the health check reads its own node)
    "KNOWN_HOSTS": "",                 # the prolog's: e.g. /var/lib/rdmatool/known_hosts; empty: the user's own
    "GATE_PROFILE": "/etc/rdmatool/gate-profile.yaml",
    "GATE_BUDGET": "180",
    "HEALTHCHECK_PROFILE": "/etc/rdmatool/healthcheck-profile.yaml",
    "HEALTHCHECK_BUDGET": "40",        # slurmd kills a health check after 60 s
    "GATE_ARGS": "",                   # more options for the prolog's gate, split like a shell would (never run by one)
    "HEALTHCHECK_ARGS": "",            # more options for the health check's `gate --local`, split the same way
    "LOGDIR": "/var/log/rdmatool",
    "SCONTROL": "scontrol",
    # When rdmatool cannot give a verdict (not installed, bad inventory, crashed): yes = the prolog holds the job and
    # the health check drains its node (with rdmatool's own reason, so it is resumed once rdmatool works again);
    # no = log it and let the job run / leave the node alone.
    "FAIL_CLOSED": "yes",
    # The prolog on an inconclusive gate (a node unreachable over SSH, no data, out of budget): run or hold.
    "ON_INCONCLUSIVE": "run",
}
CHOICES = {"FAIL_CLOSED": ("yes", "no"), "ON_INCONCLUSIVE": ("run", "hold")}
# Every drain reason rdmatool writes starts with this: a drained node whose reason does not is someone else's.
REASON_PREFIX = "rdmatool:"
MAX_REASON = 200  # `sinfo -R` and `scontrol show node` stay readable; the whole story is in the gate's log
# Beyond its own --budget the gate gets this long to write its verdict before it counts as hung; the health check
# less, so that it ends within the 60 s slurmd allows it.
GRACE_S = 60
HEALTHCHECK_GRACE_S = 10

PASS, FAIL, USAGE, INCONCLUSIVE, INTERNAL = 0, 1, 2, 3, 4  # 4: rdmatool itself failed, never a verdict

# A node name or job id from the environment (SLURMD_NODENAME, SLURM_JOB_ID) or from scontrol goes into a file name
# and an argument: letters, digits and `._-` only, no leading dot or dash (`..`, an option), bounded in length.
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")


class BadName(Exception):
    """A node name or job id that is not a plain name: one line saying which and what it was."""


# A Slurm hostlist (`gpu[01-04,07],login1`): the names above with brackets, commas and ranges, never an option.
_HOSTLIST = re.compile(r"[A-Za-z0-9_\[][A-Za-z0-9._,\[\]-]{0,65535}")


def checked_hostlist(what: str, value: str) -> str:
    """`value` if it reads as a Slurm hostlist (see _HOSTLIST), else BadName naming `what`."""
    if not _HOSTLIST.fullmatch(value):
        raise BadName(f"{what} is not a Slurm hostlist (letters, digits, ._-,[] ): {value[:160]!r}")
    return value


def checked_name(what: str, value: str) -> str:
    """`value` if it is a plain name (see _NAME), else BadName naming `what` and the value as repr."""
    if not _NAME.fullmatch(value):
        raise BadName(f"{what} is not a plain name (letters, digits, ._- ; at most 128): {value[:160]!r}")
    return value


class SettingsError(Exception):
    """A settings file that cannot be used: one line naming the file (and the line)."""


@dataclass
class Settings:
    values: dict[str, str]
    source: str

    def __getitem__(self, key: str) -> str:
        return self.values[key]

    def rdmatool(self) -> str | None:
        """The rdmatool program to run, or None when it is not installed."""
        program = self["RDMATOOL"]
        if "/" in program:
            return program if os.access(program, os.X_OK) else None
        return _which(program)


def load_settings(path: str | None = None) -> Settings:
    path = path or os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG
    values = dict(DEFAULTS)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return Settings(values, f"{path} (absent: defaults)")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in DEFAULTS:
            raise SettingsError(f"{path}:{number}: expected KEY=VALUE with KEY one of {', '.join(DEFAULTS)}")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if key in CHOICES and value not in CHOICES[key]:
            raise SettingsError(f"{path}:{number}: {key} must be one of {', '.join(CHOICES[key])}, not {value!r}")
        values[key] = value
    for key in ("GATE_BUDGET", "HEALTHCHECK_BUDGET"):
        try:
            float(values[key])
        except ValueError:
            raise SettingsError(f"{path}: {key} must be a number of seconds, not {values[key]!r}") from None
    for key in ("GATE_ARGS", "HEALTHCHECK_ARGS"):
        try:
            shlex.split(values[key])
        except ValueError as exc:
            raise SettingsError(f"{path}: {key}: {exc}") from None
    return Settings(values, path)


def _which(program: str) -> str | None:
    import shutil

    return shutil.which(program, path=os.environ.get("PATH") or SEARCH_PATH) or shutil.which(program,
                                                                                            path=SEARCH_PATH)


# --- one run of the gate ---------------------------------------------------------------------------------------

@dataclass
class GateOutcome:
    """What one `rdmatool gate` run said. `code` is its exit code when it gave a verdict, else None with `error`
    saying why (not installed, usage error, crashed, hung): the caller decides whether that fails closed."""
    code: int | None
    payload: dict = field(default_factory=dict)
    drain: list[str] = field(default_factory=list)
    error: str = ""
    log: str = ""

    def findings_of(self, node: str) -> list[dict]:
        """The node's own error and critical findings, most severe first (the gate's report order)."""
        return [f for f in self.payload.get("findings", [])
                if f.get("target") == node and f.get("severity") in ("error", "critical")]


def run_gate(settings: Settings, nodes: list[str], *, profile: str, budget: float, stem: Path,
             junit: bool = False, grace: float = GRACE_S, local: bool = False) -> GateOutcome:
    """`rdmatool gate --limit NODES --json --drain-file STEM.drain`, its stdout kept in STEM.json and its stderr in
    STEM.log. Exit 1 counts as a failure only with a verdict of "fail" in the JSON: anything else that exits 1 (a
    traceback, a killed process) is an error, never a reason to drain.

    `local`: `rdmatool gate --local` instead, on the machine this runs on, which is the one node of `nodes`: what it
    says of this machine (named by its host name) is returned as said of that node (`_as_node`)."""
    program = settings.rdmatool()
    if program is None:
        return GateOutcome(None, error=f"rdmatool not found ({settings['RDMATOOL']}; set RDMATOOL in "
                                       f"{settings.source})")
    stem.parent.mkdir(parents=True, exist_ok=True)
    drain_file = stem.with_name(stem.name + ".drain")
    drain_file.unlink(missing_ok=True)  # a list left by an earlier run must never be read as this run's
    if local:
        (node,) = nodes
        argv = [program, "gate", "--local"]
    else:
        argv = [program, "gate", "-i", settings["INVENTORY"], "--limit", ",".join(nodes)]
        if settings["KNOWN_HOSTS"]:
            argv += ["--known-hosts", settings["KNOWN_HOSTS"]]
    argv += ["--profile", profile, "--budget", f"{budget:g}", "--json", "--drain-file", str(drain_file)]
    if junit:
        argv += ["--junit", str(stem.with_name(stem.name + ".junit.xml"))]
    argv += shlex.split(settings["HEALTHCHECK_ARGS" if local else "GATE_ARGS"])
    env = {**os.environ, "PATH": os.environ.get("PATH") or SEARCH_PATH}
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True)  # its own group: a hung gate is ended with its children
    except OSError as exc:
        return GateOutcome(None, error=f"{program}: cannot run ({exc.strerror or exc})")
    try:
        stdout, stderr = proc.communicate(timeout=budget + grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        _keep(stem, stdout, stderr)
        return GateOutcome(None, error=f"rdmatool gate did not finish within {budget + grace:g} s", log=stderr)
    _keep(stem, stdout, stderr)
    last_line = (stderr.strip().splitlines() or [""])[-1][:300]
    try:
        payload = json.loads(stdout) if stdout.strip() else {}
    except ValueError:
        payload = {}
    if not isinstance(payload, dict):
        payload = {}
    verdict = payload.get("verdict")
    broken = _broken_stages(payload) if proc.returncode == INCONCLUSIVE else ""
    if broken:  # a stage whose own code broke is rdmatool failing, not the fabric being unknowable
        return GateOutcome(None, payload, error=f"rdmatool gate: internal error: {broken}", log=stderr)
    if proc.returncode in (PASS, INCONCLUSIVE) or (proc.returncode == FAIL and verdict == "fail"):
        drain = drain_file.read_text().split() if drain_file.exists() else list(payload.get("drain", []))
        if local:
            payload, drain = _as_node(payload, node), [node] if drain else []
        return GateOutcome(proc.returncode, payload, drain, log=stderr)
    what = {USAGE: "usage or bad input", INTERNAL: "internal error"}.get(proc.returncode,
                                                                        f"exit {proc.returncode} without a verdict")
    return GateOutcome(None, payload, error=f"rdmatool gate: {what}: {last_line or 'no message'}", log=stderr)


def _as_node(payload: dict, node: str) -> dict:
    """A local gate's JSON with this machine's name replaced by the Slurm node's: a local gate has one target, this
    machine, named by its host name (several slurmd on one host, or a NodeName that is not the host name, differ)."""
    findings = [{**f, "target": node} if isinstance(f, dict) and f.get("target") else f
                for f in payload.get("findings") or []]
    reasons = [{**c, "node": node} if isinstance(c, dict) and c.get("node") else c
               for c in payload.get("drain_reasons") or []]
    return {**payload, "findings": findings, "drain_reasons": reasons,
            "drain": [node] if payload.get("drain") else []}


def _broken_stages(payload: dict) -> str:
    """`state: stage crashed: ...` for each stage of the gate's JSON whose status is `error` (its own code broke)."""
    stages = payload.get("stages")
    broken = [s for s in stages if isinstance(s, dict) and s.get("status") == "error"] if isinstance(stages, list) \
        else []
    return "; ".join(f"{s.get('name')}: {s.get('detail') or 'broke'}" for s in broken)


def _keep(stem: Path, stdout: str, stderr: str) -> None:
    """The gate's own output beside the drain list, for whoever asks later why a node was drained."""
    try:
        stem.with_name(stem.name + ".json").write_text(stdout)
        stem.with_name(stem.name + ".log").write_text(stderr)
    except OSError:
        pass  # the log directory is a convenience; the decision is logged to syslog anyway


def drain_reason(outcome: GateOutcome, node: str) -> str:
    """`rdmatool: <rule>: <summary>`, one line, short enough for `sinfo -R`: the finding the gate names as why the
    node is drained (its `drain_reasons`), else the node's most severe finding."""
    named = [c for c in outcome.payload.get("drain_reasons") or [] if isinstance(c, dict) and c.get("node") == node]
    findings = named or outcome.findings_of(node)
    if findings:
        first = findings[0]
        reason = f"{REASON_PREFIX} {first.get('rule', '?')}: {first.get('symptom', '')}".strip()
        if len(findings) > 1:
            reason += f" (+{len(findings) - 1} more)"
    else:
        reason = f"{REASON_PREFIX} gate: failed"
    return one_line(reason)


def one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 3] + "..."


# --- scontrol -----------------------------------------------------------------------------------------------------

@dataclass
class Node:
    name: str
    state: str    # e.g. IDLE, ALLOCATED, IDLE+DRAIN, DOWN+DRAIN
    reason: str   # as scontrol shows it, e.g. "rdmatool: port_not_active: ... [root@2024-05-01T02:00:00]"

    @property
    def drained(self) -> bool:
        return any(flag in self.state.split("+") for flag in ("DRAIN", "DRAINED", "DRAINING"))

    @property
    def drained_by_rdmatool(self) -> bool:
        return self.drained and self.reason.startswith(REASON_PREFIX)


class ScontrolError(Exception):
    pass


class Scontrol:
    """The few scontrol calls the wiring makes; arguments are passed as a list, never through a shell."""

    def __init__(self, program: str) -> None:
        self.program = program if "/" in program else (_which(program) or program)

    def _run(self, *args: str) -> str:
        try:
            result = subprocess.run([self.program, *args], capture_output=True, text=True, timeout=60,
                                    env={**os.environ, "PATH": os.environ.get("PATH") or SEARCH_PATH})
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ScontrolError(f"scontrol {args[0]}: {exc}") from None
        if result.returncode != 0:
            message = " ".join(result.stderr.split()) or f"exit {result.returncode}"
            raise ScontrolError(f"scontrol {' '.join(args[:2])}: {message}")
        return result.stdout

    def hostnames(self, nodelist: str) -> list[str]:
        return self._run("show", "hostnames", nodelist).split()

    def node(self, name: str) -> Node:
        fields = _oneliner(self._run("show", "node", "--oneliner", name))
        return Node(name, fields.get("State", ""), fields.get("Reason", ""))

    def drain(self, nodes: list[str], reason: str) -> None:
        self._run("update", f"NodeName={','.join(nodes)}", "State=DRAIN", f"Reason={reason}")

    def resume(self, node: str) -> None:
        self._run("update", f"NodeName={node}", "State=RESUME")

    def requeue(self, job: str) -> None:
        self._run("requeue", job)

    def requeue_held(self, job: str, comment: str) -> None:
        """Back to pending and held (priority 0) until an operator releases it; the comment says why."""
        self._run("requeuehold", job)
        self.comment(job, comment)

    def comment(self, job: str, comment: str) -> None:
        self._run("update", f"JobId={job}", f"AdminComment={one_line(comment)}")


def _oneliner(text: str) -> dict[str, str]:
    """`Key=Value Key=Value` of `scontrol show ... --oneliner`. Reason is the last field and may hold spaces and
    `=`, so it is taken whole; the others end at the next space."""
    head, sep, reason = text.strip().partition(" Reason=")
    fields = dict(token.split("=", 1) for token in head.split() if "=" in token)
    if sep:
        fields["Reason"] = reason.strip()
    return fields


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[bool]:
    """An advisory lock on `path` if nobody holds it (True), else False at once; released on exit."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True


# --- the log --------------------------------------------------------------------------------------------------

class Log:
    """One line per decision: to syslog (the journal) and appended to LOGDIR/slurm.log."""

    def __init__(self, settings: Settings | None, tag: str) -> None:
        self.tag = tag
        self.file = Path(settings["LOGDIR"]) / "slurm.log" if settings else None
        syslog.openlog("rdmatool-slurm", syslog.LOG_PID, syslog.LOG_DAEMON)

    def __call__(self, message: str, error: bool = False) -> None:
        line = f"{self.tag}: {' '.join(message.split())}"
        syslog.syslog(syslog.LOG_ERR if error else syslog.LOG_INFO, line)
        if self.file is None:
            return
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            with self.file.open("a", encoding="utf-8") as out:
                out.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {socket.gethostname()} {line}\n")
        except OSError:
            pass  # syslog has it
