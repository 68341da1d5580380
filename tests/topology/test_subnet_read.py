"""Reading the InfiniBand subnet once per fabric: the host script's `subnet` mode, its framing, and which host of a
collection claims a subnet manager (rdmatool.collect)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from rdmatool import commands
from rdmatool.collect import _Subnets
from rdmatool.model import CommandResult
from rdmatool.transport import host_framing
from tests.helpers import PARSER_FIXTURES


def section(token: str, seq: int, parser: str, qualifier: str, body: str = "x") -> str:
    m = f"{commands.MARKER} {token}"
    return f"\n{m} BEGIN {seq} {parser} {qualifier} 1700000000.5 cmd\n{body}\n{m} STDERR {seq}\n\n{m} END {seq} 0\n"


def test_subnet_mode_runs_nothing_without_an_infiniband_port() -> None:
    if shutil.which("sh") is None:
        pytest.skip("no /bin/sh")
    token = commands.new_token()
    proc = subprocess.run(["sh", "-s", "--", "5", commands.SNAPSHOT_SUBNET], input=commands.host_script(token),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    sections, error = host_framing.split_sections(proc.stdout, token, commands.SNAPSHOT_SUBNET)
    assert (sections, error) == ([], None)
    assert commands.host_entry_command(5, commands.SNAPSHOT_SUBNET) == "sh -s -- 5 subnet"


def test_subnet_framing_takes_one_iblinkinfo_section_of_a_device_port() -> None:
    token = commands.new_token()
    good, _ = host_framing.split_sections(section(token, 1, "iblinkinfo", "mlx5_0.1"), token, commands.SNAPSHOT_SUBNET)
    assert [(s.parser, s.qualifier) for s in good] == [("iblinkinfo", "mlx5_0.1")]
    for stream in (section(token, 1, "iblinkinfo", "../x.1"), section(token, 1, "ibstat", "-"),
                   section(token, 1, "iblinkinfo", "mlx5_0.1") + section(token, 2, "iblinkinfo", "mlx5_1.1")):
        kept, error = host_framing.split_sections(stream, token, commands.SNAPSHOT_SUBNET)
        assert error is not None and len(kept) <= 1, stream


def ibstat(target: str, text: str) -> list[CommandResult]:
    return [CommandResult(target=target, parser="ibstat", command="ibstat", stdout=text)]


def test_the_first_host_under_each_subnet_manager_claims_it() -> None:
    active = (PARSER_FIXTURES / "ibstat" / "healthy.txt").read_text()
    assert "SM lid" in active
    subnets = _Subnets()
    assert subnets.claim(ibstat("gpu01", active)) is True
    assert subnets.claim(ibstat("gpu02", active)) is False  # same subnet manager: read once
    other = active.replace("SM lid: 17", "SM lid: 23")
    assert other != active and subnets.claim(ibstat("gpu09", other)) is True
    assert subnets.claim(ibstat("gpu10", "")) is False  # no InfiniBand port
