"""`rdmatool baseline save|list|show|diff` through the real command line: exit codes, one-line errors, --json."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from rdmatool import baseline
from rdmatool.cli import app
from tests.baseline._bundles import Host, Switch, write_bundle

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _cli(*args: str):
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _hosts(shift: float) -> list[Host]:
    """A healthy night (at least 90 % of the 100 Gb/s line rate: the diagnosis `baseline save` runs does not fail
    it, so the night is in the statistics)."""
    return [Host(f"gpu{i:02d}", link_rate=100, bw={65536: 92.0 + i + shift}) for i in range(3)]


def test_save_list_show_roundtrip(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    bundles = [write_bundle(tmp_path / f"b{n}", _hosts(n), [Switch()], night=n) for n in range(3)]
    for b in bundles:
        code, out, _ = _cli("baseline", "save", str(b), "--store", store, "--name", "nightly", "--keep", "2", "--json")
        assert code == 0, out
    assert json.loads(out)["nights"] == 2
    code, out, _ = _cli("baseline", "list", "--store", store, "--json")
    assert code == 0 and [e["name"] for e in json.loads(out)["baselines"]] == ["nightly"]
    code, out, _ = _cli("baseline", "show", "nightly", "--store", store, "--metric", "bw_avg", "--json")
    shown = json.loads(out)
    assert code == 0 and [n["bundle"] for n in shown["nights"]] == [str(b) for b in bundles[1:]]
    (row,) = [r for r in shown["rule_stats"] if r["metric"] == "bw_avg_gbps"]
    values = [h.bw[65536] for n in (1, 2) for h in _hosts(n)]
    assert (row["median"], row["n"]) == (statistics.median(values), len(values))
    code, out, _ = _cli("baseline", "show", "nightly", "--store", store)
    assert code == 0 and "bw_avg_gbps" in out and "fw_version_by_ca_type" in out
    code, out, _ = _cli("baseline", "list", "--store", store)
    assert code == 0 and "nightly" in out


def test_diff_command(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    _cli("baseline", "save", str(write_bundle(tmp_path / "a", _hosts(0))), "--store", store, "--name", "a")
    slower = [Host(h.name, fw="28.40.1000", link_rate=100, bw={65536: h.bw[65536] / 2}) for h in _hosts(0)]
    # half the line rate fails the night: counted by hand, to compare the two fleets
    _cli("baseline", "save", str(write_bundle(tmp_path / "b", slower, night=1)), "--store", store, "--name", "b",
         "--include-failed")
    code, out, _ = _cli("baseline", "diff", "a", "b", "--store", store, "--json")
    result = json.loads(out)
    assert code == 0
    moved = next(r for r in result["moved"] if r["metric"] == "bw_avg_gbps")
    assert moved["relative"] == -0.5
    assert any(f["category"] == "fw_version_by_ca_type" and f["b"] == "28.40.1000" for f in result["facts"])
    code, out, _ = _cli("baseline", "diff", "a", "b", "--store", store)
    assert code == 0 and "28.40.1000" in out and "bw_avg_gbps" in out


def test_bad_input_is_exit_2_and_one_line(tmp_path: Path) -> None:
    store = tmp_path / "store"
    code, _, err = _cli("baseline", "save", str(tmp_path / "missing"), "--store", str(store))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "missing" in err
    _cli("baseline", "save", str(write_bundle(tmp_path / "b", _hosts(0))), "--store", str(store))
    (store / "broken.json").write_text("not json at all", encoding="utf-8")
    code, _, err = _cli("baseline", "show", "broken", "--store", str(store))
    assert code == 2 and len(err.strip().splitlines()) == 1 and str(store / "broken.json") in err
    code, _, err = _cli("baseline", "save", str(tmp_path / "b"), "--store", str(store), "--name", "broken")
    assert code == 2 and "broken.json" in err
    assert (store / "broken.json").read_text(encoding="utf-8") == "not json at all"
    code, out, err = _cli("baseline", "list", "--store", str(store), "--json")
    assert code == 0 and "broken.json" in err
    assert [e["name"] for e in json.loads(out)["baselines"] if "error" not in e] == ["default"]
    code, _, _ = _cli("baseline", "show", "default", "--store", str(store))
    assert code == 0
    code, _, err = _cli("baseline", "show", "nope", "--store", str(store))
    assert code == 2 and "no baseline named 'nope'" in err
    code, _, err = _cli("baseline", "save", str(tmp_path / "b"), "--store", str(store), "--keep", "0")
    assert code == 2 and "--keep" in err


def test_two_nightly_processes_at_once_lose_nothing(tmp_path: Path) -> None:
    store = tmp_path / "store"
    bundles = [write_bundle(tmp_path / f"b{n}", _hosts(n), night=n) for n in range(2)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen([sys.executable, "-m", "rdmatool", "baseline", "save", str(b), "--store", str(store)],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for b in bundles]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    doc = json.loads((store / "default.json").read_text(encoding="utf-8"))
    assert sorted(n["bundle"] for n in doc["nights"]) == sorted(str(b) for b in bundles)


def _three_nights(tmp_path: Path, store: str) -> None:
    """Three healthy nights saved through the library: these tests are of diagnose reading them, and the command's
    own diagnosis of each night (test_save_list_show_roundtrip, test_verdicts.py) would only add seconds."""
    for n in range(3):
        baseline.save(write_bundle(tmp_path / f"b{n}", _hosts(n), night=n), store)


def test_diagnose_reads_a_saved_baseline(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    _three_nights(tmp_path, store)
    # gpu00 now receives pause frames at 2000x its baseline rate on priority 3 (pause_rate_above_baseline)
    storm = Host("gpu00", link_rate=100, bw={65536: 92.0}, pauses=(0, 1_000_000))
    today = write_bundle(tmp_path / "today", [storm, *_hosts(0)[1:]], night=5)
    code, out, err = _cli("diagnose", str(today), "--baseline", "default", "--store", store, "--format", "json")
    assert code in (0, 1, 3), err
    found = [f for f in json.loads(out)["findings"] if f["rule"] == "pause_rate_above_baseline"]
    assert [(f["target"], f["evidence"]["priority"]) for f in found] == [("gpu00", 3)]
    code, _, err = _cli("diagnose", str(today), "--baseline", "nope", "--store", store)
    assert code == 2 and "nope" in err


def test_diagnose_bandwidth_below_baseline(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    _three_nights(tmp_path, store)
    today = write_bundle(tmp_path / "today", [Host("gpu00", link_rate=100, bw={65536: 20.0}), *_hosts(0)[1:]],
                         night=5)
    result = runner.invoke(app, ["diagnose", str(today), "--baseline", "default", "--store", store, "--format", "json"])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    found = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "bandwidth_below_baseline"]
    assert [f["target"] for f in found] == ["gpu00"]


def test_nightly_examples_collect_then_save() -> None:
    nightly = REPO / "examples" / "nightly"
    service = (nightly / "rdmatool-baseline.service").read_text(encoding="utf-8")
    assert "Type=oneshot" in service and " collect -i " in service and " baseline save " in service
    assert "OnCalendar=" in (nightly / "rdmatool-baseline.timer").read_text(encoding="utf-8")
    cron = [line for line in (nightly / "crontab.txt").read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]
    assert len(cron) == 1 and len(cron[0].split()) > 5 and "baseline save" in cron[0]
    assert (nightly / "README.md").is_file()
