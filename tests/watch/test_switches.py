"""The switches' light counters in a watch (rdmatool.watch.switches): the platform's counters snapshot without LLDP,
the pause, ECN and drop counters of the ports facing the watched hosts only, every N intervals, labelled as ports."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from rdmatool.model import CommandResult, Platform, Target, TargetKind
from rdmatool.rules.playbook import load_dir
from rdmatool.topology import Link
from rdmatool.watch import switches
from rdmatool.watch.history import Shape
from rdmatool.watch.loop import Watch, WatchOptions
from tests.watch.fakes import FakeHost, steady

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "parsers" / "sonic_pfc_counters" / "storm_rx_tx.txt"
PLAYBOOKS = load_dir(Path(__file__).resolve().parents[2] / "playbooks")
LEAF = Target("leaf01", "127.0.2.1", kind=TargetKind.SWITCH, platform=Platform("sonic"))


class _Session:
    """A SONiC switch whose `show pfc counters` grows by 600 pause frames on priority 3 each read."""

    runs = 0

    def __init__(self, target, deadline) -> None:
        self.plans: list = []

    def run(self, plan, timeout, deadline):
        _Session.runs += 1
        text = FIXTURE.read_text().replace("98,311", str(98_311 + 600 * _Session.runs))
        return [CommandResult("leaf01", step.parser, step.command, text if step.parser == "sonic_pfc_counters" else "")
                for step in plan]

    def close(self) -> None:
        pass


def test_the_plan_is_the_counters_snapshot_without_lldp() -> None:
    plan = switches.light_plan(LEAF, ["Ethernet0"])
    assert [c.parser for c in plan][:2] == ["sonic_pfc_counters", "sonic_queue_counters"]
    assert "lldpctl" not in {c.parser for c in plan} and "sonic_ecn" not in {c.parser for c in plan}
    assert switches.facing([LEAF], [Link("gpu01", "mlx5_1", "leaf01", "Ethernet0"),
                                    Link("gpu09", "mlx5_1", "leaf01", "Ethernet8")], {"gpu01"}) == {
        "leaf01": ["Ethernet0"]}


def test_a_switch_read_every_third_interval_gives_its_facing_ports_rates_and_port_labels(tmp_path: Path) -> None:
    _Session.runs = 0
    reader = switches.SwitchReader(LEAF, ["Ethernet0"], _Session, every=3)
    stop, ticks, events = threading.Event(), iter(range(7)), []

    def clock() -> float:
        n = next(ticks)
        if n == 6:
            stop.set()
        return 1_000_000.0 + 10.0 * n

    watch = Watch([FakeHost("gpu01", steady), reader], WatchOptions(interval_s=0, duration_s=0, textfile=tmp_path,
                                                                     shape=Shape(40, 8, 5)),
                  [], events.append, lambda line: None, clock=clock)
    outcome = watch.run(stop)
    assert _Session.runs == 3 and outcome.read_ever == {"gpu01", "leaf01"}  # intervals 0, 3 and 6
    row = watch.history.index[("leaf01", "Ethernet0", "rx_pause_frames", 3)]
    assert watch.history.last_value[row] == 98_311 + 1800
    assert {k[1] for k in watch.history.keys if k[0] == "leaf01"} == {"Ethernet0"}
    node = (tmp_path / "rdmatool-leaf01.prom").read_text()
    assert 'rdmatool_rx_pause_frames_total{port="Ethernet0",priority="3",target="leaf01"} 100111.0' in node
    assert 'rdmatool_rx_pause_frames_per_second{port="Ethernet0",priority="3",target="leaf01"}' in node


def test_a_steady_switch_read_every_third_interval_is_no_periodic_spike(monkeypatch) -> None:
    """The rate over the intervals between two reads is each of those intervals' rate (History fills the gap)."""
    _Session.runs = 0
    reads = iter(range(100))
    monkeypatch.setattr(switches, "time", SimpleNamespace(time=lambda: 1_000_000.0 + 30.0 * next(reads)))
    reader = switches.SwitchReader(LEAF, ["Ethernet0"], _Session, every=3)
    stop, ticks, events = threading.Event(), iter(range(30)), []

    def clock() -> float:
        n = next(ticks)
        if n == 29:
            stop.set()
        return 1_000_000.0 + 10.0 * n

    watch = Watch([reader], WatchOptions(interval_s=0, duration_s=0, shape=Shape(40, 8, 5)), PLAYBOOKS,
                  events.append, lambda line: None, clock=clock)
    watch.run(stop)
    row = watch.history.index[("leaf01", "Ethernet0", "rx_pause_frames", 3)]
    _, rates = watch.history.recent_series()
    assert events == [] and np.nanmin(rates[row][1:28]) == np.nanmax(rates[row][1:28]) == 20.0  # 600 a read, 30 s
