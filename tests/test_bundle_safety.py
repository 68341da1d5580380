"""Bundles come from elsewhere: a reader must not follow a symlink out of one, block on a FIFO, fill memory from
/dev/zero or an oversized file, trip over a manifest or side file of the wrong shape, or be fooled by a doctored
samples store; and the writer must not put a file outside the bundle whatever a target, parser or qualifier says."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from rdmatool import bundle as bundle_io
from rdmatool import files
from rdmatool.bundle import BundleWriter
from rdmatool.diagnose.pipeline import diagnose_bundle
from rdmatool.errors import BundleError
from rdmatool.model import CommandResult, Target
from rdmatool.table import frame, samples_store
from tests.bundle_sides import outputs_of

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "demo-bundle"
SECRET = "root:$6$SECRETHASH$not-for-any-report:19000:0:99999:7:::"
IBSTAT = "snapshots/0/gpu01/ibstat.txt"


def rdmatool_cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "rdmatool", *args], capture_output=True, text=True, env=full_env,
                          timeout=timeout, cwd=str(REPO))


def findings_json(path: Path) -> str:
    """What a diagnosis of the bundle says (findings, failures, verdict), as one comparable string."""
    return json.dumps(diagnose_bundle(path).as_json(), sort_keys=True, default=str)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo bundle with a store written by this very code (the shipped one may predate a parser edit)."""
    path = tmp_path_factory.mktemp("template") / "demo"
    shutil.copytree(DEMO, path)
    (path / samples_store.STORE_NAME).unlink(missing_ok=True)  # not in a fresh checkout
    frame.load(path)
    assert samples_store.load(path) is not None
    return path


@pytest.fixture(scope="module")
def reference(template: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The findings of the demo bundle parsed afresh, without any store."""
    path = tmp_path_factory.mktemp("reference") / "demo"
    shutil.copytree(template, path)
    (path / samples_store.STORE_NAME).unlink()
    return findings_json(path)


@pytest.fixture
def demo(template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "demo"
    shutil.copytree(template, path)  # copy2 keeps the modification times: the store stays current
    return path


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "shadow"
    path.write_text(SECRET + "\n")
    return path


def _replace_with_symlink(path: Path, target: Path | str) -> None:
    path.unlink()
    os.symlink(target, path)


# ------------------------------------------------------------------------------------------------ the reader


def test_the_store_written_by_this_code_passes_its_own_checks(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new checks must not reject a real store: a current bundle is read without parsing anything."""
    def no_parsing(jobs, *args, **kwargs):
        assert not jobs, "a current store must not be parsed again"
        return []

    monkeypatch.setattr(samples_store, "parse_all", no_parsing)
    table = frame.load(demo, write_store=False)
    assert len(table.frame) > 1000 and table.skipped == []


def test_a_symlink_to_a_file_outside_is_not_followed(demo: Path, secret: Path) -> None:
    _replace_with_symlink(demo / IBSTAT, secret)
    _replace_with_symlink(demo / "snapshots/0/gpu02/ibstat.json", secret)
    loaded = bundle_io.read(demo)
    assert f"{IBSTAT}: not a regular file (symlink); skipped" in loaded.skipped
    assert "snapshots/0/gpu02/ibstat.json: not a regular file (symlink); skipped" in loaded.skipped
    assert not [e for e in loaded.entries if e.target in ("gpu01", "gpu02") and e.snapshot == 0
                and e.result.parser == "ibstat"]
    assert all(SECRET not in e.result.stdout for e in loaded.entries)
    result = rdmatool_cli("diagnose", str(demo), "--format", "json")
    assert result.returncode in (0, 1, 3) and "Traceback" not in result.stderr
    assert "SECRETHASH" not in result.stdout + result.stderr
    assert f"rdmatool: warning: {IBSTAT}: not a regular file (symlink); skipped" in result.stderr.splitlines()
    json.loads(result.stdout)  # the report on stdout stays whole


def test_symlinked_folders_are_not_followed(demo: Path, secret: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "gpu01").mkdir(parents=True)
    shutil.copy(secret, outside / "gpu01" / "ibstat.txt")
    os.symlink(outside / "gpu01", demo / "snapshots" / "0" / "gpu99")
    os.symlink(outside, demo / "snapshots" / "7")
    loaded = bundle_io.read(demo)
    assert "snapshots/0/gpu99: not a folder (symlink); skipped" in loaded.skipped
    assert "snapshots/7: not a folder (symlink); skipped" in loaded.skipped
    assert not [e for e in loaded.entries if e.target == "gpu99" or e.snapshot == 7]
    table = frame.load(demo, write_store=False)
    assert "gpu99" not in set(table.frame["target"]) and table.skipped == loaded.skipped


def test_a_snapshots_folder_that_is_a_symlink_is_an_error(demo: Path, tmp_path: Path) -> None:
    shutil.move(demo / "snapshots", tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", demo / "snapshots")
    with pytest.raises(BundleError, match=r"snapshots: not a directory \(symlink\)"):
        bundle_io.read(demo)


def test_a_fifo_does_not_block_the_reader(demo: Path) -> None:
    (demo / IBSTAT).unlink()
    os.mkfifo(demo / IBSTAT)
    (demo / "snapshots/1/gpu02/psi.json").unlink()
    os.mkfifo(demo / "snapshots/1/gpu02/psi.json")
    result = rdmatool_cli("diagnose", str(demo), "--format", "json", timeout=120)  # a hang fails with a timeout
    assert result.returncode in (0, 1, 3) and "Traceback" not in result.stderr
    assert f"rdmatool: warning: {IBSTAT}: not a regular file (fifo); skipped" in result.stderr
    assert "snapshots/1/gpu02/psi.json: not a regular file (fifo); skipped" in result.stderr
    # the files module itself: refused without blocking
    with pytest.raises(files.UnsafeFileError, match="fifo"):
        files.read_regular_bytes(demo / IBSTAT)


def test_a_symlink_to_dev_zero_is_skipped(demo: Path) -> None:
    _replace_with_symlink(demo / IBSTAT, "/dev/zero")
    loaded = bundle_io.read(demo)
    assert f"{IBSTAT}: not a regular file (symlink); skipped" in loaded.skipped
    with pytest.raises(files.UnsafeFileError, match=r"not a regular file \(character device\)"):
        files.read_regular_bytes("/dev/zero")


def test_an_oversized_output_is_skipped(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open(demo / IBSTAT, "a") as handle:
        handle.write("x" * 300_000)
    env = {files.ENV_MAX_BYTES: "200000"}
    result = rdmatool_cli("diagnose", str(demo), "--format", "json", env=env)
    assert result.returncode in (0, 1, 3) and "Traceback" not in result.stderr
    assert f"rdmatool: warning: {IBSTAT}: larger than 200000 bytes (RDMATOOL_MAX_OUTPUT_BYTES); skipped" \
        in result.stderr.splitlines()
    monkeypatch.setenv(files.ENV_MAX_BYTES, "200000")
    assert f"{IBSTAT}: larger than 200000 bytes (RDMATOOL_MAX_OUTPUT_BYTES); skipped" in bundle_io.read(demo).skipped


def test_the_reader_never_reads_more_than_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"y" * 100_000)
    asked = []
    real_read, real_lstat, real_fstat = os.read, os.lstat, os.fstat

    def counting(fd: int, n: int) -> bytes:
        asked.append(n)
        return real_read(fd, n)

    def small(st: os.stat_result) -> os.stat_result:  # a file that grew after it was looked at
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 10,
                               int(st.st_atime), int(st.st_mtime), int(st.st_ctime)))

    with monkeypatch.context() as patch:
        patch.setattr(files.os, "read", counting)
        patch.setattr(files.os, "lstat", lambda path: small(real_lstat(path)))
        patch.setattr(files.os, "fstat", lambda fd: small(real_fstat(fd)))
        with pytest.raises(files.UnsafeFileError, match="larger than 1000 bytes"):
            files.read_regular_bytes(big, max_bytes=1000)
    assert asked and sum(asked) <= 1001
    assert files.read_regular_bytes(big, max_bytes=100_000) == b"y" * 100_000
    with pytest.raises(files.UnsafeFileError, match="larger than 99999 bytes"):
        files.read_regular_bytes(big, max_bytes=99_999)
    assert files.read_regular_text(big, max_bytes=100_000) == "y" * 100_000


def test_an_unusable_cap_setting_is_a_one_line_error(demo: Path) -> None:
    result = rdmatool_cli("diagnose", str(demo), env={files.ENV_MAX_BYTES: "lots"})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "RDMATOOL_MAX_OUTPUT_BYTES" in result.stderr and len(result.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------------------ the manifest


def _edit_manifest(path: Path, **changes) -> None:
    manifest = json.loads((path / "manifest.json").read_text())
    manifest.update(changes)
    (path / "manifest.json").write_text(json.dumps(manifest))


def test_targets_as_names_objects_or_null(demo: Path) -> None:
    objects = bundle_io.read(demo).targets
    assert objects and all(isinstance(t, dict) and isinstance(t["name"], str) for t in objects)
    before = findings_json(demo)
    _edit_manifest(demo, targets=[t["name"] for t in objects])
    assert bundle_io.read(demo).targets == [{"name": t["name"]} for t in objects]
    assert frame.load(demo, write_store=False).targets == [{"name": t["name"]} for t in objects]
    assert json.loads(findings_json(demo))["verdict"] == json.loads(before)["verdict"]
    _edit_manifest(demo, targets=None, failures=None)
    loaded = bundle_io.read(demo)
    assert loaded.targets == [] and loaded.failures == [] and loaded.entries
    # no collection failures recorded any more; the parse of every output is the same
    assert [f for f in json.loads(findings_json(demo))["failures"] if not f.get("parser")] == []
    _edit_manifest(demo, targets=[], failures=[], snapshots=None, interval_s=None)
    bundle_io.read(demo)
    (demo / "manifest.json").write_text(json.dumps({"format": bundle_io.FORMAT}))  # every other key absent
    assert bundle_io.read(demo).targets == []


BAD_MANIFESTS = [
    ({"targets": "gpu01"}, "key targets:"),
    ({"targets": [42]}, "key targets[0]:"),
    ({"targets": [{"address": "10.0.0.1"}]}, "key targets[0].name:"),
    ({"targets": [{"name": ["gpu01"]}]}, "key targets[0].name:"),
    ({"targets": [{"name": "../etc"}]}, "key targets[0].name:"),
    ({"targets": [{"name": "gpu01", "port": "22"}]}, "key targets[0].port:"),
    ({"targets": [{"name": "gpu01", "kind": {"x": 1}}]}, "key targets[0].kind:"),
    ({"failures": {"target": "gpu01"}}, "key failures:"),
    ({"failures": ["gpu01"]}, "key failures[0]:"),
    ({"failures": [{"target": None, "error": "x"}]}, "key failures[0].target:"),
    ({"failures": [{"target": "gpu01", "error": 5}]}, "key failures[0].error:"),
    ({"snapshots": 2}, "key snapshots:"),
    ({"snapshots": [0, 1]}, "key snapshots[0]:"),
    ({"interval_s": "ten"}, "key interval_s:"),
    ({"interval_s": True}, "key interval_s:"),
    ({"created": 2024}, "key created:"),
    ({"format": 7}, "format 7 is not"),
]


@pytest.mark.parametrize(("changes", "key"), BAD_MANIFESTS)
def test_a_manifest_of_the_wrong_shape_is_a_bundle_error_naming_file_and_key(demo: Path, changes: dict,
                                                                            key: str) -> None:
    _edit_manifest(demo, **changes)
    with pytest.raises(BundleError) as caught:
        bundle_io.read(demo)
    message = str(caught.value)
    assert "\n" not in message and "manifest.json" in message and key in message, message
    with pytest.raises(BundleError):
        frame.load(demo)


@pytest.mark.slow
@pytest.mark.parametrize(("changes", "key"), [BAD_MANIFESTS[i] for i in (0, 2, 5, 8, 12, 13, 16)])
def test_a_manifest_of_the_wrong_shape_is_one_line_and_exit_2(demo: Path, changes: dict, key: str) -> None:
    _edit_manifest(demo, **changes)
    result = rdmatool_cli("diagnose", str(demo))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "manifest.json" in lines[0] and key in lines[0], lines


def test_a_manifest_that_is_not_a_regular_file_or_is_absurd(demo: Path, secret: Path) -> None:
    _replace_with_symlink(demo / "manifest.json", secret)
    result = rdmatool_cli("diagnose", str(demo))
    assert result.returncode == 2 and "not a regular file (symlink)" in result.stderr
    assert "SECRETHASH" not in result.stderr + result.stdout
    (demo / "manifest.json").unlink()
    (demo / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)  # deeper than the JSON parser recurses
    with pytest.raises(BundleError, match="manifest.json"):
        bundle_io.read(demo)
    (demo / "manifest.json").write_bytes(b'{"format": "rdmatool-bundle/1", "created": "\xff"}')
    with pytest.raises(BundleError, match="unreadable manifest"):
        bundle_io.read(demo)


# ------------------------------------------------------------------------------------------------ side files


@pytest.mark.parametrize(("side", "reason"), [
    ({"exit_code": "0"}, "key 'exit_code'"),
    ({"exit_code": True}, "key 'exit_code'"),
    ({"exit_code": 10**30}, "key 'exit_code'"),
    ({"started": 1700000000}, "key 'started'"),
    ({"duration_s": "fast"}, "key 'duration_s'"),
    ({"command": ["ibstat"]}, "key 'command'"),
    ({"stderr": {"x": 1}}, "key 'stderr'"),
    ({"error": 1}, "key 'error'"),
    ({"qualifier": 3}, "key 'qualifier'"),
    ({"qualifier": "../../etc/passwd"}, "qualifier '../../etc/passwd' is not a device or port name"),
    ([1, 2], "side file must be a JSON object"),
    ("{not json", "unreadable side file"),
])
def test_a_side_file_of_the_wrong_shape_skips_that_output_only(demo: Path, side, reason: str) -> None:
    side_path = demo / "snapshots/0/gpu01/ibstat.json"
    side_path.write_text(side if isinstance(side, str) else json.dumps(side))
    loaded = bundle_io.read(demo)
    [line] = [s for s in loaded.skipped if s.startswith("snapshots/0/gpu01/ibstat.json: ")]
    assert reason in line and line.endswith("; skipped") and "\n" not in line
    assert not [e for e in loaded.entries if (e.snapshot, e.target, e.result.parser) == (0, "gpu01", "ibstat")]
    assert len(loaded.entries) == len(bundle_io.list_outputs(demo)) - 1  # every other output is read
    table = frame.load(demo, write_store=False)
    assert table.skipped == loaded.skipped
    if reason == "key 'exit_code'":
        diagnose_bundle(demo)  # and the diagnosis goes on


def test_a_started_stamp_of_any_year_is_no_error(demo: Path) -> None:
    side_path = demo / "snapshots/0/gpu01/ibstat.json"
    for stamp in ("0001-01-01T00:00:00", "9999-12-31T23:59:59", "9999-12-31T23:59:59-23:59", "yesterday"):
        side_path.write_text(json.dumps({"started": stamp}))
        assert not bundle_io.read(demo).skipped
        frame.load(demo, write_store=False)


def test_odd_names_in_a_bundle_are_skipped_with_a_printable_reason(demo: Path) -> None:
    target_dir = demo / "snapshots/0/gpu01"
    (target_dir / "ibstat.evil\nline.txt").write_text("x")
    (demo / "snapshots/0/bad name").mkdir()
    (demo / "snapshots/0/bad name/ibstat.txt").write_text("x")
    (demo / "snapshots/01").mkdir()
    (demo / "snapshots/README.txt").write_text("notes")  # a stray file beside the snapshots: none of ours
    loaded = bundle_io.read(demo)
    assert "'snapshots/0/gpu01/ibstat.evil\\nline.txt': not an output file name; skipped" in loaded.skipped
    assert "snapshots/0/bad name: not a target name; skipped" in loaded.skipped
    assert "snapshots/01: not a snapshot folder (named 0, 1, ...); skipped" in loaded.skipped
    assert all("\n" not in line for line in loaded.skipped) and len(loaded.skipped) == 3


# ------------------------------------------------------------------------------------------------ the store


def _members(path: Path) -> dict[str, np.ndarray]:
    with np.load(path / samples_store.STORE_NAME, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _save_members(path: Path, members: dict[str, np.ndarray]) -> None:
    with open(path / samples_store.STORE_NAME, "wb") as handle:
        np.savez(handle, **members)


def _strings(members: dict) -> list[str]:
    return json.loads(members["strings"].tobytes())


def _doctor(path: Path, how: str, tmp_path: Path) -> None:
    store = path / samples_store.STORE_NAME
    good = store.read_bytes()
    m = _members(path)
    rows = m["out_rows"]
    if how == "truncated_zip":
        store.write_bytes(good[: len(good) * 2 // 3])
        return
    if how == "object_array":  # needs pickle to load: refused, never unpickled
        np.savez(store, **{**m, "value": m["value"].astype(object)})
        return
    if how == "symlink":
        shutil.copy(store, tmp_path / "elsewhere.npz")
        _replace_with_symlink(store, tmp_path / "elsewhere.npz")
        return
    if how in ("raw_member", "huge_header", "zip_bomb"):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, array in m.items():
                out = io.BytesIO()
                np.lib.format.write_array(out, array, allow_pickle=False)
                data = out.getvalue()
                if how == "raw_member" and name == "meta":
                    data = array.tobytes()  # not in the .npy format: numpy would hand back bytes
                if how == "huge_header" and name == "value":
                    header = np.lib.format.header_data_from_array_1_0(array)
                    header["shape"] = (10**13,)
                    head = io.BytesIO()
                    np.lib.format.write_array_header_1_0(head, header)
                    data = head.getvalue() + array.tobytes()
                if how == "zip_bomb" and name == "strings":
                    data = b"\x00" * (300 << 20)  # 300 MiB of zeros: a few hundred KiB compressed
                archive.writestr(f"{name}.npy", data)
        store.write_bytes(buffer.getvalue())
        return
    if how == "wrong_dtype_value":
        m["value"] = m["value"].astype(np.float32)
    elif how == "wrong_dtype_codes":
        m["entity"] = m["entity"].astype(np.int64)
    elif how == "wrong_shape":
        m["metric"] = m["metric"].reshape(-1, 1)
    elif how == "scalar_rows":
        m["out_rows"] = np.array(len(m["value"]), dtype=np.int64)
    elif how == "code_past_pool":
        m["out_target"] = m["out_target"].copy()
        m["out_target"][-1] = len(_strings(m))
    elif how == "negative_code":
        m["entity"] = m["entity"].copy()
        m["entity"][0] = -2
    elif how == "none_metric":
        m["metric"] = m["metric"].copy()
        m["metric"][0] = -1
    elif how == "duplicate_string":  # one metric name twice in the pool, half its rows pointing at the copy
        strings = _strings(m)
        metric = int(m["metric"][0])
        strings.append(strings[metric])
        m["metric"] = m["metric"].copy()
        same = np.flatnonzero(m["metric"] == metric)
        m["metric"][same[::2]] = len(strings) - 1
        m["strings"] = np.frombuffer(json.dumps(strings).encode(), dtype=np.uint8)
    elif how == "rows_overflow":  # 4 * 2**62 more rows: the right total once an int64 sum wraps around
        m["out_rows"] = rows.copy()
        m["out_rows"][:4] += 2**62
    elif how == "exact_mismatch":
        m["exact"] = m["exact"].copy()
        j = int(np.flatnonzero(m["is_int"])[0])
        m["exact"][j] += 12345
    elif how == "parser_swapped":
        parsers = m["out_parser"].copy()
        j = int(np.flatnonzero(parsers != parsers[0])[0])
        parsers[0], parsers[j] = parsers[j], parsers[0]
        m["out_parser"] = parsers
    elif how == "failure_with_rows":
        failure = m["out_failure"].copy()
        failure[int(np.flatnonzero(rows > 0)[0])] = 0
        m["out_failure"] = failure
    elif how == "exit_code_huge":
        m["out_exit_code"] = m["out_exit_code"].copy()
        m["out_exit_code"][0] = 2**40
    else:
        raise AssertionError(how)
    _save_members(path, m)


# What the store's reader refuses: anything malformed (shapes, types, sizes, codes, counts, a pool with a string
# twice) and anything that disagrees with the raw files it names (signatures, parsers, failures). The store holds no
# series ids since rdmatool-samples/3 (computed from the codes on load), so there is no stored id to doctor; and a
# store that is well formed and merely lies (a row moved to another target with every count kept) is no more
# trusted than raw files that lie: whoever writes the bundle writes both.
DOCTORED = ["truncated_zip", "object_array", "symlink", "raw_member", "huge_header", "zip_bomb", "wrong_dtype_value",
            "wrong_dtype_codes", "wrong_shape", "scalar_rows", "code_past_pool", "negative_code", "none_metric",
            "duplicate_string", "rows_overflow",
            "exact_mismatch", "parser_swapped", "failure_with_rows", "exit_code_huge"]


@pytest.mark.slow
@pytest.mark.parametrize("how", DOCTORED)
def test_a_doctored_store_is_ignored_and_the_findings_are_those_of_the_raw_files(
        demo: Path, reference: str, tmp_path: Path, how: str) -> None:
    _doctor(demo, how, tmp_path)
    assert samples_store.load(demo) is None
    assert findings_json(demo) == reference
    if how != "symlink":
        assert samples_store.load(demo) is not None  # rebuilt for the next reader


def test_a_fifo_store_does_not_block(demo: Path, reference: str) -> None:
    (demo / samples_store.STORE_NAME).unlink()
    os.mkfifo(demo / samples_store.STORE_NAME)
    assert samples_store.load(demo) is None
    result = rdmatool_cli("diagnose", str(demo), "--format", "json", timeout=120)
    assert result.returncode in (0, 1, 3) and "Traceback" not in result.stderr
    assert json.dumps(json.loads(result.stdout), sort_keys=True, default=str) == reference


def test_a_store_is_not_written_through_a_planted_symlink(demo: Path, tmp_path: Path) -> None:
    """The store is written back into a bundle that may be someone else's: never through a link they planted."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    store = demo / samples_store.STORE_NAME
    store.unlink()
    os.symlink(victim, store)
    for pid_guess in range(os.getpid() - 2, os.getpid() + 3):
        os.symlink(victim, demo / f".{samples_store.STORE_NAME}.{pid_guess}.tmp")
    frame.load(demo)
    assert victim.read_text() == "precious\n"
    assert not store.is_symlink() and samples_store.load(demo) is not None


# ------------------------------------------------------------------------------------------------ the writer


def _result(target: str = "gpu01", parser: str = "ibstat", qualifier: str | None = None) -> CommandResult:
    return CommandResult(target=target, parser=parser, command="x", stdout="text\n", qualifier=qualifier)


@pytest.mark.parametrize(("target", "parser", "qualifier"), [
    ("gpu01", "no_such_parser", None),
    ("gpu01", "../ibstat", None),
    ("gpu01", "ethtool_stats", "../../../../outside"),
    ("gpu01", "ethtool_stats", "/etc/cron.d/evil"),
    ("gpu01", "ethtool_stats", "eth0\nmore"),
    ("gpu01", "ethtool_stats", "eth0\n"),
    ("gpu01", "ethtool_stats", ".."),
    ("gpu01", "ethtool_stats", ""),
    ("gpu01", "ethtool_stats", "x" * 200),
    ("../outside", "ibstat", None),
    ("a/b", "ibstat", None),
    ("..", "ibstat", None),
    ("", "ibstat", None),
    ("gpu01\n", "ibstat", None),
    ("/tmp/abs", "ibstat", None),
])
def test_the_writer_refuses_names_that_leave_the_bundle(tmp_path: Path, target: str, parser: str,
                                                        qualifier: str | None) -> None:
    writer = BundleWriter(tmp_path / "out" / "bundle")
    with pytest.raises(BundleError) as caught:
        writer.add(0, _result(target, parser, qualifier))
    message = str(caught.value)
    assert "\n" not in message and repr(target) in message and repr(parser) in message and repr(qualifier) in message
    everything = {p.relative_to(tmp_path) for p in tmp_path.rglob("*")}
    assert not [p for p in everything if p.suffix in (".txt", ".json")], everything
    writer.abort()


def test_the_writer_refuses_a_folder_swapped_for_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    writer = BundleWriter(tmp_path / "bundle")
    os.symlink(outside, writer.tmp / "snapshots" / "0")  # the snapshot folder the target's pack would go into
    with pytest.raises(BundleError, match="outside the bundle"):
        writer.add(0, _result())
    assert list(outside.iterdir()) == []
    with pytest.raises(BundleError, match="snapshot"):
        writer.add(-1, _result())
    writer.abort()


def test_the_writer_never_writes_through_a_symlink_at_a_files_name(tmp_path: Path) -> None:
    # The snapshot folder is checked once; each pack is opened with O_NOFOLLOW, so a link planted at a pack's name
    # between two writes is refused, and the file it points to stays as it was.
    secret = tmp_path / "secret"
    secret.write_text("keep me\n")
    writer = BundleWriter(tmp_path / "bundle")
    writer.add(0, _result())  # the snapshot folder is made and checked
    writer.sync_soon(writer.written)  # the target is done: its pack is written
    pack = writer.tmp / "snapshots" / "0" / "gpu01.outputs"
    assert pack.is_file()
    pack.unlink()
    os.symlink(secret, pack)
    writer.add(0, _result())
    with pytest.raises(BundleError, match="symlink"):
        writer.sync_soon(writer.written[-1:])
    with pytest.raises(BundleError, match="symlink"):
        writer.commit([Target("gpu01", "127.0.0.1")], [], [], 0.0)
    assert secret.read_text() == "keep me\n"
    writer.abort()


def test_every_file_of_a_collection_is_fsynced_before_the_rename(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from rdmatool.bundle import writer as writer_mod

    synced: list[str] = []
    real = writer_mod._fsync
    monkeypatch.setattr(writer_mod, "_fsync", lambda path: (synced.append(os.path.basename(path)), real(path)))
    writer = BundleWriter(tmp_path / "b")
    hosts = [f"gpu{i:03d}" for i in range(70)]  # 70 packs: the threaded path
    for host in hosts:
        writer.add(0, CommandResult(target=host, parser="loadavg", command="cat /proc/loadavg",
                                    stdout="0.1 0.2 0.3 1/100 42\n"))
    path = writer.commit([Target(h, "127.0.0.1") for h in hosts], [], [], 0.0)
    written = sorted(p.name for p in path.rglob("*") if p.is_file())
    assert sorted(synced) == written and len(written) == len(hosts) + 2  # + manifest, inventory


def test_files_synced_during_the_collection_are_not_synced_again_and_a_rewrite_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rdmatool.bundle import writer as writer_mod

    synced: list[str] = []
    real = writer_mod._fsync
    monkeypatch.setattr(writer_mod, "_fsync", lambda path: (synced.append(os.path.basename(path)), real(path)))
    writer = BundleWriter(tmp_path / "b")
    hosts = [f"gpu{i:03d}" for i in range(40)]
    for host in hosts:  # each host's files handed over as the collect service does when the host is done
        first = len(writer.written)
        writer.add(0, CommandResult(target=host, parser="loadavg", command="cat /proc/loadavg",
                                    stdout="0.1 0.2 0.3 1/100 42\n"))
        writer.sync_soon(writer.written[first:])
    writer._finish_syncing()
    assert len(synced) == len(hosts)  # every target's pack, before the commit
    # gpu000's output written again after its sync: its new content must be synced by the commit
    writer.add(0, CommandResult(target="gpu000", parser="loadavg", command="cat /proc/loadavg",
                                stdout="0.5 0.2 0.3 1/100 42\n"))
    synced.clear()
    path = writer.commit([Target(h, "127.0.0.1") for h in hosts], [], [], 0.0)
    assert sorted(synced) == ["gpu000.outputs", "inventory.yaml", "manifest.json"]
    assert outputs_of(path, 0, "gpu000")["loadavg"][1].startswith("0.5")


def test_a_file_rewritten_while_its_early_sync_runs_is_synced_again_by_the_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from rdmatool.bundle import writer as writer_mod

    started, release = threading.Event(), threading.Event()
    synced: list[str] = []
    real = writer_mod._fsync

    def slow(path: str) -> None:  # the early fsync of the first output stalls until the rewrite is done
        if path.endswith("gpu001.outputs") and not started.is_set():
            started.set()
            release.wait(10)
        real(path)
        synced.append(os.path.basename(path))

    monkeypatch.setattr(writer_mod, "_fsync", slow)
    writer = BundleWriter(tmp_path / "b")
    result = CommandResult(target="gpu001", parser="loadavg", command="cat /proc/loadavg", stdout="0.1\n")
    writer.add(0, result)
    writer.sync_soon(writer.written)
    assert started.wait(10)
    writer.add(0, CommandResult(target="gpu001", parser="loadavg", command="cat /proc/loadavg", stdout="0.9\n"))
    release.set()
    writer._finish_syncing()
    synced.clear()
    writer.commit([Target("gpu001", "127.0.0.1")], [], [], 0.0)
    # the stalled fsync counted for the first write only: the commit syncs the rewritten output again
    assert "gpu001.outputs" in synced and "manifest.json" in synced


def test_a_failed_early_sync_stops_the_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rdmatool.bundle import writer as writer_mod

    def failing(path: str) -> None:
        raise OSError(5, "Input/output error", path)

    writer = BundleWriter(tmp_path / "b")
    writer.add(0, CommandResult(target="gpu001", parser="loadavg", command="cat /proc/loadavg", stdout="0.1\n"))
    monkeypatch.setattr(writer_mod, "_fsync", failing)
    writer.sync_soon(writer.written)
    with pytest.raises(OSError, match="Input/output"):
        writer.commit([Target("gpu001", "127.0.0.1")], [], [], 0.0)
    assert not (tmp_path / "b").exists()  # never published
    writer.abort()


def test_the_writer_takes_port_names_and_views(tmp_path: Path) -> None:
    writer = BundleWriter(tmp_path / "bundle")
    for parser, qualifier in (("sonic_portstat", "Ethernet1/1"), ("perfquery", "mlx5_0.1"),
                              ("onyx_pfc_counters", "Ethernet0.prio3"), ("ethtool_stats", "eth0"),
                              ("ibstat", None)):
        writer.add(0, _result("leaf-1.example", parser, qualifier))
    path = writer.commit([Target(name="leaf-1.example", address="10.0.0.1")], [{"index": 0}], [], 0.0)
    names = sorted(f"{stem}.txt" for stem in outputs_of(path, 0, "leaf-1.example"))
    assert "sonic_portstat.Ethernet1_1.txt" in names and "perfquery.mlx5_0.1.txt" in names
    assert "onyx_pfc_counters.Ethernet0.prio3.txt" in names and "ibstat.txt" in names
    loaded = bundle_io.read(path)
    assert loaded.skipped == [] and {e.result.qualifier for e in loaded.entries} == {
        "Ethernet1/1", "mlx5_0.1", "Ethernet0.prio3", "eth0", None}


@pytest.mark.parametrize("sync_each", [True, False])
def test_a_bundle_is_made_durable_per_file_or_by_one_filesystem_sync(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync_each: bool) -> None:
    from rdmatool.bundle import writer as writer_mod

    calls: list[str] = []
    real_tree, real_fs = writer_mod._fsync_tree, writer_mod.sync_filesystem
    monkeypatch.setattr(writer_mod, "_fsync_tree", lambda root, skip=frozenset(): (calls.append("each"), real_tree(root, skip)))
    monkeypatch.setattr(writer_mod, "sync_filesystem", lambda root: (calls.append("fs"), real_fs(root)))
    writer = BundleWriter(tmp_path / "b")
    for i in range(3):
        writer.add(0, CommandResult(target=f"gpu{i:03d}", parser="loadavg", command="cat /proc/loadavg",
                                    stdout="0.1 0.2 0.3 1/100 42\n"))
    if not sync_each:  # what the merge does: its commit's publish syncs the filesystem once
        monkeypatch.setattr(writer, "publish", lambda: BundleWriter.publish(writer, sync_each=False))
    path = writer.commit([Target(f"gpu{i:03d}", "127.0.0.1") for i in range(3)], [], [], 0.0)
    assert calls == (["each"] if sync_each else ["fs"])  # a collection (commit) syncs its own files only
    assert len(bundle_io.read(path).entries) == 3  # renamed into place, whole


def test_a_filesystem_sync_that_cannot_run_is_an_error_never_silent(tmp_path: Path) -> None:
    from rdmatool.bundle.writer import sync_filesystem

    sync_filesystem(tmp_path)  # a directory on a real filesystem: no error
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError):
        sync_filesystem(tmp_path / "file")  # not a directory
    with pytest.raises(OSError):
        sync_filesystem(tmp_path / "absent")
