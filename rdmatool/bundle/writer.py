"""The bundle writer: outputs go into a hidden sibling directory, every name checked to stay inside it, and `commit`
renames the finished bundle into place (an existing bundle is replaced only once the new one is complete)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import yaml

from rdmatool import __version__
from rdmatool.bundle.names import FORMAT, OUTPUTS_FILE, QUALIFIER, TARGET_NAME, file_stem
from rdmatool.errors import BundleError
from rdmatool.model import CommandResult, Target

# Called with the finished temporary directory and what was written into it, before it is made durable and renamed:
# how the collect service puts the parsed samples beside the raw outputs without the bundle knowing about parsing.
BeforeCommit = Callable[[Path, list[tuple[int, str, Path, CommandResult]]], object]


class BundleWriter:
    """Collects results into a hidden temporary directory; `commit` renames it into place."""

    def __init__(self, final: str | Path) -> None:
        self.final = Path(final).resolve()
        if self.final.exists() and not (self.final / "manifest.json").is_file():
            raise BundleError(f"{self.final}: exists and is not a bundle; refusing to replace it")
        self.final.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.final.parent / f".{self.final.name}.partial-{os.getpid()}"
        if self.tmp.exists():
            shutil.rmtree(self.tmp)
        (self.tmp / "snapshots").mkdir(parents=True)
        self.written: list[tuple[int, str, Path, CommandResult]] = []
        # Each raw output's (size, mtime_ns) and its folder's outputs.json's, as written: what the samples store
        # records of them, without a stat of each file again. An output's entry is whole once its folder's side data
        # is written (`sync_soon`, `commit`).
        self.signatures: dict[Path, tuple[list[int], list[int] | None]] = {}
        # Each target folder's side data, by file stem, and the folders whose outputs.json is not written yet.
        self._sides: dict[Path, dict[str, dict]] = {}
        self._unwritten: set[Path] = set()
        self._inside: Path | None = None  # the temporary snapshots folder, resolved
        self._folders: dict[tuple[int, str], Path] = {}  # the target folders made and checked so far
        # Files made durable while the collection still runs (`sync_soon`): the commit's fsync walk skips them. Each
        # path's write count: an fsync counts for the write it was started after, so a file rewritten while its fsync
        # was under way is synced again at the commit.
        self._writes: dict[str, int] = {}
        self._synced: dict[str, int] = {}
        self._syncing: list = []  # their pending fsyncs (futures), waited for and re-raised by `publish`
        self._sync_pool: ThreadPoolExecutor | None = None

    def add(self, snapshot: int, result: CommandResult) -> None:
        """Write one result's raw output and keep its side data for its folder's outputs.json (written by
        `sync_soon` or `commit`); BundleError (nothing written) when its names are unsafe."""
        folder, stem = self._place(snapshot, result)
        raw = folder / f"{stem}.txt"
        side = {
            "command": result.command,
            "exit_code": result.exit_code,
            "stderr": result.stderr,
            "started": result.started,
            "duration_s": result.duration_s,
            "error": result.error,
        }
        if result.qualifier:
            side["qualifier"] = result.qualifier
        self._note_write(str(raw))  # (re)written: durable only once synced again
        self.signatures[raw] = (_write_new(raw, result.stdout.encode("utf-8")), None)
        self._sides.setdefault(folder, {})[stem] = side
        self._unwritten.add(folder)
        self.written.append((snapshot, result.target, raw, result))

    def _note_write(self, path: str) -> None:
        self._writes[path] = self._writes.get(path, 0) + 1

    def _write_sides(self, folders) -> None:
        """Write the outputs.json of these folders where it is behind their outputs: one file per target folder
        (format /2) where /1 wrote one per output, so a fleet's bundle has half the files to write, sync, link and
        list. The outputs' signatures are completed with its own."""
        for folder in sorted(set(folders) & self._unwritten):
            sides = self._sides[folder]
            path = folder / OUTPUTS_FILE
            self._note_write(str(path))
            signature = _write_new(path, (json.dumps(dict(sorted(sides.items())), indent=1) + "\n").encode("utf-8"))
            for stem in sides:
                raw = folder / f"{stem}.txt"
                self.signatures[raw] = (self.signatures[raw][0], signature)
            self._unwritten.discard(folder)

    def sync_soon(self, written: list[tuple[int, str, Path, CommandResult]]) -> None:
        """Write the side data of these written outputs' folders, and start making the outputs and their folders'
        outputs.json durable now, in a few threads of the writer's own, so that a collection's commit does not fsync
        thousands of files after its last host answered (0.3-2 s on the benchmarks' machine) and no collecting thread
        waits for its own files' journal commits. Not thread-safe against `add` of the same files: call it after
        them, as the collect service does under its lock."""
        folders = list(dict.fromkeys(raw.parent for _, _, raw, _ in written))
        self._write_sides(folders)
        if self._sync_pool is None:
            self._sync_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="bundle-fsync")
        paths = [str(raw) for _, _, raw, _ in written] + [str(folder / OUTPUTS_FILE) for folder in folders]
        for path in paths:
            self._syncing.append(self._sync_pool.submit(self._sync_one, path, self._writes.get(path, 0)))

    def _sync_one(self, path: str, write: int) -> None:
        _fsync(path)
        self._synced[path] = write

    def _durable(self) -> set[str]:
        """The files synced since their last write (call once the fsyncs are finished)."""
        return {path for path, write in self._synced.items() if self._writes.get(path) == write}

    def _finish_syncing(self) -> None:
        """Wait for the fsyncs `sync_soon` started; the first failure is raised (the bundle is then not published)."""
        pool, self._sync_pool = self._sync_pool, None
        if pool is None:
            return
        pool.shutdown(wait=True)
        pending, self._syncing = self._syncing, []
        for future in pending:
            future.result()

    def _place(self, snapshot: int, result: CommandResult) -> tuple[Path, str]:
        """The folder and file stem of a result, checked to stay inside the temporary bundle: the target, parser and
        qualifier come from the inventory and the hosts' answers, and a name like `../../etc/cron.d/x` must not
        become a path. The folder is made here, once per snapshot and target."""
        from rdmatool import parsers  # the registry imports every parser: only a writer needs it

        def refuse(why: str) -> BundleError:
            return BundleError(f"refusing to write output target={result.target!r} parser={result.parser!r} "
                               f"qualifier={result.qualifier!r}: {why}")

        if isinstance(snapshot, bool) or not isinstance(snapshot, int) or snapshot < 0:
            raise refuse(f"snapshot {snapshot!r} is not a non-negative integer")
        if not isinstance(result.target, str) or not TARGET_NAME.fullmatch(result.target):
            raise refuse("not a safe target name (letters, digits, '_.-', starting with a letter or digit)")
        if not isinstance(result.parser, str) or result.parser not in parsers.registry():
            raise refuse("not a registered parser")
        if result.qualifier is not None and (not isinstance(result.qualifier, str)
                                             or not QUALIFIER.fullmatch(result.qualifier)):
            raise refuse("not a safe qualifier")
        stem = file_stem(result.parser, result.qualifier)
        folder = self._folders.get((snapshot, result.target))
        if folder is None:
            folder = self.tmp / "snapshots" / str(snapshot) / result.target
            for level in (folder.parent, folder):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(level)
            if self._inside is None:
                self._inside = (self.tmp / "snapshots").resolve()
            # Resolved, not assumed: a symlink or `..` anywhere on the way would show here. Once per folder; each
            # file is then opened with O_NOFOLLOW (a link at its name is refused, never written through) — what
            # resolving each file would check, at a fraction of the system calls: a collection writes thousands.
            if folder.resolve() != self._inside / str(snapshot) / result.target:
                raise refuse(f"{folder} resolves outside the bundle")
            self._folders[(snapshot, result.target)] = folder
        return folder, stem

    def commit(self, targets: list[Target], snapshots: list[dict], failures: list[dict], interval_s: float,
               before_commit: BeforeCommit | None = None) -> Path:
        self._write_sides(self._unwritten)
        manifest = {
            "format": FORMAT,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "rdmatool_version": __version__,
            "interval_s": interval_s,
            "snapshots": snapshots,
            "targets": [recorded(t) for t in targets],
            "failures": failures,
        }
        (self.tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        (self.tmp / "inventory.yaml").write_text(
            yaml.safe_dump({"targets": [recorded(t) for t in targets]}, sort_keys=False), encoding="utf-8"
        )
        if before_commit is not None:
            # Files the caller adds (the parsed samples) are recorded under the temporary name; their signatures
            # (size, mtime) survive the rename below.
            before_commit(self.tmp, self.written)
        return self.publish()

    def publish(self, sync_each: bool = True) -> Path:
        """Make the finished temporary directory durable and rename it into place, swapping out an existing bundle
        only now. `sync_each`: fsync every file (what a collection writes: the work stays its own files'); False
        syncs the bundle's filesystem once instead, for a writer of hundreds of thousands of files (a merge), where
        one fsync each would take longer than the writing."""
        self._finish_syncing()
        if sync_each:
            _fsync_tree(self.tmp, skip=self._durable())
        else:
            sync_filesystem(self.tmp)
        if self.final.exists():
            # Swap: the old bundle stays whole until the new one is complete under its own name.
            old = self.final.parent / f".{self.final.name}.old-{os.getpid()}"
            os.rename(self.final, old)
            os.rename(self.tmp, self.final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(self.tmp, self.final)
        return self.final

    def abort(self) -> None:
        if self._sync_pool is not None:
            self._sync_pool.shutdown(wait=True, cancel_futures=True)
            self._sync_pool = None
        shutil.rmtree(self.tmp, ignore_errors=True)


def recorded(target: Target) -> dict:
    """A target as a bundle records it: what it is, not how this machine reached it. The key file is a path of the
    collecting machine (often absolute), meaningless anywhere else and not the bundle's business to publish."""
    out = target.public()
    out.pop("identity_file", None)
    return out


def sync_filesystem(path: Path) -> None:
    """Everything written to the filesystem holding `path` made durable, in one call: syncfs(2) where the C library
    has it (Linux), sync(2) otherwise. OSError when the kernel reports a write-back error, as fsync would.

    Not for a collection: syncfs also writes back whatever else is dirty on that filesystem (a node's checkpoints),
    and its cost is then not bounded by the bundle's. Tried for collections of 128 hosts against one fsync per
    file, side by side: no better (client CPU 0.98x, 0.70-1.28x run to run; benchmarks/README.md §1)."""
    import ctypes  # only here: a small bundle never needs it

    try:
        syncfs = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"syncfs: {os.strerror(err)}", str(path))
    finally:
        os.close(fd)


def _write_new(path: Path, data: bytes) -> list[int]:
    """Write `data` as the file `path` (replacing a regular file of ours written before) and return its signature
    (size, mtime_ns). O_NOFOLLOW: a symlink at that name is refused, never written through. Plain system calls,
    not `open()`: a collection writes thousands of files from many threads, and the buffered file object adds a
    stat, an isatty ioctl and a seek to each (each a release and retake of the interpreter lock)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BundleError(f"refusing to write {path}: a symlink; it resolves outside the bundle") from None
        raise
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return [st.st_size, st.st_mtime_ns]


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _fsync_tree(root: Path, skip: set[str] = frozenset()) -> None:
    """fsync every file under root, many at once: a journaling filesystem commits concurrent fsyncs together, where
    one after the other each waits for its own commit (a 128-host bundle's 4,000 files: 0.9-6 s serially, about a
    third of it with 16 threads, on the benchmarks' machine). Listed by os.walk (the directory entries' types, no
    stat per file). `skip`: files already made durable since they were last written."""
    paths = [os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names]
    if skip:
        paths = [path for path in paths if path not in skip]
    if len(paths) < 64:
        for path in paths:
            _fsync(path)
        return
    with ThreadPoolExecutor(max_workers=16, thread_name_prefix="fsync") as pool:
        for _ in pool.map(_fsync, paths):  # re-raises the first failure
            pass


def _fsync(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symlink is no file of ours: nothing of the bundle to make durable
            return
        raise
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
