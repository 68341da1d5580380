"""Rotating latency probes (`rdmatool watch --probe latency`): one short latency test per host per interval.

The pairs rotate by the perf schedule's round-robin (rdmatool.perf.schedule.all_pairs): each interval runs one
round, in which every host is in one pair at most, so the probe load is one bounded perftest per host per interval;
after `len(rounds)` intervals every pair of hosts has been measured once, and the rotation starts again. Each
pair's figures (typical, p99, p99.9 latency) become both ends' `probe` series: every interval each host has one, so
a host whose latency spikes periodically shows the period in its own series (its partners change every interval;
their series spike only when they meet it). The tests run through the perf engine (rdmatool.perf.engine, the
audited perftest commands), its session opened again at the start of every rotation, so a host that left rejoins.
"""

from __future__ import annotations

import threading
import time

from rdmatool.model import Target
from rdmatool.perf.engine import PerfSession, run_schedule
from rdmatool.perf.model import PerfOptions
from rdmatool.perf.schedule import all_pairs
from rdmatool.sample_columns import PEER_MARK
from rdmatool.watch.light import Reading

FIGURES = ("lat_typical_us", "lat_p99_us", "lat_p999_us")
PEER = "probe"  # the entity `<test>@probe`: a test whose peer rotates (labelled test=..., peer="probe")


def probe_options(interval_s: float, iterations: int = 1000, **ssh) -> PerfOptions:
    """Latency tests that fit an interval: the perftest bound and the wait for the server scaled to it."""
    return PerfOptions(test="ib_send_lat", iterations=iterations, slack_s=max(1.0, 0.3 * interval_s),
                       server_ready_s=min(3.0, max(0.2, 0.1 * interval_s)), **ssh)


class LatencyProbe:
    def __init__(self, targets: list[Target], options: PerfOptions, stop: threading.Event | None = None) -> None:
        self.targets = targets
        self.options = options
        self.stop = stop or threading.Event()
        self.rounds = all_pairs([t.name for t in targets])
        self.turn = 0
        self._session: PerfSession | None = None

    @property
    def needs_s(self) -> float:
        """The time a round must have left to be started: the perf engine's bound on one latency test (its
        `timeout`, rdmatool.perf.engine) and the wait for the server. An interval shorter than that is stretched."""
        return self.options.server_ready_s + int(self.options.iterations / 1000.0 + self.options.slack_s + 0.999) + 0.1

    def coverage(self) -> str:
        return (f"latency probes ({self.options.test}, {self.options.iterations} iterations): {len(self.targets)} "
                f"hosts, one test each per interval; every pair covered every {len(self.rounds)} intervals")

    def run(self, deadline: float) -> tuple[list[Reading], list[str]]:
        """This interval's round (`deadline`: time.monotonic() by which it should be done): each tested host's
        latency figures as a reading, and the pairs that failed."""
        if not self.rounds:
            return [], []
        index = self.turn % len(self.rounds)
        self.turn += 1
        if index == 0 or self._session is None:  # a new rotation: connect again (a host that left may be back)
            self.close()
            self._session = PerfSession(self.targets, self.options, self.stop)
        self._session.open()  # connects and discovers once per rotation: not counted against the round's time
        # within the interval, or as long as one test may take (an interval too short for it is stretched)
        deadline = max(deadline, time.monotonic() + self.needs_s)
        at = time.time()
        results = run_schedule(self.targets, [self.rounds[index]], self.options, deadline=deadline,
                               session=self._session, first_round=self.turn - 1)
        figures: dict[str, dict] = {}
        failed = []
        for result in results:
            if not result.ok or not result.lat:
                failed.append(f"{result.server}-{result.client}: {result.error or 'no latency figures'}")
                continue
            for host in (result.server, result.client):
                figures[host] = {(f"{self.options.test}{PEER_MARK}{PEER}", name, None): float(result.lat[name]) for name in FIGURES
                                 if result.lat.get(name) is not None}
        return [Reading(host, at, gauges=values) for host, values in figures.items()], failed

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
