"""Switch transport: netmiko's real drivers run the read-only show commands of commands.py (the audited list)."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time

from rdmatool import commands
from rdmatool.model import CommandResult, Target
from rdmatool.transport.hostkeys import KnownHosts, host_key_name, other_key_algorithms, scan_and_check
from rdmatool.transport.ssh import check_identity_file, now_iso

# Error texts that switch CLIs print instead of output; such a result is a failed command, not data.
_CLI_ERRORS = ("% Invalid", "% Incomplete", "% Ambiguous", "Invalid input", "Syntax error", "command not found")


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
    def __init__(self, target: Target, known: KnownHosts, connect_timeout: float) -> None:
        # netmiko is imported only when a switch is collected
        from rdmatool.transport.switch_drivers import connect_handler

        self.target = target
        check_identity_file(target)
        # netmiko verifies against known_hosts files itself (ssh_strict → RejectPolicy) but cannot record a new key,
        # and its loader stops at the first malformed line of a real known_hosts. So check (and, if allowed, learn)
        # the key first with the same rules as for hosts, then let netmiko accept exactly that key and key type from
        # a private one-line file.
        key = scan_and_check(known, target.address, target.port, connect_timeout)
        with _pinned_known_hosts(target.address, target.port, key) as pinned:
            self.conn = self._connect(connect_handler(target.platform), target, connect_timeout, pinned,
                                      other_key_algorithms(key.get_name()))
        if target.platform in commands.ENTER_ENABLE:
            self.conn.enable()

    @staticmethod
    def _connect(handler, target: Target, connect_timeout: float, pinned: str, disabled: list[str]):
        return handler(
            device_type=commands.NETMIKO_DEVICE_TYPE[target.platform],
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
            fast_cli=True,
        )

    def run(self, plan: list[commands.PlannedCommand], command_timeout: int, deadline: float) -> list[CommandResult]:
        results = []
        for step in plan:
            parser, qualifier, command = step.parser, step.qualifier, step.command
            started, t0 = now_iso(), time.monotonic()
            if time.monotonic() > deadline:
                results.append(self._result(parser, qualifier, command, "", started, 0.0, "target deadline exceeded"))
                continue
            try:
                output = self.conn.send_command(command, read_timeout=command_timeout, strip_prompt=True,
                                                strip_command=not step.keep_echo)
                error = next((f"{command}: {e}" for e in _CLI_ERRORS if e in output[:200]), None)
            except Exception as exc:  # netmiko raises many types; each is this command's result, not a crash
                output, error = "", f"{command}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            results.append(self._result(parser, qualifier, command, output, started, time.monotonic() - t0, error))
            if error and "ReadTimeout" in error:
                break  # the CLI is stuck mid-output; later commands would read its leftovers
        return results

    def _result(self, parser, qualifier, command, output, started, duration, error) -> CommandResult:
        return CommandResult(
            target=self.target.name, parser=parser, command=command, stdout=output,
            exit_code=0 if error is None else 1, qualifier=qualifier, started=started,
            duration_s=round(duration, 3), error=error,
        )

    def close(self) -> None:
        # A half-dead session must not mask the results we already have.
        with contextlib.suppress(Exception):
            self.conn.disconnect()
