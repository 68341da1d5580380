"""A fleet's store is read two members at a time (rdmatool.samples_store) from a size on; a small one in one thread.
Both ways must give the same store, and a damaged member the same refusal — checked here on the demo bundle (with
odd files planted in both snapshots) by lowering the threshold."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from rdmatool import frame, samples_store

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo-bundle"


@pytest.fixture(scope="module")
def odd_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo bundle with its store, and in both snapshots: an odd file name, a symlinked output, a folder that is
    no target name, a stray file beside the targets, and a capture beside a target's outputs."""
    path = tmp_path_factory.mktemp("odd") / "demo"
    shutil.copytree(DEMO, path)
    (path / samples_store.STORE_NAME).unlink(missing_ok=True)
    for snap in ("0", "1"):
        (path / f"snapshots/{snap}/gpu02/ibstat.evil name.txt").write_text("x")
        (path / f"snapshots/{snap}/gpu05/loadavg.txt").unlink()
        os.symlink("/etc/hostname", path / f"snapshots/{snap}/gpu05/loadavg.txt")
        (path / f"snapshots/{snap}/bad name").mkdir()
        (path / f"snapshots/{snap}/stray.txt").write_text("notes")
        (path / f"snapshots/{snap}/gpu03/capture.ens1f0np0.pcap").write_bytes(b"\0" * 24)
    frame.load(path)  # writes the store
    assert samples_store.load(path) is not None
    return path


def test_the_store_read_two_members_at_a_time_is_the_same_store(odd_demo: Path, monkeypatch) -> None:
    one = samples_store.load(odd_demo)
    monkeypatch.setattr(samples_store, "_THREADED_BYTES", 0)
    two = samples_store.load(odd_demo)
    assert one is not None and two is not None and len(one.arrays["value"]) > 1000
    assert two.strings == one.strings
    for name in one.arrays:
        assert np.array_equal(two.arrays[name], one.arrays[name], equal_nan=name == "value"), name
    for name in one.outputs:
        assert list(two.outputs[name]) == list(one.outputs[name]) or np.array_equal(
            two.outputs[name], one.outputs[name], equal_nan=True), name


def test_a_damaged_member_read_in_threads_still_means_no_store(odd_demo: Path, tmp_path: Path, monkeypatch) -> None:
    """A member that fails to inflate in a worker thread is the same `None` (parse instead) as in the caller's."""
    copy = tmp_path / "demo"
    shutil.copytree(odd_demo, copy, symlinks=True)
    store = copy / samples_store.STORE_NAME
    data = bytearray(store.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 64] = b"\xff" * 64  # inside some member's deflated bytes
    store.write_bytes(bytes(data))
    monkeypatch.setattr(samples_store, "_THREADED_BYTES", 0)
    assert samples_store.load(copy) is None
