"""The rotating latency probes (rdmatool.watch.probe): one test per host per interval, the coverage of leaf pairs, and
the per-class and per-rail figures, with the perf engine played by a recorder (the fabric test runs the real one)."""

from __future__ import annotations

import time

import pytest

from rdmatool.model import Target
from rdmatool.pairs.model import PairResult
from rdmatool.perf.schedule import all_pairs
from rdmatool.watch import probe as probe_mod

HOSTS = [f"gpu{i:02}" for i in range(1, 9)]
LEAF = {h: ("leaf1" if i < 4 else "leaf2") for i, h in enumerate(HOSTS)}
CABLING = {(h, "mlx5_0"): leaf for h, leaf in LEAF.items()}


class _Session:
    def __init__(self, *args) -> None:
        pass

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass


def _recorder(rounds_run: list):
    def run_schedule(targets, rounds, options, deadline=None, session=None, first_round=0):
        rounds_run.append(rounds[0])
        p99 = {"gpu03": 30.0}
        return [PairResult(a, b, options.test, None, None, None,
                           {"lat_typical_us": 3.0, "lat_p99_us": max(p99.get(a, 5.0), p99.get(b, 5.0)),
                            "lat_p999_us": 9.0}, None, first_round, "", "", 0.1, None, "mlx5_0/1", "mlx5_0/1")
                for a, b in rounds[0]]
    return run_schedule


def test_each_interval_tests_every_host_once_and_the_classes_apart(monkeypatch) -> None:
    rounds_run: list = []
    monkeypatch.setattr(probe_mod, "PerfSession", _Session)
    monkeypatch.setattr(probe_mod, "run_schedule", _recorder(rounds_run))
    probe = probe_mod.LatencyProbe([Target(h, "127.0.0.1") for h in HOSTS], probe_mod.probe_options(10.0),
                                   cabling=CABLING)
    seen = set()
    for _ in range(len(probe.rounds)):
        readings, failed = probe.run(time.monotonic() + 9)
        assert failed == [] and sorted(r.target for r in readings) == sorted([*HOSTS, "fabric"])
        seen |= {frozenset(p) for p in rounds_run[-1]}
    assert len(seen) == 28  # every pair of the 8 hosts once per rotation of 7 intervals
    fabric = next(r for r in readings if r.target == "fabric").gauges
    assert set(fabric) >= {("ib_send_lat@rail_mlx5_0", "lat_p99_us", None)}
    assert {e for e, _, _ in fabric} <= {"ib_send_lat@same_leaf", "ib_send_lat@cross_leaf", "ib_send_lat@rail_mlx5_0"}
    gpu03 = next(r for r in readings if r.target == "gpu03").gauges
    assert gpu03[("ib_send_lat@probe", "lat_p99_us", None)] == 30.0  # the slow host's own series shows it
    assert "every pair covered every 7 intervals, every leaf pair within" in probe.coverage()


def test_leaf_pairs_are_covered_before_the_rotation_ends() -> None:
    pairs, within = probe_mod.leaf_pairs_within(all_pairs(HOSTS), LEAF)
    assert pairs == 3 and 1 <= within <= 7  # leaf1-leaf1, leaf2-leaf2, leaf1-leaf2
    assert probe_mod.leaf_pairs_within(all_pairs(HOSTS), {}) is None


@pytest.mark.parametrize("interval", [1.0, 10.0])
def test_a_round_fits_its_interval_or_stretches_it(interval: float) -> None:
    options = probe_mod.probe_options(interval)
    probe = probe_mod.LatencyProbe([Target(h, "127.0.0.1") for h in HOSTS[:2]], options)
    assert probe.needs_s == options.server_ready_s + int(options.iterations / 1000 + options.slack_s + 0.999) + 0.1
    assert (probe.needs_s <= 0.9 * interval) is (interval == 10.0)
