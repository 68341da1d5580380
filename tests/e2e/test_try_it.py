"""End to end: the fabric a newcomer tries rdmatool on (`python -m tests.fabric up | status | down`,
docs/try-it.md), run as a subprocess exactly as documented; the commands it prints are run as printed."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import REPO
from tests.fabric import scenario, server, try_it
from tests.fabric.fixtures import require_fabric

pytestmark = pytest.mark.e2e


def fabric_cmd(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tests.fabric", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=60, env={**os.environ, **(env or {})})


def printed(out: str, command: str) -> list[str]:
    """The example command line `up` printed for an rdmatool subcommand, as argv."""
    lines = [shlex.split(line) for line in out.splitlines() if line.startswith("  ")]
    return next(argv for argv in lines if len(argv) > 1 and argv[0].endswith("rdmatool") and argv[1] == command)


def run(argv: list[str], cwd: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(REPO)}
    result = subprocess.run([*argv, *extra], capture_output=True, text=True, cwd=cwd, timeout=120, env=env)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def gone(info: dict, directory: Path) -> bool:
    """Its sshd is no longer running (a zombie whose new parent never reaps it counts as gone) and the port is shut."""
    with socket.socket() as s:
        s.settimeout(1)
        refused = s.connect_ex(("127.0.1.1", info["port"])) != 0
    return refused and not try_it.sshd_alive(info, directory) and not directory.exists()


@pytest.fixture
def directory(tmp_path: Path):
    """Where `up` keeps the fabric; a fabric a failed test left up is stopped all the same."""
    require_fabric()
    yield tmp_path / "fabric"
    if (tmp_path / "fabric" / "fabric.json").exists():
        fabric_cmd("down", "--dir", str(tmp_path / "fabric"))


def test_up_collect_gate_capture_down(directory: Path, tmp_path: Path) -> None:
    # under sudo the files rdmatool reads are handed to the invoking user (65534 here: any non-root id)
    started = fabric_cmd("up", "--dir", str(directory), env={"SUDO_UID": "65534", "SUDO_GID": "65534"})
    assert started.returncode == 0, started.stderr
    info = json.loads((directory / "fabric.json").read_text())
    assert f"inventory:   {directory / 'inventory.yaml'}" in started.stdout
    assert f"known_hosts: {directory / 'known_hosts'}" in started.stdout
    assert all(f" {platform}" in started.stdout for platform in scenario.PLATFORMS)  # one switch of every NOS
    assert (directory / "client_key").stat().st_uid == 65534
    assert fabric_cmd("status", "--dir", str(directory)).stdout == started.stdout
    again = fabric_cmd("up", "--dir", str(directory))
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "already up" in again.stderr

    collected = run(printed(started.stdout, "collect"), tmp_path)
    assert collected.returncode == 0, collected.stdout + collected.stderr
    manifest = json.loads((tmp_path / "try-bundle" / "manifest.json").read_text())
    assert {t["platform"] for t in manifest["targets"] if t["kind"] == "switch"} == set(scenario.PLATFORMS)
    # the printed gate on two hosts (the whole fabric takes 15 s: the test budget)
    gated = run(printed(started.stdout, "gate"), tmp_path, "--limit", "gpu[01-02]")
    assert gated.returncode == 0 and "gate: PASS" in gated.stdout, gated.stdout + gated.stderr
    captured = run(printed(started.stdout, "capture"), tmp_path)
    assert captured.returncode == 0, captured.stdout + captured.stderr
    pcap = next((tmp_path / "try-bundle" / "snapshots").glob("*/gpu01/capture.mlx5_1.pcap"))
    assert pcap.stat().st_size > 24  # the sample packets up wrote, past the pcap header

    stopped = fabric_cmd("down", "--dir", str(directory))
    assert stopped.returncode == 0 and "down" in stopped.stdout, stopped.stderr
    assert gone(info, directory)
    assert fabric_cmd("down", "--dir", str(directory)).stdout.startswith("no fabric up")  # idempotent
    assert fabric_cmd("status", "--dir", str(directory)).returncode == 1


def test_faults_fail_the_gate_naming_the_node(directory: Path, tmp_path: Path) -> None:
    started = fabric_cmd("up", "--faults", "--dir", str(directory))
    assert started.returncode == 0, started.stderr
    assert "port_down gpu03" in started.stdout
    info = json.loads((directory / "fabric.json").read_text())
    gated = run(printed(started.stdout, "gate"), tmp_path, "--limit", "gpu[03-04]")
    assert fabric_cmd("down", "--dir", str(directory)).returncode == 0
    assert gated.returncode == 1, gated.stdout + gated.stderr
    assert "drain (1): gpu03" in gated.stdout and "port_phys_not_linkup" in gated.stdout
    assert gone(info, directory)


@pytest.mark.parametrize(("missing", "says"), [
    ("root", "needs root"),
    ("sshd", "apt-get install openssh-server"),
])
def test_a_missing_prerequisite_is_one_line(missing: str, says: str, monkeypatch, capsys, tmp_path: Path) -> None:
    if missing == "root":  # pretend: the test never drops root
        monkeypatch.setattr(os, "geteuid", lambda: 1000)
    else:
        monkeypatch.setattr(server, "SSHD", str(tmp_path / "no-sshd"))
    assert try_it.main(["up", "--dir", str(tmp_path / "fabric")]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "fabric").exists()


def test_bad_scenario_is_one_line_naming_it(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "mine.yaml"
    bad.write_text("hosts: [{name: gpu01}]\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(try_it, "missing_prerequisite", lambda: None)
        assert try_it.main(["up", "--scenario", str(bad), "--dir", str(tmp_path / "fabric")]) == 2
        assert try_it.main(["up", "--scenario", "nosuch", "--dir", str(tmp_path / "fabric")]) == 2
    first, second = capsys.readouterr().err.splitlines()
    assert first.startswith(f"tests.fabric: scenario {bad}:") and "no scenario nosuch (known: " in second
    assert "try-it" in second and not (tmp_path / "fabric").exists()


def test_an_interpreter_without_the_dependencies_is_one_line(monkeypatch, capsys, tmp_path: Path) -> None:
    def no_yaml(*_args) -> None:
        raise ModuleNotFoundError("No module named 'yaml'", name="yaml")

    monkeypatch.setattr(try_it, "missing_prerequisite", lambda: None)
    monkeypatch.setattr(try_it, "load_scenario", no_yaml)
    assert try_it.main(["up", "--dir", str(tmp_path / "fabric")]) == 2
    assert capsys.readouterr().err == ("tests.fabric: needs the project's venv (no module yaml): "
                                       "sudo .venv/bin/python -m tests.fabric up\n")
