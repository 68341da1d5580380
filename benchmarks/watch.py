"""`rdmatool watch` at scale, without the transport: what one interval costs the collector at 1,000 hosts, whether
its memory stays flat over a day, and how fast the latency probes cover a fabric.

    python benchmarks/watch.py                          # cost (1,000 hosts, 30 intervals), coverage; a few minutes
    python benchmarks/watch.py --hours 24               # and the peak RSS over 24 simulated hours (60-s intervals)
    python benchmarks/watch.py --hosts 100 --intervals 12 --hours 2 --quick   # smoke run
    python benchmarks/watch.py --profile                # cProfile of each step of one interval
    python benchmarks/watch.py --textfiles /dev/shm     # the textfiles on a tmpfs (the rest in the temporary dir)

**Cost.** Each host's light snapshot is what the simulated fabric's tool shims print for it (tests/fabric: sysfs
counters, perfquery, `ethtool -S`; rendered once, outside the measure). Per interval, CPU time (time.process_time,
this process only: no thread does the work) of:
  parse     the watch's reading of every host's outputs (rdmatool.watch.light.reading_of)
  rates     each reading's counters advanced by its own increments (a host's counters move between intervals) and
            recorded in the History (rates, rings, downsampling)
  judge     the watch's judgement of the recent window and the rules (Watch._judge)
  textfile  every node's textfile and the fleet file (rdmatool.watch.textfile), written to a temporary directory
  store     the history kept as the watch keeps it (rdmatool.watch.store: the interval's journal record, and now
            and then a checkpoint, history.npz), findings.json: not part of the goal, printed beside it (the
            median is an interval without a checkpoint, the mean spreads the checkpoints over the intervals)
Host 7 of every 100 has a pause counter that spikes every 4 intervals, so the judgement has something to find.

**Memory.** The same loop for `--hours` of simulated time at `--memory-interval` s an interval (60 by default: the
number of intervals a day at 10 s would take hours to run; the history's rings have wrapped after 1,560 intervals,
26 h at 60 s, and hold the same number of columns whatever the interval), peak RSS (ru_maxrss) after the first
simulated hour and at the end.

**Coverage.** rdmatool.watch.rotation's plan for 64 hosts on 4 leaves (16 each) with 1 and 8 rails, 1,000
iterations a test, a budget of 1 s per host per interval: the intervals within which every leaf pair of every rail
and every rail is tested, and the exposure over a rotation.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import _common  # noqa: F401 - puts the repository on sys.path

from rdmatool.model import CommandResult
from rdmatool.rules.playbook import load_dir
from rdmatool.watch import store, textfile
from rdmatool.watch.history import Shape
from rdmatool.watch.light import Reading, reading_of
from rdmatool.watch.loop import Watch, WatchOptions
from rdmatool.watch.rotation import Rotation

WATCH_PARSERS = {"sysfs_counters", "perfquery", "ethtool_stats"}
STEPS = ("parse", "rates", "judge", "textfile", "store")


def fleet(hosts: int) -> list[tuple[str, list[CommandResult]]]:
    """(name, the watch snapshot's outputs) of every host, rendered by the simulated fabric's shims."""
    import analysis  # benchmarks/analysis.py: the host script's sections as the simulated hosts print them

    from tests.fabric import scenario

    now = time.time()
    effective = scenario.build(hosts).effective()
    out = []
    for spec in effective["targets"].values():
        if spec["kind"] != "host":
            continue
        spec["epoch"] = now - 86400
        sections = [s for s in analysis.host_sections(spec, now, full=False) if s[0] in WATCH_PARSERS]
        out.append((spec["name"], [CommandResult(spec["name"], parser, command, stdout, rc, qualifier=qualifier)
                                   for parser, qualifier, command, stdout, rc in sections]))
    return out


class Loop:
    """One watch's steps, timed one by one (the Watch's own judge and files; the readings made here)."""

    def __init__(self, hosts: list[tuple[str, list[CommandResult]]], out: Path, interval_s: float,
                 textfiles: Path | None = None) -> None:
        self.hosts = hosts
        self.interval_s = interval_s
        rules = load_dir(_common.REPO / "playbooks")
        textfiles = textfiles or out / "textfiles"
        textfiles.mkdir(parents=True, exist_ok=True)
        self.watch = Watch([], WatchOptions(interval_s=interval_s, out=out / "state", textfile=textfiles,
                                            shape=Shape()), rules, lambda e: None, lambda line: None)
        (out / "state").mkdir(exist_ok=True)
        self.names = [name for name, _ in hosts]
        self.i = 0
        self.t0 = 1_000_000.0
        self.checkpoints: list[int] = []  # the intervals whose store wrote a checkpoint

    def interval(self, times: dict[str, list[float]] | None) -> None:
        at = self.t0 + self.i * self.interval_s
        clock = time.process_time
        c0 = clock()
        readings = [reading_of(name, at, results) for name, results in self.hosts]
        c1 = clock()
        readings = [self._advanced(r, n) for n, r in enumerate(readings)]
        step = self.watch.history.prepare(at, readings)  # as the watch records an interval (Watch._interval)
        self.watch.history.apply(step)
        c2 = clock()
        events = self.watch._judge(at)
        c3 = clock()
        textfile.write(self.watch.options.textfile, self.watch.history, self.names, self.names,
                       list(self.watch.open.values()), at, self.watch.textfiles)
        c4 = clock()
        self.watch.store.append(self.watch.history, step)
        if self.watch.store.journaled == 0:
            self.checkpoints.append(self.i)
        store.log_events(self.watch.options.out, events)
        store.save_open(self.watch.options.out, list(self.watch.open.values()))
        c5 = clock()
        self.i += 1
        if times is not None:
            for step, spent in zip(STEPS, (c1 - c0, c2 - c1, c3 - c2, c4 - c3, c5 - c4)):
                times[step].append(spent)

    def _advanced(self, reading: Reading, n: int) -> Reading:
        """The host's counters as they are `i` intervals on: each grows by a steady amount of its own, host 7 of
        every 100 pausing ten times harder every fourth interval."""
        i = self.i
        spiky = n % 100 == 7
        counters = {}
        for key, value in reading.counters.items():
            grow = (hash(key) % 50) * i
            if spiky and key[1] == "rx_pause_frames":
                grow += 5000 * (i // 4 + (1 if i % 4 else 0)) * 10
            counters[key] = value + grow
        return Reading(reading.target, reading.at, counters, reading.states)


def cost(hosts, intervals: int, profile: bool, textfiles: str | None) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {step: [] for step in STEPS}
    with tempfile.TemporaryDirectory(prefix="watch-bench-") as folder, \
            tempfile.TemporaryDirectory(prefix="watch-bench-", dir=textfiles) as text_folder:
        loop = Loop(hosts, Path(folder), 10.0, Path(text_folder))
        for _ in range(intervals):
            loop.interval(times)
        series = len(loop.watch.history)
        if profile:
            stats = io.StringIO()
            profiler = cProfile.Profile()
            profiler.runcall(loop.interval, None)
            pstats.Stats(profiler, stream=stats).sort_stats("cumulative").print_stats(35)
            print(stats.getvalue())
        kept = loop.watch.store
        record = (kept.journal_bytes - len(store._header(loop.watch.history.shape))) / max(1, kept.journaled)
        c0, w0 = time.process_time(), time.monotonic()
        kept.checkpoint(loop.watch.history)  # what the watch does now and then, and at its end
        checkpoint, checkpoint_wall = time.process_time() - c0, time.monotonic() - w0
        size = (Path(folder) / "state" / store.HISTORY_FILE).stat().st_size
    print(f"cost: {len(hosts)} hosts, {series} series, {intervals} intervals; history.npz {size / 1e6:.1f} MB, a "
          f"journal record {record / 1e6:.2f} MB; textfiles in {textfiles or tempfile.gettempdir()}")
    for step in STEPS:
        values = times[step][2:]  # the first two: series appearing, the first rates
        print(f"  {step:9s} median {statistics.median(values):.3f} s  max {max(values):.3f} s  (CPU, per interval)")
    # a checkpoint every `every` intervals: the one whose journal record passes JOURNAL_FRACTION of history.npz
    every = int(store.JOURNAL_FRACTION * size // max(record, 1)) + 1
    appended = statistics.median(times["store"][2:])
    later = [i for i in loop.checkpoints if i >= 2]
    print(f"  store: median {appended:.3f} s an interval (its journal record); a checkpoint {checkpoint:.3f} s "
          f"({checkpoint_wall:.3f} s wall) every {every} intervals: mean {appended + checkpoint / every:.3f} s per "
          f"interval with the checkpoints, {(record + size / every) / 1e6:.1f} MB written")
    print(f"         measured over intervals 2-{intervals - 1}: mean {statistics.mean(times['store'][2:]):.3f} s, "
          f"{len(later)} checkpoint(s) {later} (the run's first write is one too)")
    goal = [sum(times[s][i] for s in STEPS[:4]) for i in range(2, intervals)]
    print(f"  parse+rates+judge+textfile: median {statistics.median(goal):.3f} s, max {max(goal):.3f} s "
          f"(goal: at most 1 core-second)")
    return times


def memory(hosts, hours: float, interval_s: float) -> tuple[float, float]:
    per_hour = int(3600 / interval_s)
    total = int(hours * per_hour)
    with tempfile.TemporaryDirectory(prefix="watch-bench-") as folder:
        loop = Loop(hosts, Path(folder), interval_s)
        first = None
        t0 = time.monotonic()
        for i in range(total):
            loop.interval(None)
            if i + 1 == per_hour:
                first = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                print(f"  memory: peak RSS after the first simulated hour {first:.0f} MiB "
                      f"({time.monotonic() - t0:.0f} s)", flush=True)
        last = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"memory: {len(hosts)} hosts, {hours:g} h at {interval_s:g} s: peak RSS {first:.0f} MiB after hour 1, "
          f"{last:.0f} MiB after hour {hours:g} ({100 * (last / first - 1):+.1f} %; goal within 10 %)")
    return first, last


def coverage() -> None:
    hosts = [f"gpu{i:02}" for i in range(64)]
    for rails in (1, 8):
        placement = {h: {f"mlx5_{r}": f"leaf{i // 16}" for r in range(rails)} for i, h in enumerate(hosts)}
        found = Rotation(hosts, placement, 1.0, 1.0).coverage()
        print(f"coverage: 64 hosts, 4 leaves, {rails} rail(s), budget 1 s per host per interval: {found.line()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--intervals", type=int, default=30)
    parser.add_argument("--hours", type=float, default=0.0, help="simulated hours of the memory run (0: none)")
    parser.add_argument("--memory-interval", type=float, default=60.0)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--textfiles", metavar="DIR", help="where the textfiles go (default: the temporary "
                        "directory; /dev/shm: a tmpfs, as a node_exporter textfile directory under /run is)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: the figures mean little")
    args = parser.parse_args()
    _common.print_machine(_common.machine())
    t0 = time.monotonic()
    hosts = fleet(args.hosts)
    print(f"fleet: {len(hosts)} hosts rendered in {time.monotonic() - t0:.0f} s")
    cost(hosts, args.intervals, args.profile, args.textfiles)
    coverage()
    if args.hours:
        memory(hosts, args.hours, args.memory_interval)
    threading.enumerate()  # nothing left running
    return 0


if __name__ == "__main__":
    sys.exit(main())
