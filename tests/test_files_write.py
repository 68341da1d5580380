"""rdmatool.files.write_atomic: the one way the project replaces a file a reader may be reading."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from rdmatool import files


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_writes_the_bytes_with_exactly_the_mode(tmp_path: Path) -> None:
    old = os.umask(0o077)  # the mode is the caller's, not reduced by the umask
    try:
        files.write_atomic(tmp_path / "a.json", b'{"x": 1}\n')
        files.write_atomic(tmp_path / "drain.txt", b"gpu01\n", mode=0o600)
    finally:
        os.umask(old)
    assert (tmp_path / "a.json").read_bytes() == b'{"x": 1}\n'
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "drain.txt").stat().st_mode) == 0o600
    assert _leftovers(tmp_path) == []


def test_replaces_an_existing_file_and_a_relative_path_works(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "b.txt"
    target.write_bytes(b"old content, longer than the new one\n")
    before = target.stat().st_ino
    files.write_atomic(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert target.stat().st_ino != before  # a new file renamed into place, not the old one rewritten
    monkeypatch.chdir(tmp_path)
    files.write_atomic("c.txt", b"here\n")
    assert (tmp_path / "c.txt").read_bytes() == b"here\n"


def test_a_symlink_at_the_final_name_is_replaced_never_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"must stay\n")
    link = tmp_path / "out.txt"
    link.symlink_to(victim)
    files.write_atomic(link, b"written\n")
    assert victim.read_bytes() == b"must stay\n"
    assert not link.is_symlink() and link.read_bytes() == b"written\n"


def test_the_temporary_file_is_in_the_same_directory_and_everything_is_fsynced(tmp_path: Path, monkeypatch) -> None:
    renames: list[tuple[str, str]] = []
    synced: list[str] = []
    real_replace, real_fsync = os.replace, os.fsync

    def replace(src, dst):
        renames.append((os.fspath(src), os.fspath(dst)))
        real_replace(src, dst)

    def fsync(fd):
        synced.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "fsync", fsync)
    files.write_atomic(tmp_path / "d.txt", b"x")
    (src, dst), = renames
    assert os.path.dirname(src) == str(tmp_path) and dst == str(tmp_path / "d.txt")
    assert os.path.basename(src).startswith(".d.txt.")
    assert synced == ["file", "dir"]  # the content before the rename, the rename after it


@pytest.mark.parametrize("fails", ["fsync", "replace"])
def test_a_failure_leaves_the_old_file_and_no_temporary_file(tmp_path: Path, monkeypatch, fails: str) -> None:
    target = tmp_path / "e.txt"
    target.write_bytes(b"old\n")

    def broken(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, fails, broken)
    with pytest.raises(OSError, match="No space left"):
        files.write_atomic(target, b"new\n")
    monkeypatch.undo()
    assert target.read_bytes() == b"old\n"
    assert _leftovers(tmp_path) == []


def test_a_directory_at_the_final_name_or_a_missing_directory_is_an_oserror(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    with pytest.raises(OSError):
        files.write_atomic(tmp_path / "dir", b"x")
    assert (tmp_path / "dir").is_dir() and _leftovers(tmp_path) == []
    with pytest.raises(FileNotFoundError):
        files.write_atomic(tmp_path / "absent" / "f.txt", b"x")


def test_a_concurrent_reader_sees_the_old_content_or_the_new_never_a_part(tmp_path: Path) -> None:
    target = tmp_path / "f.bin"
    contents = [b"a" * 300_000, b"b" * 200_000]
    files.write_atomic(target, contents[0])
    seen: set[bytes] = set()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.add(target.read_bytes())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(60):
            files.write_atomic(target, contents[i % 2])
    finally:
        done.set()
        reader.join()
    assert seen and seen <= set(contents)
    assert _leftovers(tmp_path) == []
