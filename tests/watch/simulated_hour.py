"""One realistic healthy hour of a small fleet's light readings, for the watch's judgement (tests/watch/
test_watch_hour.py), with faults to inject. Seeded: the same seed gives the same hour.

The fakes in tests/watch/fakes.py are straight lines: silence on them proves little. This hour varies the way a
cluster's counters do: training jobs start and stop on subsets of hosts at random times (an idle host's congestion
counters are flat, a busy one's pause, ECN and CNP rates sit at a job's own level with noise from one interval to the
next), incast bursts come at random (Poisson) times with random sizes, the reads are 10 s apart give or take a few
hundred ms, one host misses a few intervals, one host's driver is reloaded (its counters back near zero), and the
latency probes' p99 is noisy with a rare outlier. Error and drop counters stay at zero but for rare single events.

`hour(seed, faults)` gives the readers (`SimHost`: the interface of rdmatool.watch.light.HostReader) and the
collector's clock for each interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rdmatool.model import Target
from rdmatool.watch.light import Reading

INTERVALS = 360  # an hour at the watch's default 10 s
STEP_S = 10.0
HOSTS = 16
READ_JITTER_S = 0.15  # sd of a read's time about its schedule: an SSH round trip plus ethtool on a loaded host
NETDEVS = ("ens1f0np0", "ens1f1np1")  # two RoCE ports a host (one per rail)
PORTS = ("mlx5_0/1", "mlx5_1/1")  # their RDMA device ports, same order
ROCE = 3  # the lossless class: the RoCE traffic's priority (PFC on 3, the common default)
PROBE = "ib_send_lat@probe"

# Jobs: a few a hour start on 2-8 hosts and run a lognormal time (median 12 min, from a few minutes to most of the
# hour); a third of the hosts are already in a job when the hour starts. A small cluster between big runs looks so.
JOB_STARTS_PER_HOUR = 6
JOB_HOSTS = (2, 8)
JOB_MEDIAN_S, JOB_SIGMA = 720.0, 0.7
BUSY_AT_START = 1 / 3
# A busy port's pause rate on the lossless class: lognormal over jobs (median 300 frames/s, a decade either way: a
# well-tuned ECN job pauses little, an all-to-all one much more), and from one interval to the next (sigma 0.35: a
# job's collectives are not the same every 10 s). An idle class never fills a buffer: it pauses nothing, exactly 0.
PAUSE_MEDIAN, PAUSE_JOB_SIGMA, NOISE_SIGMA = 300.0, 1.0, 0.35
ECN_PER_PAUSE = 4.0  # ECN marks the switch sets for each pause it sends (marking starts below the PFC threshold)
CNP_PER_ECN = 0.5  # the receiver's CNPs per marked packet (it sends at most one a flow per few us)
XMIT_WAIT_PER_PAUSE = 2_000.0  # port_xmit_wait ticks per pause frame received (a quanta of a few us each)
PAUSE_US_PER_FRAME = 3.0  # pause duration per frame, microseconds
# Incasts: a few a host an hour at Poisson times, one port each, a lognormal size (median 10 times a busy port's
# median pause rate for one interval, some spilling into the next), whether the host is busy or not (a storage read).
INCASTS_PER_HOST_HOUR = 4
INCAST_MEDIAN, INCAST_SIGMA, INCAST_SPILL = 3_000.0, 0.8, 0.3
# Rare single drops a healthy host shows: rx_out_of_buffer when a receive queue is not refilled in time (a busy
# CPU), about one a port every 20 minutes; and an out-of-sequence packet under congestion as rarely.
OUT_OF_BUFFER_PER_S = 1 / 1200
OUT_OF_SEQUENCE_BUSY_PER_S = 1 / 1200
# Gaps and resets: one host does not answer for 3-6 intervals (a hung SSH, a reboot of its BMC); another's driver is
# reloaded once (its counters start again from near zero, the interval of the reload unread).
GAP_INTERVALS = (3, 6)
# Latency probe p99: each host's own level (median 3 us, +-15 %: cable lengths, NIC generations), noise from one
# test to the next (sigma 0.08), a busy host's p99 a little higher (1.15: the probe runs beside the job's traffic),
# a rare outlier (one test in 300, 3-10 times its level: a CPU scheduled away), tested in 80 % of the intervals
# (the rotation's budget).
LAT_MEDIAN_US, LAT_HOST_SIGMA, LAT_NOISE_SIGMA, LAT_BUSY = 3.0, 0.15, 0.08, 1.15
LAT_OUTLIER_P, LAT_OUTLIER = 1 / 300, (3.0, 10.0)
LAT_TESTED_P = 0.8
# Counters that stay zero in a healthy hour (link and transport errors, other drops).
ZEROS_PORT = ("symbol_errors", "link_downed", "link_error_recovery", "port_rcv_errors", "port_xmit_discards",
              "local_link_integrity_errors", "excessive_buffer_overrun_errors", "packet_seq_err",
              "local_ack_timeout_err")
ZEROS_NETDEV = ("rx_discards", "tx_discards", "rx_crc_errors", "rx_symbol_errors")

# Faults: (kind) -> what it does, from its `start` interval on
FAULT_KINDS = ("periodic_pause", "errors", "latency_step", "drops")
PERIODIC_EVERY = 3  # intervals: a burst every 30 s
PERIODIC_BURST = 20_000.0  # pause frames/s in a burst's interval (a storage checkpoint filling the class)
ERROR_RATE = 0.8  # symbol errors/s on a degrading link
DROP_RATE = 25.0  # rx_out_of_buffer/s on a host whose receive queues overflow
LATENCY_STEP = 2.5  # times the host's p99 level


@dataclass(frozen=True)
class Fault:
    kind: str  # one of FAULT_KINDS
    host: int
    start: int  # the interval it starts at

    def expected(self) -> tuple[str, str, str, int | None]:
        """(target, entity, counter, priority) of the finding it must give."""
        name = host_name(self.host)
        return {"periodic_pause": (name, NETDEVS[0], "rx_pause_frames", ROCE),
                "errors": (name, PORTS[1], "symbol_errors", None),
                "latency_step": (name, PROBE, "lat_p99_us", None),
                "drops": (name, NETDEVS[1], "rx_out_of_buffer", None)}[self.kind]


def host_name(i: int) -> str:
    return f"gpu{i + 1:02}"


@dataclass
class SimHost:
    """A host's readings, precomputed; read in order like rdmatool.watch.light.HostReader (None: no answer)."""

    name: str
    keys: list
    values: np.ndarray  # [interval, series] the counters as read
    at: np.ndarray  # [interval] each read's time
    answers: np.ndarray  # [interval] bool
    latency: np.ndarray  # [interval] the probe's p99 (NaN: not tested)
    i: int = 0
    closed: int = 0
    target: Target = field(init=False)

    def __post_init__(self) -> None:
        self.target = Target(name=self.name, address="127.0.0.1")

    def read(self, deadline, stop=None):
        i = self.i
        self.i += 1
        if not self.answers[i]:
            return None, "timed out"
        gauges = {} if np.isnan(self.latency[i]) else {(PROBE, "lat_p99_us", None): float(self.latency[i])}
        states = {(port, "port_state"): "ACTIVE" for port in PORTS}
        return Reading(self.name, float(self.at[i]), dict(zip(self.keys, self.values[i].tolist())), states,
                       gauges), None

    def close(self) -> None:
        self.closed += 1


@dataclass
class Hour:
    hosts: list[SimHost]
    clock: np.ndarray  # [interval] the collector's time when each interval is recorded
    busy: np.ndarray  # [host, interval] in a job


def _keys() -> list[tuple[str, str, int | None]]:
    keys = []
    for netdev in NETDEVS:
        for metric in ("rx_pause_frames", "tx_pause_frames", "rx_pause_duration_us", "tx_pause_duration_us"):
            keys += [(netdev, metric, p) for p in range(8)]
            keys.append((netdev, metric, None))  # the port's total beside its priorities, as mlx5 counts it
        keys += [(netdev, m, None) for m in (*ZEROS_NETDEV, "rx_out_of_buffer")]
    for port in PORTS:
        keys += [(port, m, None) for m in ("port_xmit_wait", "ecn_marked_packets", "cnp_sent", "cnp_handled",
                                           "out_of_sequence", *ZEROS_PORT)]
    return keys


def _busy(rng: np.random.Generator, hosts: int) -> tuple[np.ndarray, np.ndarray]:
    """[host, interval] in a job, and each host-interval's job level (pause frames/s a port at the job's median)."""
    busy = np.zeros((hosts, INTERVALS), dtype=bool)
    level = np.zeros((hosts, INTERVALS))
    jobs = [(-rng.uniform(0, INTERVALS), rng.random(hosts) < BUSY_AT_START)]
    for start in rng.uniform(0, INTERVALS, rng.poisson(JOB_STARTS_PER_HOUR)):
        members = np.zeros(hosts, dtype=bool)
        members[rng.choice(hosts, size=min(hosts, rng.integers(JOB_HOSTS[0], JOB_HOSTS[1] + 1)), replace=False)] = True
        jobs.append((start, members))
    for start, members in jobs:
        length = rng.lognormal(np.log(JOB_MEDIAN_S / STEP_S), JOB_SIGMA)
        if start < 0:
            length += -start  # a job running at the start: it started some time before the hour
        span = slice(max(0, int(start)), max(0, min(INTERVALS, int(start + length))))
        free = members & ~busy[:, span].any(axis=1)  # a host runs one job at a time
        busy[free, span] = True
        level[free, span] = rng.lognormal(np.log(PAUSE_MEDIAN), PAUSE_JOB_SIGMA)
    return busy, level


def hour(seed: int, faults: tuple[Fault, ...] = (), hosts: int = HOSTS) -> Hour:
    rng = np.random.default_rng(seed)
    keys = _keys()
    col = {k: j for j, k in enumerate(keys)}
    busy, level = _busy(rng, hosts)
    clock = 1_000_000.0 + STEP_S * np.arange(INTERVALS)
    gap_host, reset_host = rng.choice(hosts, size=2, replace=False)
    out = []
    for h in range(hosts):
        at = clock - 0.5 + rng.normal(0, READ_JITTER_S, INTERVALS)  # read just before the interval is recorded
        dt = np.diff(at, prepend=at[0] - STEP_S)
        rate = np.zeros((INTERVALS, len(keys)))
        for n, (netdev, port) in enumerate(zip(NETDEVS, PORTS)):
            pause = level[h] * rng.lognormal(0, NOISE_SIGMA, INTERVALS) * busy[h]
            for t in np.flatnonzero(rng.random(INTERVALS) < INCASTS_PER_HOST_HOUR / INTERVALS / len(NETDEVS)):
                size = rng.lognormal(np.log(INCAST_MEDIAN), INCAST_SIGMA)
                pause[t] += size
                if t + 1 < INTERVALS and rng.random() < INCAST_SPILL:
                    pause[t + 1] += size * rng.uniform(0.1, 0.6)
            if any(f.kind == "periodic_pause" and f.host == h for f in faults) and n == 0:
                f = next(f for f in faults if f.kind == "periodic_pause" and f.host == h)
                ticks = np.arange(INTERVALS)
                pause = pause + PERIODIC_BURST * ((ticks >= f.start) & ((ticks - f.start) % PERIODIC_EVERY == 0))
            rate[:, col[(netdev, "rx_pause_frames", ROCE)]] = pause
            rate[:, col[(netdev, "rx_pause_frames", None)]] = pause
            rate[:, col[(netdev, "rx_pause_duration_us", ROCE)]] = pause * PAUSE_US_PER_FRAME
            rate[:, col[(netdev, "rx_pause_duration_us", None)]] = pause * PAUSE_US_PER_FRAME
            ecn = pause * ECN_PER_PAUSE
            rate[:, col[(port, "port_xmit_wait", None)]] = pause * XMIT_WAIT_PER_PAUSE
            rate[:, col[(port, "ecn_marked_packets", None)]] = ecn
            rate[:, col[(port, "cnp_sent", None)]] = ecn * CNP_PER_ECN
            rate[:, col[(port, "cnp_handled", None)]] = ecn * CNP_PER_ECN * rng.uniform(0.5, 1.0)  # its peers'
            rate[:, col[(netdev, "rx_out_of_buffer", None)]] = OUT_OF_BUFFER_PER_S
            rate[:, col[(port, "out_of_sequence", None)]] = OUT_OF_SEQUENCE_BUSY_PER_S * busy[h]
        for f in faults:
            if f.host == h and f.kind in ("errors", "drops"):
                target, entity, counter, _ = f.expected()
                rate[f.start:, col[(entity, counter, None)]] = ERROR_RATE if f.kind == "errors" else DROP_RATE
        increments = rng.poisson(rate * dt[:, None]).astype(float)
        start_values = np.floor(rng.uniform(0, 1e10, len(keys)) * (rate.max(axis=0) > 0))  # since boot
        values = start_values + np.cumsum(increments, axis=0)
        answers = np.ones(INTERVALS, dtype=bool)
        if h == gap_host:
            gap_at = int(rng.integers(30, INTERVALS - 30))
            answers[gap_at:gap_at + int(rng.integers(GAP_INTERVALS[0], GAP_INTERVALS[1] + 1))] = False
        if h == reset_host:  # the counters since the reload only; the interval of the reload unread
            reload_at = int(rng.integers(30, INTERVALS - 30))
            values[reload_at:] = np.cumsum(increments[reload_at:], axis=0)
            answers[reload_at] = False
        level_us = rng.lognormal(np.log(LAT_MEDIAN_US), LAT_HOST_SIGMA)
        latency = level_us * rng.lognormal(0, LAT_NOISE_SIGMA, INTERVALS) * np.where(busy[h], LAT_BUSY, 1.0)
        outliers = rng.random(INTERVALS) < LAT_OUTLIER_P
        latency[outliers] *= rng.uniform(*LAT_OUTLIER, outliers.sum())
        for f in faults:
            if f.host == h and f.kind == "latency_step":
                latency[f.start:] *= LATENCY_STEP
        latency[rng.random(INTERVALS) >= LAT_TESTED_P] = np.nan
        out.append(SimHost(host_name(h), keys, values, at, answers, latency))
    return Hour(out, clock, busy)
