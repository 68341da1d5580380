"""How the host transport sets paramiko up for a fan-out of hundreds of connections from one process.

Measured against OpenSSH (`benchmarks/fanout.py`), what paramiko's defaults cost per connection:
- its reader thread wakes every 0.1 s to look whether the transport was closed: hundreds of idle threads taking
  the GIL ten times a second each while the hosts run the script. `CollectorTransport` looks once a second while
  connecting, and not at all once connected (`blocking_reads`: each read one recv(2), not a poll(2) and a recv(2));
  a session that ends shuts its socket down, so its thread leaves at once.
- its first cipher choice, aes128-ctr, needs a separate HMAC, computed in Python per packet. AES-GCM (an AEAD, no
  separate MAC) is preferred when the server offers it, as every OpenSSH since 6.2 does.
- a key file named in the inventory is parsed per connection, trying RSA, ECDSA and Ed25519 in turn: `identity`
  parses it once per collection and shares the key (a PKey is only read while signing).

The security bar stays OpenSSH's: host keys are verified as for any connection (hostkeys.py); the algorithms
offered are a subset of OpenSSH's client defaults — CBC ciphers, 3DES, MD5 and truncated MACs are not offered.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading

from rdmatool.transport.ssh_library import paramiko

# OpenSSH's default ciphers as paramiko knows them (no chacha20-poly1305 in paramiko), AES-GCM first.
CIPHERS = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr", "aes192-ctr", "aes256-ctr")
# For the CTR ciphers only: encrypt-then-MAC first, as OpenSSH orders them.
MACS = ("hmac-sha2-256-etm@openssh.com", "hmac-sha2-512-etm@openssh.com", "hmac-sha2-256", "hmac-sha2-512",
        "hmac-sha1")
ACTIVE_CHECK_S = 1.0


class CollectorTransport(paramiko.Transport):
    """paramiko's Transport with the algorithm order above and a reader thread that polls once a second."""

    _active_check_timeout = ACTIVE_CHECK_S
    _preferred_ciphers = tuple(c for c in CIPHERS if c in paramiko.Transport._preferred_ciphers)
    _preferred_macs = tuple(m for m in MACS if m in paramiko.Transport._preferred_macs)


def blocking_reads(client: paramiko.SSHClient) -> None:
    """Once connected and authenticated, the reader thread blocks in recv instead of waking at each
    `_active_check_timeout`: a socket with a timeout makes every read a poll(2) then a recv(2), each a release and
    retake of the interpreter lock, and a fan-out of hundreds of sessions reads tens of thousands of packets. The
    timeouts that matter before (banner, key exchange, authentication) are over; a session is ended by
    `end_transport`, whose shutdown returns a blocked recv at once. Not for a ProxyJump session: its socket is a
    channel of the jump host."""
    transport = client.get_transport()
    sock = getattr(transport, "sock", None)
    if isinstance(sock, socket.socket):
        sock.settimeout(None)


def end_transport(client: paramiko.SSHClient) -> None:
    """Close a client so that its reader thread ends now: shut the TCP socket down first (a recv blocked in another
    thread returns), then close, then wait for the thread — a collection that forks its parsers afterwards must not
    find stray threads (parallel.workers)."""
    transport = client.get_transport()
    sock = getattr(transport, "sock", None)
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):  # already closed by the peer
            sock.shutdown(socket.SHUT_RDWR)
    client.close()
    if transport is not None and transport.is_alive() and transport is not threading.current_thread():
        transport.join(ACTIVE_CHECK_S + 1)


class _Identities:
    """Private keys by file, parsed once: (path, size, mtime) → PKey, or None when paramiko could not load it here
    (encrypted without the passphrase, an unknown format); the caller then hands paramiko the file itself, so the
    error message is paramiko's own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[tuple, paramiko.PKey | None] = {}

    def get(self, path: str, passphrase: str | None) -> paramiko.PKey | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        name = (path, st.st_size, st.st_mtime_ns, passphrase is not None)
        with self._lock:
            if name in self._keys:
                return self._keys[name]
        try:
            key = paramiko.PKey.from_path(path, passphrase)  # loads a `-cert.pub` beside it, as key_filename does
        except Exception:  # any reason at all: paramiko's own loading path reports it
            key = None
        with self._lock:
            self._keys[name] = key
        return key


_IDENTITIES = _Identities()


def identity(path: str, passphrase: str | None) -> paramiko.PKey | None:
    """The private key in `path`, parsed once per process and shared by every connection that uses it."""
    return _IDENTITIES.get(path, passphrase)
