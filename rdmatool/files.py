"""Reading files that someone else wrote, safely (regular files only, never followed through a symlink, bounded),
and writing files atomically.

A bundle, a baseline or a saved output may come from another machine (a host, a switch, a colleague's laptop): its
files are data to check, not to trust. A symlink in it could point at `/etc/shadow` (whose first line would then end
up in an error message), a FIFO would block a reader forever, `/dev/zero` would fill memory. So every reader of such a
file goes through here:

- `read_regular_bytes(path, max_bytes=None) -> bytes` — the content of a regular file, at most `max_bytes` bytes;
- `read_regular_text(path, max_bytes=None, errors="replace") -> str` — the same decoded as UTF-8 with universal
  newlines (what `Path.read_text` gives), `errors="strict"` to get a `UnicodeDecodeError` (a `ValueError`) on bad
  bytes instead of replacement characters;
- `open_regular(path, max_bytes=None) -> BinaryIO` — the same checks, the file left open for a reader that reads
  it in parts (a zip archive) and bounds what it reads itself;
- `max_output_bytes()` — the default cap: 64 MiB, or the environment variable `RDMATOOL_MAX_OUTPUT_BYTES`.

All three raise `FileNotFoundError` (unchanged) when nothing is at the path — callers for which a file is optional
treat that as "absent" — and `UnsafeFileError` for everything else, with a one-line `reason` that never contains the
file's content: "not a regular file (symlink)", "not a regular file (fifo)", "larger than 67108864 bytes
(RDMATOOL_MAX_OUTPUT_BYTES)", "unreadable (Permission denied)".

How: `lstat` first (so a device or FIFO is never even opened: opening a tape device rewinds it), then `open` with
`O_NOFOLLOW | O_NONBLOCK` (a symlink swapped in after the `lstat` fails with ELOOP; a FIFO swapped in does not
block), then `fstat` on the open descriptor and `S_ISREG`, then at most `max_bytes + 1` bytes are read — one byte
more than allowed tells "exactly at the cap" from "over it" without ever reading an unbounded amount.
Only the last path component is protected from symlinks: directories on the way are the caller's to check (the
bundle reader lists them with `follow_symlinks=False`).

Writing: `write_atomic(path, data, mode=0o644)` is the one way the project replaces a file that a reader may be
reading at the same moment (a baseline, a drain list): readers see the old content or the new, never a part. The
bytes go to a fresh temporary file in the same directory (an unguessable name created with O_EXCL | O_NOFOLLOW, so
a name planted in advance, a symlink included, is never written through), which is fsynced, given `mode` exactly
(not reduced by the umask: the modes are chosen by the callers) and `os.replace`d onto `path`; then the directory
is fsynced so that the rename survives a crash. `os.replace` replaces whatever is at `path`, a symlink included,
and never writes through it. On any failure the temporary file is removed, `path` is left as it was and the
`OSError` propagates for the caller to word.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from typing import BinaryIO

from rdmatool.errors import RdmatoolError

ENV_MAX_BYTES = "RDMATOOL_MAX_OUTPUT_BYTES"
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20


class UnsafeFileError(RdmatoolError):
    """A file that is not read: not a regular file, too large, or unreadable. `str()` is `PATH: reason`."""

    def __init__(self, path: str | os.PathLike, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


def max_output_bytes() -> int:
    """The per-file cap: `RDMATOOL_MAX_OUTPUT_BYTES` when set to a positive integer, else 64 MiB.

    Read at each call so a test or a wrapper script can change it; an unusable value is an error rather than a
    silent fallback, because the admin who set it meant something.
    """
    value = os.environ.get(ENV_MAX_BYTES)
    if value is None or not value.strip():
        return DEFAULT_MAX_BYTES
    try:
        cap = int(value.strip())
    except ValueError:
        raise RdmatoolError(f"{ENV_MAX_BYTES}={value!r}: not an integer number of bytes") from None
    if cap < 0:
        raise RdmatoolError(f"{ENV_MAX_BYTES}={value!r}: must not be negative")
    return cap


def kind_of(mode: int) -> str:
    """A short name for a file type, for the reason of a refusal."""
    for test, name in ((stat.S_ISLNK, "symlink"), (stat.S_ISFIFO, "fifo"), (stat.S_ISDIR, "directory"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "unknown type"


def not_regular(mode: int) -> str | None:
    """The refusal reason for a file of this mode (from `lstat`), None for a regular file."""
    return None if stat.S_ISREG(mode) else f"not a regular file ({kind_of(mode)})"


def _open_checked(path: str, limit: int | None) -> tuple[int, os.stat_result]:
    """An open descriptor of the regular file at `path` and its fstat, after the lstat / O_NOFOLLOW / fstat checks
    (and the size check when `limit` is given)."""
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise UnsafeFileError(path, f"unreadable ({exc.strerror or exc})") from None
    reason = not_regular(before.st_mode)
    if reason:
        raise UnsafeFileError(path, reason)
    if limit is not None and before.st_size > limit:
        raise UnsafeFileError(path, _too_large(limit))
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a symlink since the lstat
            raise UnsafeFileError(path, "not a regular file (symlink)") from None
        raise UnsafeFileError(path, f"unreadable ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        reason = not_regular(st.st_mode)
        if reason:
            raise UnsafeFileError(path, reason)
        if limit is not None and st.st_size > limit:
            raise UnsafeFileError(path, _too_large(limit))
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_regular_bytes(path: str | os.PathLike, max_bytes: int | None = None) -> bytes:
    """The content of the regular file at `path` (not through a symlink), at most `max_bytes` (default
    `max_output_bytes()`); FileNotFoundError when absent, UnsafeFileError with the reason otherwise."""
    return read_regular_signed(path, max_bytes)[0]


def read_regular_signed(path: str | os.PathLike, max_bytes: int | None = None) -> tuple[bytes, list[int]]:
    """`read_regular_bytes`, and the signature of the file it read (from the open descriptor, so a file replaced
    by a rename meanwhile cannot lend its signature to the other's content)."""
    limit = max_output_bytes() if max_bytes is None else max_bytes
    path = os.fspath(path)
    fd, st = _open_checked(path, limit)
    try:
        want = limit + 1
        # One read of the announced size (+1 to see the end) is the common case; a file still growing costs more
        # reads, never more than `want` bytes in total.
        first = min(want, st.st_size + 1)
        chunks, got = [], 0
        while got < want:
            try:
                chunk = os.read(fd, min(want - got, _CHUNK if chunks else first))
            except BlockingIOError:
                break
            except OSError as exc:
                raise UnsafeFileError(path, f"unreadable ({exc.strerror or exc})") from None
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    finally:
        os.close(fd)
    if got > limit:
        raise UnsafeFileError(path, _too_large(limit))
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    return data, signature(st)


def open_regular(path: str | os.PathLike, max_bytes: int | None = None) -> BinaryIO:
    """The regular file at `path` (not through a symlink) opened for binary reading, for a reader that reads it in
    parts (a zip archive); refused like `read_regular_bytes` when larger than `max_bytes` (no size check when None).
    The caller bounds what it reads: the file may still grow."""
    fd, _ = _open_checked(os.fspath(path), max_bytes)
    return os.fdopen(fd, "rb")


def read_regular_text(path: str | os.PathLike, max_bytes: int | None = None, errors: str = "replace") -> str:
    """`read_regular_bytes` decoded as UTF-8, line ends translated like `Path.read_text` (universal newlines)."""
    text = read_regular_bytes(path, max_bytes).decode("utf-8", errors)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def write_atomic(path: str | os.PathLike, data: bytes, mode: int = 0o644) -> None:
    """Replace the file at `path` by `data`, atomically and durably (module docstring). The directory must exist.
    OSError on failure, and the file at `path` is then as it was, unless only the closing fsync of the directory
    failed (the new content is then in place, its rename perhaps not yet on disk)."""
    write_atomic_with(path, lambda handle: handle.write(data), mode)


def write_atomic_with(path: str | os.PathLike, fill, mode: int = 0o644) -> None:
    """write_atomic for content that is streamed rather than held: `fill(binary file)` writes it (a packet capture
    of hundreds of MiB). Whatever `fill` raises leaves the file at `path` as it was, and is raised."""
    path = os.fspath(path)
    directory, name = os.path.split(path)
    directory = directory or "."
    # mkstemp: a fresh unguessable name, created exclusively (a planted symlink at that name makes it fail, never
    # redirects the write): the folder may be someone else's bundle.
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, mode)  # mkstemp makes the file 0600
        with os.fdopen(fd, "wb", buffering=1 << 20) as handle:
            fd = -1  # closed by the `with` from here on
            fill(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _too_large(limit: int) -> str:
    return f"larger than {limit} bytes ({ENV_MAX_BYTES})"


__all__ = ["DEFAULT_MAX_BYTES", "ENV_MAX_BYTES", "UnsafeFileError", "kind_of", "max_output_bytes", "not_regular",
           "open_regular", "read_regular_bytes", "read_regular_text", "signature", "signature_of", "write_atomic",
           "write_atomic_with"]


def signature(st: os.stat_result) -> list[int]:
    """What tells a changed file from the one read before without reading it: size and modification time (ns). The
    bundle scan and the samples store compare files by it."""
    return [st.st_size, st.st_mtime_ns]


def signature_of(path: str | os.PathLike) -> list[int] | None:
    """The signature of the file itself (never through a symlink), None when it is absent."""
    try:
        return signature(os.lstat(path))
    except FileNotFoundError:
        return None
