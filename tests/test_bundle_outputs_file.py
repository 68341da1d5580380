"""Format /2: a target folder's side data in one `outputs.json` instead of one side file per output (half the files
of a fleet's bundle to write, sync, link and list), read alike, and /1 bundles still read as they are. The writer
now writes /3 (tests/test_bundle_packs.py): the bundles here are its outputs laid out as a /2 writer laid them out
(`unpack`), which every reader still reads."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from rdmatool import bundle as bundle_io
from rdmatool import schemas
from rdmatool.bundle import OUTPUTS_FILE, BundleWriter
from rdmatool.model import CommandResult, Target
from rdmatool.table import frame
from tests.bundle_sides import assert_read_alike, bundle_as_format_1, put_side, unpack

HOSTS = ("gpu01", "gpu02")
T0 = "2026-12-01T02:00:{:02d}+00:00"


def _result(host: str, snapshot: int, parser: str, stdout: str, qualifier: str | None = None,
            error: str | None = None, exit_code: int = 0) -> CommandResult:
    return CommandResult(target=host, parser=parser, command=f"{parser} {qualifier or ''}".strip(), stdout=stdout,
                         exit_code=exit_code, stderr="", qualifier=qualifier, started=T0.format(10 * snapshot),
                         duration_s=0.2, error=error)


def _sysfs(errors: int) -> str:
    base = "/sys/class/infiniband/mlx5_0/ports/1/"
    return (f"{base}counters/symbol_error:{errors}\n{base}counters/port_xmit_wait:{errors * 1000}\n"
            f"{base}state:4: ACTIVE\n{base}phys_state:5: LinkUp\n{base}rate:400 Gb/sec (4X NDR)\n"
            f"{base}link_layer:InfiniBand\n")


def _write(path: Path) -> Path:
    writer = BundleWriter(path)
    for host in HOSTS:
        for snapshot in (0, 1):
            writer.add(snapshot, _result(host, snapshot, "sysfs_counters", _sysfs(5 * snapshot + (host == "gpu02"))))
            writer.add(snapshot, _result(host, snapshot, "loadavg", "0.1 0.2 0.3 1/100 42\n"))
            # a port name the file name cannot hold: the real one is in the side data
            writer.add(snapshot, _result(host, snapshot, "ethtool_stats", "", qualifier="Ethernet1/1",
                                         error="ethtool: no such device", exit_code=1))
    return writer.commit([Target(h, "127.0.0.1") for h in HOSTS],
                         [{"index": 0, "started": T0.format(0)}, {"index": 1, "started": T0.format(10)}], [], 10.0)


@pytest.fixture
def written(tmp_path: Path) -> Path:
    return unpack(_write(tmp_path / "b"))


def _entries(path: Path) -> dict[tuple, CommandResult]:
    loaded = bundle_io.read(path)
    return {(e.snapshot, e.target, e.result.parser, e.result.qualifier): e.result for e in loaded.entries}


def test_a_folders_side_data_is_one_file_the_schema_accepts_and_reads_as_written(written: Path) -> None:
    folders = sorted(d for d in (written / "snapshots").glob("*/*"))
    assert len(folders) == 4
    for folder in folders:
        assert sorted(p.name for p in folder.iterdir()) == [
            "ethtool_stats.Ethernet1_1.txt", "loadavg.txt", OUTPUTS_FILE, "sysfs_counters.txt"]
        doc = json.loads((folder / OUTPUTS_FILE).read_text())
        assert sorted(doc) == ["ethtool_stats.Ethernet1_1", "loadavg", "sysfs_counters"]
        assert schemas.errors("bundle-outputs", doc) == []
    assert json.loads((written / "manifest.json").read_text())["format"] == "rdmatool-bundle/2"
    entries = _entries(written)
    failed = entries[(1, "gpu02", "ethtool_stats", "Ethernet1/1")]
    assert (failed.error, failed.exit_code, failed.started) == ("ethtool: no such device", 1, T0.format(10))
    assert entries[(0, "gpu01", "loadavg", None)].command == "loadavg"


def test_a_format_1_bundle_of_the_same_outputs_reads_the_same(written: Path, tmp_path: Path) -> None:
    old = bundle_as_format_1(shutil.copytree(written, tmp_path / "old"))
    assert not list((old / "snapshots").glob(f"*/*/{OUTPUTS_FILE}"))
    assert len(list((old / "snapshots").glob("*/*/*.json"))) == 12
    assert_read_alike(written, old, min_rows=11)


def test_a_side_file_of_its_own_in_a_folder_with_outputs_json_is_not_read(written: Path) -> None:
    folder = written / "snapshots" / "1" / "gpu01"
    (folder / "loadavg.json").write_text(json.dumps({"error": "planted", "exit_code": 7}))
    result = _entries(written)[(1, "gpu01", "loadavg", None)]
    assert (result.error, result.exit_code) == (None, 0)
    # ...and an output the folder's file has no entry for has no side data (exit 0, no read time)
    put_side(folder, "loadavg", None)
    result = _entries(written)[(1, "gpu01", "loadavg", None)]
    assert (result.error, result.exit_code, result.started, result.command) == (None, 0, None, "")


def test_an_unusable_outputs_file_leaves_its_folder_unread_and_the_others_read(written: Path, tmp_path: Path) -> None:
    folder = written / "snapshots" / "1" / "gpu01"
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"loadavg": {"command": "SECRET"}}))
    (folder / OUTPUTS_FILE).unlink()
    os.symlink(secret, folder / OUTPUTS_FILE)
    loaded = bundle_io.read(written)
    assert not [e for e in loaded.entries if (e.snapshot, e.target) == (1, "gpu01")]
    assert {(e.snapshot, e.target) for e in loaded.entries} == {(0, "gpu01"), (0, "gpu02"), (1, "gpu02")}
    assert loaded.skipped == [f"snapshots/1/gpu01/{OUTPUTS_FILE}: not a regular file (symlink); skipped"]
    assert "SECRET" not in json.dumps([e.result.command for e in loaded.entries])


@pytest.mark.parametrize(("doc", "unread", "why"), [
    ("[1, 2]", {"ethtool_stats", "loadavg", "sysfs_counters"}, "outputs file must be a JSON object"),
    ('{"loadavg": ', {"ethtool_stats", "loadavg", "sysfs_counters"}, "unreadable outputs file"),
    ('{"loadavg": {"exit_code": "x"}, "sysfs_counters": {}}', {"loadavg"}, "entry 'loadavg': key 'exit_code'"),
    ('{"loadavg": [1], "sysfs_counters": {}}', {"loadavg"}, "entry 'loadavg' must be a JSON object"),
])
def test_a_bad_outputs_file_or_entry_skips_what_it_speaks_for_with_the_reason(written: Path, doc: str,
                                                                              unread: set[str], why: str) -> None:
    folder = written / "snapshots" / "0" / "gpu02"
    (folder / OUTPUTS_FILE).write_text(doc)
    loaded = bundle_io.read(written)
    read_here = {e.result.parser for e in loaded.entries if (e.snapshot, e.target) == (0, "gpu02")}
    assert read_here == {"ethtool_stats", "loadavg", "sysfs_counters"} - unread
    assert len(loaded.skipped) == len(unread)
    assert all(line.startswith(f"snapshots/0/gpu02/{OUTPUTS_FILE}: ") and why in line for line in loaded.skipped), \
        loaded.skipped
    assert len({(e.snapshot, e.target) for e in loaded.entries}) == 4 if len(unread) < 3 else 3


def test_a_changed_outputs_file_is_noticed_by_the_store(written: Path) -> None:
    """The store records the folder file's signature for each of its outputs: an edit makes them parsed again."""
    table = frame.load(written)
    before = table.frame[(table.frame["target"] == "gpu01") & (table.frame["snapshot"] == 1)]["time"].unique()
    folder = written / "snapshots" / "1" / "gpu01"
    doc = json.loads((folder / OUTPUTS_FILE).read_text())
    for side in doc.values():
        side["started"] = T0.format(40)
    (folder / OUTPUTS_FILE).write_text(json.dumps(doc, indent=2))
    after = frame.load(written).frame
    now = after[(after["target"] == "gpu01") & (after["snapshot"] == 1)]["time"].unique()
    assert len(before) == len(now) == 1 and now[0] - before[0] == 30.0


def test_the_store_budget_counts_a_folders_outputs_json_once(written: Path) -> None:
    """The store's size budget is 16 times the bundle's text: a folder's outputs.json is one file, however many
    outputs it speaks for."""
    from rdmatool.table import samples_store

    scanned = bundle_io.scan(written)
    raws = sum(p.stat().st_size for p in written.glob("snapshots/*/*/*.txt"))
    sides = sum(p.stat().st_size for p in written.glob(f"snapshots/*/*/{OUTPUTS_FILE}"))
    assert len(scanned.outputs) == 12 and samples_store._text_bytes(scanned) == raws + sides
