"""Switch transport: netmiko's real drivers run the read-only show commands of commands.py (the audited list)."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time

from rdmatool import commands, platforms
from rdmatool.errors import RdmatoolError
from rdmatool.model import CommandResult, Target
from rdmatool.outcome.failures import DEADLINE_EXCEEDED, SWITCH_READ_TIMEOUT
from rdmatool.transport import output_cap
from rdmatool.transport.hostkeys import KnownHosts, host_key_name, other_key_algorithms, scan_and_check
from rdmatool.transport.ssh import check_identity_file, now_iso

# How long netmiko itself waits for a switch's first prompt after the shell opens (fixed in its channel test read).
NETMIKO_LOGIN_READ_S = 20.0

# Error texts that switch CLIs print instead of output; such a result is a failed command, not data.
_CLI_ERRORS = ("% Invalid", "% Incomplete", "% Ambiguous", "Invalid input", "Syntax error", "command not found")


class SwitchLoginTimeout(RdmatoolError):
    """SSH let us in, but the switch's CLI printed no prompt (or did not answer its session setup) in time."""


@contextlib.contextmanager
def _pinned_known_hosts(address: str, port: int, key):
    """A private known_hosts holding only the key just verified; removed once netmiko has connected."""
    fd, path = tempfile.mkstemp(prefix="rdmatool-known-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(f"{host_key_name(address, port)} {key.get_name()} {key.get_base64()}\n")
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


class SwitchSession:
    def __init__(self, target: Target, known: KnownHosts, connect_timeout: float,
                 deadline: float | None = None) -> None:
        # netmiko is imported only when a switch is collected
        from rdmatool.transport.switch_drivers import connect_handler

        self.target = target
        check_identity_file(target)
        # netmiko verifies against known_hosts files itself (ssh_strict → RejectPolicy) but cannot record a new key,
        # and its loader stops at the first malformed line of a real known_hosts. So check (and, if allowed, learn)
        # the key first with the same rules as for hosts, then let netmiko accept exactly that key and key type from
        # a private one-line file.
        key = scan_and_check(known, target.address, target.port, connect_timeout)
        handler = connect_handler(target.platform)  # imports netmiko's package first (see switch_drivers)
        from netmiko.exceptions import ReadTimeout

        login_wait = login_read_timeout(deadline)
        try:
            with _pinned_known_hosts(target.address, target.port, key) as pinned:
                self.conn = self._connect(handler, target, connect_timeout, pinned,
                                          other_key_algorithms(key.get_name()), login_wait)
        except ReadTimeout as exc:  # netmiko has closed the session itself
            raise SwitchLoginTimeout(f"logged in, but the CLI gave no prompt (or did not answer its session set-up) "
                                     f"within {login_wait:.0f} s") from exc
        try:
            if platforms.switch(target.platform).ENTER_ENABLE:
                # what is left of the deadline now, not what was left before the session set-up took its share
                login_wait = self.conn.read_timeout_override = login_read_timeout(deadline)
                self.conn.enable()
        except BaseException as exc:
            self.close()
            if isinstance(exc, ReadTimeout):
                raise SwitchLoginTimeout(f"the CLI did not answer `enable` within {login_wait:.0f} s") from exc
            raise
        # From here each command's own read timeout applies (netmiko's override would replace it).
        self.conn.read_timeout_override = None

    @staticmethod
    def _connect(handler, target: Target, connect_timeout: float, pinned: str, disabled: list[str],
                 login_wait: float):
        return handler(
            device_type=platforms.switch(target.platform).NETMIKO_DEVICE_TYPE,
            host=target.address,
            port=target.port,
            username=target.user or os.environ.get("USER") or "admin",
            password=os.environ.get(target.password_env, "") if target.password_env else "",
            secret=os.environ.get(target.password_env, "") if target.password_env else "",
            use_keys=target.identity_file is not None,
            key_file=target.identity_file,
            allow_agent=False,
            ssh_strict=True,
            system_host_keys=False,
            alt_host_keys=True,
            alt_key_file=pinned,
            disabled_algorithms={"keys": disabled},
            conn_timeout=connect_timeout,
            auth_timeout=connect_timeout,
            banner_timeout=connect_timeout,
            # each read of the session set-up (the first prompt, width, paging) may wait for what was left of the
            # target's deadline when the login began (netmiko takes one fixed value); `enable` gets what is left then
            read_timeout_override=login_wait,
            fast_cli=True,
        )

    def close(self) -> None:
        # A half-dead session must not mask the results we already have.
        with contextlib.suppress(Exception):
            self.conn.disconnect()

    def run(self, plan: list[commands.PlannedCommand], command_timeout: int, deadline: float) -> list[CommandResult]:
        """One snapshot: the plan's commands in turn. What the switch sends is counted as netmiko reads it, all the
        commands together within the run's snapshot caps (as a host's one stream is): a switch printing without end
        fails at the cap, its command named and what it gave kept, instead of growing netmiko's buffer until the
        collector runs out of memory."""
        results = []
        stream = output_cap.CappedStream(source="the switch sent")
        original = self.conn.read_channel
        self.conn.read_channel = _counted(original, stream)  # on this connection only; netmiko reads through it
        try:
            for step in plan:
                parser, qualifier, command = step.parser, step.qualifier, step.command
                started, t0 = now_iso(), time.monotonic()
                if time.monotonic() > deadline:
                    results.append(self._result(parser, qualifier, command, "", started, 0.0, DEADLINE_EXCEEDED))
                    continue
                stream.chunks = []  # what this command sent, kept only for the failure at the cap
                try:
                    output = self.conn.send_command(command, read_timeout=command_timeout, strip_prompt=True,
                                                    strip_command=not step.keep_echo)
                    error = next((f"{command}: {e}" for e in _CLI_ERRORS if e in output[:200]), None)
                except OutputOverCap as exc:
                    output, error = stream.text(), f"{command}: {exc}"
                except Exception as exc:  # netmiko raises many types; each is this command's result, not a crash
                    output, error = "", (f"{command}: {type(exc).__name__}: "
                                         f"{str(exc).splitlines()[0] if str(exc) else ''}")
                results.append(self._result(parser, qualifier, command, output, started, time.monotonic() - t0,
                                            error))
                if error and (SWITCH_READ_TIMEOUT in error or stream.over):
                    break  # the CLI is stuck mid-output; later commands would read its leftovers
        finally:
            stream.chunks = []
            self.conn.read_channel = original
        return results

    def _result(self, parser, qualifier, command, output, started, duration, error) -> CommandResult:
        return CommandResult(
            target=self.target.name, parser=parser, command=command, stdout=output,
            exit_code=0 if error is None else 1, qualifier=qualifier, started=started,
            duration_s=round(duration, 3), error=error,
        )


class OutputOverCap(RdmatoolError):
    """The switch sent more than the run's snapshot caps allow (rdmatool.limits)."""


def _counted(read_channel, stream: output_cap.CappedStream):
    """netmiko's `read_channel`, each piece it returns counted against `stream`'s caps; over them, OutputOverCap
    ends the command (netmiko's own buffer stops growing with it)."""
    def read() -> str:
        data = read_channel()
        if data:
            problem = stream.add(data.encode("utf-8", "surrogateescape"))
            if problem:
                raise OutputOverCap(problem)
        return data
    return read


def login_read_timeout(deadline: float | None) -> float:
    """How long a read of a switch's login may wait: what is left of the target's deadline, when one is given.

    netmiko waits a fixed 20 s for the first prompt once the shell has opened. A switch whose management CPU is busy
    (a control-plane storm is when the fabric gets diagnosed) may take longer to start its CLI, and the target's
    deadline is the patience the user asked for: the login may use all that is left of it (at least a second; less
    than netmiko's 20 s when less is left, since the deadline is the bound)."""
    if deadline is None:
        return NETMIKO_LOGIN_READ_S
    return max(1.0, deadline - time.monotonic())
