"""The host script's `subnet` mode on a host without InfiniBand (the sweep itself, its framing and the host that
sweeps each subnet: tests/collect/test_subnet_sweep.py)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from rdmatool import commands
from rdmatool.transport import host_framing


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
