"""The watch over a realistic hour (tests/watch/simulated_hour.py: jobs starting and stopping, incasts, jitter, a
gap, a driver reload, noisy latency): the real Watch, History, judge and playbooks on a fake clock. A healthy hour is
silent; each injected fault is named on its host, port, counter (and, for a periodic spike, its period)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from rdmatool.rules.playbook import load_dir
from rdmatool.watch.loop import Watch, WatchOptions
from tests.watch import simulated_hour as sim

PLAYBOOKS = load_dir(Path(__file__).resolve().parents[2] / "playbooks")
SEEDS = (1, 2, 3)
FAULT_SEEDS = (4, 5)  # other hours again: each run of an hour is some 2-4 s
HOSTS = 8  # half the generator's fleet: an hour of 8 hosts is some 2 s of judging, and 4 of them carry the faults


def _run(h: sim.Hour) -> list[dict]:
    """The watch's events over the hour (the default shape: 120 recent intervals of 10 s)."""
    events: list[dict] = []
    stop = threading.Event()
    ticks = iter(h.clock.tolist())
    last = h.clock[-1]

    def clock() -> float:
        t = next(ticks)
        if t == last:
            stop.set()
        return t

    Watch(h.hosts, WatchOptions(interval_s=0, duration_s=0), PLAYBOOKS, events.append, lambda line: None,
          clock=clock).run(stop)
    return events


@pytest.mark.parametrize("seed", SEEDS)
def test_a_healthy_hour_is_silent(seed: int) -> None:
    h = sim.hour(seed, hosts=HOSTS)
    assert h.busy.any(axis=1).sum() >= 2 and not h.busy.all()  # jobs came and went: not a trivially idle hour
    events = _run(h)
    assert [(e["rule"], e["target"], e["entity"], e["counter"], e.get("priority")) for e in events] == []


@pytest.mark.parametrize("seed", FAULT_SEEDS)
def test_every_injected_fault_is_named_on_its_target(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    hosts = rng.choice(HOSTS, size=len(sim.FAULT_KINDS), replace=False)  # one host a fault, at random
    # each starts in the hour's last 10 minutes: an open finding has the rules judge every interval (some 40 ms),
    # and the hour before is the healthy variation each must stand out of
    faults = tuple(sim.Fault(kind, int(host), int(rng.integers(sim.INTERVALS - 40, sim.INTERVALS - 25)))
                   for kind, host in zip(sim.FAULT_KINDS, hosts))
    events = [e for e in _run(sim.hour(seed, faults, hosts=HOSTS)) if e["event"] == "finding"]
    named = {(e["target"], e["entity"], e["counter"], e["priority"]) for e in events}
    for fault in faults:
        assert fault.expected() in named, (fault, named)
    faulty = {sim.host_name(int(h)) for h in hosts}
    assert {e["target"] for e in events} <= faulty, events  # nothing on the healthy hosts
    spike = next(f for f in faults if f.kind == "periodic_pause")
    on_it = [e for e in events if e["target"] == sim.host_name(spike.host) and e["rule"] == "watch_periodic_spike"]
    assert on_it and all(abs(e["period_s"] - sim.PERIODIC_EVERY * sim.STEP_S) <= sim.STEP_S for e in on_it), on_it
    assert all(e["priority"] == sim.ROCE for e in on_it if "pause" in e["counter"])  # the class, not the total
