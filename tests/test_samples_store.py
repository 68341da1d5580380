"""The parsed-samples store of a bundle: written with the bundle, read back to the very frame a fresh parse gives,
and never trusted over the raw outputs (edited, added, removed outputs; damaged, foreign or stale stores)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rdmatool import bundle as bundle_io
from rdmatool import files
from rdmatool.bundle import BundleWriter
from rdmatool.model import CommandResult, Target
from rdmatool.table import frame, sample_columns, samples_store
from rdmatool.table.column_codes import as_texts
from tests.bundle_sides import put_side, side_of, unpack

FIXTURES = Path(__file__).parent / "fixtures" / "parsers"
HOSTS = ("gpu01", "gpu02", "gpu03")


def _ethtool(rx_packets: int, pauses: int) -> str:
    return f"NIC statistics:\n     rx_packets: {rx_packets}\n     rx_prio3_pause: {pauses}\n"


def _write(path: Path, *, broken_on: str | None = None) -> Path:
    writer = BundleWriter(path)
    for snapshot in (0, 1):
        when = f"2024-05-01T02:00:{10 * snapshot:02d}+00:00"
        for i, host in enumerate(HOSTS):
            outputs = [
                ("sysfs_counters", None, (FIXTURES / "sysfs_counters" / "ndr_healthy.txt").read_text()),
                ("ethtool_stats", "eth0", _ethtool(1000 * (i + 1) + snapshot * 500, 7 + snapshot)),
                ("loadavg", None, "0.50 0.40 0.30 2/400 12345\n"),
            ]
            if host == broken_on:
                outputs.append(("loadavg", "broken", "this is not a load average\n"))
            for parser, qualifier, text in outputs:
                writer.add(snapshot, CommandResult(target=host, parser=parser, command=parser, stdout=text,
                                                   qualifier=qualifier, started=when))
    return writer.commit([Target(name=h, address=f"10.0.0.{i}") for i, h in enumerate(HOSTS)],
                         [{"index": 0}, {"index": 1}], [], 10.0, before_commit=samples_store.write_for)


def _parsed_afresh(path: Path) -> frame.SampleTable:
    return frame.from_bundle(bundle_io.read(path))


def _same(a: frame.SampleTable, b: frame.SampleTable) -> None:
    pd.testing.assert_frame_equal(as_texts(a.frame), as_texts(b.frame))  # (each over its own string pool)
    assert a.parse_failures == b.parse_failures


def _touch_later(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_collected_bundle_carries_its_store_and_reads_back_the_same_frame(tmp_path: Path) -> None:
    path = _write(tmp_path / "b", broken_on="gpu02")
    assert (path / samples_store.STORE_NAME).is_file()
    stored = samples_store.load(path)
    assert stored is not None and len(stored.outputs["rows"]) == 2 * (3 * len(HOSTS) + 1)
    fresh = _parsed_afresh(path)
    loaded = frame.load(path)
    _same(fresh, loaded)
    assert len(loaded.frame) > 50 and loaded.frame["target"].nunique() == len(HOSTS)
    assert [f.qualifier for f in loaded.parse_failures] == ["broken", "broken"]
    assert "snapshots/0/gpu02/loadavg.broken" in loaded.parse_failures[0].message


def test_exact_integers_survive_the_store(tmp_path: Path) -> None:
    """A 64-bit counter near its wrap does not fit a float; the store keeps it exact, as the fresh parse does."""
    near_wrap = 2**64 - 3
    writer = BundleWriter(tmp_path / "b")
    writer.add(0, CommandResult(target="gpu01", parser="ethtool_stats", command="ethtool -S eth0", qualifier="eth0",
                                stdout=_ethtool(near_wrap, 2**40 + 1), started="2024-05-01T02:00:00+00:00"))
    path = writer.commit([Target(name="gpu01", address="10.0.0.1")], [{"index": 0}], [], 0.0,
                         before_commit=samples_store.write_for)
    loaded = frame.load(path, write_store=False)
    exact = dict(zip(loaded.frame["metric"], loaded.frame["exact"]))
    assert int(exact["rx_packets"]) == near_wrap and float(near_wrap) != near_wrap
    assert exact["rx_pause_frames"] == 2**40 + 1
    _same(_parsed_afresh(path), loaded)


def test_an_edited_output_of_the_same_size_is_parsed_again(tmp_path: Path) -> None:
    path = _folders(_write(tmp_path / "b"))
    raw = path / "snapshots" / "1" / "gpu03" / "ethtool_stats.eth0.txt"
    before = raw.read_text()
    after = before.replace("rx_prio3_pause: 8", "rx_prio3_pause: 9")
    assert after != before and len(after) == len(before)
    raw.write_text(after)
    _touch_later(raw)  # a file system with coarse timestamps must still see the edit
    loaded = frame.load(path)
    pauses = loaded.frame[(loaded.frame["target"] == "gpu03") & (loaded.frame["snapshot"] == 1)
                          & (loaded.frame["metric"] == "rx_pause_frames")]
    assert pauses["value"].tolist() == [9.0]
    _same(_parsed_afresh(path), loaded)
    # ...and the store was rewritten: the next reader takes the edited figure from it without parsing
    stored = samples_store.load(path)
    entry = next(o for o in samples_store.output_list(stored.outputs)
                 if o.target == "gpu03" and o.snapshot == 1 and o.parser == "ethtool_stats")
    assert entry.raw_sig == files.signature_of(raw)


def test_added_and_removed_outputs_are_noticed(tmp_path: Path) -> None:
    path = _folders(_write(tmp_path / "b"))
    (path / "snapshots" / "0" / "gpu01" / "loadavg.txt").unlink()
    put_side(path / "snapshots" / "0" / "gpu01", "loadavg", None)
    extra = path / "snapshots" / "1" / "gpu02" / "ethtool_stats.eth1.txt"
    extra.write_text(_ethtool(42, 1))
    loaded = frame.load(path)
    _same(_parsed_afresh(path), loaded)
    f = loaded.frame
    assert f[(f["target"] == "gpu01") & (f["snapshot"] == 0) & (f["parser"] == "loadavg")].empty
    assert f[(f["target"] == "gpu02") & (f["entity"] == "eth1")]["value"].max() == 42.0


def test_a_store_whose_every_output_went_away_reads_as_no_samples(tmp_path: Path) -> None:
    """Every snapshot folder replaced after the store was written (by files here): no output is left, so no row of
    the store may be either — the table is empty and a diagnosis says there is nothing to judge, never a traceback
    (the stored rows once outlived their outputs and made the series ids fail)."""
    from rdmatool.diagnose.pipeline import diagnose_bundle
    from rdmatool.model import Verdict

    path = _folders(_write(tmp_path / "b"))
    assert samples_store.load(path) is not None
    for snapshot in ("0", "1"):
        folder = path / "snapshots" / snapshot
        for target in folder.iterdir():
            for f in target.iterdir():
                f.unlink()
            target.rmdir()
        folder.rmdir()
        folder.write_text("not a folder any more\n")
    parsed = samples_store.load_or_parse(path)
    assert len(parsed.outputs["rows"]) == 0
    assert all(len(column) == 0 for column in parsed.arrays.values())
    assert frame.load(path).frame.empty
    result = diagnose_bundle(path)
    assert result.verdict is Verdict.INCONCLUSIVE and result.no_data


def test_a_changed_side_file_is_noticed(tmp_path: Path) -> None:
    """The side file says when the output was read and whether the command failed: part of what was parsed."""
    path = _folders(_write(tmp_path / "b"))
    folder = path / "snapshots" / "1" / "gpu01"
    doc = side_of(folder, "loadavg")
    doc["started"] = "2024-05-01T02:00:40+00:00"
    _touch_later(put_side(folder, "loadavg", doc))
    loaded = frame.load(path)
    times = loaded.frame[(loaded.frame["target"] == "gpu01") & (loaded.frame["parser"] == "loadavg")]["time"]
    first, last = sorted(times.unique())
    assert last - first == 40.0
    _same(_parsed_afresh(path), loaded)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "pickled", "foreign_digest", "row_count", "code_range",
                                    "negative_rows", "float_codes"])
def test_a_damaged_or_foreign_store_is_ignored_and_rebuilt(tmp_path: Path, damage: str) -> None:
    path = _write(tmp_path / "b")
    store_file = path / samples_store.STORE_NAME
    good = store_file.read_bytes()
    if damage == "garbage":
        store_file.write_bytes(b"not a zip file at all")
    elif damage == "truncated":
        store_file.write_bytes(good[: len(good) // 2])
    elif damage == "pickled":  # object arrays need pickle to load: refused, never unpickled
        np.savez(store_file, meta=np.array([{"format": samples_store.FORMAT}], dtype=object))
    else:
        with np.load(store_file, allow_pickle=False) as data:
            members = {k: data[k] for k in data.files}
        meta = json.loads(members["meta"].tobytes())
        if damage == "foreign_digest":
            meta["digest"] = "written-by-other-parser-code"
        elif damage == "row_count":
            members["out_rows"] = members["out_rows"] + np.eye(1, len(members["out_rows"]), dtype=np.int64)[0]
        elif damage == "code_range":  # a string code past the pool's end
            members["metric"] = members["metric"].copy()
            members["metric"][0] = len(json.loads(members["strings"].tobytes()))
        elif damage == "negative_rows":  # same total, impossible counts
            rows = members["out_rows"].copy()
            rows[0], rows[1] = rows[0] + rows[1] + 5, -5
            members["out_rows"] = rows
        else:
            members["entity"] = members["entity"].astype(np.float64)
        members["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        with open(store_file, "wb") as handle:
            np.savez(handle, **members)
    assert samples_store.load(path) is None
    _same(_parsed_afresh(path), frame.load(path))
    assert samples_store.load(path) is not None  # rebuilt for the next reader


def test_a_bundle_without_a_store_is_parsed_and_gets_one(tmp_path: Path) -> None:
    """Hand-written bundles (raw files and a manifest only) are first-class."""
    path = _write(tmp_path / "b")
    (path / samples_store.STORE_NAME).unlink()
    loaded = frame.load(path)
    _same(_parsed_afresh(path), loaded)
    assert samples_store.load(path) is not None


def test_an_unwritable_bundle_is_parsed_without_a_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bundle on a read-only share: nothing can be written back, the analysis goes on all the same."""
    path = _write(tmp_path / "b")
    (path / samples_store.STORE_NAME).unlink()
    real_open = open

    def read_only(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+"):
            raise PermissionError(13, "Read-only file system", str(file))
        return real_open(file, mode, *args, **kwargs)

    real_os_open = os.open

    def no_create(file, flags, *args, **kwargs):  # what a temporary file is made with (tempfile.mkstemp)
        if flags & os.O_CREAT:
            raise PermissionError(30, "Read-only file system", str(file))
        return real_os_open(file, flags, *args, **kwargs)

    monkeypatch.setattr("builtins.open", read_only)
    monkeypatch.setattr(os, "open", no_create)
    loaded = frame.load(path)
    monkeypatch.undo()
    assert sorted(p.name for p in path.iterdir()) == ["inventory.yaml", "manifest.json", "snapshots"]
    _same(_parsed_afresh(path), loaded)


def test_store_write_failure_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "b")
    before = (path / samples_store.STORE_NAME).read_bytes()

    def refuse(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", refuse)  # the store is written by files.write_atomic_with
    stored = samples_store.load(path)
    assert not samples_store.save(path, stored.outputs, stored.strings, stored.arrays)
    assert (path / samples_store.STORE_NAME).read_bytes() == before
    assert not [p.name for p in path.iterdir() if p.name.endswith(".tmp")]


def test_parsing_on_every_core_gives_the_same_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Big bundles are parsed by forked workers; the table must not depend on how the work was shared."""
    path = _write(tmp_path / "b", broken_on="gpu03")
    (path / samples_store.STORE_NAME).unlink()
    serial = frame.load(path, write_store=False)
    monkeypatch.setattr(sample_columns, "PARALLEL_MIN", 1)
    monkeypatch.setattr(sample_columns.parallel, "workers", lambda size, minimum: 3)  # more shares than cores
    shared = frame.load(path)
    _same(serial, shared)
    assert len(serial.parse_failures) == 2 and len(serial.frame) > 50
    _same(serial, frame.load(path))  # ...and the store the workers' results were written to reads back the same


def test_a_worker_that_dies_has_its_share_parsed_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "b")
    (path / samples_store.STORE_NAME).unlink()
    serial = frame.load(path, write_store=False)
    parent = os.getpid()
    real = sample_columns.parse_output
    died = tmp_path / "died"

    def dies_in_a_worker(*args):
        if os.getpid() != parent:
            died.touch()
            os._exit(9)  # a worker killed (out of memory, a signal)
        return real(*args)

    monkeypatch.setattr(sample_columns, "parse_output", dies_in_a_worker)
    monkeypatch.setattr(sample_columns.parallel, "workers", lambda size, minimum: 2)
    _same(serial, frame.load(path, write_store=False))
    assert died.exists()  # the worker really ran and really died


def test_a_64bit_wrap_is_exact_through_the_store(tmp_path: Path) -> None:
    """2**64 - 10 then 5: the counter moved by 15, which only exact integers can tell (floats see 2**64 - 10 = 2**64)."""
    writer = BundleWriter(tmp_path / "b")
    for snapshot, value in ((0, 2**64 - 10), (1, 5)):
        writer.add(snapshot, CommandResult(target="gpu01", parser="ethtool_stats", command="ethtool -S eth0",
                                           qualifier="eth0", stdout=_ethtool(value, 1),
                                           started=f"2024-05-01T02:00:{10 * snapshot:02d}+00:00"))
    path = writer.commit([Target(name="gpu01", address="10.0.0.1")], [{"index": 0}, {"index": 1}], [], 10.0,
                         before_commit=samples_store.write_for)
    for table in (frame.load(path), _parsed_afresh(path)):
        rates = frame.rates(table.frame)
        row = rates[rates["metric"] == "rx_packets"].iloc[0]
        assert row["flag"] == "wrap64" and row["delta"] == 15.0 and row["rate"] == 1.5


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_series_ids_group_rows_exactly_as_their_keys_do(data) -> None:
    """Rows share a series id exactly when their output (target, parser, qualifier) and their sample key (entity,
    metric, priority, size_bytes, raw_key) are the same — whatever the codes and numbers, large ones included."""
    n_out = data.draw(st.integers(1, 6))
    rows = np.array(data.draw(st.lists(st.integers(0, 5), min_size=n_out, max_size=n_out)), dtype=np.int64)
    n = int(rows.sum())
    pick = lambda values: np.array(data.draw(st.lists(st.sampled_from(values), min_size=n_out, max_size=n_out)),  # noqa: E731
                                   dtype=object)
    outputs = {"target": pick(["gpu01", "gpu02"]), "parser": pick(["ibstat", "sysfs"]),
               "qualifier": pick([None, "mlx5_0"]), "rows": rows}
    codes = st.lists(st.integers(-1, 3), min_size=n, max_size=n)
    numbers = st.lists(st.sampled_from([sample_columns.MISSING_INT, 0, 3, 7, 2**20, 2**40, -5]), min_size=n, max_size=n)
    arrays = {"entity": np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int32),
              "metric": np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int32),
              "raw_key": np.array(data.draw(codes), dtype=np.int32),
              "priority": np.array(data.draw(numbers), dtype=np.int64),
              "size_bytes": np.array(data.draw(numbers), dtype=np.int64)}
    before = {k: v.copy() for k, v in arrays.items()}
    ids = sample_columns.series_of(outputs, arrays)
    assert all((arrays[k] == before[k]).all() for k in arrays)  # the ids are mixed in place, never in the columns
    # the in-place mixing gives the ids of the definition: tuple_ids of each column's codes
    per_output = sample_columns.tuple_ids([pd.factorize(outputs[k], use_na_sentinel=False)[0]
                                           for k in sample_columns.OUTPUT_KEY])
    source = np.repeat(pd.factorize(per_output)[0], rows)
    reference = sample_columns.tuple_ids([source] + [sample_columns._codes_of(arrays[k])
                                                     for k in sample_columns.SAMPLE_KEY])
    assert ids.tolist() == reference.tolist()
    keys = list(zip(*(np.repeat(outputs[k], rows) for k in ("target", "parser", "qualifier")),
                    *(arrays[k].tolist() for k in sample_columns.SAMPLE_KEY)))
    assert len(ids) == n
    for i in range(n):
        for j in range(n):
            assert (ids[i] == ids[j]) == (keys[i] == keys[j])


def test_the_tables_texts_are_categories_that_read_as_the_texts(tmp_path: Path) -> None:
    """Every text column of the table is categories — a small code per row, no string pointer: the sample columns
    over the store's string pool, so that its codes are the store's; the output's texts (target, parser, the
    target's kind and platform, its role) over their values — and reads exactly as the texts, None where missing
    (the role, unset here)."""
    path = _write(tmp_path / "b")
    table = frame.load(path).frame
    for name in ("target", "parser", "kind", "platform", "role", "qualifier", "entity", "metric", "text", "raw_key"):
        assert isinstance(table[name].dtype, pd.CategoricalDtype), name
    stored = samples_store.load(path)
    assert list(table["metric"].cat.categories) == stored.strings
    assert table["metric"].cat.codes.tolist() == stored.arrays["metric"].tolist()
    assert set(table["target"].astype(object)) == set(HOSTS)
    assert set(table["parser"].astype(object)) == {"sysfs_counters", "ethtool_stats", "loadavg"}
    assert set(table["kind"].astype(object)) == {"host"} and set(table["platform"].astype(object)) == {"linux"}
    role = as_texts(table)["role"]
    assert role.dtype == object and all(r is None for r in role)
    assert (table["target"] == "gpu02").sum() == len(table) // 3


def test_codes_of_gives_the_codes_and_the_pool_the_loop_would() -> None:
    values = ["ibstat", None, "perfquery", "ibstat", "ethtool_stats", None, "perfquery", "sysfs"]
    looped = sample_columns.Columns().with_pool(["perfquery", "unused"])
    expected = [looped.code(v) for v in values]
    coded = sample_columns.Columns().with_pool(["perfquery", "unused"])
    got = coded.codes_of(values)
    assert got.dtype == np.int32 and got.tolist() == expected == [2, -1, 0, 2, 3, -1, 0, 4]
    assert coded.strings == looped.strings == ["perfquery", "unused", "ibstat", "ethtool_stats", "sysfs"]


def _folders(path: Path) -> Path:
    """The bundle with its packs turned into /2 target folders (a file per output: what the tests above edit one by
    one), and its store made current with them. Packs: tests/test_bundle_packs.py."""
    unpack(path)
    samples_store.load_or_parse(path)
    assert samples_store.load(path) is not None
    return path
