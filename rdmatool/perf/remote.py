"""Commands on one host over its paramiko Session: one audited command with a timeout, and background perftest
commands (server or client) that report their PID and can always be ended.

A closed SSH channel without a pty does not end the remote process, so every perftest command runs under
`timeout -k 2` (it can never outlive its pair) and `Background.cleanup` kills exactly the `timeout` it started.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from rdmatool import commands
from rdmatool.model import Target
from rdmatool.transport.hostkeys import KnownHosts
from rdmatool.transport.jump import JumpHosts
from rdmatool.transport.ssh import Session
from rdmatool.transport.ssh_library import paramiko

_POLL = 0.05
_PID_WAIT_S = 10.0  # how long a cleanup waits for a command's PID line before leaving it to its `timeout`


@dataclass(frozen=True)
class RunResult:
    exit_code: int | None  # None: did not finish within the timeout (or interrupted)
    stdout: str
    stderr: str

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


class Background:
    """A command running on a channel of its own; output is drained by `poll`, which never blocks."""

    def __init__(self, remote: Remote, command: str) -> None:
        self.remote, self.command = remote, command
        self.channel = remote.session.client.get_transport().open_session(timeout=remote.connect_timeout)
        self.channel.exec_command(command)
        self.channel.shutdown_write()
        self._out: list[bytes] = []
        self._err: list[bytes] = []
        self.exit_code: int | None = None
        self.started = time.monotonic()
        self.cleaned = False

    def poll(self) -> bool:
        """Drain what has arrived; True once the command has exited and all its output is read."""
        ch = self.channel
        while ch.recv_ready():
            self._out.append(ch.recv(65536))
        while ch.recv_stderr_ready():
            self._err.append(ch.recv_stderr(65536))
        if ch.exit_status_ready() and not ch.recv_ready() and not ch.recv_stderr_ready():
            if self.exit_code is None:
                self.exit_code = ch.recv_exit_status()
            return True
        return False

    @property
    def done(self) -> bool:
        return self.exit_code is not None

    def wait(self, timeout: float, stop: threading.Event | None = None, until=None) -> bool:
        """Poll until the command exits (True), `until(stdout)` holds (True), timeout or stop (False)."""
        end = time.monotonic() + max(0.0, timeout)
        while True:
            if self.poll():
                return True
            if until is not None and until(self.stdout):
                return True
            if time.monotonic() >= end or (stop is not None and stop.is_set()):
                return False
            time.sleep(_POLL)

    @property
    def stdout(self) -> str:
        return b"".join(self._out).decode("utf-8", errors="replace")

    @property
    def stderr(self) -> str:
        return b"".join(self._err).decode("utf-8", errors="replace")

    @property
    def pid(self) -> int | None:
        for line in self.stdout.splitlines():
            if line.startswith(commands.PERF_PID_MARK):
                try:
                    return int(line.split()[-1])
                except ValueError:
                    return None
        return None

    def output(self) -> str:
        """stdout without the PID line, then stderr: what perftest printed, for the parser and the bundle."""
        out = "\n".join(line for line in self.stdout.splitlines() if not line.startswith(commands.PERF_PID_MARK))
        err = self.stderr.strip("\n")
        return out + ("\n" + err if err else "") + "\n"

    def cleanup(self, grace: float = 0.0) -> None:
        """End the command if it still runs (kill its `timeout` by PID), then close the channel. Idempotent."""
        if self.cleaned:
            return
        self.cleaned = True
        try:
            if not self.done and grace > 0:
                self.wait(grace)
            if not self.done:
                self.poll()
                pid = self.pid
                if pid is None and not self.done:
                    # started, but its PID line not yet here (a loaded host): wait for it, or the process would be
                    # left to run until its `timeout` bound (seconds to minutes) after the run has ended
                    self.wait(_PID_WAIT_S, until=lambda out: commands.PERF_PID_MARK in out)
                    pid = self.pid
                if pid is not None and not self.done:
                    self.remote.run(commands.perftest_kill_command(pid), timeout=5.0)
                self.wait(2.0)
        except (paramiko.SSHException, OSError, EOFError):
            pass  # the connection is gone: `timeout -k 2` still ends the process on the host
        finally:
            self.channel.close()
            self.remote.forget(self)


class Remote:
    """One host: its SSH session, the audited commands run on it, and the background commands still alive."""

    def __init__(self, target: Target, known: KnownHosts, connect_timeout: float,
                 jumps: JumpHosts | None = None) -> None:
        """`jumps`: the bastions shared by the hosts of one run (see Session)."""
        self.target = target
        self.connect_timeout = connect_timeout
        self.session = Session(target, known, connect_timeout, jumps=jumps)
        self._live: set[Background] = set()
        self._lock = threading.Lock()

    def run(self, command: str, timeout: float, stdin: str | None = None,
            stop: threading.Event | None = None) -> RunResult:
        """One audited command (or `sh -s` with a script on stdin), bounded by `timeout` seconds."""
        channel = self.session.client.get_transport().open_session(timeout=self.connect_timeout)
        try:
            channel.exec_command(command)
            if stdin is not None:
                channel.sendall(stdin.encode())
            channel.shutdown_write()
            out: list[bytes] = []
            err: list[bytes] = []
            end = time.monotonic() + timeout
            while True:
                while channel.recv_ready():
                    out.append(channel.recv(65536))
                while channel.recv_stderr_ready():
                    err.append(channel.recv_stderr(65536))
                if channel.exit_status_ready() and not channel.recv_ready() and not channel.recv_stderr_ready():
                    code: int | None = channel.recv_exit_status()
                    break
                if time.monotonic() >= end or (stop is not None and stop.is_set()):
                    code = None
                    break
                time.sleep(_POLL)
            return RunResult(code, b"".join(out).decode("utf-8", errors="replace"),
                             b"".join(err).decode("utf-8", errors="replace"))
        finally:
            channel.close()

    def start(self, command: str) -> Background:
        job = Background(self, command)
        with self._lock:
            self._live.add(job)
        return job

    def forget(self, job: Background) -> None:
        with self._lock:
            self._live.discard(job)

    def cleanup_all(self) -> None:
        with self._lock:
            jobs = list(self._live)
        for job in jobs:
            job.cleanup()

    def close(self) -> None:
        self.cleanup_all()
        self.session.close()
