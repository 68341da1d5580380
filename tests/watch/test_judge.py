"""The watch's judgement over time (rdmatool.watch.judge) and its rules (playbooks/70-watch.yaml): a trigger for each
rule (tests/rules/test_each_rule.py keeps the list and the playbook in step), silence on a healthy fleet."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from rdmatool.rules.playbook import load_dir
from rdmatool.watch import judge
from rdmatool.watch.history import Shape
from rdmatool.watch.loop import Watch, WatchOptions
from tests.watch.fakes import (
    FakeHost,
    errors_from,
    job_from,
    latency_every,
    latency_from,
    periodic_pause,
    periodic_pause_and_total,
    steady,
)

PLAYBOOKS = load_dir(Path(__file__).resolve().parents[2] / "playbooks")


class Trigger(NamedTuple):
    rule: str
    rates: object  # a FakeHost's counters (tests/watch/fakes.py)
    intervals: int
    counter: str
    gauges: object = lambda i: {}  # its probe figures


TRIGGERS = [
    Trigger("watch_periodic_spike", periodic_pause(4), 20, "rx_pause_frames"),
    Trigger("watch_counter_starts_growing", errors_from(15), 20, "symbol_errors"),
    Trigger("watch_latency_periodic_spike", steady, 20, "lat_p99_us", latency_every(5)),
    Trigger("watch_latency_step_up", steady, 20, "lat_p99_us", latency_from(15)),
]


def _run(hosts, intervals: int) -> tuple[list[dict], object]:
    """Run a watch over fake hosts for `intervals` intervals, on a fake clock 10 s an interval."""
    events: list[dict] = []
    stop = threading.Event()
    ticks = iter(range(intervals))

    def clock() -> float:
        n = next(ticks)
        if n == intervals - 1:
            stop.set()  # the interval being recorded is the last one
        return 1_000_000.0 + 10.0 * n

    watch = Watch(hosts, WatchOptions(interval_s=0, duration_s=0, shape=Shape(40, 8, 5)), PLAYBOOKS, events.append,
                  lambda line: None, clock=clock)
    return events, watch.run(stop)


def test_a_periodic_pause_spike_is_named_with_its_host_period_and_class() -> None:
    events, outcome = _run([FakeHost("gpu01", steady), FakeHost("gpu03", periodic_pause(4))], 20)
    spikes = [e for e in events if e["rule"] == "watch_periodic_spike"]
    assert [(e["target"], e["entity"], e["counter"], e["priority"]) for e in spikes] == [
        ("gpu03", "eth2", "rx_pause_frames", 3)]
    assert spikes[0]["period_s"] == 40.0 and spikes[0]["spikes"] >= 3 and spikes[0]["event"] == "finding"
    assert "every 40 s" in spikes[0]["symptom"]
    assert [f["target"] for f in outcome.open_findings] == ["gpu03"]


@pytest.mark.parametrize("trigger", TRIGGERS, ids=[t.rule for t in TRIGGERS])
def test_each_watch_rule_fires_on_its_trigger_alone(trigger: Trigger) -> None:
    events, outcome = _run([FakeHost("gpu01", steady), FakeHost("gpu05", trigger.rates, gauges=trigger.gauges)],
                           trigger.intervals)
    assert [(e["event"], e["rule"], e["target"], e["counter"]) for e in events] == [
        ("finding", trigger.rule, "gpu05", trigger.counter)]
    assert "{" not in events[0]["symptom"]  # every placeholder filled
    assert [f["rule"] for f in outcome.open_findings] == [trigger.rule]


def test_a_healthy_fleet_is_silent() -> None:
    events, outcome = _run([FakeHost(f"gpu{i:02}", steady) for i in range(4)], 30)
    assert events == [] and outcome.open_findings == [] and outcome.intervals == 30


def test_a_counter_that_starts_to_grow_is_named_once() -> None:
    events, _ = _run([FakeHost("gpu02", errors_from(15))], 20)
    assert [(e["event"], e["rule"], e["target"], e["counter"], e["growth_rate"]) for e in events] == [
        ("finding", "watch_counter_starts_growing", "gpu02", "symbol_errors", 0.7667)]


def test_spike_detection_is_the_capture_analysis_own() -> None:
    x = np.zeros(40)
    x[::5] = 100.0
    assert judge.spike(x)[0] == 5  # the lag in intervals
    assert judge.spike(np.full(40, 3.0)) is None  # steady: no spike however high
    assert judge.spike(x[:6]) is None  # too short to say


def test_a_periodic_latency_spike_in_the_probes_is_named_with_its_host_and_period() -> None:
    events, _ = _run([FakeHost("gpu07", steady, gauges=latency_every(5)), FakeHost("gpu01", steady)], 20)
    assert [(e["rule"], e["target"], e["entity"], e["counter"], e["period_s"]) for e in events] == [
        ("watch_latency_periodic_spike", "gpu07", "ib_send_lat@probe", "lat_p99_us", 50.0)]


def test_a_host_tested_every_other_interval_is_no_period_and_a_steady_one_no_step() -> None:
    sparse = lambda i: {} if i % 2 else {("ib_send_lat@rail_mlx5_1", "lat_p99_us", None): 4.0 + 0.2 * (i % 3)}  # noqa: E731
    events, _ = _run([FakeHost("gpu01", steady, gauges=sparse), FakeHost("gpu02", steady, gauges=latency_from(99))], 30)
    assert events == []


def test_a_step_needs_every_recent_value_up() -> None:
    base = [4.0] * 8
    assert judge.step(np.array([*base, 9.0, 9.0, 9.0])) == 2.25
    assert judge.step(np.array([*base, 9.0, 4.0, 9.0])) is None  # one spike between: no step
    assert judge.step(np.array([np.nan, *base, np.nan, 9.0, 9.0, 9.0])) == 2.25  # untested intervals skipped
    assert judge.step(np.array([4.0, 4.0, 9.0, 9.0, 9.0])) is None  # too little history of its own


def test_a_pause_storm_counted_per_priority_and_in_all_is_one_finding_on_its_priority() -> None:
    events, _ = _run([FakeHost("leaf01", periodic_pause_and_total(4))], 20)
    assert [(e["target"], e["entity"], e["counter"], e["priority"]) for e in events] == [
        ("leaf01", "eth2", "rx_pause_frames", 3)]


def test_a_job_starting_on_an_idle_host_is_no_finding() -> None:
    events, _ = _run([FakeHost("gpu01", job_from(12))], 20)  # pause, xmit_wait, ECN, CNPs: flat, then growing
    assert events == []
    assert judge.growth(np.array([0.0] * 12 + [5.0, 4.0, 6.0])) == 5.0  # the same rates on a drop counter are one


def test_a_drop_long_before_does_not_hide_a_counter_that_starts_to_grow() -> None:
    x = np.array([0.0] * 5 + [0.1] + [0.0] * 10 + [0.1] + [0.0] * 3 + [25.0, 24.0, 26.0])
    assert judge.growth(x) == 25.0
    assert judge.growth(np.array([0.0, 0.1] * 8 + [25.0, 24.0, 26.0])) is None  # one interval in two moving: not flat


def test_one_drop_in_a_host_gap_spread_over_its_intervals_is_no_growth() -> None:
    x = np.array([0.0] * 20 + [0.02] * 5)  # the rate over a 5-interval gap, in each of its intervals (History)
    assert judge.growth(x, read=np.array([True] * 20 + [False] * 4 + [True])) is None  # read once, after the gap
    assert judge.growth(x) == pytest.approx(0.02)  # read in each: a growth


def test_a_few_single_events_in_a_row_are_no_growth_and_a_counter_that_keeps_counting_is() -> None:
    single = np.array([0.0] * 20 + [0.1, 0.1, 0.1])  # one out-of-sequence packet in each of three 10-s intervals
    assert judge.growth(single, 10.0) is None
    assert judge.growth(np.append(single, [0.1, 0.1]), 10.0) == pytest.approx(0.1)  # five: it keeps counting
    assert judge.growth(np.array([0.0] * 20 + [0.7, 0.7, 0.7]), 10.0) == pytest.approx(0.7)


def test_a_few_bursts_lined_up_by_chance_then_none_are_no_period() -> None:
    x = np.zeros(120)
    x[[0, 22, 44, 66]] = 1e4  # four, 22 intervals apart, then nothing for 54 intervals
    assert judge.spike(x) is None
    x[[88, 110]] = 1e4  # recurring up to now: a period
    assert judge.spike(x)[0] == 22
    three = np.zeros(120)
    three[[9, 64, 119]] = 1e4  # three at equal gaps: a chance a fleet's hour of random incasts shows
    assert judge.spike(three) is None


def test_a_spike_train_that_starts_late_in_a_busy_window_after_a_lone_burst_is_named_with_its_own_period() -> None:
    rng = np.random.default_rng(3)
    x = rng.lognormal(np.log(250), 0.25, 120)  # a busy port's pause rate
    x[57] = 20_000.0  # a lone incast long before
    x[83::3] = 20_000.0  # then every third interval, up to now
    lag, strength, count = judge.spike(x)
    assert (lag, count) == (3, 13) and strength >= 0.5
    assert judge.spike(np.append(x, [250.0] * 8)) is None  # the train stopped 8 intervals ago: not recurring now


def test_a_busy_port_s_noise_over_a_short_window_is_no_periodic_spike() -> None:
    # 17 readings of a busy port's pause rate, lognormal noise: its autocorrelation peaks at lag 5 (0.55) and more
    # than four readings reach half the highest, but only three stand twice above its usual level (four spikes needed)
    x = np.random.default_rng(87).lognormal(np.log(250), 0.4, 17)
    assert judge.spike(x) is None


def test_judging_the_series_a_block_at_a_time_finds_what_judging_them_at_once_finds(monkeypatch) -> None:
    def fleet() -> list:
        return [FakeHost(f"gpu{i:02}", rates) for i, rates in
                enumerate([steady, periodic_pause(4), errors_from(15), steady, periodic_pause(3)])]

    whole, _ = _run(fleet(), 20)
    monkeypatch.setattr(judge, "BLOCK", 2)  # a block splits every host's series
    blocked, _ = _run(fleet(), 20)
    assert {e["target"] for e in whole} == {"gpu01", "gpu02", "gpu04"}
    assert blocked == whole
