"""SSH host-key verification shared by the host and switch transports.

OpenSSH semantics: a key found in known_hosts must match; an unknown key is refused unless the operator opted in to
`--accept-new-host-keys` (then it is recorded, like `StrictHostKeyChecking=accept-new`); a changed key is refused
always — that is what a man in the middle looks like.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import paramiko

SYSTEM_KNOWN_HOSTS = "/etc/ssh/ssh_known_hosts"
USER_KNOWN_HOSTS = "~/.ssh/known_hosts"
_write_lock = threading.Lock()  # many fan-out threads may learn keys at once; the file must stay whole


class HostKeyUnknown(paramiko.SSHException):
    pass


class HostKeyChanged(paramiko.SSHException):
    pass


def host_key_name(address: str, port: int) -> str:
    return address if port == 22 else f"[{address}]:{port}"


class KnownHosts:
    """The union of the system, user and extra known_hosts files; new keys go to the extra file, else the user's."""

    def __init__(self, extra: str | Path | None = None, accept_new: bool = False) -> None:
        self.accept_new = accept_new
        self.files = [Path(SYSTEM_KNOWN_HOSTS), Path(os.path.expanduser(USER_KNOWN_HOSTS))]
        if extra:
            self.files.append(Path(os.path.expanduser(str(extra))))
        self.record_to = self.files[-1]
        self.keys = paramiko.HostKeys()
        for path in self.files:
            if path.is_file():
                self.keys.load(str(path))

    def check(self, address: str, port: int, key: paramiko.PKey) -> None:
        """Raise HostKeyUnknown / HostKeyChanged, or record the key when accepting new ones."""
        name = host_key_name(address, port)
        known = self.keys.lookup(name)
        if known is not None and key.get_name() in known:
            if known[key.get_name()] != key:
                raise HostKeyChanged(
                    f"host key changed for {name} ({key.get_name()}); refusing to connect — verify the host, then "
                    f"remove the old key from {self.record_to} if the change is expected"
                )
            return
        if known is not None and not self.accept_new:
            raise HostKeyUnknown(
                f"no {key.get_name()} host key for {name} in known_hosts (it has {', '.join(known.keys())}); "
                "use --accept-new-host-keys to record it"
            )
        if not self.accept_new:
            raise HostKeyUnknown(f"unknown host key for {name}; use --accept-new-host-keys to record it")
        self._record(name, key)

    def _record(self, name: str, key: paramiko.PKey) -> None:
        with _write_lock:
            self.keys.add(name, key.get_name(), key)
            self.record_to.parent.mkdir(parents=True, exist_ok=True)
            with open(self.record_to, "a", encoding="utf-8") as handle:
                handle.write(f"{name} {key.get_name()} {key.get_base64()}\n")


class VerifyingPolicy(paramiko.MissingHostKeyPolicy):
    """paramiko calls this only for keys absent from the client's own table, which we keep empty on purpose."""

    def __init__(self, known: KnownHosts, address: str, port: int) -> None:
        self.known, self.address, self.port = known, address, port

    def missing_host_key(self, client, hostname, key) -> None:  # noqa: ARG002 - paramiko's signature
        self.known.check(self.address, self.port, key)


def scan_and_check(known: KnownHosts, address: str, port: int, timeout: float, sock=None) -> None:
    """Fetch a server's host key without authenticating, and check it (used before handing over to netmiko)."""
    import socket

    own = sock is None
    sock = sock or socket.create_connection((address, port), timeout=timeout)
    transport = paramiko.Transport(sock)
    try:
        transport.start_client(timeout=timeout)
        known.check(address, port, transport.get_remote_server_key())
    finally:
        transport.close()
        if own:
            sock.close()
