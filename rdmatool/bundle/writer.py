"""The bundle writer: outputs go into a hidden sibling directory, every name checked to stay inside it, and `commit`
renames the finished bundle into place (an existing bundle is replaced only once the new one is complete).

Each target's outputs of a snapshot are written as one outputs pack (format /3, `snapshots/<i>/<target>.outputs`)
once the target is done (`sync_soon`) or at the commit: one file to create, sync, link and list where format /2 had
a raw file per output and an `outputs.json`."""

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
from rdmatool.bundle.names import FORMAT, PACK_FORMAT, PACK_SUFFIX, QUALIFIER, TARGET_NAME, file_stem
from rdmatool.errors import BundleError
from rdmatool.model import CommandResult, Target

# Called with the finished temporary directory and what was written into it, before it is made durable and renamed:
# how the collect service puts the parsed samples beside the raw outputs without the bundle knowing about parsing.
BeforeCommit = Callable[[Path, list[tuple[int, str, Path, CommandResult]]], object]


class BundleWriter:
    """Collects results into a hidden temporary directory; `commit` renames it into place."""

    def __init__(self, final: str | Path) -> None:
        self.final = Path(final).resolve()
        self.tmp = self.final.parent / f".{self.final.name}.partial-{os.getpid()}"
        try:
            if self.final.exists() and not (self.final / "manifest.json").is_file():
                raise BundleError(f"{self.final}: exists and is not a bundle; refusing to replace it")
            self.final.parent.mkdir(parents=True, exist_ok=True)
            if self.tmp.exists():
                shutil.rmtree(self.tmp)
            (self.tmp / "snapshots").mkdir(parents=True)
        except OSError as exc:  # a folder this user may not write: bad input, named before any host is read
            why = "Not a directory" if isinstance(exc, FileExistsError) else exc.strerror or exc  # a file on its path
            raise BundleError(f"{self.final}: cannot write ({why})") from None
        # Each output as (snapshot, target, its name `<pack>/<stem>.txt`, result), in the order added.
        self.written: list[tuple[int, str, Path, CommandResult]] = []
        # Each output's (raw, side) signatures, by name: both its pack's (size, mtime_ns) as written — what the
        # samples store records of them, without a stat again. Set when its pack is written (`sync_soon`, `commit`).
        self.signatures: dict[Path, tuple[list[int], list[int] | None]] = {}
        # Each pack's outputs so far, by stem, and the packs not written since their last output.
        self._packs: dict[Path, dict[str, CommandResult]] = {}
        self._unwritten: set[Path] = set()
        self._inside: Path | None = None  # the temporary snapshots folder, resolved
        self._snapshot_dirs: dict[int, Path] = {}  # the snapshot folders made and checked so far
        # Files made durable while the collection still runs (`sync_soon`): the commit's fsync walk skips them. Each
        # path's write count: an fsync counts for the write it was started after, so a file rewritten while its fsync
        # was under way is synced again at the commit.
        self._writes: dict[str, int] = {}
        self._synced: dict[str, int] = {}
        self._syncing: list = []  # their pending fsyncs (futures), waited for and re-raised by `publish`
        self._sync_pool: ThreadPoolExecutor | None = None

    def add(self, snapshot: int, result: CommandResult) -> None:
        """Keep one result for its target's pack (written by `sync_soon` or `commit`); BundleError (nothing kept)
        when its names are unsafe. A result added again under the same name replaces the first."""
        pack, stem = self._place(snapshot, result)
        self._packs.setdefault(pack, {})[stem] = result
        self._unwritten.add(pack)
        self.written.append((snapshot, result.target, pack / f"{stem}.txt", result))

    def _note_write(self, path: str) -> None:
        self._writes[path] = self._writes.get(path, 0) + 1

    def _write_packs(self, packs) -> None:
        """Write these packs where they are behind their outputs, and sign their outputs with them."""
        for pack in sorted(set(packs) & self._unwritten):
            results = self._packs[pack]
            stems = sorted(results, key=lambda stem: stem + ".txt")  # a reader's order: by file name
            self._note_write(str(pack))
            signature = _write_new(pack, pack_bytes([(stem, results[stem]) for stem in stems]))
            for stem in stems:
                self.signatures[pack / f"{stem}.txt"] = (signature, signature)
            self._unwritten.discard(pack)

    def sync_soon(self, written: list[tuple[int, str, Path, CommandResult]]) -> None:
        """Write the packs of these written outputs, and start making them durable now, in a few threads of the
        writer's own, so that a collection's commit does not fsync a fleet's files after its last host answered
        (0.3-2 s on the benchmarks' machine) and no collecting thread waits for its own files' journal commits. Not
        thread-safe against `add` to the same packs: call it after them, as the collect service does under its
        lock."""
        packs = list(dict.fromkeys(raw.parent for _, _, raw, _ in written))
        self._write_packs(packs)
        if self._sync_pool is None:
            self._sync_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="bundle-fsync")
        for path in map(str, packs):
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
        """The pack and file stem of a result, checked to stay inside the temporary bundle: the target, parser and
        qualifier come from the inventory and the hosts' answers, and a name like `../../etc/cron.d/x` must not
        become a path. The snapshot folder is made here, once."""
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
        folder = self._snapshot_dirs.get(snapshot)
        if folder is None:
            folder = self.tmp / "snapshots" / str(snapshot)
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder)
            if self._inside is None:
                self._inside = (self.tmp / "snapshots").resolve()
            # Resolved, not assumed: a symlink or `..` on the way would show here. Once per snapshot; each pack is
            # then opened with O_NOFOLLOW (a link at its name is refused, never written through) — what resolving
            # each file would check, at a fraction of the system calls: a collection writes thousands.
            if folder.resolve() != self._inside / str(snapshot):
                raise refuse(f"{folder} resolves outside the bundle")
            self._snapshot_dirs[snapshot] = folder
        return folder / f"{result.target}{PACK_SUFFIX}", stem

    def commit(self, targets: list[Target], snapshots: list[dict], failures: list[dict], interval_s: float,
               before_commit: BeforeCommit | None = None, extra: dict | None = None) -> Path:
        self._write_packs(self._unwritten)
        manifest = {
            "format": FORMAT,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "rdmatool_version": __version__,
            "interval_s": interval_s,
            "snapshots": snapshots,
            "targets": [recorded(t) for t in targets],
            "failures": failures,
            **(extra or {}),  # more the collection records (`subnet_sweeps`: rdmatool.collect.sweep_record)
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


def pack_bytes(outputs: list[tuple[str, CommandResult]]) -> bytes:
    """An outputs pack of (stem, result) pairs, in the order given: the header line (each output's name, length and
    side data), then the raw outputs as UTF-8. The header is one line: JSON escapes every newline in a value."""
    raws = [result.stdout.encode("utf-8") for _, result in outputs]
    entries = []
    for (stem, result), raw in zip(outputs, raws):
        entry = {"name": stem, "bytes": len(raw), "command": result.command, "exit_code": result.exit_code,
                 "stderr": result.stderr, "started": result.started, "duration_s": result.duration_s,
                 "error": result.error}
        if result.qualifier:
            entry["qualifier"] = result.qualifier
        entries.append(entry)
    header = json.dumps({"format": PACK_FORMAT, "outputs": entries}, separators=(",", ":"))
    return b"".join([header.encode("utf-8"), b"\n", *raws])


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
    file, side by side: no better (client CPU 0.98x, 0.70-1.28x run to run; measured with benchmarks/fanout.py)."""
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
