"""Rotating latency probes (`rdmatool watch --probe latency`): one short latency test per host per interval.

The pairs rotate by the perf schedule's round-robin (rdmatool.perf.schedule.all_pairs): each interval runs one
round, in which every host is in one pair at most, so the probe load is one bounded perftest per host per interval;
after `len(rounds)` intervals every pair of hosts has been measured once, and the rotation starts again. Each
pair's figures (typical, p99, p99.9 latency) become both ends' `probe` series: every interval each host has one, so
a host whose latency spikes periodically shows the period in its own series (its partners change every interval;
their series spike only when they meet it). The tests run through the perf engine (rdmatool.perf.engine, the
audited perftest commands), its session opened again at the start of every rotation, so a host that left rejoins.

With the inventory's cabling (`links:`), each pair also has a class: `same_leaf` or `cross_leaf` (the switches of
the two NICs tested), and each NIC a rail (its device name). Each interval the fabric's series (target `fabric`)
get, per class and per rail (`rail_<device>`), the median typical latency and the highest p99 and p99.9 of that
interval's pairs: the spike rule judges them like any series, and the textfiles' fleet file carries them. Each
host tests one NIC (the one discovery chooses): the rotation covers host pairs, hence leaf pairs, not yet every rail.
"""

from __future__ import annotations

import statistics
import threading
import time

from rdmatool.model import Target
from rdmatool.perf.engine import PerfSession, run_schedule
from rdmatool.perf.model import PerfOptions
from rdmatool.perf.schedule import all_pairs
from rdmatool.table.sample_columns import PEER_MARK
from rdmatool.watch.light import Reading

FIGURES = ("lat_typical_us", "lat_p99_us", "lat_p999_us")
PEER = "probe"  # the entity `<test>@probe`: a test whose peer rotates (labelled test=..., peer="probe")
FABRIC = "fabric"  # the target of the per-class series


def probe_options(interval_s: float, iterations: int = 1000, **ssh) -> PerfOptions:
    """Latency tests that fit an interval: the perftest bound and the wait for the server scaled to it."""
    return PerfOptions(test="ib_send_lat", iterations=iterations, slack_s=max(1.0, 0.3 * interval_s),
                       server_ready_s=min(3.0, max(0.2, 0.1 * interval_s)), **ssh)


class LatencyProbe:
    def __init__(self, targets: list[Target], options: PerfOptions, stop: threading.Event | None = None,
                 cabling: dict[tuple[str, str], str] | None = None) -> None:
        self.targets = targets
        self.cabling = cabling or {}  # (host, NIC) -> its switch, from the inventory's `links:`
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
        said = (f"latency probes ({self.options.test}, {self.options.iterations} iterations): {len(self.targets)} "
                f"hosts, one test each per interval; every pair covered every {len(self.rounds)} intervals")
        within = leaf_pairs_within(self.rounds, _leaf_of(self.cabling))
        if within is not None:
            said += f", every leaf pair within {within[1]} ({within[0]} leaf pairs)"
        return said

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
            entity = f"{self.options.test}{PEER_MARK}{name}"
            typical = [x["lat_typical_us"] for x in lats if x.get("lat_typical_us") is not None]
            if typical:
                out[(entity, "lat_typical_us", None)] = float(statistics.median(typical))
            for figure in ("lat_p99_us", "lat_p999_us"):
                values = [x[figure] for x in lats if x.get(figure) is not None]
                if values:
                    out[(entity, figure, None)] = float(max(values))
        return out

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None


def _leaf_of(cabling: dict[tuple[str, str], str]) -> dict[str, str]:
    """host -> the switch of its first NIC by name (the one discovery most often chooses), for the coverage."""
    out: dict[str, str] = {}
    for (host, _nic), switch in sorted(cabling.items()):
        out.setdefault(host, switch)
    return out


def leaf_pairs_within(rounds: list[list], leaf_of: dict[str, str]) -> tuple[int, int] | None:
    """(leaf pairs, intervals) the rotation takes to test every pair of leaves (a leaf with itself included, where it
    has two hosts) at least once; None without cabling."""
    if not leaf_of:
        return None
    hosts_of: dict[str, int] = {}
    for leaf in leaf_of.values():
        hosts_of[leaf] = hosts_of.get(leaf, 0) + 1
    leaves = sorted(hosts_of)
    wanted = {frozenset((a, b)) for i, a in enumerate(leaves) for b in leaves[i:] if a != b or hosts_of[a] > 1}
    seen: set = set()
    for index, pairs in enumerate(rounds, 1):
        seen |= {frozenset((leaf_of[p[0]], leaf_of[p[1]])) for p in pairs if p[0] in leaf_of and p[1] in leaf_of}
        if wanted <= seen:
            return len(wanted), index
    return len(wanted), len(rounds)
