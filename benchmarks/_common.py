"""Shared helpers of the benchmarks: the machine description, timed subprocesses with the CPU of their whole
process tree, medians and spreads. Not a benchmark itself."""

from __future__ import annotations

import contextlib
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `python benchmarks/x.py` puts benchmarks/ first; the package and tests/ live above
    sys.path.insert(0, str(REPO))


def machine(packages: tuple[str, ...] = ("rdmatool", "paramiko", "pandas", "numpy")) -> dict:
    """nproc, CPU model, memory, load, Python and package versions, date: what the README records per figure."""
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    versions = {}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return {
        "nproc": os.cpu_count(), "cpu": model, "mem_gib": mem_gib, "loadavg": os.getloadavg(),
        "python": platform.python_version(), "kernel": platform.release(), "packages": versions,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def print_machine(info: dict) -> None:
    pk = ", ".join(f"{k} {v}" for k, v in info["packages"].items())
    load = " ".join(f"{x:.1f}" for x in info["loadavg"])
    print(f"machine: nproc={info['nproc']} cpu={info['cpu']!r} mem={info['mem_gib']} GiB kernel={info['kernel']}")
    print(f"         python {info['python']}; {pk}; load average at start {load}; {info['date']}")


@dataclass
class Run:
    wall_s: float
    user_s: float
    sys_s: float
    returncode: int

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s


def timed(argv: list[str], stdin: str | None = None, stdout: str | None = None, env: dict | None = None,
          cwd: str | None = None, timeout: float = 3600) -> Run:
    """Run argv; wall time and the user+sys CPU of the process and every descendant it waited for (wait4)."""
    out = open(stdout or os.devnull, "wb")  # noqa: SIM115 - closed below
    inp = open(stdin, "rb") if stdin else subprocess.DEVNULL  # noqa: SIM115
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=inp, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
            time.sleep(0.01)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        out.close()
        if stdin:
            inp.close()
    return Run(wall, usage.ru_utime, usage.ru_stime, proc.returncode)


def median_spread(values: list[float]) -> tuple[float, float, float]:
    """(median, min, max)."""
    return statistics.median(values), min(values), max(values)


def fmt_ms(values: list[float]) -> str:
    med, lo, hi = median_spread(values)
    return f"{med:.3f} [{lo:.3f}-{hi:.3f}]"


@contextlib.contextmanager
def without_store(bundle_path: Path):
    """The bundle as if it had no stored samples (parsed afresh); the store it had is put back afterwards."""
    from rdmatool.table.samples_store import STORE_NAME

    store, aside = bundle_path / STORE_NAME, bundle_path.parent / f"{bundle_path.name}.{STORE_NAME}.aside"
    store.replace(aside)
    try:
        yield
    finally:
        aside.replace(store)  # over any store the run wrote meanwhile
