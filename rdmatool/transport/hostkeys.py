"""SSH host-key verification shared by the host and switch transports.

OpenSSH semantics: a key found in known_hosts must match; an unknown key is refused unless the operator opted in to
`--accept-new-host-keys` (then it is recorded, like `StrictHostKeyChecking=accept-new`); a changed key is refused
always — that is what a man in the middle looks like. So is a key of another type than the ones known for the host
(known with ecdsa, now presenting ed25519): a man in the middle cannot present the known key, but may offer a type
the host never had. It is recorded only when `--accept-new-host-keys` is combined with `--accept-new-key-types`. A key
listed under `@revoked` is refused for every host, whatever else known_hosts says.

The files are read line by line here rather than by paramiko's loader, which stops at the first line it cannot
decode: a line with a marker, an unknown key type, bad base64, binary junk or no end is skipped on its own, and the
other lines still count. `@cert-authority` lines are skipped (host certificates are not verified here), so a host
known only through a CA is an unknown host. Host names match exactly or through OpenSSH's hashed form (`|1|salt|hash`),
as with paramiko's loader; wildcard patterns are not expanded.

The file named by `--known-hosts` is the operator's: one that cannot be read, or cannot be written while new keys are
to be recorded there, is bad input (KnownHostsError, one line naming the path, exit 2) found before any host is
dialled, never a "Permission denied" blamed on each host's reachability. The system and user files stay optional,
as OpenSSH treats them.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import os
import threading
from pathlib import Path

from rdmatool.errors import RdmatoolError
from rdmatool.transport.ssh_library import paramiko

SYSTEM_KNOWN_HOSTS = "/etc/ssh/ssh_known_hosts"
USER_KNOWN_HOSTS = "~/.ssh/known_hosts"
_write_lock = threading.Lock()  # many fan-out threads may learn keys at once; the file must stay whole
_MAX_LINE = 64 * 1024  # a known_hosts line, even with a 16384-bit RSA key, is a few kB; longer is no key line
# The host key algorithms that verify a key of each type (an RSA key signs with SHA-2 under other names).
_ALGORITHMS = {"ssh-rsa": ("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa")}


class KnownHostsError(RdmatoolError):
    """A known_hosts file the collection must read or write and cannot: `PATH: cannot ... (why)`."""


class HostKeyUnknown(paramiko.SSHException):
    pass


class HostKeyChanged(paramiko.SSHException):
    pass


class HostKeyRevoked(HostKeyChanged):
    """The presented key is listed under `@revoked`: refused like a changed key, whatever else is known."""


def other_key_algorithms(key_type: str) -> list[str]:
    """Every host key algorithm paramiko knows except those that verify a key of `key_type`: what to disable so
    that a connection negotiates exactly that type."""
    allowed = set(_ALGORITHMS.get(key_type, (key_type,)))
    return [a for a in paramiko.Transport._preferred_keys if a not in allowed]


def host_key_name(address: str, port: int) -> str:
    return address if port == 22 else f"[{address}]:{port}"


class KnownHosts:
    """The union of the system, user and extra known_hosts files; new keys go to the extra file, else the user's."""

    def __init__(self, extra: str | Path | None = None, accept_new: bool = False,
                 accept_new_key_types: bool = False) -> None:
        self.accept_new = accept_new
        # Meaningful only with accept_new: both must be asked for before a known host may present a new key type.
        self.accept_new_key_types = accept_new_key_types
        self.files = [Path(SYSTEM_KNOWN_HOSTS), Path(os.path.expanduser(USER_KNOWN_HOSTS))]
        if extra:
            self.files.append(Path(os.path.expanduser(str(extra))))
        self.record_to = self.files[-1]
        self._plain: dict[str, list[paramiko.PKey]] = {}  # host name → its keys, in file order
        self._hashed: list[tuple[bytes, bytes, paramiko.PKey]] = []  # (salt, HMAC-SHA1 of the name, key)
        self._revoked: set[tuple[str, bytes]] = set()  # (key type, key blob)
        self._lock = threading.Lock()
        for path in self.files:
            self._load(path, required=bool(extra) and path == self.files[-1])
        if accept_new:
            self._check_writable()

    def _check_writable(self) -> None:
        """The file new keys go to can be appended to (made, with its folders, when absent): checked before any host
        is dialled, so that a collection run as a user who may not write there stops at once, naming the file."""
        try:
            self.record_to.parent.mkdir(parents=True, exist_ok=True)
            with open(self.record_to, "ab"):
                pass
        except OSError as exc:
            why = "Not a directory" if isinstance(exc, FileExistsError) else exc.strerror or exc  # a file on its path
            raise KnownHostsError(f"{self.record_to}: cannot record new host keys there ({why}); "
                                  "give --known-hosts a file this user may write") from None

    # --- reading ------------------------------------------------------------------------------------------------

    def _load(self, path: Path, required: bool = False) -> None:
        """`required`: the file named by --known-hosts, which must be readable when it exists (absent, its hosts are
        unknown); the others count only when they are readable."""
        try:
            if not path.is_file():
                if required and path.exists():
                    raise KnownHostsError(f"{path}: not a known_hosts file (a directory or a device)")
                return
            with open(path, "rb") as handle:
                while True:
                    raw = handle.readline(_MAX_LINE)
                    if not raw:
                        break
                    if not raw.endswith(b"\n") and len(raw) == _MAX_LINE:
                        while raw and not raw.endswith(b"\n"):  # skip the rest of an overlong line
                            raw = handle.readline(_MAX_LINE)
                        continue
                    self._add_line(raw)
        except OSError as exc:
            if required:
                raise KnownHostsError(f"{path}: cannot read ({exc.strerror or exc})") from None
            return  # unreadable: as if absent (OpenSSH ignores it too); its hosts are then unknown, never trusted

    def _add_line(self, raw: bytes) -> None:
        try:
            fields = raw.decode("utf-8").split()
        except UnicodeDecodeError:
            return
        if not fields or fields[0].startswith("#"):
            return
        marker = fields.pop(0) if fields[0].startswith("@") else None
        if marker not in (None, "@revoked") or len(fields) < 3:
            return  # @cert-authority (not verified here), an unknown marker, or a short line
        names, key_type, blob_b64 = fields[:3]
        key = _key(key_type, blob_b64)
        if key is None:
            return
        if marker == "@revoked":
            self._revoked.add((key.get_name(), key.asbytes()))
            return
        for name in names.split(","):
            if name.startswith("|1|"):
                hashed = _hashed_name(name)
                if hashed is not None:
                    self._hashed.append((*hashed, key))
            elif name and not name.startswith("!"):  # a negated pattern names no host to trust
                self._plain.setdefault(name, []).append(key)

    def lookup(self, name: str) -> dict[str, list[paramiko.PKey]]:
        """The keys known for one host name (`address` or `[address]:port`), by key type."""
        found: dict[str, list[paramiko.PKey]] = {}
        with self._lock:
            keys = list(self._plain.get(name, ()))
            hashed = list(self._hashed)
        for salt, digest, key in hashed:
            if hmac.compare_digest(hmac.new(salt, name.encode("utf-8"), hashlib.sha1).digest(), digest):
                keys.append(key)
        for key in keys:
            found.setdefault(key.get_name(), []).append(key)
        return found

    def is_revoked(self, key: paramiko.PKey) -> bool:
        return (key.get_name(), key.asbytes()) in self._revoked

    def disabled_key_algorithms(self, address: str, port: int) -> list[str]:
        """Host key algorithms to leave out of the negotiation with this host: those of key types not known for it.

        OpenSSH prefers the key types it already knows for a host; paramiko would pick its own first choice and the
        host would then look changed. Passed as `disabled_algorithms={"keys": ...}` to paramiko. Empty for an unknown
        host, and when new key types may be learned.
        """
        if self.accept_new and self.accept_new_key_types:
            return []
        known = self.lookup(host_key_name(address, port))
        if not known:
            return []
        allowed = {algorithm for key_type in known for algorithm in _ALGORITHMS.get(key_type, (key_type,))}
        return [a for a in paramiko.Transport._preferred_keys if a not in allowed]

    # --- checking -----------------------------------------------------------------------------------------------

    def check(self, address: str, port: int, key: paramiko.PKey) -> None:
        """Raise HostKeyUnknown / HostKeyChanged (HostKeyRevoked), or record the key when accepting new ones."""
        name = host_key_name(address, port)
        key_type = key.get_name()
        if self.is_revoked(key):
            raise HostKeyRevoked(
                f"the {key_type} host key of {name} is listed as @revoked in known_hosts; refusing to connect"
            )
        known = self.lookup(name)
        if key_type in known:
            if not any(k == key for k in known[key_type]):
                raise HostKeyChanged(
                    f"host key changed for {name} ({key_type}); refusing to connect — verify the host, then "
                    f"remove the old key from {self.record_to} if the change is expected"
                )
            return
        if known:
            if not (self.accept_new and self.accept_new_key_types):
                raise HostKeyChanged(
                    f"{name} presented a {key_type} host key but known_hosts has only {', '.join(sorted(known))} "
                    "for it; refusing to connect — verify the host, then record the new key type with "
                    "--accept-new-host-keys --accept-new-key-types"
                )
        elif not self.accept_new:
            raise HostKeyUnknown(f"unknown host key for {name}; use --accept-new-host-keys to record it")
        self._record(name, key)

    def _record(self, name: str, key: paramiko.PKey) -> None:
        with _write_lock:
            with self._lock:
                self._plain.setdefault(name, []).append(key)
            line = f"{name} {key.get_name()} {key.get_base64()}\n".encode()
            try:
                self.record_to.parent.mkdir(parents=True, exist_ok=True)
                with open(self.record_to, "ab+") as handle:
                    # A file whose last line has no end (edited by hand) would glue the new key onto that line.
                    if handle.seek(0, os.SEEK_END) > 0:
                        handle.seek(-1, os.SEEK_END)
                        if handle.read(1) != b"\n":
                            line = b"\n" + line
                    handle.write(line)
            except OSError as exc:  # writable when the collection began (_check_writable), no longer (disk full)
                raise KnownHostsError(f"{self.record_to}: cannot record the host key of {name} "
                                      f"({exc.strerror or exc})") from None


def _key(key_type: str, blob_b64: str) -> paramiko.PKey | None:
    """The public key of one known_hosts line, or None when paramiko cannot read it (type unknown, bad data)."""
    try:
        blob = base64.b64decode(blob_b64, validate=True)
        key = paramiko.PKey.from_type_string(key_type, blob)
    except Exception:  # paramiko raises many types on a malformed key; such a line is skipped, never fatal
        return None
    return key if key.get_name() == key_type or key_type in _ALGORITHMS.get(key.get_name(), ()) else None


def _hashed_name(entry: str) -> tuple[bytes, bytes] | None:
    """(salt, digest) of a hashed host name `|1|base64 salt|base64 HMAC-SHA1`, None when malformed."""
    parts = entry.split("|")
    if len(parts) != 4 or parts[0] != "" or parts[1] != "1":
        return None
    try:
        salt = base64.b64decode(parts[2], validate=True)
        digest = base64.b64decode(parts[3], validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(salt) != hashlib.sha1().digest_size or len(digest) != hashlib.sha1().digest_size:
        return None
    return salt, digest


class VerifyingPolicy(paramiko.MissingHostKeyPolicy):
    """paramiko calls this only for keys absent from the client's own table, which we keep empty on purpose."""

    def __init__(self, known: KnownHosts, address: str, port: int) -> None:
        self.known, self.address, self.port = known, address, port

    def missing_host_key(self, client, hostname, key) -> None:  # noqa: ARG002 - paramiko's signature
        self.known.check(self.address, self.port, key)


def scan_and_check(known: KnownHosts, address: str, port: int, timeout: float, sock=None) -> paramiko.PKey:
    """Fetch a server's host key without authenticating, check it and return it (used before handing over to
    netmiko, which can then be told to accept exactly that key).

    Only the key types known for the host are negotiated (see `KnownHosts.disabled_key_algorithms`); a host that
    offers none of them is refused as changed.
    """
    import socket

    own = sock is None
    sock = sock or socket.create_connection((address, port), timeout=timeout)
    disabled = known.disabled_key_algorithms(address, port)
    transport = paramiko.Transport(sock, disabled_algorithms={"keys": disabled} if disabled else None)
    try:
        try:
            transport.start_client(timeout=timeout)
        except paramiko.ssh_exception.IncompatiblePeer:
            if not disabled:
                raise
            name = host_key_name(address, port)
            raise HostKeyChanged(
                f"{name} offers none of the host key types known for it; refusing to connect — verify the host"
            ) from None
        key = transport.get_remote_server_key()
        known.check(address, port, key)
        return key
    finally:
        transport.close()
        if own:
            sock.close()


@contextlib.contextmanager
def refuse_unknown_key_types(address: str, port: int, disabled: list[str]):
    """A host that offers none of the key types known for it is refused as changed (not 'incompatible peer')."""
    try:
        yield
    except paramiko.ssh_exception.IncompatiblePeer:
        if not disabled:
            raise
        raise HostKeyChanged(f"{host_key_name(address, port)} offers none of the host key types known for it (its key "
                             "changed?); refusing to connect — verify the host, then record the new key type with "
                             "--accept-new-host-keys --accept-new-key-types") from None
