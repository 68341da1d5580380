"""A fleet's store is read two members at a time (rdmatool.table.samples_store) from a size on; a small one in one thread.
Both ways must give the same store, and a damaged member the same refusal — checked here on the demo bundle by
lowering the threshold."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from rdmatool.table import frame, samples_store

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo-bundle"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo bundle with a store written by this very code."""
    path = tmp_path_factory.mktemp("store") / "demo"
    shutil.copytree(DEMO, path)
    (path / samples_store.STORE_NAME).unlink(missing_ok=True)
    frame.load(path)  # writes the store
    assert samples_store.load(path) is not None
    return path


def test_the_store_read_two_members_at_a_time_is_the_same_store(demo: Path, monkeypatch) -> None:
    one = samples_store.load(demo)
    monkeypatch.setattr(samples_store, "_THREADED_BYTES", 0)
    two = samples_store.load(demo)
    assert one is not None and two is not None and len(one.arrays["value"]) > 1000
    assert two.strings == one.strings
    for name in one.arrays:
        assert np.array_equal(two.arrays[name], one.arrays[name], equal_nan=name == "value"), name
    for name in one.outputs:
        assert list(two.outputs[name]) == list(one.outputs[name]) or np.array_equal(
            two.outputs[name], one.outputs[name], equal_nan=True), name


def test_a_damaged_member_read_in_threads_still_means_no_store(demo: Path, tmp_path: Path, monkeypatch) -> None:
    """A member that fails to inflate in a worker thread is the same `None` (parse instead) as in the caller's."""
    copy = tmp_path / "demo"
    shutil.copytree(demo, copy, symlinks=True)
    store = copy / samples_store.STORE_NAME
    data = bytearray(store.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 64] = b"\xff" * 64  # inside some member's deflated bytes
    store.write_bytes(bytes(data))
    monkeypatch.setattr(samples_store, "_THREADED_BYTES", 0)
    assert samples_store.load(copy) is None
