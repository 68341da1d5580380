"""The rotating latency probes (rdmatool.watch.probe, rdmatool.watch.rotation): the budget per host per interval, the
rail-aligned coverage of leaf pairs and rails, the per-class and per-rail figures (each interval's and the window's),
with the perf engine played by a recorder (the fabric test runs the real one)."""

from __future__ import annotations

import time

import pytest

from rdmatool.model import Target
from rdmatool.pairs.model import PairResult
from rdmatool.watch import probe as probe_mod
from rdmatool.watch.rotation import Rotation, placement_of

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
        rounds_run.append([p[:2] for p in rounds[0]])
        p99 = {"gpu03": 30.0}
        return [PairResult(p[0], p[1], options.test, None, None, None,
                           {"lat_typical_us": 3.0, "lat_p99_us": max(p99.get(p[0], 5.0), p99.get(p[1], 5.0)),
                            "lat_p999_us": 9.0}, None, first_round, "", "", 0.1, p[2] if len(p) == 3 else None,
                           "mlx5_0/1", "mlx5_0/1")
                for p in rounds[0]]
    return run_schedule


def test_each_interval_tests_every_host_once_and_the_classes_apart(monkeypatch) -> None:
    rounds_run: list = []
    monkeypatch.setattr(probe_mod, "PerfSession", _Session)
    monkeypatch.setattr(probe_mod, "run_schedule", _recorder(rounds_run))
    probe = probe_mod.LatencyProbe([Target(h, "127.0.0.1") for h in HOSTS], probe_mod.probe_options(10.0),
                                   cabling=CABLING)
    assert probe.rotation.rail_aligned and probe.rotation.fabric == {"mlx5_0": LEAF}
    said = probe.coverage()
    assert "8 hosts on 1 rail(s) (mlx5_0)" in said and "every leaf pair of every rail (1) and every rail covered" \
        in said and "exposure over a rotation: bad node 1.0" in said
    for _ in range(6):
        readings, failed = probe.run(time.monotonic() + 9)
        ends = [h for pair in rounds_run[-1] for h in pair]
        assert failed == [] and len(ends) == len(set(ends))  # one test per host: the 1 s budget
        assert sorted(r.target for r in readings) == sorted([*ends, "fabric"])
    fabric = next(r for r in readings if r.target == "fabric").gauges
    assert set(fabric) >= {("ib_send_lat@rail_mlx5_0", "lat_p99_us", None),
                           ("ib_send_lat@cross_leaf", "watch_lat_p99_us", None)}
    assert {e for e, _, _ in fabric} <= {"ib_send_lat@same_leaf", "ib_send_lat@cross_leaf", "ib_send_lat@rail_mlx5_0"}
    window = probe._window_figures()
    # over the window the rail's median is the healthy 3 us, its p99 near the slow host's 30 us
    assert window[("ib_send_lat@rail_mlx5_0", "watch_lat_p50_us", None)] == 3.0
    assert 25.0 < window[("ib_send_lat@rail_mlx5_0", "watch_lat_p99_us", None)] <= 30.0
    host = {r.target: r.gauges for r in readings}
    for name, gauges in host.items():
        if name != "fabric":
            assert set(gauges) == {("ib_send_lat@rail_mlx5_0", f, None) for f in probe_mod.FIGURES}
    if "gpu03" in host:
        assert host["gpu03"][("ib_send_lat@rail_mlx5_0", "lat_p99_us", None)] == 30.0  # the slow host's own series


def test_without_cabling_the_pairs_rotate_over_the_tested_nic() -> None:
    rotation = Rotation(HOSTS, {}, 1.0, 1.0)
    assert not rotation.rail_aligned
    seen = set()
    for _ in range(7):
        seen |= {frozenset(p[:2]) for p in rotation.take()}
    assert len(seen) == 28  # every pair of the 8 hosts once per rotation of 7 intervals
    assert rotation.coverage().rotation == 7


def test_the_budget_bounds_tests_per_host_and_two_rails_are_both_covered() -> None:
    hosts = [f"gpu{i:02}" for i in range(16)]
    placement = {h: {"mlx5_0": f"leaf{i % 4}", "mlx5_1": f"leaf{4 + i % 4}"} for i, h in enumerate(hosts)}
    for budget, most in ((1.0, 1), (2.0, 2)):
        rotation = Rotation(hosts, placement, 1.0, budget)
        for _ in range(5):
            taken = rotation.take()
            ends = [h for s, c, _ in taken for h in (s, c)]
            assert max(ends.count(h) for h in set(ends)) <= most
            assert all(rail in ("mlx5_0", "mlx5_1") for _, _, rail in taken)
        coverage = Rotation(hosts, placement, 1.0, budget).coverage()
        assert coverage.rails == ["mlx5_0", "mlx5_1"] and coverage.leaf_pairs == 12  # 6 per rail of 4 leaves
        assert coverage.within == {1.0: 2, 2.0: 1}[budget]  # the crossing rounds first: a rail an interval per test
        assert coverage.within is not None and coverage.within <= coverage.rotation
    assert Rotation(hosts, placement, 1.0, 0.5).take() == []  # no test fits: nothing runs (the CLI shortens the tests to fit)
    assert placement_of({("a", "mlx5_0"): "s1"}) == {"a": {"mlx5_0": "s1"}}


@pytest.mark.parametrize("interval", [1.0, 10.0])
def test_a_round_fits_its_interval_or_stretches_it(interval: float) -> None:
    options = probe_mod.probe_options(interval)
    probe = probe_mod.LatencyProbe([Target(h, "127.0.0.1") for h in HOSTS[:2]], options)
    assert probe.needs_s == options.server_ready_s + int(options.iterations / 1000 + options.slack_s + 0.999) + 0.1
    assert (probe.needs_s <= 0.9 * interval) is (interval == 10.0)
