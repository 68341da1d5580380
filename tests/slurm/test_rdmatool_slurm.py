"""The Slurm wiring's own decisions, without a Slurm: its settings file, what counts as a gate verdict, the drain
reasons, the health check's rules. The gate is played by small programs that exit as a real one might (a verdict,
a traceback, a hang); the real gate against a real Slurm is tests/slurm/test_slurm_wiring.py."""

from __future__ import annotations

import fcntl
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rdmatool.gate import profile as gate_profile

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "slurm"


def _load(name: str, file: str):  # noqa: ANN202 - a module
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


rs = _load("rdmatool_slurm", "rdmatool_slurm.py")
healthcheck = _load("rdmatool_healthcheck", "healthcheck.py")


def _settings(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "slurm.env"
    path.write_text(text)
    return path


# --- settings -----------------------------------------------------------------------------------------------------

def test_settings_absent_file_means_the_defaults(tmp_path: Path) -> None:
    settings = rs.load_settings(str(tmp_path / "none.env"))
    assert settings.values == rs.DEFAULTS
    assert "absent" in settings.source


def test_settings_are_read_as_data_with_comments_and_quotes(tmp_path: Path) -> None:
    path = _settings(tmp_path, "# site settings\n\nINVENTORY = '/etc/rdmatool/my inventory.yaml'\n"
                               "GATE_ARGS=--forks 128 --known-hosts \"/etc/rdmatool/known hosts\"\n"
                               "FAIL_CLOSED=no\nRDMATOOL=$(reboot)\n")
    settings = rs.load_settings(str(path))
    assert settings["INVENTORY"] == "/etc/rdmatool/my inventory.yaml"
    assert settings["FAIL_CLOSED"] == "no"
    assert settings["RDMATOOL"] == "$(reboot)"  # a value, never run
    assert settings.rdmatool() is None


@pytest.mark.parametrize(("text", "message"), [
    ("INVENTRY=/x\n", "slurm.env:1: expected KEY=VALUE with KEY one of RDMATOOL"),
    ("# ok\nno equals sign\n", "slurm.env:2: expected KEY=VALUE"),
    ("FAIL_CLOSED=maybe\n", "slurm.env:1: FAIL_CLOSED must be one of yes, no, not 'maybe'"),
    ("ON_INCONCLUSIVE=requeue\n", "slurm.env:1: ON_INCONCLUSIVE must be one of run, hold"),
    ("GATE_BUDGET=two minutes\n", "slurm.env: GATE_BUDGET must be a number of seconds"),
    ("GATE_ARGS=--limit 'gpu01\n", "slurm.env: GATE_ARGS: No closing quotation"),
])
def test_a_bad_settings_file_is_one_line_naming_it(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(rs.SettingsError) as caught:
        rs.load_settings(str(_settings(tmp_path, text)))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_settings_from_the_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rs.CONFIG_ENV, str(_settings(tmp_path, "GATE_BUDGET=33\n")))
    assert rs.load_settings()["GATE_BUDGET"] == "33"


def test_the_shipped_settings_and_profiles_load(tmp_path: Path) -> None:
    shipped = rs.load_settings(str(EXAMPLES / "slurm.env"))
    assert set(shipped.values) == set(rs.DEFAULTS)
    for name in ("gate-profile.yaml", "healthcheck-profile.yaml"):
        gate_profile.load(str(EXAMPLES / name))
    assert not gate_profile.load(str(EXAMPLES / "healthcheck-profile.yaml")).bandwidth.enabled


# --- what counts as a verdict -------------------------------------------------------------------------------------

def _fake_gate(tmp_path: Path, body: str) -> rs.Settings:
    """A program standing in for rdmatool: `body` is shell; "$DRAIN" is the --drain-file it was given."""
    program = tmp_path / "rdmatool"
    program.write_text("#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$(dirname \"$0\")/argv\"\n"
                       "while [ $# -gt 0 ]; do [ \"$1\" = --drain-file ] && DRAIN=$2; shift; done\n" + body)
    program.chmod(0o755)
    return rs.load_settings(str(_settings(tmp_path, f"RDMATOOL={program}\nINVENTORY={tmp_path}/inv; rm -rf x\n")))


def _run(settings: rs.Settings, tmp_path: Path, budget: float = 30, grace: float = 30) -> rs.GateOutcome:
    return rs.run_gate(settings, ["gpu01", "gpu02"], profile="p.yaml", budget=budget, grace=grace,
                       stem=tmp_path / "log" / "gate.7.0")


def test_a_failing_verdict_gives_the_drain_list(tmp_path: Path) -> None:
    payload = {"verdict": "fail", "drain": ["gpu02"], "findings": []}
    settings = _fake_gate(tmp_path, f"echo gpu02 > \"$DRAIN\"; echo '{json.dumps(payload)}'; exit 1\n")
    outcome = _run(settings, tmp_path)
    assert (outcome.code, outcome.drain, outcome.error) == (1, ["gpu02"], "")
    argv = (tmp_path / "argv").read_text().splitlines()
    assert argv[:6] == ["gate", "-i", f"{tmp_path}/inv; rm -rf x", "--limit", "gpu01,gpu02", "--profile"]
    assert json.loads((tmp_path / "log" / "gate.7.0.json").read_text()) == payload


def test_exit_1_without_a_verdict_is_an_error_never_a_drain(tmp_path: Path) -> None:
    settings = _fake_gate(tmp_path, "echo gpu01 > \"$DRAIN\"; echo 'Traceback (most recent call last):' >&2;"
                                    " echo 'ImportError: cannot import name X' >&2; exit 1\n")
    outcome = _run(settings, tmp_path)
    assert outcome.code is None and outcome.drain == []
    assert outcome.error == "rdmatool gate: exit 1 without a verdict: ImportError: cannot import name X"


def test_a_drain_list_left_by_an_earlier_run_is_never_read(tmp_path: Path) -> None:
    (tmp_path / "log").mkdir()
    (tmp_path / "log" / "gate.7.0.drain").write_text("gpu01\n")
    settings = _fake_gate(tmp_path, "echo '{\"verdict\": \"fail\", \"drain\": []}'; exit 1\n")
    assert _run(settings, tmp_path).drain == []


def test_usage_error_missing_program_and_hang_are_errors(tmp_path: Path) -> None:
    usage = _run(_fake_gate(tmp_path, "echo 'rdmatool: inv.yaml:3: unknown key' >&2; exit 2\n"), tmp_path)
    assert (usage.code, usage.error) == (None, "rdmatool gate: usage or bad input: rdmatool: inv.yaml:3: unknown key")
    missing = rs.load_settings(str(_settings(tmp_path, f"RDMATOOL={tmp_path}/nowhere/rdmatool\n")))
    assert _run(missing, tmp_path).error.startswith(f"rdmatool not found ({tmp_path}/nowhere/rdmatool")
    hung = _run(_fake_gate(tmp_path, "sleep 30\n"), tmp_path, budget=0.5, grace=0.5)
    assert (hung.code, hung.error) == (None, "rdmatool gate did not finish within 1 s")


def test_inconclusive_is_a_verdict_with_nothing_to_drain(tmp_path: Path) -> None:
    settings = _fake_gate(tmp_path, ": > \"$DRAIN\"; echo '{\"verdict\": \"inconclusive\"}'; exit 3\n")
    outcome = _run(settings, tmp_path)
    assert (outcome.code, outcome.drain) == (3, [])


def test_an_internal_error_is_never_read_as_inconclusive(tmp_path: Path) -> None:
    """Exit 4 (rdmatool crashed) and an exit 3 whose stage broke both fail closed: the hooks hold or drain on them."""
    crashed = _run(_fake_gate(tmp_path, "echo 'rdmatool: internal error: KeyError: x (at a.py:3)' >&2; exit 4\n"),
                   tmp_path)
    assert (crashed.code, crashed.error) == (None, "rdmatool gate: internal error: rdmatool: internal error: "
                                                   "KeyError: x (at a.py:3)")
    payload = {"verdict": "inconclusive", "stages": [
        {"name": "state", "status": "error", "detail": "stage crashed: ValueError: bad"},
        {"name": "counters", "status": "skipped", "detail": "the state stage did not finish"}]}
    broke = _run(_fake_gate(tmp_path, f"echo '{json.dumps(payload)}'; exit 3\n"), tmp_path)
    assert (broke.code, broke.error) == (None, "rdmatool gate: internal error: state: stage crashed: ValueError: bad")


def test_the_health_checks_gate_is_local_and_its_findings_are_the_nodes(tmp_path: Path) -> None:
    """`gate --local` names this machine by its host name; the health check reads it as its Slurm node's. No
    inventory, no known_hosts, no SSH options: the health check's own HEALTHCHECK_ARGS only."""
    finding = {"rule": "port_not_active", "severity": "error", "target": "host-a", "symptom": "port Down"}
    payload = {"verdict": "fail", "drain": ["host-a"], "findings": [finding],
               "drain_reasons": [{"node": "host-a", "rule": "port_not_active", "symptom": "port Down"}]}
    settings = _fake_gate(tmp_path, f"echo host-a > \"$DRAIN\"; echo '{json.dumps(payload)}'; exit 1\n")
    settings.values.update(KNOWN_HOSTS="/etc/kh", GATE_ARGS="--forks 128", HEALTHCHECK_ARGS="--allow-missing 0")
    outcome = rs.run_gate(settings, ["gpu07"], profile="p.yaml", budget=30, stem=tmp_path / "health.gpu07", local=True)
    assert (tmp_path / "argv").read_text().split() == [
        "gate", "--local", "--profile", "p.yaml", "--budget", "30", "--json", "--drain-file",
        str(tmp_path / "health.gpu07.drain"), "--allow-missing", "0"]
    assert (outcome.code, outcome.drain) == (1, ["gpu07"])
    assert rs.drain_reason(outcome, "gpu07") == "rdmatool: port_not_active: port Down"
    assert [f["target"] for f in outcome.findings_of("gpu07")] == ["gpu07"]
    # what the gate printed is kept as it said it
    assert json.loads((tmp_path / "health.gpu07.json").read_text())["drain"] == ["host-a"]
    # and rdmatool failing on the node is still an error, which the health check drains for when FAIL_CLOSED=yes
    crashed = rs.run_gate(_fake_gate(tmp_path, "echo 'rdmatool: internal error: X' >&2; exit 4\n"), ["gpu07"],
                          profile="p.yaml", budget=30, stem=tmp_path / "health.gpu07", local=True)
    assert crashed.code is None and crashed.error.startswith("rdmatool gate: internal error")


@pytest.mark.parametrize("name", ["gpu01", "r1n02.cluster", "node_7-b", "123456"])
def test_plain_names_pass(name: str) -> None:
    assert rs.checked_name("SLURMD_NODENAME", name) == name


@pytest.mark.parametrize("name", ["../etc", "a/b", ".hidden", "-rf", "", "gpu01 gpu02", "gpu\n01", "x" * 129,
                                  "gpu$(id)", "gpu01;reboot"])
def test_anything_else_is_refused_naming_the_variable(name: str) -> None:
    with pytest.raises(rs.BadName, match=r"^SLURM_JOB_ID is not a plain name .*: '"):
        rs.checked_name("SLURM_JOB_ID", name)


def test_hostlists_are_checked_before_scontrol_reads_them() -> None:
    assert rs.checked_hostlist("SLURM_JOB_NODELIST", "gpu[01-04,07],login1") == "gpu[01-04,07],login1"
    for bad in ("--help", "gpu01 gpu02", "gpu$(id)", "", "gpu/../x"):
        with pytest.raises(rs.BadName, match="^SLURM_JOB_NODELIST is not a Slurm hostlist"):
            rs.checked_hostlist("SLURM_JOB_NODELIST", bad)


def test_a_health_check_named_outside_its_folder_writes_nothing(tmp_path: Path) -> None:
    """SLURMD_NODENAME=../x would put the lock and the gate's log outside LOGDIR: refused before any path is made."""
    settings = _fake_gate(tmp_path, "exit 0\n")
    env_file = tmp_path / "slurm.env"
    env_file.write_text(env_file.read_text() + f"LOGDIR={tmp_path / 'log' / 'inner'}\n")
    result = subprocess.run([str(EXAMPLES / "healthcheck.py")], capture_output=True, text=True, timeout=60,
                            env={"SLURMD_NODENAME": "../escaped", rs.CONFIG_ENV: str(env_file)})
    assert result.returncode == 1
    assert result.stderr == ("rdmatool healthcheck: SLURMD_NODENAME is not a plain name (letters, digits, ._- ; at "
                             "most 128): '../escaped'\n")
    assert not (tmp_path / "log").exists() and not (tmp_path / "argv").exists()
    assert settings.rdmatool()


def test_a_prolog_with_a_bad_job_id_fails_before_any_path_or_command(tmp_path: Path) -> None:
    settings = _fake_gate(tmp_path, "exit 0\n")
    env_file = tmp_path / "slurm.env"
    env_file.write_text(env_file.read_text() + f"LOGDIR={tmp_path / 'log'}\nSCONTROL={tmp_path / 'rdmatool'}\n")
    result = subprocess.run([str(EXAMPLES / "prolog-slurmctld.py")], capture_output=True, text=True, timeout=60,
                            env={"SLURM_JOB_ID": "7/../../x", "SLURM_JOB_NODELIST": "gpu01",
                                 rs.CONFIG_ENV: str(env_file)})
    assert result.returncode == 1  # a failing PrologSlurmctld: Slurm requeues or cancels, never starts, the job
    assert "SLURM_JOB_ID is not a plain name" in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "log").exists() and not (tmp_path / "argv").exists()
    assert settings.rdmatool()


# --- drain reasons and scontrol's records -------------------------------------------------------------------------

FINDING = {"rule": "port_not_active", "severity": "error", "target": "gpu03", "entity": "mlx5_0/1",
           "symptom": "RDMA port mlx5_0/1 on gpu03 is not Active (state Down)"}


def test_the_reason_is_the_gates_own_condemnation_first() -> None:
    outcome = rs.GateOutcome(1, {"findings": [FINDING, {**FINDING, "rule": "port_phys_not_linkup"}],
                                 "drain_reasons": [{"node": "gpu03", "stage": "state", "rule": "port_phys_not_linkup",
                                                    "symptom": "Physical link of mlx5_0/1 on gpu03 is Polling"}]})
    assert rs.drain_reason(outcome, "gpu03") == \
        "rdmatool: port_phys_not_linkup: Physical link of mlx5_0/1 on gpu03 is Polling"


def test_the_reason_falls_back_to_the_nodes_findings_one_short_line() -> None:
    long = {**FINDING, "symptom": "x\ny " * 200}
    outcome = rs.GateOutcome(1, {"findings": [FINDING, long, {**FINDING, "target": "gpu04"}]})
    assert rs.drain_reason(outcome, "gpu03") == \
        "rdmatool: port_not_active: RDMA port mlx5_0/1 on gpu03 is not Active (state Down) (+1 more)"
    only_long = rs.drain_reason(rs.GateOutcome(1, {"findings": [long]}), "gpu03")
    assert len(only_long) == rs.MAX_REASON and "\n" not in only_long and only_long.endswith("...")
    assert rs.drain_reason(rs.GateOutcome(1, {}), "gpu09") == "rdmatool: gate: failed"


def test_scontrol_oneliner_keeps_a_reason_with_spaces_and_equals() -> None:
    line = ("NodeName=gpu03 Arch=x86_64 State=IDLE+DRAIN ThreadsPerCore=1 OS=Linux 6.1.0 #1 SMP "
            "Reason=rdmatool: mtu_low: MTU=1024 on gpu03 [root@2026-01-01T02:00:00]\n")
    fields = rs._oneliner(line)
    assert fields["State"] == "IDLE+DRAIN"
    assert fields["Reason"] == "rdmatool: mtu_low: MTU=1024 on gpu03 [root@2026-01-01T02:00:00]"
    node = rs.Node("gpu03", fields["State"], fields["Reason"])
    assert node.drained and node.drained_by_rdmatool
    assert not rs.Node("gpu03", "IDLE", "").drained
    assert not rs.Node("gpu03", "DOWN+DRAIN", "maintenance [root@x]").drained_by_rdmatool


# --- the health check's rules -------------------------------------------------------------------------------------

class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def resume(self, node: str) -> None:
        self.calls.append(("resume", node))

    def drain(self, nodes: list[str], reason: str) -> None:
        self.calls.append(("drain", *nodes, reason))


OURS = "rdmatool: port_not_active: RDMA port mlx5_0/1 on gpu03 is not Active (state Down)"
FAILED = rs.GateOutcome(1, {"findings": [FINDING]})


@pytest.mark.parametrize(("state", "reason", "outcome", "fail_closed", "expected"), [
    ("IDLE+DRAIN", OURS + " [root@t]", rs.GateOutcome(0), True, [("resume", "gpu03")]),
    ("IDLE+DRAIN", "cable swap [ops@t]", rs.GateOutcome(0), True, []),
    ("IDLE", "", rs.GateOutcome(0), True, []),
    ("IDLE", "", FAILED, True, [("drain", "gpu03", OURS)]),
    ("MIXED", "", FAILED, False, [("drain", "gpu03", OURS)]),
    ("IDLE+DRAIN", "cable swap [ops@t]", FAILED, True, []),
    ("IDLE+DRAIN", OURS + " [root@t]", FAILED, True, []),
    ("IDLE+DRAIN", "rdmatool: mtu_low: older [root@t]", FAILED, True, [("drain", "gpu03", OURS)]),
    ("IDLE+DRAIN", OURS + " [root@t]", rs.GateOutcome(3), True, []),
    ("IDLE", "", rs.GateOutcome(3), True, []),
    ("IDLE", "", rs.GateOutcome(None, error="rdmatool not found"), True,
     [("drain", "gpu03", "rdmatool: cannot run: rdmatool not found")]),
    ("IDLE+DRAIN", "cable swap [ops@t]", rs.GateOutcome(None, error="rdmatool not found"), True, []),
    ("IDLE", "", rs.GateOutcome(None, error="rdmatool not found"), False, []),
])
def test_healthcheck_rules(state, reason, outcome, fail_closed, expected) -> None:  # noqa: ANN001
    scontrol, lines = Recorder(), []
    healthcheck.act(scontrol, rs.Node("gpu03", state, reason), outcome, fail_closed,
                    lambda message, error=False: lines.append(message))
    assert scontrol.calls == expected
    assert len(lines) == (0 if (state, outcome.code) in (("IDLE", 0), ("MIXED", 0)) else 1)


def test_a_health_check_that_finds_the_last_one_running_skips(tmp_path: Path) -> None:
    """slurmd starts a check every HealthCheckInterval whether or not the last has finished: they must not pile up."""
    settings = _fake_gate(tmp_path, "exit 0\n")
    (tmp_path / "log").mkdir()
    env_file = tmp_path / "slurm.env"
    env_file.write_text(env_file.read_text() + f"LOGDIR={tmp_path / 'log'}\n")
    with (tmp_path / "log" / "health.gpu03.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        result = subprocess.run([str(EXAMPLES / "healthcheck.py")], capture_output=True, text=True, timeout=60,
                                env={"SLURMD_NODENAME": "gpu03", rs.CONFIG_ENV: str(env_file)})
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert not (tmp_path / "argv").exists()  # the gate was not started
    (line,) = (tmp_path / "log" / "slurm.log").read_text().splitlines()
    assert line.endswith("healthcheck gpu03: the previous check is still running; skipped")
    assert settings.rdmatool()
