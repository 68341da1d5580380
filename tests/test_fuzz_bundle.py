"""Fuzzing the bundle readers: whatever a bundle from elsewhere holds — manifests of any JSON shape, side files and raw
outputs of any content, odd file names, symlinks, FIFOs, folders where files belong, any bytes as samples.npz — reading
it and diagnosing it either works or fails with one BundleError; never another exception, never a hang, and never
memory out of proportion to the bundle."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rdmatool import bundle as bundle_io
from rdmatool.bundle import BundleWriter
from rdmatool.diagnose.pipeline import diagnose_bundle
from rdmatool.errors import BundleError
from rdmatool.model import CommandResult, Target
from rdmatool.table import samples_store
from tests.bundle_sides import folder_as_format_1, json_or_none, read_pack, unpack

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures" / "parsers"
HOSTS = ("gpu01", "gpu02")
OUTPUTS = (("ibstat", None, "healthy.txt"), ("ethtool_stats", "eth0", "mlx5_roce_congested.txt"),
           ("loadavg", None, "busy.txt"))
SECONDS_PER_EXAMPLE = 20
FUZZ = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
MANIFEST_KEYS = ("format", "created", "rdmatool_version", "interval_s", "snapshots", "targets", "failures")
SIDE_KEYS = ("command", "exit_code", "stderr", "started", "duration_s", "error", "qualifier")
# Names a directory entry may have (anything but "/" and NUL), biased towards what a reader looks for.
names = st.one_of(
    st.text(st.characters(exclude_characters="/\x00", exclude_categories=("Cs",)), min_size=1, max_size=24),
    st.sampled_from(["ibstat.txt", "ibstat.json", "loadavg.x.txt", ".txt", "..txt", "0", "1", "9", "gpu03",
                     "ethtool_stats.eth0.json", "perfquery.mlx5_0.1.txt", "samples.npz", "outputs.json",
                     "manifest.json", "snapshots", "gpu01.outputs", "gpu03.outputs", ".outputs", "a..outputs"]),
).filter(lambda n: n not in (".", ".."))


_PEAK_RSS: list[int] = []


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real bundle (2 hosts, 2 snapshots, 3 outputs each, a store), diagnosed once so that what the fuzz
    tests below add to the peak memory is theirs, not the imports'."""
    writer = BundleWriter(tmp_path_factory.mktemp("fuzz") / "base")
    for snapshot in (0, 1):
        for host in HOSTS:
            for parser, qualifier, fixture in OUTPUTS:
                writer.add(snapshot, CommandResult(target=host, parser=parser, command=parser, qualifier=qualifier,
                                                   stdout=(FIXTURES / parser / fixture).read_text(),
                                                   started=f"2024-05-01T02:00:{10 * snapshot:02d}+00:00"))
    path = writer.commit([Target(name=h, address=f"10.0.0.{i}") for i, h in enumerate(HOSTS)],
                         [{"index": 0}, {"index": 1}], [{"target": "gpu02", "error": "late"}], 10.0,
                         before_commit=samples_store.write_for)
    assert samples_store.load(path) is not None and not bundle_io.read(path).skipped
    diagnose_bundle(path)
    _PEAK_RSS.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return path


class Hang(Exception):
    pass


@contextlib.contextmanager
def bounded(seconds: float):
    """Fail, instead of hanging the test run, when a read blocks (a FIFO opened for reading blocks forever)."""
    def alarm(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def folders_base(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same bundle laid out as a /2 writer laid it out (a target folder per snapshot, a file per output, the
    side data in the folder's outputs.json), its store current."""
    path = unpack(shutil.copytree(base, tmp_path_factory.mktemp("fuzz") / "folders"))
    samples_store.load_or_parse(path)
    assert samples_store.load(path) is not None and not bundle_io.read(path).skipped
    return path


@contextlib.contextmanager
def copy_of(base: Path):
    with tempfile.TemporaryDirectory(prefix="rdmatool-fuzz-") as tmp:
        path = Path(tmp) / "bundle"
        shutil.copytree(base, path)
        yield path


def read_and_diagnose(path: Path) -> None:
    """What `rdmatool diagnose BUNDLE` and `bundle show` do; only a BundleError may come out."""
    with bounded(SECONDS_PER_EXAMPLE):
        try:
            loaded = bundle_io.read(path)
            assert all(isinstance(t["name"], str) for t in loaded.targets)
            assert all(isinstance(line, str) and "\n" not in line for line in loaded.skipped)
        except BundleError as exc:
            assert "\n" not in str(exc)
        try:
            diagnose_bundle(path, on_skipped=lambda line: None)
        except BundleError as exc:
            assert "\n" not in str(exc)


@FUZZ
@given(changes=st.dictionaries(st.sampled_from(MANIFEST_KEYS), json_values | st.just("__absent__"), max_size=4),
       whole=st.one_of(st.none(), json_values, st.binary(max_size=64)))
def test_fuzz_manifest(base: Path, changes: dict, whole) -> None:
    with copy_of(base) as path:
        manifest = json.loads((path / "manifest.json").read_text())
        for key, value in changes.items():
            if value == "__absent__":
                manifest.pop(key, None)
            else:
                manifest[key] = value
        if isinstance(whole, bytes):
            (path / "manifest.json").write_bytes(whole)
        else:
            (path / "manifest.json").write_text(json.dumps(manifest if whole is None else whole))
        read_and_diagnose(path)


side_docs = st.one_of(
    st.dictionaries(st.sampled_from(SIDE_KEYS), json_values, max_size=5),
    json_values,
)
contents = st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode))


@FUZZ
@given(edits=st.lists(st.tuples(st.sampled_from([(s, h, p, q) for s in (0, 1) for h in HOSTS for p, q, _ in OUTPUTS]),
                                st.one_of(st.none(), side_docs), st.one_of(st.none(), contents),
                                st.booleans(), st.booleans()), min_size=1, max_size=4))
def test_fuzz_side_files_and_raw_outputs(folders_base: Path, edits: list) -> None:
    """The side data fuzzed where a /2 writer kept it (an entry of the folder's outputs.json, or the whole file torn
    or replaced) and, with `own`, in a folder turned back into format /1 (one side file per output)."""
    with copy_of(folders_base) as path:
        for (snapshot, host, parser, qualifier), side, raw, bytes_side, own in edits:
            stem = bundle_io.file_stem(parser, qualifier)
            folder = path / "snapshots" / str(snapshot) / host
            if side is not None:
                text = json.dumps(side)
                if own:
                    folder_as_format_1(folder)
                    target = folder / f"{stem}.json"
                else:
                    target = folder / bundle_io.OUTPUTS_FILE
                    doc = json_or_none(target)
                    if isinstance(doc, dict) and not bytes_side:
                        doc[stem] = side
                        text = json.dumps(doc)
                target.write_bytes(text.encode()[: len(text) // 2] if bytes_side else text.encode())
            if raw is not None:
                (folder / f"{stem}.txt").write_bytes(raw)
        read_and_diagnose(path)


@FUZZ
@given(edits=st.lists(st.tuples(st.sampled_from([(s, h) for s in (0, 1) for h in HOSTS]),
                                st.sampled_from([*(p if q is None else f"{p}.{q}" for p, q, _ in OUTPUTS), "x", ""]),
                                st.one_of(st.none(), side_docs), st.one_of(st.none(), json_values),
                                st.one_of(st.none(), contents), st.integers(min_value=-1, max_value=10**6)),
                      min_size=1, max_size=4),
       whole=st.one_of(st.none(), contents, json_values))
def test_fuzz_packs(base: Path, edits: list, whole) -> None:
    """The outputs packs (format /3) fuzzed: an entry's side data replaced, its length or name set to anything, its
    raw output replaced (with or without its length kept true), the header or the whole file replaced."""
    with copy_of(base) as path:
        for (snapshot, host), stem, side, length, raw, cut in edits:
            pack = path / "snapshots" / str(snapshot) / f"{host}.outputs"
            if not pack.is_file():
                continue
            try:  # a pack an earlier edit broke is left as it is
                header = json.loads(pack.read_bytes().partition(b"\n")[0])
                outputs = read_pack(pack)
            except (ValueError, TypeError, KeyError, AssertionError):
                continue
            entries = [{"name": name, "bytes": len(text.encode()), **entry} for name, (entry, text) in outputs.items()]
            bodies = [text.encode() for _, text in outputs.values()]
            for k, entry in enumerate(entries):
                if entry["name"] != stem:
                    continue
                if side is not None:
                    entries[k] = {**(side if isinstance(side, dict) else {}), "name": stem, "bytes": entry["bytes"]}
                if raw is not None:
                    bodies[k] = raw
                    entries[k]["bytes"] = len(raw)
                if length is not None:
                    entries[k]["bytes"] = length
            header["outputs"] = entries
            new = json.dumps(header).encode() + b"\n" + b"".join(bodies)
            pack.write_bytes(new[:cut] if 0 <= cut < len(new) else new)
        if whole is not None:
            pack = path / "snapshots" / "1" / "gpu02.outputs"
            pack.write_bytes(whole if isinstance(whole, bytes) else json.dumps(whole).encode() + b"\n")
        read_and_diagnose(path)


@FUZZ
@given(entries=st.lists(st.tuples(st.sampled_from(["snapshots", "snapshots/0", "snapshots/1/gpu01", "snapshots/0/gpu02",
                                                   ".", "snapshots/1"]),
                                  names, st.sampled_from(["file", "dir", "symlink_out", "symlink_dev", "fifo",
                                                          "dangling", "replace"]),
                                  contents), min_size=1, max_size=5))
def test_fuzz_names_and_file_kinds(base: Path, tmp_path_factory: pytest.TempPathFactory, entries: list) -> None:
    outside = tmp_path_factory.getbasetemp() / "outside-secret.txt"
    outside.write_text("root:SECRET-NEVER-SHOWN:0:0\n")
    with copy_of(base) as path:
        for folder, name, kind, data in entries:
            parent = path / folder
            if parent.is_symlink() or not parent.is_dir():  # an earlier entry made it a file, a FIFO or a link
                continue
            where = parent / name
            if where.is_symlink() or where.exists():
                if kind != "replace":
                    continue
                if where.is_dir() and not where.is_symlink():
                    shutil.rmtree(where)
                else:
                    where.unlink()
                kind = "fifo"
            if kind == "file":
                where.write_bytes(data)
            elif kind == "dir":
                where.mkdir()
                (where / "ibstat.txt").write_bytes(data)
            elif kind == "symlink_out":
                os.symlink(outside, where)
            elif kind == "symlink_dev":
                os.symlink("/dev/zero", where)
            elif kind == "dangling":
                os.symlink(path / "no-such-file", where)
            else:
                os.mkfifo(where)
        loaded = None
        with contextlib.suppress(BundleError), bounded(SECONDS_PER_EXAMPLE):
            loaded = bundle_io.read(path)
        if loaded is not None:
            assert all("SECRET-NEVER-SHOWN" not in e.result.stdout for e in loaded.entries)
        read_and_diagnose(path)


@FUZZ
@given(data=st.one_of(st.binary(max_size=300),
                      st.tuples(st.integers(min_value=0), st.binary(min_size=1, max_size=8), st.booleans())))
def test_fuzz_samples_store_bytes(base: Path, data) -> None:
    with copy_of(base) as path:
        store = path / samples_store.STORE_NAME
        if isinstance(data, bytes):
            store.write_bytes(data)
        else:  # the real store with a few bytes overwritten, or cut short there
            position, patch, cut = data
            good = store.read_bytes()
            at = position % len(good)
            store.write_bytes(good[:at] if cut else good[:at] + patch + good[at + len(patch):])
        with bounded(SECONDS_PER_EXAMPLE):
            samples_store.load(path)
        read_and_diagnose(path)


def test_memory_stays_bounded(base: Path) -> None:
    """After every fuzz test above (same module, same process): the peak resident size grew by far less than a
    /dev/zero or a zip bomb read in full would make it."""
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - _PEAK_RSS[0]) / 1024
    assert grown_mib < 400, f"peak RSS grew by {grown_mib:.0f} MiB"
