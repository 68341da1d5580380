"""The merged bundle's files: each kept folder made and its files hard-linked by a few threads, else copied (with the
source's modification time, never through a symlink), a copy's own signature replacing the source's in the store."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rdmatool import files
from rdmatool.bundle import OUTPUTS_FILE, PACK_SUFFIX
from rdmatool.errors import BundleError
from rdmatool.table.sample_columns import MISSING_INT

if TYPE_CHECKING:
    from rdmatool.bundle_ops.merge import _Input

# What a hard link may fail with where a copy still works: another filesystem, a filesystem without links, a file
# this user may read but not link (fs.protected_hardlinks), too many links.
_NO_LINK = {errno.EXDEV, errno.EPERM, errno.EACCES, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP}
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)

# A target's folder of the merged bundle and the files put into it: (snapshot, target, [(file name, source path)],
# packed?) — packed, the one file is the target's outputs pack, put in the snapshot folder itself.
_Folder = tuple[int, str, list[tuple[str, str]], bool]
# What was not linked: (folder, snapshot, target, [(file name, source path)]).
_Left = tuple[str, int, str, list[tuple[str, str]]]


def _folders(loaded: list[_Input]) -> tuple[list[_Folder], list[str]]:
    """Every folder of the kept targets with the files of it that a reader reads — the outputs' raw and side files
    (stored or not: one the store does not know of is parsed by the next reader) and the packet captures — and
    every outputs pack of theirs; regular files only, each one met that is not is named in a note and left out."""
    folders: list[_Folder] = []
    notes: list[str] = []
    for i in loaded:
        for snapshot, target, entries, packed in i.folders:
            if target not in i.keep:
                continue
            placed = []
            for name, src, regular in entries:
                if regular:
                    placed.append((name, src))
                else:
                    where = f"snapshots/{snapshot}/{name}" if packed else f"snapshots/{snapshot}/{target}/{name}"
                    notes.append(f"{i.path}: {where}: not a regular file; left out")
            if placed or not packed:
                folders.append((snapshot, target, placed, packed))
    return folders, notes


class _Linking:
    """The folders made and their files hard-linked by a few threads, while the caller goes on (a context manager:
    the threads are done when it exits, and their first error is raised then). `left`: the files not linked, in
    folder order — every file when copying, else those met after a link failed in a way a copy may not (another
    filesystem, no links there, too many links): the caller copies them."""

    # Folders per task: small enough that the threads finish together, large enough to cost nothing to hand out.
    CHUNK = 256

    def __init__(self, placer: _Placer, tmp: Path, folders: list[_Folder]) -> None:
        self.placer, self.tmp, self.folders = placer, str(tmp), folders
        self.left: list[_Left] = []
        self._pool: ThreadPoolExecutor | None = None
        self._futures: list = []
        self._failed = False

    def __enter__(self) -> _Linking:
        for snapshot in sorted({f[0] for f in self.folders}):
            os.makedirs(f"{self.tmp}/snapshots/{snapshot}", exist_ok=True)
        if not self.placer.link or not self.folders:
            self.left = [(self._dir(f), f[0], f[1], f[2]) for f in self.folders]
            return self
        chunks = [self.folders[k:k + self.CHUNK] for k in range(0, len(self.folders), self.CHUNK)]
        self._pool = ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1)), thread_name_prefix="merge-link")
        self._futures = [self._pool.submit(self._link, chunk) for chunk in chunks]
        return self

    def __exit__(self, *exc_info) -> None:
        if self._pool is None:
            return
        self._pool.shutdown(wait=True)
        for future in self._futures:  # in folder order; the first error stops the merge
            linked, left = future.result()
            self.placer.linked += linked
            self.left += left

    def _dir(self, folder: _Folder) -> str:
        return f"{self.tmp}/snapshots/{folder[0]}" if folder[3] else f"{self.tmp}/snapshots/{folder[0]}/{folder[1]}"

    def _link(self, chunk: list[_Folder]) -> tuple[int, list[_Left]]:
        linked, left = 0, []
        try:
            for folder in chunk:
                if self._failed:
                    break  # the merge is lost already: its error is raised at exit
                linked += self._link_folder(folder, left)
        except BaseException:
            self._failed = True
            raise
        return linked, left

    def _link_folder(self, folder: _Folder, left: list) -> int:
        """Make one folder (a pack's is its snapshot folder, made already) and link its files; what cannot be linked
        goes to `left`. How many were linked."""
        dst_dir = self._dir(folder)
        if not folder[3]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(dst_dir)
        entries = folder[2]
        for k, (name, src) in enumerate(entries):
            if not self.placer.link or not self.placer.try_link(src, f"{dst_dir}/{name}"):
                left.append((dst_dir, folder[0], folder[1], entries[k:]))
                return k
        return len(entries)


def _copy_files(tmp: Path, outputs: dict[str, np.ndarray], left: list[_Left], placer: _Placer) -> None:
    """Copy the files that were not linked; a copy's own signature replaces the source's in the store's columns
    (see `_Placer`)."""
    slots = _signature_slots(outputs)

    def stored(j: int, kind: str) -> list[int]:
        """The signature the store records for output `j`'s raw or side file."""
        return [int(outputs[f"{kind}_size"][j]), int(outputs[f"{kind}_mtime"][j])]

    for dst_dir, snapshot, target, entries in left:
        os.makedirs(dst_dir, exist_ok=True)
        for name, src in entries:
            slot = slots.get((snapshot, target, name), [])
            expected = stored(*slot[0]) if slot else None
            own = placer.place(src, f"{dst_dir}/{name}", expected)
            if own is None:
                continue
            for j, kind in slot:  # every output whose stored signature is the source's (a pack: several)
                if stored(j, kind) == expected:
                    outputs[f"{kind}_size"][j], outputs[f"{kind}_mtime"][j] = own


def _signature_slots(outputs: dict[str, np.ndarray]) -> dict[tuple[int, str, str], list[tuple[int, str]]]:
    """(snapshot, target, file name) -> [(merged output, "raw" | "side")]: where a copy's signature goes. A pack
    (format /3) is the raw and side file of each of its outputs (which its signature signs as both); a folder's
    outputs.json (/2) is the side file of each of its outputs; a /1 folder has one side file per output."""
    slots: dict[tuple[int, str, str], list[tuple[int, str]]] = {}
    sides = (outputs["side_size"] != MISSING_INT).tolist()
    packed = ((outputs["raw_size"] == outputs["side_size"]) & (outputs["raw_mtime"] == outputs["side_mtime"])).tolist()
    for j, (snapshot, target, stem) in enumerate(zip(outputs["snapshot"].tolist(), outputs["target"].tolist(),
                                                     outputs["stem"].tolist())):
        if packed[j]:
            slots.setdefault((snapshot, target, target + PACK_SUFFIX), []).extend([(j, "raw"), (j, "side")])
            continue
        slots[(snapshot, target, stem + ".txt")] = [(j, "raw")]
        if sides[j]:
            slots[(snapshot, target, stem + ".json")] = [(j, "side")]
            slots.setdefault((snapshot, target, OUTPUTS_FILE), []).append((j, "side"))
    return slots


class _Placer:
    """Puts one file of an input into the merged bundle: a hard link where the filesystem allows it, else a copy
    with the source's modification time, never through a symlink."""

    def __init__(self, copy: bool) -> None:
        self.link = not copy
        self.linked = 0
        self.copied = 0

    def try_link(self, src: str, dst: str) -> bool:
        """Hard-link `src` to `dst` (any thread); False, and no more links from then on, when the filesystem or the
        file will not have it (the file is then copied instead); any other error is raised."""
        try:
            os.link(src, dst, follow_symlinks=False)
            return True
        except OSError as exc:
            if exc.errno not in _NO_LINK:
                raise
            self.link = False  # the same for the rest: stop trying
            return False

    def place(self, src: str, dst: str, expected: list[int] | None) -> list[int] | None:
        """Link or copy `src` to `dst`. Returns the copy's own signature when it replaces `expected` (the source's,
        as the store recorded it, and still the source's now), None otherwise (a link, or a source that changed)."""
        if self.link and self.try_link(src, dst):
            self.linked += 1
            return None
        self.copied += 1
        return _copy(src, dst, expected)


def _copy(src: str, dst: str, expected: list[int] | None) -> list[int] | None:
    fd = os.open(src, _READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BundleError(f"{src}: {files.not_regular(st.st_mode) or 'not a regular file'}; not merged")
        out = os.open(dst, _WRITE_FLAGS, 0o644)
        try:
            while chunk := os.read(fd, 1 << 20):
                view = memoryview(chunk)
                while view:  # a write may take less than it was given
                    view = view[os.write(out, view):]
            os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
            own = files.signature(os.fstat(out))
        finally:
            os.close(out)
    finally:
        os.close(fd)
    if expected is not None and files.signature(st) == expected:
        return own
    return None
