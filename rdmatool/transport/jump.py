"""ProxyJump bastions shared by the sessions of one collection: one authenticated connection per bastion, one
direct-tcpip channel through it per target.

Without it, a collection of 64 hosts behind one bastion would open 64 connections to the bastion at once, each
with its own key exchange and authentication. OpenSSH's default `MaxStartups 10:30:100` drops unauthenticated
connections at random beyond 10 pending, so hosts behind a bastion would come out unreachable at random: a gate
inconclusive, or hosts missing from a diagnosis, for no fault of theirs. OpenSSH's own answer is the same as this module's: one connection
(ControlMaster), many channels; a channel is not a start-up and costs the bastion no key exchange.

The bastion's key is verified as any host's (the known_hosts policy of the collection); a bastion that cannot be
reached fails every target behind it with the same reason, and is tried once per collection, not once per target.
"""

from __future__ import annotations

import threading

from rdmatool.model import Target
from rdmatool.transport.hostkeys import KnownHosts, VerifyingPolicy, refuse_unknown_key_types
from rdmatool.transport.ssh_library import paramiko
from rdmatool.transport.ssh_options import CollectorTransport, end_transport


def parse_jump(proxy_jump: str) -> tuple[str, str, int]:
    """`user@host:port` (user and port optional; the inventory validated the form) → (user, host, port)."""
    user, _, hostport = proxy_jump.rpartition("@")
    host, _, port = hostport.partition(":")
    return user, host, int(port) if port else 22


class JumpSocket:
    """A bastion's direct-tcpip channel as the target session's socket, with its sends and its close in one order.

    paramiko's Channel.send builds a data message under the channel's lock and transmits it after releasing it; its
    close does the same with EOF and CLOSE. A target session closing (the collector's thread) while its reader
    thread answers the host's own close can so put data after CLOSE on the bastion's connection. OpenSSH treats
    that as a protocol error and disconnects the whole connection ("data packet referred to nonexistent channel"),
    failing every other host behind the bastion with EOFError. Here a send holds a lock until its message is out and
    a close takes the same lock, so nothing follows the CLOSE: a send that comes later fails as on a closed socket."""

    def __init__(self, channel: paramiko.Channel) -> None:
        self._channel = channel
        self._lock = threading.Lock()
        self._closed = False  # paramiko's Transport.stop_thread reads a socket's `_closed`

    def send(self, data: bytes) -> int:
        with self._lock:
            if self._closed:
                raise OSError("Socket is closed")
            return self._channel.send(data)

    def sendall(self, data: bytes) -> None:
        while data:
            sent = self.send(data)
            if sent == 0:  # the bastion ended the channel
                raise OSError("Socket is closed")
            data = data[sent:]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._channel.close()

    def __getattr__(self, name: str):  # recv, settimeout, getpeername...: the channel's own
        return getattr(self._channel, name)


class _Bastion:
    """One bastion's connection, made by the first target that needs it (the others wait for it)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.client: paramiko.SSHClient | None = None
        self.failure: BaseException | None = None


class JumpHosts:
    """The bastions of one collection (thread-safe); `close` ends them once every session through them is done."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bastions: dict[tuple, _Bastion] = {}

    def channel(self, target: Target, known: KnownHosts, timeout: float) -> JumpSocket:
        """A direct-tcpip channel to `target` through its bastion, for paramiko to use as the target's socket."""
        user, host, port = parse_jump(target.proxy_jump)
        user = user or target.user
        key = (user, host, port, target.identity_file)
        with self._lock:
            bastion = self._bastions.setdefault(key, _Bastion())
        with bastion.lock:
            if bastion.failure is not None:
                raise bastion.failure
            transport = bastion.client.get_transport() if bastion.client is not None else None
            if transport is None or not transport.is_active():  # first use, or the bastion closed it since
                if bastion.client is not None:
                    end_transport(bastion.client)
                try:
                    bastion.client = _connect(user, host, port, target.identity_file, known, timeout)
                except BaseException as exc:
                    bastion.failure = exc
                    raise
                transport = bastion.client.get_transport()
        return JumpSocket(transport.open_channel("direct-tcpip", (target.address, target.port), ("127.0.0.1", 0),
                                                 timeout=timeout))

    def close(self) -> None:
        with self._lock:
            bastions, self._bastions = list(self._bastions.values()), {}
        for bastion in bastions:
            if bastion.client is not None:
                end_transport(bastion.client)


def _connect(user: str | None, host: str, port: int, identity_file: str | None, known: KnownHosts,
             timeout: float) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(VerifyingPolicy(known, host, port))
    disabled = known.disabled_key_algorithms(host, port)
    with refuse_unknown_key_types(host, port, disabled):
        client.connect(host, port=port, username=user, timeout=timeout, banner_timeout=timeout,
                       auth_timeout=timeout, key_filename=identity_file,
                       disabled_algorithms={"keys": disabled} if disabled else None,
                       transport_factory=CollectorTransport)
    return client
