"""`rdmatool report`: the exit codes of the contract, one line on bad input, the file written or not."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from rdmatool.cli import app
from tests.helpers import REPO

DEMO = REPO / "examples" / "demo-bundle"
runner = CliRunner()


def test_the_verdict_is_the_exit_code_and_the_file_is_written(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(DEMO), "-o", str(out)])
    assert result.exit_code == 1, result.output  # the demo's critical findings
    assert "verdict fail" in result.output and out.read_text().startswith("<!DOCTYPE html>")
    quiet = tmp_path / "pb"
    quiet.mkdir()
    (quiet / "quiet.yaml").write_text(
        "rules:\n  - {id: never, kind: threshold, metric: load1, op: '>', value: 1000000, severity: error,\n"
        "     symptom: s, cause: c, check: k, fix: f}\n")
    result = runner.invoke(app, ["report", str(DEMO), "--playbooks", str(quiet), "-o", str(out)])
    assert result.exit_code == 3, result.output  # nothing wrong, but gpu12 was not collected: inconclusive
    assert "INCONCLUSIVE" in out.read_text() and "connection refused" in out.read_text()


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    for args, named in ((["report", str(tmp_path / "nowhere"), "-o", str(out)], "nowhere"),
                        (["report", str(DEMO), "-o", str(tmp_path / "no" / "dir.html")], "no such directory"),
                        (["report", str(DEMO), "-o", str(tmp_path)], "is a directory"),
                        (["report", str(DEMO), "--baseline", str(tmp_path / "b.json"), "-o", str(out)], "b.json")):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert named in result.output and len(result.output.strip().splitlines()) == 1, result.output
        assert "Traceback" not in result.output
    assert not out.exists()


def test_no_data_is_exit_3_and_no_report(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    shutil.copytree(DEMO, empty, ignore=shutil.ignore_patterns("samples.npz"))
    for snapshot in (empty / "snapshots").iterdir():
        shutil.rmtree(snapshot)
        snapshot.mkdir()
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(empty), "-o", str(out)])
    assert result.exit_code == 3, result.output
    assert "no data" in result.output.lower() and not out.exists()
