"""`rdmatool capture` refuses a packet count over its maximum before it reads the inventory or reaches a host."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from rdmatool.cli.capture_cmd import LIMITS


@pytest.mark.parametrize("count", ["1000001", "10000000"])
def test_more_packets_than_the_maximum_is_a_usage_error(tmp_path: Path, count: str) -> None:
    result = CliRunner().invoke(app, ["capture", "-i", str(tmp_path / "absent.yaml"), "--limit", "gpu01",
                                      "--device", "mlx5_0", "--max-packets", count, "-o", str(tmp_path / "b")])
    assert result.exit_code == 2
    assert f"--max-packets {count}: at most 1000000" in result.stderr
    assert result.stderr.count("\n") == 1 and not (tmp_path / "b").exists()


def test_the_maximum_is_sane() -> None:
    assert LIMITS["max_packets"] == 1_000_000
