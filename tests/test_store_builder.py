"""The store a collection parses target by target (samples_store.StoreBuilder, fed from the collecting threads) is
the very store `write_for` parses at once from the same outputs; anything it did not see itself falls back to that."""

from __future__ import annotations

import random
import threading
import zipfile
from pathlib import Path

import numpy as np

from rdmatool.bundle import PACK_SUFFIX, BundleWriter
from rdmatool.bundle.reader import scan_outputs
from rdmatool.model import CommandResult, Target
from rdmatool.table import frame, samples_store

FIXTURES = Path(__file__).parent / "fixtures" / "parsers"
HOSTS = tuple(f"gpu{i:02d}" for i in range(1, 9))


def _outputs(i: int, snapshot: int) -> list[tuple[str, str | None, str]]:
    ethtool = f"NIC statistics:\n     rx_packets: {1000 * i + 500 * snapshot}\n     rx_prio3_pause: {i + snapshot}\n"
    outputs = [("sysfs_counters", None, (FIXTURES / "sysfs_counters" / "ndr_healthy.txt").read_text()),
               ("ethtool_stats", "eth0", ethtool),
               ("loadavg", None, f"0.{i}0 0.40 0.30 2/400 12345\n")]
    if i == 3:
        outputs.append(("loadavg", "broken", "this is not a load average\n"))  # a parse failure is stored too
    return outputs


def _result(host: str, snapshot: int, parser: str, qualifier: str | None, text: str) -> CommandResult:
    return CommandResult(target=host, parser=parser, command=parser, stdout=text, qualifier=qualifier,
                         started=f"2024-05-01T02:00:{10 * snapshot:02d}+00:00")


def _members(path: Path) -> dict[str, np.ndarray]:
    with zipfile.ZipFile(path / samples_store.STORE_NAME) as archive:
        return {name: np.lib.format.read_array(archive.open(name), allow_pickle=False) for name in archive.namelist()}


def _equal(x: np.ndarray, y: np.ndarray) -> bool:
    return x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind == "f")


def _bundle(path: Path, streamed: bool, extra_twice: bool = False, signed: bool = False) -> Path:
    writer = BundleWriter(path)
    builder = samples_store.StoreBuilder()
    lock = threading.Lock()
    order = list(enumerate(HOSTS, start=1))
    random.Random(7).shuffle(order)  # targets finish in any order

    def one(i: int, host: str) -> None:
        with lock:
            first = len(writer.written)
            for snapshot in (0, 1):
                for parser, qualifier, text in _outputs(i, snapshot):
                    writer.add(snapshot, _result(host, snapshot, parser, qualifier, text))
            fresh = writer.written[first:]
            writer.sync_soon(fresh)  # as the collect service does: the target's side data written, then parsed
        if streamed:
            builder.add(fresh, writer.signatures if signed else None)

    threads = [threading.Thread(target=one, args=pair) for pair in order]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if extra_twice:  # an output written again after it was parsed: the builder's share is stale
        writer.add(0, _result("gpu01", 0, "loadavg", None, "9.99 0.40 0.30 2/400 12345\n"))
    targets = [Target(name=h, address=f"10.0.0.{i}") for i, h in enumerate(HOSTS, start=1)]
    before = builder.write if streamed else samples_store.write_for
    return writer.commit(targets, [{"index": 0}, {"index": 1}], [], 10.0, before_commit=before)


def test_the_streamed_store_is_the_store_parsed_at_commit(tmp_path: Path) -> None:
    streamed, at_once = _bundle(tmp_path / "streamed", True), _bundle(tmp_path / "at_once", False)
    a, b = _members(streamed), _members(at_once)
    assert a.keys() == b.keys()
    mtimes = ("out_raw_mtime.npy", "out_side_mtime.npy")  # two bundles written at different times
    differing = [name for name in a if name not in mtimes and not _equal(a[name], b[name])]
    assert differing == []
    assert len(a["value.npy"]) > 100 and samples_store.load(streamed) is not None
    # and the store is current with the files: the frame comes from it without a parse, equal to a fresh parse
    loaded = frame.load(streamed)
    assert loaded.frame["target"].nunique() == len(HOSTS) and len(loaded.parse_failures) == 2


def test_an_output_the_builder_did_not_parse_falls_back_to_the_full_parse(tmp_path: Path) -> None:
    path = _bundle(tmp_path / "b", True, extra_twice=True)
    table = frame.load(path)
    one = table.frame[(table.frame["target"] == "gpu01") & (table.frame["metric"].str.startswith("load"))
                      & (table.frame["snapshot"] == 0)]
    assert 9.99 in set(one["value"]), one  # the text written last, not the one parsed first


def test_the_writers_signatures_are_the_files_own_and_the_store_is_current(tmp_path: Path) -> None:
    # The collection hands the builder the (size, mtime) the writer saw on each file it wrote, instead of a stat of
    # every file: they must be what a reader finds on disk, or every output would be parsed again.
    path = _bundle(tmp_path / "b", True, signed=True)
    members = _members(path)
    listing = [raw for _, _, raw, _, _ in scan_outputs(path)]  # the store's order: snapshot, target, file name
    assert len(listing) == len(members["out_raw_size.npy"]) > 20
    on_disk = [Path(raw).parent.lstat() for raw in listing]  # each output's pack: its raw and its side file
    assert all(raw.endswith(".txt") and Path(raw).parent.name.endswith(PACK_SUFFIX) for raw in listing)
    assert list(members["out_raw_size.npy"]) == [st.st_size for st in on_disk]
    assert list(members["out_raw_mtime.npy"]) == [st.st_mtime_ns for st in on_disk]
    assert list(members["out_side_mtime.npy"]) == [st.st_mtime_ns for st in on_disk]
    assert list(members["out_side_size.npy"]) == [st.st_size for st in on_disk]
    assert samples_store.load(path) is not None
    before = (path / samples_store.STORE_NAME).stat().st_mtime_ns
    table = frame.load(path)  # read from the store, nothing parsed again, nothing rewritten
    assert (path / samples_store.STORE_NAME).stat().st_mtime_ns == before
    assert table.frame["target"].nunique() == len(HOSTS)
