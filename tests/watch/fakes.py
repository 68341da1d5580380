"""A fake fleet for the watch's unit tests: hosts whose light counters follow a formula of the interval number."""

from __future__ import annotations

from dataclasses import dataclass

from rdmatool.model import Target
from rdmatool.watch.light import Reading


@dataclass
class FakeHost:
    """Counters of one port: `rates(i)` gives each counter's growth in interval i; `down(i)`: no answer then."""

    name: str
    rates: object  # (interval) -> {(entity, metric, priority): increment}
    down: object = lambda i: False
    step_s: float = 10.0
    gauges: object = lambda i: {}  # (interval) -> {(entity, figure, None): value}: a probe's figures, as read

    def __post_init__(self) -> None:
        self.target = Target(name=self.name, address="127.0.0.1")
        self.i = 0
        self.values: dict = {}
        self.closed = 0

    def read(self, deadline, stop=None):
        i = self.i
        self.i += 1
        for key, inc in self.rates(i).items():
            self.values[key] = self.values.get(key, 0.0) + inc
        if self.down(i):
            return None, "connection refused"
        states = {("mlx5_0/1", "port_state"): "ACTIVE"}
        return Reading(self.name, 1_000_000.0 + i * self.step_s, dict(self.values), states, self.gauges(i)), None

    def close(self) -> None:
        self.closed += 1


def steady(i: int) -> dict:
    return {("eth2", "rx_pause_frames", 3): 500.0, ("mlx5_0/1", "cnp_sent", None): 40.0,
            ("mlx5_0/1", "symbol_errors", None): 0.0}


def periodic_pause(every: int = 4):
    def rates(i: int) -> dict:
        out = steady(i)
        out[("eth2", "rx_pause_frames", 3)] = 90_000.0 if i % every == 0 else 500.0
        return out
    return rates


def periodic_pause_and_total(every: int = 4):
    """A pause storm every `every` intervals on priority 3, counted on the port's total (no priority) too."""
    def rates(i: int) -> dict:
        out = periodic_pause(every)(i)
        out[("eth2", "rx_pause_frames", None)] = out[("eth2", "rx_pause_frames", 3)]
        return out
    return rates


def job_from(start: int):
    """A job starting on an idle host: its congestion counters flat, then growing (healthy)."""
    def rates(i: int) -> dict:
        busy = i >= start
        return {("eth2", "rx_pause_frames", 3): 800.0 + 37.0 * (i % 5) if busy else 0.0,
                ("mlx5_0/1", "port_xmit_wait", None): 2e6 if busy else 0.0,
                ("mlx5_0/1", "ecn_marked_packets", None): 3000.0 if busy else 0.0,
                ("mlx5_0/1", "cnp_sent", None): 1500.0 if busy else 0.0,
                ("mlx5_0/1", "symbol_errors", None): 0.0}
    return rates


def errors_from(start: int):
    def rates(i: int) -> dict:
        out = steady(i)
        out[("mlx5_0/1", "symbol_errors", None)] = 7.0 + i % 2 if i >= start else 0.0  # each reading its own
        return out
    return rates


def latency_every(every: int, entity: str = "ib_send_lat@probe"):
    """A probe's p99 at 4 us, ten times that every `every` intervals."""
    return lambda i: {(entity, "lat_p99_us", None): 40.0 if i % every == 0 else 4.0}


def latency_from(start: int, entity: str = "ib_send_lat@probe"):
    """A probe's p99 at 4 us, 9 us from interval `start` on; untested every third interval (a budget)."""
    return lambda i: {} if i % 3 == 2 else {(entity, "lat_p99_us", None): 9.0 if i >= start else 4.0 + 0.1 * (i % 2)}
