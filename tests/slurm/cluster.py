"""A real Slurm on localhost for the tests: munged, slurmctld and one slurmd per node, all in a temporary folder.

Debian's `slurm-wlm` is built with multiple-slurmd support, so several nodes share this machine: each node is
`NodeName=gpu01 NodeHostname=localhost NodeAddr=127.0.0.1 Port=<its own>` and its slurmd is started with
`-N gpu01`. munged gets its own key and socket (`AuthInfo=socket=...`), so nothing here touches the machine's
Slurm or MUNGE, and two clusters never meet. Every command the test runs (`scontrol`, `sbatch`) is given
`SLURM_CONF` pointing at this cluster's configuration.

    with slurm_cluster(["gpu01", "gpu02"], tmp, prolog_slurmctld=script) as cluster:
        job = cluster.sbatch("--nodes=2", "--wrap", "sleep 30")
        cluster.node("gpu01")["State"], cluster.job(job)["JobState"]

`slurm_user="slurm"` runs slurmctld (and so PrologSlurmctld) as that unprivileged user, as a site does: the
cluster's folder must then be one that user may reach, and slurmctld's state, log and pid files are made its own.

When the Slurm or MUNGE daemons are missing or we are not root, `require_slurm` skips with the reason, unless the
environment variable CI is "true": then it fails (CI installs slurm-wlm and munge, and must never skip).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("scontrol", "sbatch", "squeue")


def missing_prerequisite() -> str | None:
    """Why a Slurm cannot be started here, or None."""
    for program in (*DAEMONS, *CLIENTS, "mungekey"):
        if _which(program) is None:
            return f"{program} is not installed (apt-get install slurm-wlm munge)"
    if os.geteuid() != 0:
        return "the test Slurm runs as root (SlurmUser=root, slurmd starts jobs as the submitting user)"
    return None


def require_slurm() -> None:
    reason = missing_prerequisite()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"Slurm unavailable in CI: {reason}", pytrace=False)
    pytest.skip(f"Slurm unavailable: {reason}")


def _which(program: str) -> str | None:
    return shutil.which(program) or shutil.which(program, path="/usr/sbin:/usr/bin:/sbin")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class SlurmCluster:
    root: Path
    nodes: list[str]
    conf: Path
    processes: list[subprocess.Popen] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        """The environment of a command that talks to this cluster."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *argv: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
        result = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(argv)}: exit {result.returncode}: {result.stderr.strip()}\n"
                                 f"{self.logs()}")
        return result

    def scontrol(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return self.run(_which("scontrol") or "scontrol", *args, check=check)

    def node(self, name: str) -> dict[str, str]:
        """`scontrol show node` as a dict: State (e.g. IDLE, IDLE+DRAIN, ALLOCATED), Reason, ..."""
        return _fields(self.scontrol("show", "node", "--oneliner", name).stdout)

    def job(self, job_id: str) -> dict[str, str]:
        return _fields(self.scontrol("show", "job", "--oneliner", job_id).stdout)

    def sbatch(self, *args: str) -> str:
        """Submit a batch job; its id."""
        out = self.run(_which("sbatch") or "sbatch", "--parsable", "--chdir", str(self.root), "--output",
                       str(self.root / "job-%j.out"), *args).stdout
        return out.strip().split(";")[0]

    def wait_for(self, what: str, predicate, timeout: float = 60, interval: float = 0.5):  # noqa: ANN001, ANN201
        """Poll `predicate()` until it returns something true; that value. Fails naming `what` with the logs."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{self.logs()}")
            time.sleep(interval)

    def resume_all(self) -> None:
        """Every node back to service, whatever a test did to it: the next test starts from a clean cluster."""
        for name in self.nodes:
            state = self.node(name).get("State", "")
            if "DRAIN" in state or "DOWN" in state or "FAIL" in state:
                self.scontrol("update", f"nodename={name}", "state=resume", check=False)
        self.wait_for("all nodes idle", lambda: all(self.node(n).get("State") == "IDLE" for n in self.nodes))

    def cancel_all(self) -> None:
        self.run(_which("scancel") or "scancel", "--full", "--user", "root", check=False)
        self.wait_for("no jobs left", lambda: not self.run(_which("squeue") or "squeue", "--noheader").stdout.strip())

    def logs(self, lines: int = 15) -> str:
        """The tail of every daemon's log, for a failure message."""
        out = []
        for log in sorted(self.root.glob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {log.name}\n" + "\n".join(tail))
        return "\n".join(out)

    def stop(self) -> None:
        for proc in reversed(self.processes):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(self.processes):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _fields(text: str) -> dict[str, str]:
    """`Key=Value Key=Value ...` of a --oneliner record. A value may contain spaces (`Reason=rdmatool: ...`,
    `OS=Linux 6.1 #1 SMP`): it runs up to the next ` Key=` (a capitalised word and `=`)."""
    pairs = re.findall(r"(?:^| )([A-Z][A-Za-z:/]*)=(.*?)(?= +[A-Z][A-Za-z:/]*=|$)", text.strip())
    return {key: value.strip() for key, value in pairs}


def write_config(root: Path, nodes: list[str], ctld_port: int, node_ports: dict[str, int],
                 extra: dict[str, str], slurm_user: str = "root") -> Path:
    lines = {
        "ClusterName": "rdmatooltest",
        "SlurmctldHost": f"{socket.gethostname().split('.')[0]}(127.0.0.1)",
        "SlurmctldPort": str(ctld_port),
        "SlurmUser": slurm_user,
        "SlurmdUser": "root",
        "AuthType": "auth/munge",
        "CredType": "cred/munge",
        # cred_expire is also how long a requeued job waits before it may start again (default 120 s)
        "AuthInfo": f"socket={root}/munge/munge.socket,cred_expire=5",
        "StateSaveLocation": f"{root}/ctld",
        "SlurmdSpoolDir": f"{root}/spool/%n",
        "SlurmctldPidFile": f"{root}/slurmctld.pid",
        "SlurmdPidFile": f"{root}/slurmd.%n.pid",
        "SlurmctldLogFile": f"{root}/slurmctld.log",
        "SlurmdLogFile": f"{root}/slurmd.%n.log",
        "SlurmctldDebug": "info",
        "SlurmdDebug": "info",
        # nothing that needs cgroups, accounting or a database: this is a scheduler to drain and requeue with
        "ProctrackType": "proctrack/linuxproc",
        "TaskPlugin": "task/none",
        "JobAcctGatherType": "jobacct_gather/none",
        "AccountingStorageType": "accounting_storage/none",
        "SchedulerType": "sched/builtin",
        "SelectType": "select/linear",
        "SwitchType": "switch/none",
        "MpiDefault": "none",
        "ReturnToService": "2",
        "SlurmdParameters": "config_overrides",
        "JobRequeue": "1",
        # a pending job is considered again within a second, not the default minute
        "SchedulerParameters": "sched_interval=1,sched_min_interval=100000",
        "MailProg": "/bin/true",
        "MessageTimeout": "10",
        "SlurmdTimeout": "300",
        **extra,
    }
    text = "".join(f"{key}={value}\n" for key, value in lines.items())
    for name in nodes:
        text += (f"NodeName={name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={node_ports[name]} CPUs=1 "
                 f"RealMemory=100 State=UNKNOWN\n")
    text += f"PartitionName=main Nodes={','.join(nodes)} Default=YES MaxTime=INFINITE State=UP\n"
    conf = root / "slurm.conf"
    conf.write_text(text)
    return conf


@contextlib.contextmanager
def slurm_cluster(nodes: list[str], root: Path, slurm_user: str = "root", **settings: str) -> Iterator[SlurmCluster]:
    """A started cluster of `nodes`, every node IDLE; `settings` are more slurm.conf lines (PrologSlurmctld=...,
    HealthCheckProgram=...); `slurm_user`: slurm.conf's SlurmUser. Stopped (and its daemons reaped) on exit."""
    require_slurm()
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)  # munged refuses a key or socket folder that others may write
    for sub in ("munge", "ctld", "spool"):
        (root / sub).mkdir(exist_ok=True)
        # the socket's folder is reached by every client: the SlurmUser's slurmctld and scontrol too
        (root / sub).chmod(0o700 if sub == "munge" and slurm_user == "root" else 0o755)
    if slurm_user != "root":  # what slurmctld writes once it has dropped root
        user = pwd.getpwnam(slurm_user)
        for path in (root / "ctld", root / "slurmctld.log", root / "slurmctld.pid"):
            if not path.exists():
                path.touch()
            os.chown(path, user.pw_uid, user.pw_gid)
    key = root / "munge" / "munge.key"
    subprocess.run([_which("mungekey"), "--create", "--keyfile", str(key)], check=True, capture_output=True)
    for name in nodes:
        (root / "spool" / name).mkdir(exist_ok=True)
    conf = write_config(root, nodes, free_port(), {n: free_port() for n in nodes}, settings, slurm_user)
    cluster = SlurmCluster(root, nodes, conf)
    try:
        cluster.processes.append(_daemon(cluster, "munged.out", [
            _which("munged"), "--foreground", "--force", f"--socket={root}/munge/munge.socket",
            f"--key-file={key}", f"--pid-file={root}/munge/munged.pid", f"--log-file={root}/munged.log",
            f"--seed-file={root}/munge/munged.seed"]))
        cluster.wait_for("munged's socket", lambda: (root / "munge" / "munge.socket").exists(), timeout=20)
        cluster.processes.append(_daemon(cluster, "slurmctld.out", [_which("slurmctld"), "-D", "-c", "-i",
                                                                    "-f", str(conf)]))
        cluster.wait_for("slurmctld", lambda: cluster.scontrol("ping", check=False).stdout.count("UP") >= 1,
                         timeout=30)
        for name in nodes:
            cluster.processes.append(_daemon(cluster, f"slurmd.{name}.out", [_which("slurmd"), "-D", "-N", name,
                                                                            "-f", str(conf)]))
        cluster.wait_for("every node idle",
                         lambda: all(cluster.node(n).get("State") == "IDLE" for n in nodes), timeout=60)
        yield cluster
    finally:
        cluster.stop()


def _daemon(cluster: SlurmCluster, out: str, argv: list[str | None]) -> subprocess.Popen:
    """One daemon in the foreground, its stdout and stderr in a file beside the logs."""
    with open(cluster.root / out, "wb") as sink:
        proc = subprocess.Popen([str(a) for a in argv], stdout=sink, stderr=subprocess.STDOUT, env=cluster.env,
                                start_new_session=True)
    time.sleep(0.2)
    if proc.poll() is not None:
        raise AssertionError(f"{argv[0]} exited at once ({proc.returncode}): "
                             f"{(cluster.root / out).read_text(errors='replace')[-2000:]}")
    return proc
