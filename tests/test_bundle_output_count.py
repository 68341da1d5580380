"""A target's outputs in one snapshot are bounded in number (limits.target_outputs): a pack header or a folder listing
a million of them is skipped whole, named, at once, and the rest of the bundle is read (it took minutes before)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from rdmatool import bundle as bundle_io
from rdmatool import limits
from rdmatool.bundle import PACK_SUFFIX
from tests.test_bundle_packs import _header, _put, _write


@pytest.fixture
def written(tmp_path: Path) -> Path:
    return _write(tmp_path / "b")


def _read(path: Path):
    t0 = time.monotonic()
    contents = bundle_io.read(path)
    return contents, time.monotonic() - t0


def test_a_pack_header_of_a_million_entries_is_skipped_at_once(written: Path) -> None:
    pack = written / "snapshots" / "1" / f"gpu02{PACK_SUFFIX}"
    header, body = _header(pack)
    header["outputs"] += [{"name": f"sysfs_counters.x{i}", "bytes": 0} for i in range(1_000_000)]
    _put(pack, header, body)
    contents, took = _read(written)
    assert took < 10, took  # minutes before the bound (each entry an output down the pipeline)
    assert any(n.startswith(f"snapshots/1/gpu02{PACK_SUFFIX}: the header lists more than 10000 outputs")
               for n in contents.skipped), contents.skipped
    assert {e.target for e in contents.entries if e.result.parser == "loadavg"} == {"gpu01", "gpu02", "gpu03"}


def test_names_written_with_escapes_are_counted_after_the_parse(written: Path) -> None:
    limits.configure({"target_outputs": 100})
    try:
        pack = written / "snapshots" / "0" / f"gpu01{PACK_SUFFIX}"
        header, body = _header(pack)
        header["outputs"] += [{"name": f"loadavg.x{i}", "bytes": 0} for i in range(150)]
        text = json.dumps(header).replace('"name"', '"na\\u006de"').encode()
        _put(pack, text, body)
        contents, _ = _read(written)
    finally:
        limits.configure({})
    assert any("gpu01" in n and "more than 100 outputs (limits.target_outputs)" in n for n in contents.skipped)


def test_a_folder_of_too_many_outputs_is_skipped_naming_it(tmp_path: Path) -> None:
    limits.configure({"target_outputs": 100})
    try:
        demo = Path(__file__).resolve().parent.parent / "examples" / "demo-bundle"
        copy = tmp_path / "demo"
        shutil.copytree(demo, copy)
        folder = copy / "snapshots" / "0" / "gpu03"
        for i in range(300):
            (folder / f"loadavg.x{i}.txt").write_text("")
        contents, _ = _read(copy)
    finally:
        limits.configure({})
    assert "snapshots/0/gpu03: more than 100 outputs (limits.target_outputs); skipped" in contents.skipped
    assert {e.target for e in contents.entries if e.snapshot == 0} >= {"gpu01", "gpu02", "leaf01"}
    assert "gpu03" not in {e.target for e in contents.entries if e.snapshot == 0}
