"""`diagnose --format commands` typed into a shell: a device's value in a comment or a command never runs.

A host's `mlnx_qos` output with Ctrl-U in it (`pcp\\x15>owned;#`) lands in the `# …` comment of a suggestion. Typed
into a shell (a terminal's line discipline or readline), a raw Ctrl-U erases the `#` typed so far and the rest of
the line runs: here, `>owned` creates a file. The output is typed into `sh` and `bash` on a pseudo-terminal, as plain
keystrokes and as a bracketed paste, in a temporary directory whose PATH holds only stubs that log their arguments:
nothing touches a device, and the test asserts that no file appeared and that exactly the printed commands ran."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from rdmatool.model import Finding, Severity, Suggestion, Verdict
from rdmatool.outcome.result import DiagnoseResult
from rdmatool.report import commands as commands_report
from rdmatool.tune import commands as tune

HOSTILE = "pcp\x15>owned;#\x1b]52;c;dG91Y2ggb3duZWQy\x07\ntouch owned2\r>owned3"
STUBBED = ("mlnx_qos", "ethtool", "cma_roce_tos", "sonic-db-cli", "ecnconfig", "config", "nv")
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def _result() -> DiagnoseResult:
    commands = [*tune.host_trust_dscp("ens1f0np0"), *tune.host_pfc("ens1f0np0", [3])]
    suggestion = Suggestion(setting=f"trust mode ({HOSTILE})", current=HOSTILE, proposed="dscp",
                            rationale=HOSTILE, commands={"host": commands}, target="gpu01")
    finding = Finding(rule="host_trust_not_dscp", severity=Severity.ERROR, target="gpu01", entity="ens1f0np0",
                      symptom=f"trust is {HOSTILE}", cause="c", check="mlnx_qos", fix="f",
                      evidence={"observed": HOSTILE}, suggestions=(suggestion,))
    return DiagnoseResult(verdict=Verdict.FAIL, findings=[finding], failures=[], hosts=["gpu01"])


def _stubs(root: Path) -> Path:
    """A PATH of stubs that only log their arguments, one line a run."""
    bin_dir = root / "bin"
    bin_dir.mkdir()
    for name in STUBBED:
        stub = bin_dir / name
        stub.write_text(f'#!/bin/sh\nprintf "%s\\n" "{name} $*" >> "{root}/ran.log"\n')
        stub.chmod(0o755)
    return bin_dir


def _type_into(shell: list[str], text: str, cwd: Path, bin_dir: Path, bracketed: bool) -> str:
    """Run `shell` interactively on a pseudo-terminal, type `text` (or paste it, between the bracketed-paste marks,
    then press Enter), then `exit`; what the terminal showed."""
    main, secondary = pty.openpty()
    env = {"PATH": str(bin_dir), "HOME": str(cwd.parent), "HISTFILE": "/dev/null", "TERM": "xterm", "PS1": "$ ",
           "INPUTRC": "/dev/null"}
    process = subprocess.Popen(shell, stdin=secondary, stdout=secondary, stderr=secondary, cwd=cwd, env=env,
                               start_new_session=True)
    os.close(secondary)
    shown = bytearray()

    def drain(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([main], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(main, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                shown.extend(chunk)

    drain(1.0)
    if bracketed:
        os.write(main, (PASTE_START + text + PASTE_END + "\r").encode())
    else:
        for line in text.splitlines(keepends=True):  # as typed: a line, then the next
            os.write(main, line.encode())
            drain(0.2)
    drain(1.5)
    os.write(main, b"exit\n")
    try:
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
        drain(0.3)
        os.close(main)
    return shown.decode("utf-8", "replace")


SHELLS = [pytest.param(["sh", "-i"], False, id="sh-typed"), pytest.param(["bash", "--norc", "--noprofile", "-i"],
                                                                          False, id="bash-typed"),
          pytest.param(["bash", "--norc", "--noprofile", "-i"], True, id="bash-bracketed-paste")]


@pytest.mark.parametrize(("shell", "bracketed"), SHELLS)
def test_pasted_commands_run_only_what_they_print(tmp_path: Path, shell: list[str], bracketed: bool) -> None:
    executable = shutil.which(shell[0])
    if executable is None:
        pytest.skip(f"{shell[0]} is not installed")
    output = commands_report.render(_result(), Severity.WARNING)
    comments = [line for line in output.splitlines() if line.startswith("#")]
    assert comments and all(line.isprintable() for line in comments)
    assert "\\x15" in output and "\\e]52;" in output  # said, as characters
    bin_dir = _stubs(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    shown = _type_into([executable, *shell[1:]], output, work, bin_dir, bracketed)
    assert sorted(p.name for p in work.iterdir()) == [], shown
    ran = (tmp_path / "ran.log").read_text().splitlines() if (tmp_path / "ran.log").exists() else []
    intended = [line for line in output.splitlines() if line and not line.startswith("#")]
    assert ran == intended, shown


def test_a_control_character_in_the_output_would_run(tmp_path: Path) -> None:
    """The test's own check: the same text with the raw Ctrl-U does create the file (the pty path is live)."""
    executable = shutil.which("sh")
    if executable is None:
        pytest.skip("sh is not installed")
    bin_dir = _stubs(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    _type_into([executable, "-i"], "# gpu01: trust pcp\x15>owned;#\n", work, bin_dir, bracketed=False)
    assert (work / "owned").exists()


@pytest.mark.parametrize("name", ["eth0;touch owned", "eth0\x15", "$(id)", "-i", "eth0\n", "a b", "\ud800"])
def test_a_device_name_that_is_not_a_name_is_refused(name: str) -> None:
    for render in (tune.host_trust_dscp, lambda n: tune.host_pfc(n, [3]), lambda n: tune.host_cable_len(n, 5),
                   lambda n: tune.host_dcqcn(n, "rp", 3), lambda n: tune.host_roce_tos(n, 106, 1)):
        with pytest.raises(ValueError):
            render(name)
