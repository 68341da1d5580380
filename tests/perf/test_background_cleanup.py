"""Ending a background perftest whose PID line has not arrived yet (a loaded host): the cleanup waits for the line
and kills that PID, instead of leaving the process to its `timeout` bound. A stand-in channel and remote."""

from __future__ import annotations

import threading
import time

from rdmatool import commands
from rdmatool.perf import remote as remote_mod
from rdmatool.perf.remote import Background


class StandInChannel:
    def __init__(self) -> None:
        self.pending: list[bytes] = []
        self.lock = threading.Lock()
        self.exited = False
        self.closed = False

    def exec_command(self, command: str) -> None:
        pass

    def shutdown_write(self) -> None:
        pass

    def recv_ready(self) -> bool:
        with self.lock:
            return bool(self.pending)

    def recv(self, n: int) -> bytes:
        with self.lock:
            return self.pending.pop(0)

    def recv_stderr_ready(self) -> bool:
        return False

    def exit_status_ready(self) -> bool:
        return self.exited

    def recv_exit_status(self) -> int:
        return 143

    def close(self) -> None:
        self.closed = True


class StandInRemote:
    connect_timeout = 5.0

    def __init__(self, channel: StandInChannel) -> None:
        self.channel, self.ran = channel, []

    @property
    def session(self):
        remote = self

        class Client:
            def get_transport(self):
                class Transport:
                    def open_session(self, timeout=None):
                        return remote.channel
                return Transport()

        class Session:
            client = Client()

        return Session()

    def run(self, command: str, timeout: float):
        self.ran.append(command)
        self.channel.exited = True  # the kill ends it

    def forget(self, job) -> None:
        pass


def test_a_late_pid_line_is_waited_for_and_that_pid_killed() -> None:
    channel = StandInChannel()
    host = StandInRemote(channel)
    job = Background(host, "ib_write_bw ...")

    def late_pid() -> None:
        time.sleep(0.5)
        with channel.lock:
            channel.pending.append(f"{commands.PERF_PID_MARK} 4242\n".encode())

    threading.Thread(target=late_pid).start()
    job.cleanup()
    assert host.ran == [commands.perftest_kill_command(4242)]
    assert channel.closed


def test_a_pid_line_that_never_comes_bounds_the_wait(monkeypatch) -> None:
    monkeypatch.setattr(remote_mod, "_PID_WAIT_S", 0.3)
    channel = StandInChannel()
    host = StandInRemote(channel)
    job = Background(host, "ib_write_bw ...")
    started = time.monotonic()
    job.cleanup()
    assert host.ran == [] and channel.closed
    assert time.monotonic() - started < 5
