"""The shipped Slurm prolog, run as Slurm would run it, against the simulated fabric: it drains exactly the node
the gate names. `scontrol` is a stand-in that records what the prolog asks of it; rdmatool and SSH are real."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import REPO
from tests.fabric.fixtures import fabric_fixture

pytestmark = pytest.mark.e2e

fabric = fabric_fixture("healthy", scope="module")

FAKE_SCONTROL = """#!/bin/sh
if [ "$1 $2" = "show hostnames" ]; then echo "$3" | tr ',' '\\n'; exit 0; fi
echo "$@" >> "$SCONTROL_LOG"
"""


def _run_prolog(fab, tmp_path: Path, nodes: list[str]) -> tuple[int, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scontrol = bin_dir / "scontrol"
    scontrol.write_text(FAKE_SCONTROL)
    scontrol.chmod(0o755)
    rdmatool = bin_dir / "rdmatool"
    rdmatool.write_text(f"#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m rdmatool \"$@\"\n")
    rdmatool.chmod(0o755)
    profile = tmp_path / "profile.yaml"
    profile.write_text("counters_window_s: 1\nbandwidth: {enabled: true, rounds: 3, duration_s: 1}\n")
    log = tmp_path / "scontrol.log"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "SLURM_JOB_ID": "4242",
        "SLURM_JOB_NODELIST": ",".join(nodes),
        "SLURMD_NODENAME": nodes[0],
        "RDMATOOL_INVENTORY": str(fab.inventory_path),
        "RDMATOOL_PROFILE": str(profile),
        "RDMATOOL_LOGDIR": str(tmp_path / "log"),
        "RDMATOOL_GATE_ARGS": f"--known-hosts {fab.known_hosts}",
        "SCONTROL_LOG": str(log),
    }
    result = subprocess.run(["bash", str(REPO / "examples/slurm/prolog.sh")], env=env, capture_output=True,
                            text=True, timeout=300)
    return result.returncode, log.read_text() if log.exists() else ""


def test_prolog_drains_exactly_the_bad_node(fabric, tmp_path: Path) -> None:
    fabric.clear_faults()
    fabric.set_fault("slow_node", "gpu04", value=0.4)
    try:
        code, log = _run_prolog(fabric, tmp_path, [f"gpu{i:02d}" for i in range(1, 9)])
    finally:
        fabric.clear_faults()
    assert code == 1
    assert log.strip().splitlines() == ["update NodeName=gpu04 State=DRAIN Reason=rdmatool gate job 4242"]
    assert (tmp_path / "log" / "gate.4242.xml").exists()


def test_prolog_passes_a_healthy_allocation(fabric, tmp_path: Path) -> None:
    fabric.clear_faults()
    code, log = _run_prolog(fabric, tmp_path, ["gpu01", "gpu02", "gpu03", "gpu04"])
    assert code == 0
    assert log == ""
