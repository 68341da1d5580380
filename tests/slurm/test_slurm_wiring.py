"""The shipped Slurm wiring, installed by its own install.sh, against a real Slurm and the simulated fabric.

A real munged + slurmctld + one slurmd per node on localhost (tests/slurm/cluster.py), with the Slurm nodes named
like the fabric's hosts (gpu01..), and the wiring installed as a site installs it (tests/slurm/site.py): slurmctld
runs as the service user `slurm`, so the prolog and its gate run as that user, with the key and known_hosts
`install.sh` made it and the log folder it gave it. The prolog's gate reaches the allocated nodes over SSH; the
health check runs `rdmatool gate --local` on its node (as root, in that simulated node's view). What the tests
check is what Slurm says afterwards (`scontrol show node` State and Reason, `scontrol show job`), never what the
scripts print.

slurmctld and slurmd run their scripts with an empty environment; each test cluster points them at a hook that
sets SLURM_CONF (this cluster's slurm.conf) and RDMATOOL_SLURM_CONFIG (the installed slurm.env, which the test
rewrites) and execs the installed script.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fabric.fixtures import fabric_fixture
from tests.slurm import site as sites
from tests.slurm.cluster import SlurmCluster, slurm_cluster

pytestmark = [pytest.mark.e2e, pytest.mark.slurm]

NODES = [f"gpu{i:02d}" for i in range(1, 7)]
# state and a one-second counter window: the faults injected here are port faults (the perftest stage and its
# attribution have their own end-to-end tests in tests/e2e/test_gate.py)
GATE_PROFILE = "counters_window_s: 1\nbandwidth: {enabled: false}\n"
HEALTH_PROFILE = "counters_window_s: 1\nbandwidth: {enabled: false}\n"
HAS_RDMA = Path("/sys/class/infiniband").is_dir() and any(Path("/sys/class/infiniband").iterdir())

fabric = fabric_fixture("healthy", scope="module")


@dataclass
class Wiring:
    cluster: SlurmCluster
    site: sites.Site
    fabric: object

    @property
    def logdir(self) -> Path:
        return self.site.log_dir

    def configure(self, **overrides: str) -> None:
        """The installed settings, with the test's profiles and budgets after them."""
        self.site.configure(GATE_PROFILE=str(self.site.root / "gate-profile.yaml"), GATE_BUDGET="90",
                            HEALTHCHECK_PROFILE=str(self.site.root / "health-profile.yaml"), HEALTHCHECK_BUDGET="40",
                            **overrides)

    def log_lines(self) -> list[str]:
        log = self.logdir / "slurm.log"
        return log.read_text().splitlines() if log.exists() else []

    def healthcheck(self, *nodes: str) -> None:
        """The HealthCheckProgram as slurmd runs it on each of `nodes` at once: no environment but
        SLURMD_NODENAME."""
        runs = [subprocess.Popen(["env", "-i", f"SLURMD_NODENAME={node}", str(self.site.hooks["healthcheck"])],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for node in nodes]
        for run in runs:
            _, stderr = run.communicate(timeout=120)
            assert run.returncode == 0, stderr
            assert "Traceback" not in stderr, stderr


@pytest.fixture(scope="module")
def installed(fabric):
    site = sites.install(fabric, NODES + ["gpu07"])
    (site.root / "gate-profile.yaml").write_text(GATE_PROFILE)
    (site.root / "health-profile.yaml").write_text(HEALTH_PROFILE)
    try:
        yield site
    finally:
        sites.uninstall(site)


@pytest.fixture(scope="module")
def started(fabric, installed):
    installed.write_hooks(installed.root / "cluster" / "slurm.conf")
    with slurm_cluster(NODES, installed.root / "cluster", slurm_user=sites.SERVICE_USER,
                       PrologSlurmctld=str(installed.hooks["prolog"]), PrologEpilogTimeout="180") as cluster:
        yield Wiring(cluster, installed, fabric)


@pytest.fixture
def wiring(started):
    """A clean cluster for each test: no jobs, every node up, no faults, the default settings, an empty log."""
    started.fabric.clear_faults()
    started.cluster.cancel_all()
    started.cluster.resume_all()
    started.configure()
    (started.logdir / "slurm.log").write_text("")  # kept, not removed: install.sh made it the service user's
    yield started
    started.fabric.clear_faults()
    for node in NODES:
        started.site.off_fabric(node, False)


def test_install_sh_gives_the_service_user_what_the_prolog_needs_and_nothing_else(installed) -> None:
    site = installed
    owner = sites.owner_and_mode
    assert owner(site.hook_dir / "prolog-slurmctld.py") == ("root", "0o755")
    assert owner(site.hook_dir / "rdmatool_slurm.py") == ("root", "0o644")
    assert owner(site.conf_dir / "slurm.env") == ("root", "0o644")
    assert owner(site.log_dir) == (sites.SERVICE_USER, "0o750")
    assert owner(site.log_dir / "slurm.log") == (sites.SERVICE_USER, "0o640")
    assert owner(site.state_dir) == (sites.SERVICE_USER, "0o700")
    assert owner(site.state_dir / "id_ed25519") == (sites.SERVICE_USER, "0o600")
    known = site.state_dir / "known_hosts"
    assert owner(known)[0] == sites.SERVICE_USER and len(known.read_text().splitlines()) == len(NODES) + 1
    settings = dict(line.split("=", 1) for line in site.installed.splitlines() if "=" in line and line[0] != "#")
    assert (settings["RDMATOOL"], settings["LOGDIR"], settings["KNOWN_HOSTS"], settings["INVENTORY"]) == (
        str(site.rdmatool), str(site.log_dir), str(known), str(site.conf_dir / "inventory.yaml"))
    # the set-up as the README wrote it before: the service user recording host keys into root's folder. One line
    # naming the file, exit 2, before any host is dialled; never a host "unreachable (Permission denied)".
    done = site.as_service_user(str(site.rdmatool), "collect", "-i", str(site.conf_dir / "inventory.yaml"), "-o",
                                str(site.state_dir / "again"), "--interval", "0", "--accept-new-host-keys",
                                "--known-hosts", str(site.conf_dir / "known_hosts"))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (f"rdmatool: {site.conf_dir / 'known_hosts'}: cannot record new host keys there "
                                   "(Permission denied); give --known-hosts a file this user may write")
    # a second install.sh keeps what a site edited, and the log
    site.settings.write_text(site.installed + "ON_INCONCLUSIVE=hold\n")
    assert site.install().returncode == 0
    assert site.settings.read_text().endswith("ON_INCONCLUSIVE=hold\n")
    assert owner(site.log_dir / "slurm.log") == (sites.SERVICE_USER, "0o640")


def _assert_reason_is_a_finding(reason: str, report: dict, node: str) -> None:
    """A drain reason reads `rdmatool: <rule>: <symptom>` for one of the node's own error findings in the gate's
    JSON (`node`: the name the gate knew it by: a local gate's is the machine's host name)."""
    assert reason.startswith("rdmatool: "), reason
    rule = reason.split(": ")[1]
    mine = [f for f in report["findings"] if f["target"] == node and f["severity"] in ("error", "critical")]
    assert rule in {f["rule"] for f in mine}, (reason, mine)
    symptom = next(f["symptom"] for f in mine if f["rule"] == rule)
    assert reason.startswith(f"rdmatool: {rule}: {symptom}"), reason


def _state(wiring: Wiring, node: str) -> str:
    return wiring.cluster.node(node)["State"]


def _finished(wiring: Wiring, job: str):  # noqa: ANN202 - a predicate for wait_for
    def done() -> dict | None:
        record = wiring.cluster.job(job)
        return record if record.get("JobState") in ("COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL") else None
    return done


def _held(wiring: Wiring, job: str):  # noqa: ANN202
    # held and explained: the prolog holds the job, then writes its AdminComment (two scontrol calls), so a poll
    # between the two sees a held job with no comment yet
    def held() -> dict | None:
        record = wiring.cluster.job(job)
        held = record.get("JobState") == "PENDING" and record.get("Priority") == "0"
        return record if held and record.get("AdminComment") else None
    return held


def test_prolog_drains_the_bad_node_requeues_the_job_and_it_runs_elsewhere(wiring: Wiring) -> None:
    wiring.fabric.set_fault("port_down", "gpu03", nic="mlx5_0")
    # five of six nodes: the first allocation is gpu01-05 (select/linear takes the lowest), the one after the drain
    # can only be the five healthy ones
    job = wiring.cluster.sbatch("--nodes=5", "--wrap", "true")
    wiring.cluster.wait_for("gpu03 drained", lambda: "DRAIN" in _state(wiring, "gpu03"), timeout=90)
    reason = wiring.cluster.node("gpu03")["Reason"]
    first_run = json.loads((wiring.logdir / f"gate.{job}.0.json").read_text())
    assert first_run["drain"] == ["gpu03"]
    assert sites.owner_and_mode(wiring.logdir / f"gate.{job}.0.json")[0] == sites.SERVICE_USER  # the prolog's gate
    _assert_reason_is_a_finding(reason, first_run, "gpu03")
    record = wiring.cluster.wait_for("the job to finish after its requeue", _finished(wiring, job), timeout=120)
    assert record["JobState"] == "COMPLETED", record
    assert int(record["Restarts"]) == 1
    ran_on = wiring.cluster.scontrol("show", "hostnames", record["NodeList"]).stdout.split()
    assert ran_on == ["gpu01", "gpu02", "gpu04", "gpu05", "gpu06"]
    assert record["AdminComment"].startswith("rdmatool: requeued, drained gpu03")
    # nobody else was drained, by the prolog or by Slurm for the prolog's sake
    assert [n for n in NODES if "DRAIN" in _state(wiring, n)] == ["gpu03"]
    assert "DRAIN" in _state(wiring, "gpu03")
    second_run = json.loads((wiring.logdir / f"gate.{job}.1.json").read_text())
    assert second_run["verdict"] == "pass"


def test_a_job_that_cannot_be_requeued_is_cancelled_never_started_on_the_bad_node(wiring: Wiring) -> None:
    wiring.fabric.set_fault("port_down", "gpu02", nic="mlx5_0")
    ran = wiring.site.root / "ran"
    job = wiring.cluster.sbatch("--no-requeue", "--nodes=2", "--wrap", f"touch {ran}")
    record = wiring.cluster.wait_for("the job to end", _finished(wiring, job), timeout=90)
    assert record["JobState"] == "CANCELLED", record
    assert not ran.exists()
    assert "DRAIN" in _state(wiring, "gpu02") and "DRAIN" not in _state(wiring, "gpu01")
    assert any(f"prolog job {job}: could not requeue" in line for line in wiring.log_lines())


def test_prolog_fails_closed_when_rdmatool_is_missing(wiring: Wiring) -> None:
    wiring.configure(RDMATOOL=str(wiring.site.root / "not-installed" / "rdmatool"))
    job = wiring.cluster.sbatch("--nodes=2", "--wrap", "true")
    record = wiring.cluster.wait_for("the job held", _held(wiring, job), timeout=60)
    assert record["AdminComment"].startswith("rdmatool: gate could not run: rdmatool not found"), record
    assert not [n for n in NODES if "DRAIN" in _state(wiring, n)]
    assert any("holding the job (FAIL_CLOSED=yes)" in line for line in wiring.log_lines())
    # FAIL_CLOSED=no: the same missing rdmatool lets the job run, and says so
    wiring.configure(RDMATOOL=str(wiring.site.root / "not-installed" / "rdmatool"), FAIL_CLOSED="no")
    wiring.cluster.scontrol("release", job)
    record = wiring.cluster.wait_for("the released job to finish", _finished(wiring, job), timeout=90)
    assert record["JobState"] == "COMPLETED", record
    assert any("the job runs ungated (FAIL_CLOSED=no)" in line for line in wiring.log_lines())


def test_prolog_holds_the_job_when_rdmatool_crashes(wiring: Wiring) -> None:
    """rdmatool's own crash is exit 4, never 3: with FAIL_CLOSED=yes the job is held, not run as inconclusive."""
    crashing = sites.script(wiring.site.root / "opt" / "crashing" / "rdmatool", (
        f"#!/bin/sh\nPYTHONPATH={sites.pythonpath()} exec {sites.service_user_python()} -c '"
        "import sys, rdmatool.cli as cli\n"
        "def build(argv=None): raise RuntimeError(\"simulated bug\")\n"
        "cli.build = build; sys.argv = [\"rdmatool\", *sys.argv[1:]]; cli.main()' \"$@\"\n"))
    wiring.configure(RDMATOOL=str(crashing))
    job = wiring.cluster.sbatch("--nodes=2", "--wrap", "true")
    record = wiring.cluster.wait_for("the job held", _held(wiring, job), timeout=60)
    assert record["AdminComment"].startswith("rdmatool: gate could not run: rdmatool gate: internal error: rdmatool: "
                                             "internal error: RuntimeError: simulated bug"), record
    assert not [n for n in NODES if "DRAIN" in _state(wiring, n)]
    assert any("holding the job (FAIL_CLOSED=yes)" in line for line in wiring.log_lines())


def test_prolog_inconclusive_gate_drains_nothing(wiring: Wiring) -> None:
    wiring.fabric.set_fault("unreachable", "gpu02")
    job = wiring.cluster.sbatch("--nodes=2", "--wrap", "true")
    record = wiring.cluster.wait_for("the job to finish", _finished(wiring, job), timeout=90)
    assert record["JobState"] == "COMPLETED" and int(record["Restarts"]) == 0, record
    assert not [n for n in NODES if "DRAIN" in _state(wiring, n)]
    (line,) = [line for line in wiring.log_lines() if f"prolog job {job}:" in line]
    assert "gate inconclusive" in line and "gpu02" in line and "the job runs" in line
    # ON_INCONCLUSIVE=hold: the job waits for an operator instead, still with nobody drained
    wiring.configure(ON_INCONCLUSIVE="hold")
    job = wiring.cluster.sbatch("--nodes=2", "--wrap", "true")
    record = wiring.cluster.wait_for("the job held", _held(wiring, job), timeout=90)
    assert record["AdminComment"].startswith("rdmatool: gate inconclusive: unreachable or no data: gpu02")
    assert not [n for n in NODES if "DRAIN" in _state(wiring, n)]


def test_healthcheck_drains_with_the_finding_and_resumes_its_own_drain(wiring: Wiring) -> None:
    wiring.fabric.set_fault("port_down", "gpu05", nic="mlx5_0")
    wiring.healthcheck("gpu05", "gpu04")
    node = wiring.cluster.node("gpu05")
    assert "DRAIN" in node["State"]
    local = json.loads((wiring.logdir / "health.gpu05.json").read_text())  # the gate --local on the node
    assert len(local["drain"]) == 1 and local["stages"][0]["detail"] == "1/1 targets read"
    _assert_reason_is_a_finding(node["Reason"], local, local["drain"][0])
    assert _state(wiring, "gpu04") == "IDLE"  # the healthy neighbour is left as it is
    wiring.fabric.clear_faults()
    wiring.healthcheck("gpu05")
    assert "DRAIN" not in _state(wiring, "gpu05")  # (IDLE+NOT_RESPONDING until slurmctld's next ping)
    assert any("healthcheck gpu05: passed; resumed" in line for line in wiring.log_lines())


def test_healthcheck_never_resumes_or_relabels_a_node_someone_else_drained(wiring: Wiring) -> None:
    theirs = "hardware: DIMM replacement ticket 4711"
    wiring.cluster.scontrol("update", "nodename=gpu01,gpu06", "state=drain", f"reason={theirs}")
    wiring.fabric.set_fault("port_down", "gpu01", nic="mlx5_0")
    wiring.healthcheck("gpu06", "gpu01")  # gpu06 passes: still not ours to resume; gpu01 fails: their reason stays
    for name in ("gpu06", "gpu01"):
        node = wiring.cluster.node(name)
        assert "DRAIN" in node["State"] and node["Reason"].startswith(theirs), node
    lines = wiring.log_lines()
    assert any("healthcheck gpu06: passed; left drained by someone else" in line for line in lines), lines
    assert any("healthcheck gpu01: failed (rdmatool: " in line and "left as drained by someone else" in line
               for line in lines), lines


@pytest.mark.skipif(HAS_RDMA, reason="this machine has RDMA devices: a node without any cannot be played by it")
def test_healthcheck_inconclusive_changes_nothing(wiring: Wiring) -> None:
    wiring.site.off_fabric("gpu04")  # a node whose RDMA device is gone (no driver): no data, never a pass
    wiring.site.off_fabric("gpu02")
    wiring.cluster.scontrol("update", "nodename=gpu02", "state=drain", "reason=rdmatool: port_not_active: earlier")
    wiring.healthcheck("gpu04", "gpu02")
    assert _state(wiring, "gpu04") == "IDLE"  # not drained for a monitoring gap
    assert "DRAIN" in _state(wiring, "gpu02")  # and not resumed without a pass
    assert wiring.cluster.node("gpu02")["Reason"].startswith("rdmatool: port_not_active: earlier")
    logged = [line for line in wiring.log_lines() if "inconclusive" in line and "nothing changed" in line]
    assert sorted(line.split(" healthcheck ")[1].split(":")[0] for line in logged) == ["gpu02", "gpu04"]


def test_slurmd_runs_the_healthcheck_and_it_drains_and_resumes(fabric, installed) -> None:
    """The same program started by slurmd itself at HealthCheckInterval, with what slurmd gives it."""
    fabric.clear_faults()
    hooks = installed.write_hooks(installed.root / "cluster-gpu07" / "slurm.conf", folder="hooks-gpu07")
    Wiring(None, installed, fabric).configure()  # type: ignore[arg-type] - only the settings
    with slurm_cluster(["gpu07"], installed.root / "cluster-gpu07", HealthCheckProgram=str(hooks["healthcheck"]),
                       HealthCheckInterval="2", HealthCheckNodeState="ANY") as cluster:
        try:
            fabric.set_fault("port_down", "gpu07", nic="mlx5_0")
            cluster.wait_for("slurmd's health check to drain gpu07",
                             lambda: cluster.node("gpu07").get("Reason", "").startswith("rdmatool: "), timeout=60)
            assert "DRAIN" in cluster.node("gpu07")["State"]
            fabric.clear_faults()
            cluster.wait_for("slurmd's health check to resume gpu07",
                             lambda: "DRAIN" not in cluster.node("gpu07")["State"], timeout=60)
        finally:
            fabric.clear_faults()
    assert os.path.exists(installed.log_dir / "health.gpu07.json")
