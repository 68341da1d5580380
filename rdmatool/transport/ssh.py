"""Host transport: paramiko, one connection per host and one exec per snapshot (the batched script of commands.py)."""

from __future__ import annotations

import os
import socket
import threading
import time

from rdmatool import commands
from rdmatool.errors import RdmatoolError
from rdmatool.model import CommandResult, Target
from rdmatool.outcome.failures import DEADLINE_EXCEEDED
from rdmatool.transport import host_framing, output_cap
from rdmatool.transport.framed import now_iso, results_of
from rdmatool.transport.hostkeys import (
    HostKeyChanged,
    HostKeyUnknown,
    KnownHosts,
    VerifyingPolicy,
    refuse_unknown_key_types,
)
from rdmatool.transport.jump import JumpHosts
from rdmatool.transport.ssh_library import paramiko
from rdmatool.transport.ssh_options import CollectorTransport, blocking_reads, end_transport, identity


class Session:
    """One authenticated SSH connection to a host, reused for every snapshot of a collection."""

    def __init__(self, target: Target, known: KnownHosts, connect_timeout: float,
                 max_output_bytes: int | None = None, jumps: JumpHosts | None = None,
                 max_output_lines: int | None = None) -> None:
        # None: the run's limits (rdmatool.limits), read when a snapshot starts
        """`jumps`: the bastions a collection shares among its sessions (one connection per bastion); a session
        given none keeps its own, closed with it."""
        self.target = target
        self.max_output_bytes = max_output_bytes
        self.max_output_lines = max_output_lines
        check_identity_file(target)
        self.client = paramiko.SSHClient()
        self.client.set_missing_host_key_policy(VerifyingPolicy(known, target.address, target.port))
        self._own_jumps: JumpHosts | None = None
        sock = None
        try:
            if target.proxy_jump:  # ProxyJump with one hop: a direct-tcpip channel through the bastion
                if jumps is None:
                    jumps = self._own_jumps = JumpHosts()
                sock = jumps.channel(target, known, connect_timeout)
            disabled = known.disabled_key_algorithms(target.address, target.port)
            with refuse_unknown_key_types(target.address, target.port, disabled):
                self._connect(target, connect_timeout, sock, disabled)
        except BaseException:
            if self._own_jumps is not None:  # a bastion of this session's own is not left open
                self._own_jumps.close()
            raise
        blocking_reads(self.client)

    def _connect(self, target: Target, connect_timeout: float, sock, disabled: list[str]) -> None:
        password = os.environ.get(target.password_env) if target.password_env else None
        key = identity(target.identity_file, password) if target.identity_file else None
        self.client.connect(
            hostname=target.address,
            port=target.port,
            username=target.user or os.environ.get("USER") or "root",
            pkey=key,
            key_filename=target.identity_file if target.identity_file and key is None else None,
            password=password,
            timeout=connect_timeout,
            banner_timeout=connect_timeout,
            auth_timeout=connect_timeout,
            allow_agent=True,
            look_for_keys=target.identity_file is None,
            sock=sock,
            # Negotiate only the key types known for the host, as OpenSSH does; else paramiko's first choice would
            # make a host known by another type look changed.
            disabled_algorithms={"keys": disabled} if disabled else None,
            transport_factory=CollectorTransport,
        )

    def run_snapshot(
        self, mode: str, command_timeout: int, deadline: float, stop: threading.Event | None = None
    ) -> tuple[list[CommandResult], str | None]:
        """Run the host script once; returns its sections as CommandResults and an error if the run was cut short."""
        started = now_iso()
        t0 = time.monotonic()
        entry = commands.host_entry_command(command_timeout, mode)
        token = commands.new_token()
        channel = self.client.get_transport().open_session(timeout=max(1.0, deadline - time.monotonic()))
        channel.exec_command(entry)
        channel.sendall(commands.host_script(token).encode())
        channel.shutdown_write()
        stream = output_cap.CappedStream(self.max_output_bytes, self.max_output_lines)
        error = None
        channel.settimeout(0.5)
        while True:
            if time.monotonic() > deadline:
                error = f"{DEADLINE_EXCEEDED}; output so far kept"
                break
            if stop is not None and stop.is_set():
                error = "collection interrupted"
                break
            try:
                data = channel.recv(65536)
            except TimeoutError:
                continue
            if not data:
                break
            error = stream.add(data)  # a host that streams without end must not fill the collector's memory
            if error:
                break
        # stderr of the script itself (not of the commands, which the script captures per section)
        channel.close()
        duration = time.monotonic() - t0
        text = stream.text()
        sections, broken = host_framing.split_sections(text, token, mode)
        error = broken or error
        results = results_of(self.target.name, sections, started, duration)
        if not sections and error is None:
            error = "the host returned no output (is /bin/sh available?)"
        return results, error

    def close(self) -> None:
        end_transport(self.client)
        if self._own_jumps is not None:
            self._own_jumps.close()


class IdentityFileMissing(FileNotFoundError):
    """The inventory names a key file that is not there: a problem of the collecting machine, not of the host."""


def check_identity_file(target: Target) -> None:
    """Refuse before dialling when the key file is missing (paramiko would report it as the host being unreachable)."""
    path = target.identity_file
    if path and not os.path.isfile(os.path.expanduser(path)):
        raise IdentityFileMissing(f"identity file {identity_label(target)} not found on this machine")


def identity_label(target: Target) -> str:
    """The key file as the inventory wrote it (`~/.ssh/id_ed25519`), for messages that may be stored in a bundle."""
    return getattr(target, "identity_file_as_given", None) or target.identity_file or ""


def describe_connect_error(target: Target, exc: BaseException) -> str:
    """One line saying why a host could not be reached: missing key, unreachable, auth, unknown key, changed key."""
    where = f"{target.name} ({target.address}:{target.port})"
    if isinstance(exc, IdentityFileMissing):
        return f"{where}: {exc}"
    if isinstance(exc, HostKeyChanged):  # changed, revoked or of a new type: the message says which
        return f"{where}: {exc}"
    if isinstance(exc, (HostKeyUnknown, RdmatoolError)):  # their messages say what happened
        return f"{where}: {exc}"
    if isinstance(exc, paramiko.AuthenticationException):
        return f"{where}: authentication failed for user {target.user or 'default'}"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return f"{where}: connection timed out"
    if isinstance(exc, (ConnectionRefusedError, paramiko.ssh_exception.NoValidConnectionsError)):
        return f"{where}: connection refused"
    if isinstance(exc, OSError):
        return f"{where}: unreachable ({exc.strerror or exc})"
    first_line = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    return f"{where}: {type(exc).__name__}: {first_line}"
