"""Ctrl-C ends any command with 130 (128 + SIGINT, as a shell reports it) and says so: never 1, which reads as a
verdict."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from tests.helpers import REPO


def _wait_reading_stdin(pid: int, timeout_s: float = 60.0) -> None:
    """Until the process sits in read(0, ...) (syscall 0 on fd 0x0, as /proc shows it): past its imports."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/syscall") as f:
            if f.read().startswith("0 0x0 "):
                return
        time.sleep(0.05)
    raise AssertionError("the command never read its stdin")


def test_an_interrupted_command_exits_130_and_says_so() -> None:
    # stdin open and silent: the parse waits for its input until it is interrupted
    child = subprocess.Popen([sys.executable, "-m", "rdmatool", "parse", "ibstat"], cwd=REPO, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_reading_stdin(child.pid)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=20)
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert err.strip().splitlines()[-1] == "rdmatool: interrupted" and "Traceback" not in err
    assert out == ""
