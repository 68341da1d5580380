"""The samples store's seal: a keyed BLAKE2b MAC over the whole `samples.npz`, with a key that never leaves this
machine's user (`$RDMATOOL_STORE_KEY`, else `$XDG_STATE_HOME/rdmatool/store.key`, `~/.local/state/...` by default).

Why a key: the store holds numbers parsed from the raw outputs, and a reader that trusts it does not parse those
outputs again. A digest without a secret binds nothing, since whoever edits the values can compute it again; a MAC
whose key is outside the bundle can only come from an rdmatool run of this user, so a store that verifies was
written by one, from the outputs whose signatures it records. A store from anyone else (a copied bundle, a
colleague's, a doctored one) does not verify and is parsed again, like any stale store.

Where: the MAC is the zip archive's comment (`SEAL_PREFIX` + 64 hex digits), so the store stays an ordinary `.npz`.
It covers every byte of the file, the comment's own digits read as zeros. No key (a home that cannot be written, a
key file of the wrong size, a symlink): nothing is sealed and nothing verifies — the bundle is then parsed each
time, never trusted without the check.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
from functools import cache
from pathlib import Path

from rdmatool import files

ENV_KEY_FILE = "RDMATOOL_STORE_KEY"
KEY_BYTES = 32
SEAL_PREFIX = b"rdmatool-mac:"
_DIGITS = 2 * KEY_BYTES
SEAL_BYTES = len(SEAL_PREFIX) + _DIGITS
BLANK_SEAL = SEAL_PREFIX + b"0" * _DIGITS  # what the writer puts in the comment before the MAC is known


def key_path() -> Path:
    chosen = os.environ.get(ENV_KEY_FILE)
    if chosen:
        return Path(chosen)
    state = os.environ.get("XDG_STATE_HOME") or str(Path(os.environ.get("HOME") or Path.home()) / ".local" / "state")
    return Path(state) / "rdmatool" / "store.key"


@cache
def _key_at(path: str) -> bytes | None:
    """The key in the file at `path`, created (mode 0600) when absent; None when it cannot be read or made."""
    with contextlib.suppress(FileNotFoundError, files.UnsafeFileError):
        return _checked(files.read_regular_bytes(path, KEY_BYTES))
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Written whole under a temporary name, then linked into place: a concurrent reader never sees half a key,
        # and of two processes creating it at once, one link wins and both read the winner's key.
        scratch = f"{path}.{os.getpid()}.{secrets.token_hex(4)}"
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, secrets.token_bytes(KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):
            os.link(scratch, path)
        os.unlink(scratch)
        return _checked(files.read_regular_bytes(path, KEY_BYTES))
    except (OSError, files.UnsafeFileError):
        return None


def _checked(key: bytes) -> bytes | None:
    return key if len(key) == KEY_BYTES else None


def key() -> bytes | None:
    return _key_at(str(key_path()))


def _mac(data: bytes | memoryview, secret: bytes) -> bytes:
    digest = hashlib.blake2b(key=secret, digest_size=KEY_BYTES)
    digest.update(memoryview(data)[:-_DIGITS])
    digest.update(b"0" * _DIGITS)
    return digest.hexdigest().encode()


def seal(data: memoryview) -> bool:
    """Write the MAC into `data` (a writable view of a store whose archive comment is BLANK_SEAL, the file's last
    bytes); False when there is no key (the store is then left unsealed and will not verify)."""
    secret = key()
    if secret is None or bytes(data[-SEAL_BYTES:]) != BLANK_SEAL:
        return False
    data[-_DIGITS:] = _mac(data, secret)
    return True


def verifies(data: bytes | memoryview) -> bool:
    """Whether `data` (a whole store file) carries a MAC made with this user's key."""
    secret = key()
    view = memoryview(data)
    if secret is None or len(view) < SEAL_BYTES or bytes(view[-SEAL_BYTES:-_DIGITS]) != SEAL_PREFIX:
        return False
    return hmac.compare_digest(bytes(view[-_DIGITS:]), _mac(view, secret))
