"""The rule view `.NAME.rules.json`: written with every save under the store lock, read by diagnosis, ignored (the
baseline file loaded instead) when it is missing, stale or bad; never listed as a baseline."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from rdmatool import baseline, files
from rdmatool.baseline import store as store_module
from rdmatool.cli import app
from rdmatool.errors import BaselineError
from tests.baseline._bundles import Host, Switch, write_bundle

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "demo-bundle"
runner = CliRunner()


def _hosts(night: int) -> list[Host]:
    return [Host(f"gpu{i:02d}", bw={65536: 80.0 + i + night, 1048576: 90.0 - i + 0.5 * night},
                 pauses=(1000 * i, 1000 * i + 7 * (i + 1) * (night + 1))) for i in range(4)]


@pytest.fixture()
def saved(tmp_path: Path) -> tuple[Path, dict]:
    """A store of three nights: (baseline file, the last written document)."""
    store = tmp_path / "store"
    for night in range(3):
        doc = baseline.save(write_bundle(tmp_path / f"b{night}", _hosts(night), [Switch()], night=night), store)
    return store / "default.json", doc


def _no_full_load(monkeypatch) -> None:
    def refuse(path):
        raise AssertionError(f"{path} was loaded in full")

    monkeypatch.setattr(store_module, "load", refuse)


def test_every_save_writes_the_view_atomically_under_the_lock(tmp_path: Path, monkeypatch) -> None:
    store = tmp_path / "store"
    writes: list[tuple[str, bool]] = []
    real = files.write_atomic

    def recording(path, data, mode=0o644):
        if Path(path).parent != store:  # the bundle's samples store, written back as the bundle is read
            return real(path, data, mode)
        with open(store / baseline.LOCK_NAME, "a+") as probe:  # another open file: conflicts with the held lock
            try:
                fcntl.flock(probe.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held = True
            else:
                held = False
                fcntl.flock(probe.fileno(), fcntl.LOCK_UN)
        writes.append((Path(path).name, held))
        real(path, data, mode)

    monkeypatch.setattr(files, "write_atomic", recording)
    for night in range(2):
        doc = baseline.save(write_bundle(tmp_path / f"b{night}", _hosts(night), night=night), store)
    # each save: the baseline file, then its view, both through the atomic writer, both under the lock
    assert writes == [("default.json", True), (".default.rules.json", True)] * 2
    view = json.loads((store / ".default.rules.json").read_text(encoding="utf-8"))
    assert view["format"] == baseline.RULES_FORMAT and view["baseline"] == "default.json"
    assert view["rule_stats"] == doc["rule_stats"] == baseline.load(store / "default.json")["rule_stats"]
    assert view["of"]["bytes"] == (store / "default.json").stat().st_size
    assert not [p for p in store.iterdir() if p.name.endswith(".tmp")]


def test_diagnosis_reads_the_view_and_diagnoses_the_same_as_from_the_full_file(tmp_path: Path, monkeypatch) -> None:
    store = tmp_path / "store"
    store.mkdir()
    path = store / "demo.json"
    shutil.copyfile(REPO / "baselines" / "demo-healthy.json", path)
    args = ["diagnose", str(DEMO), "--baseline", "demo", "--store", str(store), "--format", "json"]
    without = runner.invoke(app, args)
    assert without.exit_code == 1 and not baseline.rules_path_of(path).exists()
    with baseline.locked(store):
        baseline.write_document(path, baseline.load(path))
    assert baseline.rules_path_of(path).is_file()
    _no_full_load(monkeypatch)
    with_view = runner.invoke(app, args)
    assert with_view.exit_code == 1, with_view.output
    assert json.loads(with_view.stdout) == json.loads(without.stdout)


def test_a_store_without_views_gives_the_same_statistics_and_is_not_written(saved, monkeypatch) -> None:
    path, doc = saved
    from_view = baseline.stats_for_rules(path)
    baseline.rules_path_of(path).unlink()  # as a store written by an rdmatool without views
    before = sorted((p.name, p.stat().st_mtime_ns) for p in path.parent.iterdir())
    from_file = baseline.stats_for_rules(path)
    pd.testing.assert_frame_equal(from_file, from_view)
    assert list(from_file["median"]) == [r["median"] for r in doc["rule_stats"]]
    assert sorted((p.name, p.stat().st_mtime_ns) for p in path.parent.iterdir()) == before
    # the next save writes the view again
    baseline.add_night(path.parent, "default", {**doc["nights"][0], "id": "again"})
    assert baseline.read_rule_view(path) == baseline.load(path)["rule_stats"]


def test_a_view_that_does_not_match_the_file_is_not_used(saved, monkeypatch) -> None:
    path, doc = saved
    text = path.read_text(encoding="utf-8")
    median = doc["rule_stats"][0]["median"]
    # the baseline file rewritten by a writer that does not know views (another rdmatool, a hand edit): the
    # statistics of the file, not those of the stale view
    edited = json.loads(text)
    edited["rule_stats"][0]["median"] = median + 1000.0
    path.write_text(json.dumps(edited, indent=1) + "\n", encoding="utf-8")
    assert baseline.read_rule_view(path) is None
    assert baseline.stats_for_rules(path)["median"].iloc[0] == median + 1000.0
    # the same size, another modification time, other bytes: the digest tells
    at = text.index('"median": ', text.index('"rule_stats"')) + len('"median": ')
    digit = text[at]
    assert digit.isdigit()
    same_size = text[:at] + str((int(digit) + 1) % 10) + text[at + 1:]
    path.write_text(same_size, encoding="utf-8")
    os.utime(path, ns=(2_000_000_000, 2_000_000_000))
    assert baseline.read_rule_view(path) is None
    assert baseline.stats_for_rules(path)["median"].iloc[0] != median
    # the very bytes the view was written for under another modification time (a copy, a restore): still used
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    _no_full_load(monkeypatch)
    assert baseline.read_rule_view(path) == doc["rule_stats"]
    assert list(baseline.stats_for_rules(path)["median"]) == [r["median"] for r in doc["rule_stats"]]


def _spoil_view(view_path: Path, how: str) -> None:
    view = json.loads(view_path.read_text(encoding="utf-8"))
    if how == "not json":
        view_path.write_text('{"format": "rdmatool-baseline-rules/1", "rule_stats": [', encoding="utf-8")
    elif how == "not utf-8":
        view_path.write_bytes(b"\xff\xfe{}")
    elif how == "foreign":
        view_path.write_text(json.dumps({**view, "format": "someone-else/1"}), encoding="utf-8")
    elif how == "wrong type in a row":
        view["rule_stats"][0]["median"] = "fast"
        view_path.write_text(json.dumps(view), encoding="utf-8")
    elif how == "row without the rule columns":
        view["rule_stats"][0].pop("mad")
        view_path.write_text(json.dumps(view), encoding="utf-8")
    elif how == "rows not a list":
        view_path.write_text(json.dumps({**view, "rule_stats": {"a": 1}}), encoding="utf-8")
    elif how == "no fingerprint":
        view_path.write_text(json.dumps({k: v for k, v in view.items() if k != "of"}), encoding="utf-8")
    elif how == "fingerprint of another type":
        view_path.write_text(json.dumps({**view, "of": {**view["of"], "bytes": str(view["of"]["bytes"])}}),
                             encoding="utf-8")
    elif how == "nested too deeply":
        view_path.write_bytes(b"[" * 100_000)
    elif how == "symlink":
        elsewhere = view_path.parent.parent / "planted.json"
        elsewhere.write_text(json.dumps({**view, "rule_stats": []}), encoding="utf-8")
        view_path.unlink()
        view_path.symlink_to(elsewhere)
    elif how == "fifo":
        view_path.unlink()
        os.mkfifo(view_path)
    elif how == "directory":
        view_path.unlink()
        view_path.mkdir()


SPOILS = ["not json", "not utf-8", "foreign", "wrong type in a row", "row without the rule columns",
          "rows not a list", "no fingerprint", "fingerprint of another type", "nested too deeply", "symlink", "fifo",
          "directory"]


@pytest.mark.parametrize("how", SPOILS)
def test_a_bad_view_falls_back_to_the_baseline_file(saved, how: str) -> None:
    path, doc = saved
    expected = baseline.stats_for_rules(path)
    _spoil_view(baseline.rules_path_of(path), how)
    assert baseline.read_rule_view(path) is None
    pd.testing.assert_frame_equal(baseline.stats_for_rules(path), expected)
    assert list(expected["median"]) == [r["median"] for r in doc["rule_stats"]]


def test_a_bad_view_beside_a_bad_baseline_is_the_baseline_files_one_line_error(saved) -> None:
    path, _ = saved
    _spoil_view(baseline.rules_path_of(path), "not json")
    path.write_text('{"format": "rdmatool-baseline/2", "rule_stats": [', encoding="utf-8")
    with pytest.raises(BaselineError) as caught:
        baseline.stats_for_rules(path)
    assert str(caught.value).startswith(f"{path}: corrupt baseline") and "\n" not in str(caught.value)
    result = runner.invoke(app, ["diagnose", str(DEMO), "--baseline", str(path), "--format", "json"])
    assert result.exit_code == 2 and result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(path) in lines[0] and "Traceback" not in result.stderr


def test_views_are_not_baselines(saved, tmp_path: Path) -> None:
    path, _ = saved
    store = path.parent
    assert baseline.rules_path_of(path).is_file()
    assert [e["name"] for e in baseline.list_store(store)] == ["default"]
    result = runner.invoke(app, ["baseline", "list", "--store", str(store), "--json"])
    assert result.exit_code == 0 and [e["name"] for e in json.loads(result.stdout)["baselines"]] == ["default"]
    assert result.stderr == ""
    # a store of one baseline other than `default`: the view does not make it ambiguous
    other = tmp_path / "other"
    other.mkdir()
    shutil.copyfile(path, other / "nightly.json")
    shutil.copyfile(baseline.rules_path_of(path), other / ".nightly.rules.json")
    assert baseline.resolve(str(other)) == other / "nightly.json"
    # no baseline name is the view's file name
    with pytest.raises(BaselineError):
        baseline.check_name(".default.rules")


def test_a_store_that_cannot_be_written_is_one_line(saved, monkeypatch) -> None:
    path, doc = saved
    before = path.read_bytes()

    def read_only(*_args, **_kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(files, "write_atomic", read_only)
    bundle = write_bundle(path.parent.parent / "b9", _hosts(9), night=9)
    result = runner.invoke(app, ["baseline", "save", str(bundle), "--store", str(path.parent)])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [f"rdmatool: {path}: cannot save the baseline (Read-only file system)"]
    assert path.read_bytes() == before


@pytest.mark.skipif(os.geteuid() == 0, reason="permissions do not stop root")
def test_a_read_only_store_directory_is_one_line(saved) -> None:
    path, _ = saved
    store = path.parent
    bundle = write_bundle(store.parent / "b9", _hosts(9), night=9)
    before = path.read_bytes()
    store.chmod(0o555)
    try:
        result = runner.invoke(app, ["baseline", "save", str(bundle), "--store", str(store)])
    finally:
        store.chmod(0o755)
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"{path}: cannot save the baseline" in lines[0]
    assert path.read_bytes() == before


def test_a_view_that_cannot_be_written_after_the_file_says_so_and_is_not_used(saved, monkeypatch) -> None:
    path, doc = saved
    real = files.write_atomic

    def full_for_views(target, data, mode=0o644):
        if Path(target).name.endswith(".rules.json"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(target, data, mode)

    monkeypatch.setattr(files, "write_atomic", full_for_views)
    with pytest.raises(BaselineError) as caught:
        baseline.add_night(path.parent, "default", {**doc["nights"][0], "id": "extra", "created": "2099-01-01"})
    message = str(caught.value)
    assert message.startswith(f"{path}: saved, but its rule view") and "No space left" in message
    assert "\n" not in message
    monkeypatch.undo()
    written = baseline.load(path)
    assert written["nights"][-1]["id"] == "extra"
    assert baseline.read_rule_view(path) is None  # the old view no longer matches the file
    assert list(baseline.stats_for_rules(path)["n"]) == [r["n"] for r in written["rule_stats"]]
