"""`rdmatool parse` reads a regular file or stdin, nothing else: a FIFO would block, a device never end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import PARSER_FIXTURES, REPO


def _parse(*args: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rdmatool", "parse", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, stdin=subprocess.DEVNULL)


def _assert_refused(result: subprocess.CompletedProcess[str], path: str, reason: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert path in lines[0] and reason in lines[0]
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "ibstat.fifo"
    os.mkfifo(fifo)  # nobody writes: opening it for reading would block forever
    _assert_refused(_parse("ibstat", str(fifo), timeout=20), str(fifo), "not a regular file (fifo)")


def test_a_device_is_refused() -> None:
    _assert_refused(_parse("ibstat", "/dev/zero"), "/dev/zero", "not a regular file")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    _assert_refused(_parse("ibstat", str(tmp_path)), str(tmp_path), "not a regular file (directory)")


def test_a_symlink_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "busy.txt"
    link.symlink_to(PARSER_FIXTURES / "loadavg" / "busy.txt")
    _assert_refused(_parse("loadavg", str(link)), str(link), "not a regular file (symlink)")


def test_a_file_over_the_cap_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"\n" * 2048)
    env = {**os.environ, "RDMATOOL_MAX_OUTPUT_BYTES": "1024"}
    result = subprocess.run([sys.executable, "-m", "rdmatool", "parse", "loadavg", str(big)], capture_output=True,
                            text=True, timeout=20, cwd=REPO, env=env, stdin=subprocess.DEVNULL)
    _assert_refused(result, str(big), "larger than 1024 bytes")


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_a_regular_file_and_stdin_still_parse(tmp_path: Path, source: str) -> None:
    fixture = PARSER_FIXTURES / "loadavg" / "busy.txt"
    if source == "file":
        result = _parse("loadavg", str(fixture), "--json")
    else:
        with fixture.open("rb") as handle:
            result = subprocess.run([sys.executable, "-m", "rdmatool", "parse", "loadavg", "--json"], stdin=handle,
                                    capture_output=True, text=True, timeout=20, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert '"metric"' in result.stdout
