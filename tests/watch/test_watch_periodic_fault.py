"""End to end over the real sshd: a host of the simulated fabric paused every 3 s (fault periodic_spike) is named by
`rdmatool watch` with the period and the class (its counter's priority); the healthy hosts watched in the same run,
for the same length, are silent (one run: a second process would double the test's time on a loaded machine)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.e2e.helpers import REPO
from tests.fabric.fixtures import fabric_fixture

pytestmark = pytest.mark.e2e

healthy = fabric_fixture("healthy", scope="module")
PERIOD_S = 3.0


def _watch(fabric, hosts: str, *extra: str) -> subprocess.Popen:
    args = ["watch", "-i", str(fabric.inventory_path), "--known-hosts", str(fabric.known_hosts), "--limit", hosts,
            "--interval", "1", "--duration", "13", "--timeout", "10", *extra]
    return subprocess.Popen([sys.executable, "-m", "rdmatool", *args], cwd=REPO, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def test_a_periodic_pause_is_named_with_host_period_and_class_and_a_healthy_run_is_silent(healthy) -> None:
    healthy.set_fault("periodic_spike", "gpu03", nic="mlx5_1", value=PERIOD_S)
    faulty = _watch(healthy, "gpu03,gpu04,stor01")
    out, err = faulty.communicate(timeout=90)
    assert faulty.returncode == 0, err  # a warning: the run ends 0
    assert "3 of 3 hosts read" in err
    events = [json.loads(line) for line in out.splitlines()]
    assert {e["target"] for e in events} == {"gpu03"}, out  # the host; its healthy neighbours are silent
    spikes = [e for e in events if e["rule"] == "watch_periodic_spike" and e["event"] == "finding"]
    assert spikes, (out, err)
    pause = [e for e in spikes if e["counter"] == "rx_pause_frames"]
    assert pause and pause[0]["entity"] == "ens1f0np0" and pause[0]["priority"] == 3  # the class: priority 3
    assert abs(pause[0]["period_s"] - PERIOD_S) <= 1.0, pause[0]  # the period, within an interval
