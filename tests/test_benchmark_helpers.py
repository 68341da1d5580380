"""The benchmarks' helpers that read a bundle follow its format: `fanout.py` takes the commands clush runs from the
warm-up bundle's side data (it once read per-output side files, and broke silently when the format moved on)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rdmatool.bundle import BundleWriter
from rdmatool.model import CommandResult, Target

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def fanout(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import fanout as module

    yield module
    sys.modules.pop("fanout", None)


def test_the_fanout_command_plan_reads_each_hosts_commands(fanout, tmp_path: Path) -> None:
    writer = BundleWriter(tmp_path / "warmup")
    hosts = {"gpu01": "10.0.0.1", "gpu02": "10.0.0.2"}
    for host in hosts:
        writer.add(0, CommandResult(target=host, parser="ibstat", command="ibstat", stdout="CA 'mlx5_0'\n"))
        writer.add(0, CommandResult(target=host, parser="ethtool_stats", command="ethtool -S eth0", stdout="",
                                    qualifier="eth0"))
    writer.add(0, CommandResult(target="gpu02", parser="loadavg", command="cat /proc/loadavg", stdout="0.1\n"))
    bundle = writer.commit([Target(name, address) for name, address in hosts.items()], [{"index": 0}], [], 0.0)
    plan = fanout.command_plan(bundle)
    assert plan == [("ethtool -S eth0", ["10.0.0.1", "10.0.0.2"]), ("ibstat", ["10.0.0.1", "10.0.0.2"]),
                    ("cat /proc/loadavg", ["10.0.0.2"])]


def test_the_machine_cpu_reading_grows_with_work_done(fanout) -> None:
    before = fanout.machine_cpu()
    if before is None:
        pytest.skip("no /proc/stat here")
    sum(i * i for i in range(3_000_000))  # some tens of ms of CPU: at least a few clock ticks
    after = fanout.machine_cpu()
    busy, idle = (b - a for a, b in zip(before, after))
    assert busy > 0
    assert idle >= 0
    assert all(v > 0 for v in before)  # seconds since boot, not ticks of this process


def test_the_per_run_ratios_mean_is_geometric(fanout) -> None:
    # Ratios of 2 and 1/2 are as far from parity each way: their mean must be parity, not 1.25.
    assert fanout._mean_or_dash([2.0, 0.5]) == "1.000 (2 runs)"
    assert fanout._mean_or_dash([]) == "-"
    assert fanout._mean_or_dash([0.9, 0.9]) == "0.900 (2 runs)"
