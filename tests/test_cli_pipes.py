"""A reader that stops early (`rdmatool parse --list | head -1`) ends rdmatool quietly with 141, whatever the command
prints and through whatever writes it (rich's console, typer.echo, JSON on sys.stdout): never 1 ("fail, drain" to a
scheduler), never a traceback, nothing on stderr (rdmatool.cli._boundary)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rdmatool.cli._boundary import EXIT_CLOSED
from tests.helpers import REPO

DEMO = str(REPO / "examples" / "demo-bundle")
RDMATOOL = [sys.executable, "-m", "rdmatool"]


def closed_reader(args: list[str]) -> subprocess.CompletedProcess:
    """rdmatool writing into a pipe whose reader has already gone: the first write it makes is refused."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([*RDMATOOL, *args], stdout=write, stderr=subprocess.PIPE, text=True, cwd=REPO,
                              timeout=120, check=False, env={**os.environ, "COLUMNS": "120"})
    finally:
        os.close(write)


def test_the_code_is_the_shells_for_a_tool_sigpipe_ended() -> None:
    assert EXIT_CLOSED == 128 + 13


@pytest.mark.parametrize("args", [
    ["parse", "--list"],  # typer.echo, a line at a time
    ["bundle", "show", DEMO],  # rich's console
    ["diagnose", DEMO],  # the on-call view; its verdict alone would be exit 1
    ["plan", "checkpoint", "--size", "100GB", "--interval", "1h", "--stall", "5min", "--json"],  # JSON
    ["diagnose", "--help"],  # help, printed while the options are parsed
], ids=["parse --list", "bundle show", "diagnose table", "JSON", "help"])
def test_a_reader_gone_ends_the_command_quietly(args: list[str]) -> None:
    done = closed_reader(args)
    assert done.returncode == EXIT_CLOSED, done.stderr
    # diagnose's notes on the demo bundle's noise are its own; nothing about the pipe, no traceback
    said = [line for line in done.stderr.splitlines() if not line.startswith("rdmatool: note: ")]
    assert said == [], done.stderr


def test_head_1_through_the_shell(tmp_path: Path) -> None:
    """`| head -1` as a user types it; head has taken its line (the first one, written before rdmatool starts) and
    left before rdmatool writes anything, so the exit is the pipe's every time, not a race."""
    rdmatool = " ".join(shlex.quote(part) for part in RDMATOOL)
    script = (f"{{ echo first; {rdmatool} parse --list 2>{tmp_path}/err; echo $? >{tmp_path}/rc; }} | head -1")
    shell = subprocess.run(["sh", "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120, check=False)
    assert shell.stdout == "first\n" and shell.returncode == 0
    assert (tmp_path / "rc").read_text().strip() == str(EXIT_CLOSED)
    assert (tmp_path / "err").read_text() == ""

