"""`rdmatool bundle merge` on hand-made pods split into shards: the merged bundle reads as the unsharded one (same
samples, same findings) without any parse, overlapping targets refused or resolved by --prefer, misaligned
snapshots refused, a foreign or corrupt input refused, nothing left behind by a merge that fails, hard links or
copies with their modification times, nothing read through a symlink. The end-to-end case on a sharded collection
of the simulated fabric is tests/e2e/test_bundle_merge.py."""

from __future__ import annotations

import errno
import json
import os
import shutil
import threading
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from rdmatool import parsers
from rdmatool.bundle import OUTPUTS_FILE, PACK_SUFFIX
from rdmatool.bundle_ops import merge as bundle_merge
from rdmatool.bundle_ops.merge import MergeOptions, merge
from rdmatool.cli import app
from rdmatool.diagnose.pipeline import diagnose_bundle
from rdmatool.errors import BundleError
from rdmatool.table import frame, samples_store
from rdmatool.table.column_codes import as_texts
from tests.bundle_sides import bundle_as_format_1, read_pack, unpack, write_pack
from tests.pods import bundle as pods

SHARD_A = {"gpu01", "gpu03", "leaf01"}  # what `--shard 1/2` takes of the pod (round-robin by sorted name)
SHARD_B = {"gpu02", "stor01"}


def split(whole: Path, groups: list[set[str]], dest: Path) -> list[Path]:
    """The bundle `whole` as the shards a sharded collection would have written: each shard the targets of one
    group (their files copied with their modification times), its manifest listing them, its samples stored."""
    manifest = json.loads((whole / "manifest.json").read_text())
    shards = []
    for k, names in enumerate(groups, 1):
        shard = dest / f"shard-{k}"
        for snap in sorted((whole / "snapshots").iterdir()):
            (shard / "snapshots" / snap.name).mkdir(parents=True, exist_ok=True)
            for target in sorted(snap.iterdir()):
                if target.is_dir() and target.name in names:
                    shutil.copytree(target, shard / "snapshots" / snap.name / target.name)
                elif target.name.removesuffix(PACK_SUFFIX) in names:  # an outputs pack
                    shutil.copy2(target, shard / "snapshots" / snap.name / target.name)
        part = {**manifest, "targets": [t for t in manifest["targets"] if t["name"] in names],
                "failures": [f for f in manifest["failures"] if f["target"] in names]}
        (shard / "manifest.json").write_text(json.dumps(part))
        samples_store.load_or_parse(shard)  # as `rdmatool collect` leaves it: the parsed samples stored
        shards.append(shard)
    return shards


@pytest.fixture(scope="module")
def degraded_pod() -> pods.Pod:
    """A pod with findings to compare: symbol errors on gpu03's InfiniBand port, a PFC mismatch on gpu02."""
    pod = pods.healthy_pod()
    pods.bump(pod.host("gpu03").port("mlx5_0").pma, "symbol_error", 500)
    pod.host("gpu02").port("mlx5_1").pfc = (4,)
    return pod


@pytest.fixture(scope="module")
def whole(degraded_pod, tmp_path_factory) -> Path:
    path = pods.write(degraded_pod, tmp_path_factory.mktemp("whole") / "whole")
    samples_store.load_or_parse(path)
    return path


@pytest.fixture(scope="module")
def shards(whole: Path, tmp_path_factory) -> list[Path]:
    return split(whole, [SHARD_A, SHARD_B], tmp_path_factory.mktemp("shards"))


def count_parses(monkeypatch) -> list[str]:
    """Every parser run from now on, by name (the store's promise is that a current bundle runs none)."""
    calls: list[str] = []
    real = parsers.parse

    def counted(name, text):
        calls.append(name)
        return real(name, text)

    monkeypatch.setattr(parsers, "parse", counted)
    return calls


def ordered(table: frame.SampleTable) -> pd.DataFrame:
    # (as texts: each table's text columns are categoricals over its own string pool)
    return as_texts(table.frame).sort_values(["snapshot", "target", "parser", "qualifier", "entity", "metric", "raw_key",
                                    "priority", "size_bytes"], na_position="first").reset_index(drop=True)


def findings_of(path: Path) -> list[tuple]:
    result = diagnose_bundle(path)
    return sorted((f.rule, f.target, str(f.entity), f.severity.value, f.symptom,
                   json.dumps(f.evidence, sort_keys=True, default=str)) for f in result.findings)


def invoke(*args: str):
    return CliRunner().invoke(app, ["bundle", "merge", *args], env={"COLUMNS": "200"})


# ------------------------------------------------------------------------------------------------ the merge


def test_merged_shards_read_as_the_whole_bundle_without_a_parse(whole, shards, tmp_path, monkeypatch) -> None:
    calls = count_parses(monkeypatch)
    result = merge(shards, tmp_path / "all")
    assert calls == [], "the merge parsed what the shards' stores hold"
    assert result.targets == 5 and result.dropped == {}
    assert result.outputs == len(samples_store.load_or_parse(whole, write_store=False).outputs["rows"])
    store = tmp_path / "all" / "samples.npz"
    before = os.stat(store)
    merged = frame.load(tmp_path / "all")  # a reader writes the store back when it is not exactly the bundle's
    assert calls == [], "diagnose ALL would parse again: the merged store is not current"
    after = os.stat(store)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns), "the store was rewritten"
    pd.testing.assert_frame_equal(ordered(merged), ordered(frame.load(whole, write_store=False)))
    assert {t["name"] for t in merged.targets} == SHARD_A | SHARD_B


def test_merged_diagnosis_has_the_findings_of_the_unsharded_bundle(whole, shards, tmp_path) -> None:
    merge(shards, tmp_path / "all")
    expected = findings_of(whole)
    assert {f[0] for f in expected} >= {"ib_symbol_errors_growing", "host_pfc_not_roce_priority"}, expected
    assert findings_of(tmp_path / "all") == expected


def test_the_merged_manifest_says_what_it_is(shards, tmp_path) -> None:
    merge(shards, tmp_path / "all")
    manifest = json.loads((tmp_path / "all" / "manifest.json").read_text())
    assert manifest["format"] == "rdmatool-bundle/3"
    assert [s["index"] for s in manifest["snapshots"]] == [0, 1]
    assert [(m["bundle"], m["targets"], m["dropped"]) for m in manifest["merged_from"]] == [
        ("shard-1", 3, []), ("shard-2", 2, [])]
    assert manifest["interval_s"] == pods.WINDOW_S
    # the targets in the order of the inputs, each once
    assert [t["name"] for t in manifest["targets"]] == ["gpu01", "gpu03", "leaf01", "gpu02", "stor01"]


def test_the_merged_inventory_lists_the_manifests_targets_and_loads_as_an_inventory(shards, tmp_path) -> None:
    import yaml

    from rdmatool import inventory

    merge(shards, tmp_path / "all")
    manifest = json.loads((tmp_path / "all" / "manifest.json").read_text())
    text = (tmp_path / "all" / "inventory.yaml").read_text()
    assert yaml.safe_load(text) == {"targets": manifest["targets"]}
    assert len(text.splitlines()) == 1 + len(manifest["targets"])  # one line per target (JSON flow mappings)
    loaded = inventory.load(tmp_path / "all" / "inventory.yaml", ssh_config=None)
    assert [t.name for t in loaded] == [t["name"] for t in manifest["targets"]]


@pytest.mark.parametrize("odd", ["yes", "1e5", "a: b # c", "it's \"q\" \\", "é", "tab\there", "", "null", "~"])
def test_the_inventory_text_reads_back_as_the_targets_whatever_they_hold(odd: str) -> None:
    import yaml

    targets = [{"name": "gpu01", "address": "10.0.0.1", "port": 2222, "role": None, "ports": ["mlx5_0/1", odd],
                "note": odd, "enabled": True}, {"name": "leaf01", "kind": "switch"}]
    text = bundle_merge.inventory_text(targets)
    assert yaml.safe_load(text) == {"targets": targets}, text
    assert yaml.safe_load(bundle_merge.inventory_text([])) == {"targets": []}
    plain = odd.isascii() and odd.isprintable()
    assert text.startswith("targets:\n- {") == plain  # JSON flow style only where JSON and YAML agree


def test_files_are_hard_linked_and_copies_keep_their_modification_times(shards, tmp_path, monkeypatch) -> None:
    linked = merge(shards, tmp_path / "linked")
    assert linked.linked > 0 and linked.copied == 0
    raw = f"snapshots/0/gpu02{PACK_SUFFIX}"
    assert os.stat(tmp_path / "linked" / raw).st_ino == os.stat(shards[1] / raw).st_ino
    copied = merge(shards, tmp_path / "copied", MergeOptions(copy=True))
    assert copied.linked == 0 and copied.copied == linked.linked
    a, b = os.stat(tmp_path / "copied" / raw), os.stat(shards[1] / raw)
    assert a.st_ino != b.st_ino and a.st_mtime_ns == b.st_mtime_ns
    assert (tmp_path / "copied" / raw).read_bytes() == (shards[1] / raw).read_bytes()
    calls = count_parses(monkeypatch)
    frame.load(tmp_path / "copied", write_store=False)
    assert calls == []


def test_a_copy_records_its_own_signature_where_the_filesystem_rounds_times(shards, tmp_path, monkeypatch) -> None:
    """A filesystem with coarser timestamps (whole seconds) than the inputs': the merged store records the copies'
    own signatures, so `diagnose ALL` still parses nothing."""
    real_utime = os.utime

    def whole_seconds(fd, ns):
        real_utime(fd, ns=(ns[0] // 10**9 * 10**9, ns[1] // 10**9 * 10**9))

    monkeypatch.setattr(bundle_merge.os, "utime", whole_seconds)
    merge(shards, tmp_path / "all", MergeOptions(copy=True))
    monkeypatch.undo()
    assert os.stat(tmp_path / "all" / f"snapshots/0/gpu01{PACK_SUFFIX}").st_mtime_ns % 10**9 == 0
    calls = count_parses(monkeypatch)
    frame.load(tmp_path / "all", write_store=False)
    assert calls == []


def test_files_that_cannot_be_linked_after_all_are_copied_and_the_store_says_so(shards, tmp_path, monkeypatch) -> None:
    """A link refused midway (another filesystem under a folder, too many links): the files from there on are copied
    with their modification times, and the merged store, written while the links were being made, is written again
    with what the copies are — `diagnose ALL` parses nothing."""
    whole = merge(shards, tmp_path / "linked")
    made = []
    lock = threading.Lock()
    real_link = os.link

    def refuse_after_ten(src, dst, **kwargs):
        with lock:
            if len(made) >= 10:
                raise OSError(errno.EXDEV, "Invalid cross-device link")
            made.append(dst)
        return real_link(src, dst, **kwargs)

    monkeypatch.setattr(bundle_merge.os, "link", refuse_after_ten)
    result = merge(shards, tmp_path / "mixed")
    monkeypatch.undo()
    assert result.linked == 10 and result.copied == whole.linked - 10
    names = sorted(str(p.relative_to(tmp_path / "linked")) for p in (tmp_path / "linked").rglob("*"))
    assert sorted(str(p.relative_to(tmp_path / "mixed")) for p in (tmp_path / "mixed").rglob("*")) == names
    calls = count_parses(monkeypatch)
    assert samples_store.load(tmp_path / "mixed") is not None
    pd.testing.assert_frame_equal(as_texts(frame.load(tmp_path / "mixed", write_store=False).frame),
                                  as_texts(frame.load(tmp_path / "linked", write_store=False).frame))
    assert calls == []


def test_a_shard_without_a_store_is_parsed_and_the_merge_still_stores_it(whole, shards, tmp_path) -> None:
    bare = tmp_path / "bare"
    shutil.copytree(shards[1], bare, copy_function=shutil.copy2)
    (bare / "samples.npz").write_bytes(b"not a zip")  # corrupt: ignored, the raw outputs are the truth
    merge([shards[0], bare], tmp_path / "all")
    assert samples_store.load(tmp_path / "all") is not None
    pd.testing.assert_frame_equal(ordered(frame.load(tmp_path / "all", write_store=False)),
                                  ordered(frame.load(whole, write_store=False)))


# ------------------------------------------------------------------------------------------------ overlaps


@pytest.fixture
def overlapping(shards, tmp_path) -> Path:
    """Shard 2 plus gpu01 read again 30 s later, with 7 more symbol errors than shard 1 saw (10, not 3)."""
    b = tmp_path / "b"
    shutil.copytree(shards[1], b, copy_function=shutil.copy2)
    for snap in ("0", "1"):
        outputs = read_pack(shards[0] / "snapshots" / snap / f"gpu01{PACK_SUFFIX}")
        side, text = outputs["sysfs_counters.mlx5_0"]
        assert "counters/symbol_error:3\n" in text
        outputs["sysfs_counters.mlx5_0"] = (side, text.replace("counters/symbol_error:3\n", "counters/symbol_error:10\n"))
        for side, _ in outputs.values():
            side["started"] = (datetime.fromisoformat(side["started"]) + timedelta(seconds=30)).isoformat()
        write_pack(b / "snapshots" / snap / f"gpu01{PACK_SUFFIX}", outputs)
    manifest = json.loads((b / "manifest.json").read_text())
    manifest["targets"].append(next(t for t in json.loads((shards[0] / "manifest.json").read_text())["targets"]
                                    if t["name"] == "gpu01"))
    (b / "manifest.json").write_text(json.dumps(manifest))
    return b


def symbol_errors(bundle: Path) -> set[float]:
    df = frame.load(bundle, write_store=False).frame
    return set(df[(df["target"] == "gpu01") & (df["metric"] == "symbol_errors") & (df["parser"] == "sysfs_counters")
                  & (df["entity"] == "mlx5_0/1")
                  ]["value"])


def test_a_target_in_two_shards_is_refused_naming_both(shards, overlapping, tmp_path) -> None:
    with pytest.raises(BundleError) as refused:
        merge([shards[0], overlapping], tmp_path / "all")
    message = str(refused.value)
    assert "gpu01" in message and str(overlapping) in message and str(shards[0]) in message
    assert "--prefer" in message and "\n" not in message
    assert not (tmp_path / "all").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize(("prefer", "winner"), [("first", 0), ("last", 1), ("newest", 1)])
def test_prefer_says_whose_data_wins(shards, overlapping, tmp_path, prefer, winner) -> None:
    inputs = [shards[0], overlapping]
    result = merge(inputs, tmp_path / "all", MergeOptions(prefer=prefer))
    loser = inputs[1 - winner]
    assert result.dropped == {str(loser): ["gpu01"]}
    assert symbol_errors(tmp_path / "all") == symbol_errors(inputs[winner])
    assert symbol_errors(shards[0]) == {3.0} and symbol_errors(overlapping) == {10.0}  # the two really differ
    manifest = json.loads((tmp_path / "all" / "manifest.json").read_text())
    assert [t["name"] for t in manifest["targets"]].count("gpu01") == 1
    assert manifest["merged_from"][1 - winner]["dropped"] == ["gpu01"]


def test_newest_goes_by_read_time_not_by_position(shards, overlapping, tmp_path) -> None:
    result = merge([overlapping, shards[0]], tmp_path / "all", MergeOptions(prefer="newest"))
    assert result.dropped == {str(shards[0]): ["gpu01"]}
    assert symbol_errors(tmp_path / "all") == symbol_errors(overlapping)


# ------------------------------------------------------------------------------------------------ alignment


def rewrite_manifest(src: Path, dest: Path, change) -> Path:
    shutil.copytree(src, dest, copy_function=shutil.copy2)
    manifest = json.loads((dest / "manifest.json").read_text())
    change(manifest)
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


def shift(manifest: dict, seconds: float) -> None:
    for s in manifest["snapshots"]:
        s["started"] = (datetime.fromisoformat(s["started"]) + timedelta(seconds=seconds)).isoformat()


def test_a_shard_with_another_number_of_snapshots_is_refused(shards, tmp_path) -> None:
    one = tmp_path / "one"
    shutil.copytree(shards[1], one, copy_function=shutil.copy2)
    shutil.rmtree(one / "snapshots" / "1")
    manifest = json.loads((one / "manifest.json").read_text())
    manifest["snapshots"] = manifest["snapshots"][:1]
    (one / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match=r"one: snapshots 0, but .*shard-1 has 0, 1: not shards of one"):
        merge([shards[0], one], tmp_path / "all")
    assert not (tmp_path / "all").exists()


def test_snapshots_further_apart_than_the_skew_are_refused(shards, tmp_path) -> None:
    late = rewrite_manifest(shards[1], tmp_path / "late", lambda m: shift(m, 600))
    with pytest.raises(BundleError, match=r"late: snapshot 0 started 600 s after .*shard-1's, more than --max-skew 300"):
        merge([shards[0], late], tmp_path / "all")
    assert not (tmp_path / "all").exists()
    # within a wider tolerance, or not compared at all, they merge; rates keep each target's own read times
    merge([shards[0], late], tmp_path / "wide", MergeOptions(max_skew_s=900))
    merge([shards[0], late], tmp_path / "any", MergeOptions(check_times=False))
    merged = frame.load(tmp_path / "wide", write_store=False)
    assert merged.notes == []
    pd.testing.assert_frame_equal(ordered(merged), ordered(frame.load(tmp_path / "any", write_store=False)))


def test_a_snapshot_without_a_time_cannot_be_checked(shards, tmp_path) -> None:
    def untimed(m: dict) -> None:
        m["snapshots"][1]["started"] = m["snapshots"][1]["finished"] = None

    bare = rewrite_manifest(shards[1], tmp_path / "bare", untimed)
    with pytest.raises(BundleError, match="snapshot 1 has no time in its manifest"):
        merge([shards[0], bare], tmp_path / "all")


def test_outputs_without_read_times_keep_their_window_or_are_refused(shards, tmp_path) -> None:
    """Without side files the rates take the manifest's window: a shard whose own window differs from the merged
    one would get wrong rates, and is refused; one with the same window merges."""
    def untimed_copy(src: Path, dest: Path, seconds: float) -> Path:
        path = unpack(rewrite_manifest(src, dest, lambda m: shift(m, seconds)))  # side data of its own
        for side in path.glob("snapshots/*/*/*.json"):
            side.unlink()
        return path

    same = untimed_copy(shards[1], tmp_path / "same", 0)
    merge([shards[0], same], tmp_path / "ok")
    stretched = unpack(rewrite_manifest(shards[1], tmp_path / "stretched", lambda m: None))
    for side in stretched.glob("snapshots/*/*/*.json"):
        side.unlink()
    manifest = json.loads((stretched / "manifest.json").read_text())
    manifest["snapshots"][1]["started"] = (datetime.fromisoformat(manifest["snapshots"][1]["started"])
                                           + timedelta(seconds=5)).isoformat()
    (stretched / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match=r"stretched: \d+ output\(s\) carry no read time.*window \(10 s\) instead "
                                          r"of their own \(15 s\)"):
        merge([shards[0], stretched], tmp_path / "all")


# ------------------------------------------------------------------------------------------------ bad inputs


def test_a_foreign_or_corrupt_input_is_refused_naming_it(shards, tmp_path) -> None:
    foreign = rewrite_manifest(shards[1], tmp_path / "foreign", lambda m: m.update(format="other-tool/3"))
    with pytest.raises(BundleError, match=r"foreign/manifest.json: format 'other-tool/3' is not"):
        merge([shards[0], foreign], tmp_path / "all")
    corrupt = tmp_path / "corrupt"
    shutil.copytree(shards[1], corrupt)
    (corrupt / "manifest.json").write_text('{"format": "rdmatool-bundle/1", "targets": ')
    with pytest.raises(BundleError, match=r"corrupt/manifest.json: unreadable manifest"):
        merge([shards[0], corrupt], tmp_path / "all")
    with pytest.raises(BundleError, match=r"missing: no such bundle directory"):
        merge([shards[0], tmp_path / "missing"], tmp_path / "all")
    with pytest.raises(BundleError, match="given twice"):
        merge([shards[0], shards[0]], tmp_path / "all")
    with pytest.raises(BundleError, match="is the merged bundle"):
        merge([shards[0], shards[1]], shards[1])
    assert not (tmp_path / "all").exists()


def test_nothing_is_read_through_a_symlink(shards, tmp_path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("root:hash\n")
    evil = tmp_path / "evil"
    shutil.copytree(shards[1], evil, copy_function=shutil.copy2)
    pack = evil / f"snapshots/0/gpu02{PACK_SUFFIX}"
    pack.unlink()
    pack.symlink_to(secret)
    unpacked = unpack(shutil.copytree(shards[1], tmp_path / "unpacked", copy_function=shutil.copy2))
    psi = unpacked / "snapshots/0/stor01/psi.txt"
    psi.unlink()
    psi.symlink_to(secret)
    result = merge([shards[0], evil], tmp_path / "all")
    assert any(f"snapshots/0/gpu02{PACK_SUFFIX}: not a regular file; left out" in n for n in result.notes), result.notes
    assert not (tmp_path / f"all/snapshots/0/gpu02{PACK_SUFFIX}").exists()
    result = merge([shards[0], unpacked], tmp_path / "all2")
    assert any("snapshots/0/stor01/psi.txt: not a regular file; left out" in n for n in result.notes), result.notes
    assert not (tmp_path / "all2/snapshots/0/stor01/psi.txt").exists()
    for merged in ("all", "all2"):
        assert "root:hash" not in "".join(p.read_text(errors="replace") for p in (tmp_path / merged).rglob("*")
                                          if p.is_file() and p.suffix != ".npz")


# ------------------------------------------------------------------------------------------------ atomicity


def test_a_merge_that_fails_leaves_nothing_and_keeps_the_old_bundle(shards, tmp_path, monkeypatch) -> None:
    merge(shards, tmp_path / "all")
    before = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "all").rglob("*"))
    placed = []
    lock = threading.Lock()
    real = bundle_merge._Placer.try_link

    def fail_midway(self, src, dst):  # the links are made by several threads
        with lock:
            if len(placed) >= 4:  # of 10 packs
                raise OSError(28, "No space left on device")
            placed.append(dst)
        return real(self, src, dst)

    monkeypatch.setattr(bundle_merge._Placer, "try_link", fail_midway)
    with pytest.raises(BundleError, match=r"all: cannot write the merged bundle \(.*No space left on device.*\); "
                                          "nothing written"):
        merge(shards, tmp_path / "all")
    with pytest.raises(BundleError):
        merge(shards, tmp_path / "new")
    assert not (tmp_path / "new").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary directory left
    assert sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "all").rglob("*")) == before


# ------------------------------------------------------------------------------------------------ the command


def test_cli_merges_and_exits_0(shards, tmp_path) -> None:
    result = invoke(str(shards[0]), str(shards[1]), "-o", str(tmp_path / "all"))
    assert result.exit_code == 0, result.output
    assert "merged 2 bundles: 5 targets" in result.output
    diagnosed = CliRunner().invoke(app, ["diagnose", str(tmp_path / "all"), "--format", "json"])
    assert json.loads(diagnosed.stdout)["verdict"] == "fail"


def test_cli_refusals_are_one_line_and_exit_2(shards, overlapping, tmp_path) -> None:
    for args in ([str(shards[0]), str(overlapping)],
                 [str(shards[0]), str(tmp_path / "nope")],
                 [str(shards[0]), str(overlapping), "--prefer", "oldest"]):
        result = invoke(*args, "-o", str(tmp_path / "all"))
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("rdmatool bundle merge: "), result.output
        assert "Traceback" not in result.output
        assert not (tmp_path / "all").exists()
    resolved = invoke(str(shards[0]), str(overlapping), "--prefer", "last", "-o", str(tmp_path / "all"))
    assert resolved.exit_code == 0, resolved.output
    assert f"{shards[0]}: 1 target(s) left to another bundle (--prefer last): gpu01" in resolved.output


@given(sizes=st.lists(st.lists(st.integers(0, 4), max_size=6), min_size=1, max_size=4), seed=st.integers(0, 2**16))
@settings(max_examples=200, deadline=None)
def test_the_row_runs_gather_what_a_permuting_take_gathers(sizes: list[list[int]], seed: int) -> None:
    """`_row_runs` copies runs of rows instead of gathering every row through the permutation: for any inputs
    (some with no outputs, outputs with no rows) and any order of their outputs, the same rows in the same order."""
    import numpy as np

    rows = np.array([n for part in sizes for n in part], dtype=np.int64)
    order = np.random.default_rng(seed).permutation(len(rows))
    if seed % 2:  # the usual shape too: long runs of consecutive outputs
        order = np.sort(order)
    values = np.arange(int(rows.sum()))  # each row its own value, numbered across the concatenated inputs
    begins = np.cumsum(rows) - rows
    expected = np.concatenate([values[b:b + n] for b, n in zip(begins[order], rows[order])] + [values[:0]])
    parts, start = [], 0
    for part in sizes:
        count = sum(part)
        parts.append(values[start:start + count])
        start += count
    merged = np.full(len(values), -1)
    for part, src, dst, length in bundle_merge._row_runs(order, [len(p) for p in sizes], rows):
        merged[dst:dst + length] = parts[part][src:src + length]
    assert merged.tolist() == expected.tolist()


def test_a_format_1_shard_merges_with_format_3_ones_and_reads_alike(shards, tmp_path, monkeypatch) -> None:
    """A shard written by an older collector (one side file per output) merged with shards of format /3 (a pack per
    target): each target keeps its own kind of files, the merged store is current with both, and the table is the
    one the /3 shards alone give."""
    old = bundle_as_format_1(shutil.copytree(shards[0], tmp_path / "old", copy_function=shutil.copy2))
    samples_store.load_or_parse(old)  # its store as a /1 collector left it: current with its side files
    merge([old, *shards[1:]], tmp_path / "mixed")
    merge(shards, tmp_path / "plain")
    mixed = tmp_path / "mixed" / "snapshots" / "0"
    kinds = {d.name: d.is_file() for d in mixed.iterdir()}
    assert set(kinds.values()) == {True, False}  # packs and folders in one bundle
    assert not any((d / OUTPUTS_FILE).exists() for d in mixed.iterdir())  # the folders are /1 ones
    assert json.loads((tmp_path / "mixed" / "manifest.json").read_text())["format"] == "rdmatool-bundle/3"
    calls = count_parses(monkeypatch)
    a = frame.load(tmp_path / "mixed", write_store=False)
    assert calls == []
    b = frame.load(tmp_path / "plain", write_store=False)
    assert len(a.frame) > 100 and a.notes == b.notes
    pd.testing.assert_frame_equal(as_texts(a.frame), as_texts(b.frame))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=4), st.randoms(use_true_random=False),
       st.sampled_from(["int32", "int64", "float64", "uint64", "bool"]))
def test_a_merged_column_written_run_by_run_is_the_whole_column_written(sizes, rnd, dtype) -> None:
    """The merged store's row columns are written from their inputs' parts, run by run: the same `.npy` bytes as
    the whole column made first, and the whole column is the runs in order."""
    import io

    import numpy as np

    sources = [np.arange(n).astype(dtype) if dtype != "bool" else np.arange(n) % 3 == 0 for n in sizes]
    pieces = []  # every part cut in runs, the runs shuffled: a permutation of the parts' rows
    for part, n in enumerate(sizes):
        cuts = sorted({0, n, *rnd.sample(range(n + 1), min(n + 1, 3))})
        pieces += [(part, a, b - a) for a, b in zip(cuts, cuts[1:]) if b > a]
    rnd.shuffle(pieces)
    runs, dst = [], 0
    for part, src, length in pieces:
        runs.append((part, src, dst, length))
        dst += length
    column = bundle_merge.RunColumn(sources, runs, dst)
    whole = np.concatenate([sources[p][s:s + n] for p, s, n in pieces]) if pieces else np.zeros(0, sources[0].dtype)
    assert column.array().dtype == whole.dtype and (column.array() == whole).all() and len(column) == len(whole)
    mine, theirs = io.BytesIO(), io.BytesIO()
    column.write_npy(mine)
    np.lib.format.write_array(theirs, whole, allow_pickle=False)
    assert mine.getvalue() == theirs.getvalue()
    assert (np.load(io.BytesIO(mine.getvalue())) == whole).all()
