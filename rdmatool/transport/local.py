"""Local transport: the host script run on this machine as a child process, and the verbs read beside it.

For a Slurm HealthCheckProgram or prolog, or a Kubernetes DaemonSet, that runs on the node itself: SSH to oneself
would need keys and an sshd for nothing. The script is the audited one (`commands.HOST_SCRIPT`), started as
`commands.local_entry_argv` with the script on stdin, its output checked by the same framing, bounded by the same
deadline and byte limit as over SSH. A full snapshot adds the verbs read (`rdmatool/transport/verbs.py`) as the
target's `verbs` output: run by this Python in a child process of its own, so that a driver call that hangs or
crashes costs that output only.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from rdmatool import commands
from rdmatool.model import CommandResult, Target
from rdmatool.outcome.failures import DEADLINE_EXCEEDED
from rdmatool.transport import host_framing, output_cap, verbs
from rdmatool.transport.framed import now_iso, results_of

MAX_VERBS_BYTES = 16 * 1024 * 1024  # a verbs document of eight devices with full GID tables is well below 1 MB
LOCAL_ADDRESS = "localhost"
# A bundle's target names are directory names (rdmatool.bundle.names.TARGET_NAME spells the same pattern).
_TARGET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def local_target(hostname: str | None = None) -> Target:
    """The one target of local mode, named after this host as a scheduler names it (the short host name: Slurm's
    NodeName, a Kubernetes node's name before its domain)."""
    name = (hostname if hostname is not None else socket.gethostname()).split(".", 1)[0]
    return Target(name=name if _TARGET_NAME.fullmatch(name) else LOCAL_ADDRESS, address=LOCAL_ADDRESS)


def verbs_command(python: str | None = None) -> list[str]:
    """The verbs read's argument vector: this Python, isolated (`-I`: no current directory, no PYTHONPATH, so a
    stray `pyverbs` beside the caller is never the one read), running the reader's file."""
    return [python or sys.executable, "-I", str(Path(verbs.__file__).resolve())]


class LocalSession:
    """The counterpart of `ssh.Session` for the machine rdmatool runs on: same snapshots, same results."""

    def __init__(self, target: Target, max_output_bytes: int | None = None, python: str | None = None) -> None:
        self.target = target
        self.max_output_bytes = max_output_bytes
        self.python = python

    def run_snapshot(
        self, mode: str, command_timeout: int, deadline: float, stop: threading.Event | None = None
    ) -> tuple[list[CommandResult], str | None]:
        """Run the host script once (and, in a full snapshot, the verbs read); its sections as CommandResults and an
        error if the run was cut short."""
        started = now_iso()
        t0 = time.monotonic()
        token = commands.new_token()
        text, error = self._run_script(commands.local_entry_argv(command_timeout, mode),
                                       commands.host_script(token).encode(), deadline, stop)
        sections, broken = host_framing.split_sections(text, token, mode)
        error = broken or error
        results = results_of(self.target.name, sections, started, time.monotonic() - t0)
        if not sections and error is None:
            error = "the script gave no output (is /bin/sh available?)"
        if mode == commands.SNAPSHOT_FULL and error is None:
            results.append(self.read_verbs(min(float(command_timeout), max(1.0, deadline - time.monotonic()))))
        return results, error

    def _run_script(self, argv: list[str], script: bytes, deadline: float, stop: threading.Event | None,
                    ) -> tuple[str, str | None]:
        # A session of its own: on a deadline the whole group (the script and the tool it waits for) is killed.
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   start_new_session=True)
        stream = output_cap.CappedStream(self.max_output_bytes, source="the script printed")
        error = None
        try:
            process.stdin.write(script)  # a few kB: within the pipe's buffer, so this never waits on the script
            process.stdin.close()
            with selectors.DefaultSelector() as selector:
                selector.register(process.stdout, selectors.EVENT_READ)
                while True:
                    if time.monotonic() > deadline:
                        error = f"{DEADLINE_EXCEEDED}; output so far kept"
                        break
                    if stop is not None and stop.is_set():
                        error = "collection interrupted"
                        break
                    if not selector.select(timeout=0.5):
                        continue
                    data = os.read(process.stdout.fileno(), 65536)
                    if not data:
                        break
                    error = stream.add(data)
                    if error:
                        break
        finally:
            if process.poll() is None and error is not None:
                _kill_group(process)
            process.stdout.close()
            process.wait()
        return stream.text(), error

    def read_verbs(self, timeout_s: float) -> CommandResult:
        """The verbs view as the `verbs` output; a reader that hangs, dies or floods is that output's error."""
        argv = verbs_command(self.python)
        shown = f"{Path(argv[0]).name} -I rdmatool/transport/verbs.py"
        started, t0 = now_iso(), time.monotonic()

        def result(stdout: str, exit_code: int | None, stderr: str, error: str | None) -> CommandResult:
            return CommandResult(self.target.name, "verbs", shown, stdout, exit_code, stderr[-4096:], None, started,
                                 round(time.monotonic() - t0, 3), error)

        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s,
                                  start_new_session=True, check=False)
        except subprocess.TimeoutExpired:
            return result("", None, "", f"the verbs read did not finish within {timeout_s:g} s on {self.target.name}")
        except OSError as exc:
            return result("", None, "", f"the verbs read could not start on {self.target.name} ({exc.strerror or exc})")
        stderr = done.stderr.decode("utf-8", errors="replace")
        if len(done.stdout) > MAX_VERBS_BYTES:
            return result("", done.returncode, stderr, f"the verbs read printed more than {MAX_VERBS_BYTES} bytes")
        stdout = done.stdout.decode("utf-8", errors="replace")
        if done.returncode != 0:
            how = f"signal {-done.returncode}" if done.returncode < 0 else f"exit {done.returncode}"
            last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
            return result(stdout, done.returncode, stderr,
                          f"the verbs read failed on {self.target.name} ({how}{': ' + last[:200] if last else ''})")
        return result(stdout, 0, stderr, None)

    def close(self) -> None:
        """Nothing stays open between snapshots."""


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
        os.killpg(process.pid, signal.SIGKILL)
