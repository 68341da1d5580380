"""Rotating latency probes (`rdmatool watch --probe latency`): short latency tests within a budget per host.

Which pairs run each interval is rdmatool.watch.rotation's: rail-aligned with the inventory's cabling (NIC k of one
host against NIC k of another), covering every leaf pair of every rail within a stated number of intervals, at most
`budget_s` of tests per host per interval (one test costs its iterations' run bound, 1 s for 1,000). The tests run
through the perf engine (rdmatool.perf.engine, the audited perftest commands), its session opened again at the start
of every rotation, so a host that left rejoins.

Each test's figures (typical, p99, p99.9 latency) become both ends' series: `<test>@probe` (each host's tested NIC,
without cabling) or `<test>@rail_<device>` (that NIC of the host). The fabric's series (target `fabric`) get, per
pair class (`same_leaf`, `cross_leaf`, from the switches of the two NICs) and per rail (`rail_<device>`):
- each interval, the median typical latency and the highest p99 and p99.9 of that interval's pairs (judged like any
  series: a periodic spike, a step up);
- over the window (the last WINDOW intervals' tests of the class): the median of their typical latency and the 99th
  and 99.9th percentiles of their p99 and p99.9 figures (`watch_lat_p50_us`, `_p99_us`, `_p999_us`), exported by the
  textfiles as one family with a `quantile` label.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import deque

import numpy as np

from rdmatool.model import Target
from rdmatool.perf.engine import PerfSession, run_schedule
from rdmatool.perf.model import PerfOptions
from rdmatool.table.sample_columns import PEER_MARK
from rdmatool.watch.light import Reading
from rdmatool.watch.rotation import Rotation, placement_of

FIGURES = ("lat_typical_us", "lat_p99_us", "lat_p999_us")
PEER = "probe"  # the entity `<test>@probe`: a test whose peer rotates (labelled test=..., peer="probe")
FABRIC = "fabric"  # the target of the per-class series
TESTS = ("ib_send_lat", "ib_write_lat")
WINDOW = 120  # intervals of tests the window figures are over (the history's recent ring at its default shape)
WINDOW_FIGURES = (("watch_lat_p50_us", "lat_typical_us", 0.5), ("watch_lat_p99_us", "lat_p99_us", 0.99),
                  ("watch_lat_p999_us", "lat_p999_us", 0.999))


def probe_options(interval_s: float, iterations: int = 1000, test: str = "ib_send_lat", **ssh) -> PerfOptions:
    """Latency tests that fit an interval: the perftest bound and the wait for the server scaled to it."""
    return PerfOptions(test=test, iterations=iterations, slack_s=max(1.0, 0.3 * interval_s),
                       server_ready_s=min(3.0, max(0.2, 0.1 * interval_s)), **ssh)


class LatencyProbe:
    def __init__(self, targets: list[Target], options: PerfOptions, stop: threading.Event | None = None,
                 cabling: dict[tuple[str, str], str] | None = None, budget_s: float = 1.0) -> None:
        self.targets = targets
        self.cabling = cabling or {}  # (host, NIC) -> its switch, from the inventory's `links:`
        self.options = options
        self.stop = stop or threading.Event()
        self.rotation = Rotation([t.name for t in targets], placement_of(self.cabling), self.test_s, budget_s)
        self.budget_s = budget_s
        self.window: deque[tuple[int, str, dict]] = deque()  # (interval, class, figures) of the window's tests
        self.turn = 0
        self._session: PerfSession | None = None

    @property
    def test_s(self) -> float:
        """One test's time on each end, as the perf engine bounds its run: its iterations at 1,000 a second."""
        return self.options.iterations / 1000.0

    @property
    def needs_s(self) -> float:
        """The time a round must have left to be started: the perf engine's bound on one latency test (its
        `timeout`, rdmatool.perf.engine) and the wait for the server. An interval shorter than that is stretched."""
        return self.options.server_ready_s + int(self.options.iterations / 1000.0 + self.options.slack_s + 0.999) + 0.1

    def coverage(self) -> str:
        return (f"latency probes ({self.options.test}, {self.options.iterations} iterations, at most "
                f"{self.budget_s:g} s per host per interval): {self.rotation.coverage().line()}")

    def run(self, deadline: float) -> tuple[list[Reading], list[str]]:
        """This interval's pairs (`deadline`: time.monotonic() by which they should be done): each tested host's
        latency figures as a reading, the fabric's per-class figures, and the pairs that failed."""
        new_rotation = not self.rotation.queue
        pairs = self.rotation.take()
        self.turn += 1
        if not pairs:
            return [], []
        if new_rotation or self._session is None:  # a new rotation: connect again (a host that left may be back)
            self.close()
            self._session = PerfSession(self.targets, self.options, self.stop)
        self._session.open()  # connects and discovers once per rotation: not counted against the round's time
        # within the interval, or as long as one test may take (an interval too short for it is stretched)
        deadline = max(deadline, time.monotonic() + self.needs_s)
        at = time.time()
        rounds = [[p if p[2] is not None else (p[0], p[1]) for p in pairs]]
        results = run_schedule(self.targets, rounds, self.options, deadline=deadline, session=self._session,
                               first_round=self.turn - 1)
        figures: dict[str, dict] = {}
        failed = []
        for result in results:
            if not result.ok or not result.lat:
                failed.append(f"{result.server}-{result.client}: {result.error or 'no latency figures'}")
                continue
            peer = f"rail_{result.rail}" if result.rail else PEER
            for host in (result.server, result.client):
                figures.setdefault(host, {}).update(
                    {(f"{self.options.test}{PEER_MARK}{peer}", name, None): float(result.lat[name])
                     for name in FIGURES if result.lat.get(name) is not None})
        readings = [Reading(host, at, gauges=values) for host, values in figures.items()]
        classes = self._classes([r for r in results if r.ok and r.lat])
        if classes:
            readings.append(Reading(FABRIC, at, gauges=classes))
        return readings, failed

    def _classes(self, results: list) -> dict:
        """Per class and rail of this interval's pairs: the median typical latency, the highest p99 and p99.9."""
        groups: dict[str, list[dict]] = {}
        for r in results:
            ends = [(r.server, (r.server_nic or "").split("/")[0]), (r.client, (r.client_nic or "").split("/")[0])]
            leaves = [self.cabling.get(end) for end in ends]
            if all(leaves):
                groups.setdefault("same_leaf" if leaves[0] == leaves[1] else "cross_leaf", []).append(r.lat)
            if self.cabling and ends[0][1] and ends[0][1] == ends[1][1]:
                groups.setdefault(f"rail_{ends[0][1]}", []).append(r.lat)
        out = {}
        for name, lats in groups.items():
            self.window.extend((self.turn, name, lat) for lat in lats)
        while self.window and self.window[0][0] <= self.turn - WINDOW:
            self.window.popleft()
        out.update(self._window_figures())
        for name, lats in groups.items():
            entity = f"{self.options.test}{PEER_MARK}{name}"
            typical = [x["lat_typical_us"] for x in lats if x.get("lat_typical_us") is not None]
            if typical:
                out[(entity, "lat_typical_us", None)] = float(statistics.median(typical))
            for figure in ("lat_p99_us", "lat_p999_us"):
                values = [x[figure] for x in lats if x.get(figure) is not None]
                if values:
                    out[(entity, figure, None)] = float(max(values))
        return out

    def _window_figures(self) -> dict:
        """Per class over the window's tests: the median typical latency, the 99th and 99.9th percentiles of their
        p99 and p99.9 figures."""
        by_class: dict[str, list[dict]] = {}
        for _, name, lat in self.window:
            by_class.setdefault(name, []).append(lat)
        out = {}
        for name, lats in by_class.items():
            entity = f"{self.options.test}{PEER_MARK}{name}"
            for metric, figure, q in WINDOW_FIGURES:
                values = [x[figure] for x in lats if x.get(figure) is not None]
                if values:
                    out[(entity, metric, None)] = float(np.quantile(values, q))
        return out

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
