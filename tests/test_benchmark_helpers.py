"""The benchmarks' helpers that read a bundle follow its format: `fanout.py` takes the commands clush runs from the
warm-up bundle's side data (it once read per-output side files, and broke silently when the format moved on)."""

from __future__ import annotations

import subprocess
import sys
import time
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


def test_the_cgroup_root_prefers_cgroup2_and_falls_back_to_cpuacct(fanout) -> None:
    v1_only = ("cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n"
               "cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0\n")
    both = v1_only + "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n"
    assert fanout.cgroup_root(v1_only) == (Path("/sys/fs/cgroup/cpuacct"), "v1")
    assert fanout.cgroup_root(both) == (Path("/sys/fs/cgroup/unified"), "v2")
    assert fanout.cgroup_root("proc /proc proc rw 0 0\n") is None


def test_the_cgroup_reading_is_in_seconds(fanout, tmp_path: Path) -> None:
    (tmp_path / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n")
    (tmp_path / "cpuacct.usage").write_text("1500000000\n")
    assert fanout.cgroup_core_seconds(tmp_path, "v2") == 2.5
    assert fanout.cgroup_core_seconds(tmp_path, "v1") == 1.5


def test_the_fabric_cpu_counts_a_process_moved_into_its_cgroup(fanout) -> None:
    # A child that waits for a line, then spins for 0.3 s of CPU: moved into the cgroup before it spins.
    spin = "import sys, time; sys.stdin.readline(); t = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
    child = subprocess.Popen([sys.executable, "-c", spin], stdin=subprocess.PIPE, text=True)
    cpu = fanout.FabricCpu(child.pid)
    try:
        if cpu.path is None:
            pytest.skip("no cgroup can be made here (not root, or no cgroup file system)")
        before = cpu.core_seconds()
        child.communicate("go\n", timeout=30)
        after = cpu.core_seconds()
        assert after - before >= 0.25
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        cpu.close()
    assert not cpu.path.exists()


def test_the_session_counter_follows_the_pid_files(fanout, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    with fanout.SessionCounter(pids, every=0.005) as counter:
        for n in range(3):
            (pids / str(n)).write_text("1\n")
            time.sleep(0.05)
    figures = counter.figures()
    assert figures["sessions_peak"] == 3
    assert 0 < figures["sessions_mean"] < 3
    assert fanout.SessionCounter(pids).figures() == {}  # never started: no figures, not zeros
