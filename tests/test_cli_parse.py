"""`rdmatool parse` as a user runs it: JSON keys, exit codes, one-line errors, stdin, and every real host sample."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from tests.helpers import PARSER_FIXTURES, REAL_OUTPUTS, REPO

runner = CliRunner()
KEYS = ["entity", "metric", "value", "text", "priority", "size_bytes", "raw_key"]
# real-output folder → the parser that owns it
HOST_FOLDERS = {
    "ib_read_lat": "perftest", "ib_write_bw": "perftest", "ibstat": "ibstat", "ibstatus": "ibstatus",
    "nccl_all_reduce_perf": "nccl_tests", "perfquery": "perfquery", "sysfs_ecn_dcqcn": "dcqcn_sysfs",
    "sysfs_infiniband": "sysfs_counters", "iblinkinfo": "iblinkinfo", "ibnetdiscover": "ibnetdiscover",
    "ibqueryerrors": "ibqueryerrors", "sminfo": "sminfo",
}


def _host_samples() -> list[tuple[str, Path]]:
    root = REAL_OUTPUTS / "host"
    if not root.is_dir():
        return []
    return [(HOST_FOLDERS[folder.name], path) for folder in sorted(root.iterdir()) if folder.is_dir()
            for path in sorted(folder.glob("*.txt"))]


def test_every_host_folder_has_an_owner() -> None:
    root = REAL_OUTPUTS / "host"
    if not root.is_dir():
        pytest.skip("real-output corpus absent")
    assert {p.name for p in root.iterdir() if p.is_dir()} <= set(HOST_FOLDERS)


@pytest.mark.parametrize(("parser", "path"), _host_samples(), ids=lambda x: getattr(x, "name", x))
def test_parse_json_on_every_real_host_sample(parser: str, path: Path) -> None:
    result = runner.invoke(app, ["parse", parser, str(path), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["samples"]
    assert rows, f"{path} gave no samples"
    assert all(list(row) == KEYS for row in rows)


def test_list_names_every_parser_once() -> None:
    result = runner.invoke(app, ["parse", "--list"])
    assert result.exit_code == 0
    names = [line.split()[0] for line in result.stdout.splitlines() if line.strip()]
    assert len(names) == len(set(names)) >= 40
    assert {"ibstat", "perfquery", "sonic_pfc_counters", "cumulus_roce", "nxos_pfc", "lldpctl"} <= set(names)


def test_stdin_and_dash_read_standard_input() -> None:
    text = (PARSER_FIXTURES / "loadavg" / "busy.txt").read_text()
    for args in (["parse", "loadavg", "--json"], ["parse", "loadavg", "-", "--json"]):
        result = runner.invoke(app, args, input=text)
        assert result.exit_code == 0
        assert [r["metric"] for r in json.loads(result.stdout)["samples"]] == ["load1", "load5", "load15"]


def test_malformed_input_exits_1_with_one_located_line(tmp_path: Path) -> None:
    bad = tmp_path / "ibstat.txt"
    bad.write_text("CA 'mlx5_0'\n\tCA type: MT4123\n\tthis is not ibstat\n")
    process = subprocess.run([sys.executable, "-m", "rdmatool", "parse", "ibstat", str(bad)], capture_output=True,
                             text=True, cwd=REPO)
    assert process.returncode == 1
    assert process.stdout == ""
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ibstat: {bad}:3: ")
    assert "Traceback" not in process.stderr


@pytest.mark.parametrize(("parser", "tool", "content"), [
    ("perfquery", "perfquery", ""), ("ibstat", "ibstat", "\n"), ("ethtool_stats", "ethtool -S", "  \n\t\n"),
    ("mlnx_qos", "mlnx_qos", "\r\n")])
def test_an_empty_output_exits_2_with_one_line_naming_the_file(parser: str, tool: str, content: str,
                                                               tmp_path: Path) -> None:
    empty = tmp_path / f"{parser}.txt"
    empty.write_bytes(content.encode())
    process = subprocess.run([sys.executable, "-m", "rdmatool", "parse", parser, str(empty), "--json"],
                             capture_output=True, text=True, cwd=REPO)
    assert process.returncode == 2
    assert process.stdout == ""  # no samples: not an empty list that reads as "nothing wrong"
    assert process.stderr.splitlines() == [f"{parser}: {empty}: empty output: {tool} printed nothing"]


@pytest.mark.parametrize(
    ("args", "message"),
    [(["parse", "nosuchparser", "x"], "unknown parser"), (["parse", "ibstat", "/no/such/file"], "no such file"),
     (["parse"], "missing parser NAME")],
)
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output


def test_table_output_keeps_bracketed_field_names() -> None:
    sample = PARSER_FIXTURES / "perftest" / "send_lat_roce_sweep.txt"
    result = runner.invoke(app, ["parse", "perftest", str(sample)], env={"COLUMNS": "250"})
    assert result.exit_code == 0
    assert "t_typical[usec]" in result.stdout  # a field name, not rich markup to be swallowed


def test_a_device_string_with_terminal_controls_is_shown_not_sent(tmp_path) -> None:
    import subprocess
    import sys

    hostile = tmp_path / "ibstat.txt"
    hostile.write_bytes(b"CA 'mlx5_0'\n\tCA type: MT\x1b]52;c;aGk=\x07\x15owned\n")
    out = subprocess.run([sys.executable, "-m", "rdmatool", "parse", "ibstat", str(hostile)],
                         capture_output=True, text=True, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert "MT" in out.stdout and "\\e]52" in out.stdout  # the sequence is there, made visible
    assert not any(ch in out.stdout for ch in "\x1b\x07\x15")
