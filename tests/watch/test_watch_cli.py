"""`rdmatool watch`'s command line: bad input is one line and exit 2, before anything is read."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from rdmatool.cli.watch_cmd import duration_seconds

runner = CliRunner()


def test_durations() -> None:
    assert [duration_seconds(t) for t in ("0", "90", "90s", "30m", "1h", "2d", "0.5h")] == [
        0, 90, 90, 1800, 3600, 172800, 1800]
    with pytest.raises(ValueError, match="--duration '1 week'"):
        duration_seconds("1 week")


@pytest.mark.parametrize(("args", "said"), [
    (["--local", "--duration", "soon"], "rdmatool watch: --duration 'soon': give seconds or a number with s, m, h"),
    (["--local", "-i", "inventory.yaml"], "rdmatool watch: --local watches this machine; it takes no -i or --limit"),
    ([], "rdmatool watch: give -i INVENTORY (or `inventory` in the config file), or --local"),
    (["--local", "--textfile", "{tmp}/absent"], "rdmatool watch: {tmp}/absent: not a directory"),
    (["--local", "--out", "{tmp}/bad"], "rdmatool watch: {tmp}/bad/history.npz: not a watch history"),
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], said: str, tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "history.npz").write_bytes(b"garbage")
    result = runner.invoke(app, ["watch", *[a.replace("{tmp}", str(tmp_path)) for a in args]])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(said.replace("{tmp}", str(tmp_path))), result.stderr
