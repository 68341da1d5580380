"""Format /3: a target's outputs of a snapshot in one outputs pack (`snapshots/<i>/<target>.outputs`: a JSON header
line, then the raw outputs), one file where /2 had a raw file per output and an outputs.json. Read as /2 reads its
folders, trusted by the store on its signature without being opened, and read as untrusted data: a pack that is
not one, or an entry of the wrong shape, is skipped with one line naming it, and the rest of the bundle is read."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import jsonschema
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rdmatool import bundle as bundle_io
from rdmatool import parsers, schemas
from rdmatool.bundle import PACK_SUFFIX, BundleWriter, reader
from rdmatool.model import Target
from rdmatool.table import frame, samples_store
from rdmatool.table.column_codes import as_texts
from tests.bundle_sides import assert_read_alike, read_pack, unpack, write_pack
from tests.test_bundle_outputs_file import T0, _entries, _result, _sysfs

HOSTS = ("gpu01", "gpu02", "gpu03")


def _write(path: Path) -> Path:
    writer = BundleWriter(path)
    for host in HOSTS:
        for snapshot in (0, 1):
            writer.add(snapshot, _result(host, snapshot, "sysfs_counters", _sysfs(5 * snapshot + HOSTS.index(host))))
            writer.add(snapshot, _result(host, snapshot, "loadavg", "0.1 0.2 0.3 1/100 42\n"))
            # a port name a file name cannot hold: the pack keeps the real one
            writer.add(snapshot, _result(host, snapshot, "ethtool_stats", "", qualifier="Ethernet1/1",
                                         error="ethtool: no such device", exit_code=1))
    return writer.commit([Target(h, "127.0.0.1") for h in HOSTS],
                         [{"index": 0, "started": T0.format(0)}, {"index": 1, "started": T0.format(10)}], [], 10.0,
                         before_commit=samples_store.write_for)


@pytest.fixture
def written(tmp_path: Path) -> Path:
    return _write(tmp_path / "b")


def _count(monkeypatch, module, name: str) -> list:
    calls: list = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args[0] if args else None)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


# ------------------------------------------------------------------------------------------------ what is written


def test_the_writer_writes_one_pack_per_target_and_snapshot_that_the_schema_accepts(written: Path) -> None:
    assert json.loads((written / "manifest.json").read_text())["format"] == "rdmatool-bundle/3"
    entries = sorted(p.relative_to(written / "snapshots").as_posix() for p in (written / "snapshots").glob("*/*"))
    assert entries == [f"{s}/{h}{PACK_SUFFIX}" for s in (0, 1) for h in HOSTS]
    for pack in (written / "snapshots").glob("*/*"):
        header = json.loads(pack.read_bytes().partition(b"\n")[0])
        assert schemas.errors("bundle-pack", header) == []
        # in the order a /2 folder's files were read: by file name
        assert [e["name"] for e in header["outputs"]] == ["ethtool_stats.Ethernet1_1", "loadavg", "sysfs_counters"]
        assert pack.stat().st_size == len(pack.read_bytes().partition(b"\n")[0]) + 1 + sum(
            e["bytes"] for e in header["outputs"])
    entries = _entries(written)
    assert len(entries) == 18
    failed = entries[(1, "gpu02", "ethtool_stats", "Ethernet1/1")]
    assert (failed.error, failed.exit_code, failed.started) == ("ethtool: no such device", 1, T0.format(10))
    load = entries[(0, "gpu01", "loadavg", None)]
    assert (load.command, load.stdout, load.duration_s) == ("loadavg", "0.1 0.2 0.3 1/100 42\n", 0.2)


def test_a_pack_bundle_reads_as_the_same_outputs_in_folders(written: Path, tmp_path: Path) -> None:
    """The same outputs laid out as a /2 writer laid them out: the same entries, the same table, the same notes."""
    folders = unpack(shutil.copytree(written, tmp_path / "folders"))
    assert not list((folders / "snapshots").glob(f"*/*{PACK_SUFFIX}"))
    assert_read_alike(written, folders, min_rows=31)


def test_a_text_with_carriage_returns_and_bad_utf8_reads_as_a_raw_file_does(tmp_path: Path) -> None:
    writer = BundleWriter(tmp_path / "b")
    writer.add(0, _result("gpu01", 0, "loadavg", "0.1 0.2 0.3 1/100 42\r\n"))
    path = writer.commit([Target("gpu01", "127.0.0.1")], [{"index": 0}], [], 0.0)
    pack = path / "snapshots" / "0" / f"gpu01{PACK_SUFFIX}"
    data = pack.read_bytes()
    pack.write_bytes(data.replace(b"42\r\n", b"4\xff\r\n"))  # same length: the header still accounts for it
    raw = tmp_path / "raw.txt"
    raw.write_bytes(b"0.1 0.2 0.3 1/100 4\xff\r\n")
    from rdmatool import files

    assert _entries(path)[(0, "gpu01", "loadavg", None)].stdout == files.read_regular_text(raw)


# ------------------------------------------------------------------------------------------------ the store


def test_a_current_store_is_trusted_without_opening_a_pack(written: Path, monkeypatch) -> None:
    assert samples_store.load(written) is not None
    opened = _count(monkeypatch, reader, "_pack")
    parsed = _count(monkeypatch, parsers, "parse")
    table = frame.load(written, write_store=False)
    assert len(table.frame) > 30 and opened == [] and parsed == []


def test_an_edited_pack_is_parsed_again_alone(written: Path, monkeypatch) -> None:
    pack = written / "snapshots" / "1" / f"gpu02{PACK_SUFFIX}"
    outputs = read_pack(pack)
    side, text = outputs["sysfs_counters"]
    outputs["sysfs_counters"] = (side, text.replace("symbol_error:6\n", "symbol_error:9\n"))
    before = pack.stat()
    write_pack(pack, outputs)
    assert pack.stat().st_size == before.st_size
    os.utime(pack, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))  # a coarse clock still sees the edit
    parsed = _count(monkeypatch, parsers, "parse")
    table = frame.load(written)
    assert sorted(parsed) == ["loadavg", "sysfs_counters"]  # that pack's outputs (one failed: not parsed), no other
    f = table.frame
    errors = f[(f["target"] == "gpu02") & (f["snapshot"] == 1) & (f["metric"] == "symbol_errors")]["value"]
    assert errors.tolist() == [9.0]
    parsed.clear()
    again = frame.load(written, write_store=False)  # the store was written back: current again
    assert parsed == []
    pd.testing.assert_frame_equal(again.frame, table.frame)
    pd.testing.assert_frame_equal(as_texts(table.frame), as_texts(frame.load(unpack(written), write_store=False).frame))


def test_a_pack_removed_or_added_is_noticed(written: Path, tmp_path: Path) -> None:
    (written / "snapshots" / "0" / f"gpu03{PACK_SUFFIX}").unlink()
    shutil.copy2(written / "snapshots" / "1" / f"gpu01{PACK_SUFFIX}", written / "snapshots" / "1" / f"gpu04{PACK_SUFFIX}")
    table = frame.load(written)
    f = table.frame
    assert f[(f["target"] == "gpu03") & (f["snapshot"] == 0)].empty
    assert not f[(f["target"] == "gpu03") & (f["snapshot"] == 1)].empty
    assert set(f[f["snapshot"] == 1]["target"]) == {"gpu01", "gpu02", "gpu03", "gpu04"}
    fresh = shutil.copytree(written, tmp_path / "fresh")
    (fresh / samples_store.STORE_NAME).unlink()
    pd.testing.assert_frame_equal(as_texts(frame.load(fresh, write_store=False).frame), as_texts(f))


def test_the_store_budget_counts_a_pack_once(written: Path) -> None:
    scanned = bundle_io.scan(written)
    assert scanned.outputs == [] and len(scanned.packs) == 6
    assert samples_store._text_bytes(scanned) == sum(p.stat().st_size for p in written.glob("snapshots/*/*"))


# ------------------------------------------------------------------------------------------------ untrusted packs


def _header(pack: Path) -> tuple[dict, bytes]:
    head, _, body = pack.read_bytes().partition(b"\n")
    return json.loads(head), body


def _put(pack: Path, header: dict | bytes, body: bytes) -> None:
    head = header if isinstance(header, bytes) else json.dumps(header).encode()
    pack.write_bytes(head + b"\n" + body)


def _bad_header(change):
    def apply(pack: Path) -> None:
        header, body = _header(pack)
        _put(pack, change(header) or header, body)
    return apply


def _set_bytes(value):
    def change(header: dict) -> None:
        header["outputs"][1]["bytes"] = value
    return change


def _twice(header: dict) -> None:
    header["outputs"][2]["name"] = header["outputs"][1]["name"]


@pytest.mark.parametrize(("damage", "why"), [
    (lambda pack: pack.write_bytes(b"no header line at all"), "no header line"),
    (lambda pack: _put(pack, b"{not json", b""), "unreadable header"),
    (_bad_header(lambda h: h.update(format="rdmatool-outputs/9")), "header format 'rdmatool-outputs/9'"),
    (_bad_header(lambda h: h.update(outputs={"loadavg": {}})), "header key 'outputs': expected a list"),
    (_bad_header(lambda h: h["outputs"].append(7)), "header outputs[3]: expected an object"),
    (_bad_header(_set_bytes(-1)), "header outputs[1] key 'bytes'"),
    (_bad_header(_set_bytes(True)), "header outputs[1] key 'bytes'"),
    (_bad_header(_set_bytes(10**9)), "the header accounts for"),
    (_bad_header(lambda h: h["outputs"][0].update(name=5)), "header outputs[0] key 'name'"),
    (_bad_header(_twice), "named twice"),
    (lambda pack: pack.write_bytes(pack.read_bytes()[:-3]), "the header accounts for"),
    (lambda pack: pack.write_bytes(pack.read_bytes() + b"more"), "the header accounts for"),
])
def test_a_pack_that_is_not_one_is_skipped_whole_naming_it_and_the_rest_is_read(written: Path, damage, why) -> None:
    pack = written / "snapshots" / "1" / f"gpu02{PACK_SUFFIX}"
    damage(pack)
    loaded = bundle_io.read(written)
    assert {(e.snapshot, e.target) for e in loaded.entries} == {(s, h) for s in (0, 1) for h in HOSTS} - {(1, "gpu02")}
    assert len(loaded.skipped) == 1 and loaded.skipped[0].startswith(f"snapshots/1/gpu02{PACK_SUFFIX}: ")
    assert why in loaded.skipped[0] and loaded.skipped[0].endswith("; skipped"), loaded.skipped
    table = frame.load(written)  # the table and the store say the same
    assert table.skipped == loaded.skipped
    assert table.frame[(table.frame["target"] == "gpu02") & (table.frame["snapshot"] == 1)].empty


@pytest.mark.parametrize(("entry", "why"), [
    ({"exit_code": "x"}, "output 'loadavg': key 'exit_code'"),
    ({"started": 5}, "output 'loadavg': key 'started'"),
    ({"duration_s": "long"}, "output 'loadavg': key 'duration_s'"),
])
def test_an_entry_of_the_wrong_shape_skips_that_output_alone(written: Path, entry: dict, why: str) -> None:
    pack = written / "snapshots" / "0" / f"gpu01{PACK_SUFFIX}"
    header, body = _header(pack)
    header["outputs"][1].update(entry)
    _put(pack, header, body)
    loaded = bundle_io.read(written)
    here = {e.result.parser for e in loaded.entries if (e.snapshot, e.target) == (0, "gpu01")}
    assert here == {"ethtool_stats", "sysfs_counters"}
    assert loaded.skipped == [f"snapshots/0/gpu01{PACK_SUFFIX}: {why}" + loaded.skipped[0].split(why, 1)[1]]
    assert loaded.skipped[0].endswith("; skipped")


def test_an_entry_named_as_no_output_file_could_be_is_skipped(written: Path) -> None:
    pack = written / "snapshots" / "0" / f"gpu01{PACK_SUFFIX}"
    header, body = _header(pack)
    header["outputs"][1]["name"] = "../../etc/passwd"
    _put(pack, header, body)
    loaded = bundle_io.read(written)
    assert loaded.skipped == [f"snapshots/0/gpu01{PACK_SUFFIX}: output '../../etc/passwd' is not an output file "
                              "name; skipped"]
    assert len(loaded.entries) == 17


def test_a_pack_that_is_a_symlink_a_fifo_or_too_large_is_never_read(written: Path, tmp_path: Path,
                                                                     monkeypatch) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b'{"format":"rdmatool-outputs/1","outputs":[{"name":"loadavg","bytes":7}]}\nSECRET!')
    linked = written / "snapshots" / "0" / f"gpu01{PACK_SUFFIX}"
    linked.unlink()
    linked.symlink_to(secret)
    fifo = written / "snapshots" / "0" / f"gpu02{PACK_SUFFIX}"
    fifo.unlink()
    os.mkfifo(fifo)
    loaded = bundle_io.read(written)
    assert f"snapshots/0/gpu01{PACK_SUFFIX}: not a regular file (symlink); skipped" in loaded.skipped
    assert f"snapshots/0/gpu02{PACK_SUFFIX}: not a regular file (fifo); skipped" in loaded.skipped
    assert "SECRET" not in json.dumps([e.result.stdout for e in loaded.entries])
    large = written / "snapshots" / "0" / f"gpu03{PACK_SUFFIX}"
    outputs = read_pack(large)
    outputs["loadavg"] = (outputs["loadavg"][0], "0.1 0.2 0.3 1/100 42\n" * 5000)
    write_pack(large, outputs)
    monkeypatch.setenv("RDMATOOL_MAX_OUTPUT_BYTES", "50000")
    capped = bundle_io.read(written)
    assert f"snapshots/0/gpu03{PACK_SUFFIX}: larger than 50000 bytes (RDMATOOL_MAX_OUTPUT_BYTES); skipped" in \
        capped.skipped
    assert {(e.snapshot, e.target) for e in capped.entries} == {(1, "gpu01"), (1, "gpu02"), (1, "gpu03")}


def test_a_folder_beside_its_targets_pack_gives_what_the_pack_lacks(written: Path) -> None:
    folder = written / "snapshots" / "0" / "gpu01"
    folder.mkdir()
    (folder / "loadavg.txt").write_text("9.9 9.9 9.9 1/1 1\n")  # the pack has one: the pack's is read
    # the pack has none: read from here
    (folder / "ethtool_info.txt").write_text("driver: mlx5_core\nversion: 5.8\nfirmware-version: 22.36.1010\n")
    loaded = bundle_io.read(written)
    mine = {e.result.parser: e.result for e in loaded.entries if (e.snapshot, e.target) == (0, "gpu01")}
    assert mine["loadavg"].stdout.startswith("0.1") and "ethtool_info" in mine
    assert loaded.skipped == [f"snapshots/0/gpu01/loadavg.txt: also in snapshots/0/gpu01{PACK_SUFFIX}, whose output "
                              "is read; skipped"]
    table = frame.load(written)
    assert "ethtool_info" in set(table.frame[table.frame["target"] == "gpu01"]["parser"])


def test_a_target_named_like_a_pack_is_a_folder_and_no_pack(tmp_path: Path) -> None:
    """`x.outputs` as a folder is target `x.outputs` of format /2; as a file it is target `x`'s pack."""
    writer = BundleWriter(tmp_path / "b")
    writer.add(0, _result("gpu01", 0, "loadavg", "0.5 0.2 0.3 1/100 42\n"))
    path = writer.commit([Target("gpu01", "127.0.0.1")], [{"index": 0}], [], 0.0)
    folder = path / "snapshots" / "0" / f"gpu09{PACK_SUFFIX}"
    folder.mkdir()
    (folder / "loadavg.txt").write_text("0.7 0.2 0.3 1/100 42\n")
    assert {(t, r.stdout[:3]) for (_, t, _, _), r in _entries(path).items()} == {("gpu01", "0.5"),
                                                                                 (f"gpu09{PACK_SUFFIX}", "0.7")}


# ------------------------------------------------------------------------------------------------ the schema


_NAMES = st.sampled_from(["ibstat", "loadavg", "perfquery.mlx5_0.1", "../x", "", ".hidden", "a b", "ethtool_stats.e0"])
_VALUES = st.one_of(st.none(), st.booleans(), st.integers(min_value=-3, max_value=3), st.sampled_from([1.5, -0.0]),
                    st.text(st.characters(exclude_characters="\n"), max_size=4))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.fixed_dictionaries({}, optional={
    "name": st.one_of(_NAMES, _VALUES), "bytes": st.one_of(st.integers(min_value=-1, max_value=4), _VALUES),
    "exit_code": _VALUES, "started": _VALUES, "duration_s": _VALUES, "error": _VALUES, "other": _VALUES}),
    max_size=3), st.sampled_from(["rdmatool-outputs/1", "rdmatool-outputs/2"]))
def test_the_hand_check_of_a_pack_header_accepts_exactly_what_the_schema_does(entries: list, tag: str) -> None:
    """Every output of a pack is read exactly when the schema accepts its header (and the lengths are the file's,
    and no name is given twice: what a schema cannot say)."""
    header = {"format": tag, "outputs": entries}
    names = [e.get("name") for e in entries]
    lengths = [e.get("bytes") for e in entries]
    body_length = sum(x for x in lengths if isinstance(x, int) and not isinstance(x, bool) and x > 0)
    data = json.dumps(header).encode() + b"\n" + b"x" * body_length
    schema_ok = jsonschema.Draft202012Validator(schemas.load("bundle-pack"),
                                                registry=schemas._registry()).is_valid(header)
    try:
        read = reader._pack_entries(data, "p")
        hand_ok = all(not isinstance(side, str) for _, _, side in read.values()) and all(
            reader.STEM.fullmatch(name) for name in read)
    except reader.OutputSkipped:
        hand_ok = False
    if len(set(map(str, names))) == len(names):  # names given twice: refused by the hand check alone
        assert hand_ok == schema_ok, header
    else:
        assert not hand_ok
