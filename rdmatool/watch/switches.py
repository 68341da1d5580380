"""The switches' light counters in a watch: PFC pause per priority, ECN marks and drops on the ports facing the
watched hosts, read every `every` intervals (a switch CLI is slower than a host's sysfs).

What runs on a switch is its platform's counters snapshot (commands.switch_plan in SNAPSHOT_COUNTERS mode: the one
audited list of show commands, rdmatool/platforms/<nos>.py) without its LLDP view, over the existing switch
transport (rdmatool.transport.switch.SwitchSession), one session per switch kept open between reads. Of what the
parsers give, the counters below on the ports the inventory's `links:` cable to a watched host are kept; every
other port, and every other figure, would only multiply the series.

Between two reads the History takes the rate over the time since the last one (an average, honest about what it
covers); the intervals in between have none, as a host in a gap.
"""

from __future__ import annotations

import contextlib
import threading
import time

from rdmatool import commands, parsers
from rdmatool.errors import ParseError
from rdmatool.model import CommandResult, Target
from rdmatool.watch.light import Reading

SWITCH_COUNTERS = frozenset({
    "rx_pause_frames", "tx_pause_frames", "rx_pause_duration_us", "tx_pause_duration_us",  # PFC, per priority
    "ecn_marked_packets",  # ECN marks, per queue
    "queue_drops", "wred_drops", "rx_discards", "tx_discards", "rx_errors", "tx_errors", "pfc_watchdog_storms",
})
SKIPPED = object()  # read() in an interval that is not the switch's turn


def light_plan(target: Target, ports: list[str]) -> list[commands.PlannedCommand]:
    """The switch's counters snapshot on `ports` without its LLDP view."""
    lldp = commands.LLDP_PARSER[target.platform]
    valid = [p for p in ports if commands.valid_port_name(target.platform, p)]
    return [c for c in commands.switch_plan(target.platform, valid, commands.SNAPSHOT_COUNTERS) if c.parser != lldp]


def reading_of(target: str, at: float, results: list[CommandResult], ports: set[str]) -> Reading:
    counters: dict[tuple[str, str, int | None], float] = {}
    for result in results:
        if not result.ok or result.parser not in parsers.names():
            continue
        try:
            samples = parsers.parse(result.parser, result.stdout)
        except ParseError:
            continue
        for s in samples:
            entity = s.entity if s.entity in ports else result.qualifier if result.qualifier in ports else None
            if entity and s.metric in SWITCH_COUNTERS and isinstance(s.value, (int, float)):
                counters.setdefault((entity, s.metric, s.priority), float(s.value))
    return Reading(target, at, counters)


class SwitchReader:
    """One switch's light counters every `every` intervals over one session (opened again after a failure)."""

    def __init__(self, target: Target, ports: list[str], opener, command_timeout: int = 20, every: int = 1) -> None:
        self.target = target
        self.ports = sorted(set(ports))
        self.plan = light_plan(target, self.ports)
        self._opener = opener  # (target, deadline) -> a session with run(plan, timeout, deadline) and close()
        self._session = None
        self.command_timeout = command_timeout
        self.every = max(1, every)
        self.turn = 0
        self.last_results: list[CommandResult] = []

    def read(self, deadline: float, stop: threading.Event | None = None):
        """(Reading, None), (None, error), or (SKIPPED, None) when it is not this switch's turn."""
        turn, self.turn = self.turn, self.turn + 1
        if turn % self.every:
            return SKIPPED, None
        try:
            if self._session is None:
                self._session = self._opener(self.target, deadline)
            at = time.time()
            results = self._session.run(self.plan, self.command_timeout, deadline)
        except Exception as exc:  # noqa: BLE001 - any failure of one switch is that switch's gap
            self.close()
            return None, f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        reading = reading_of(self.target.name, at, results, set(self.ports))
        if not reading.counters:
            failed = next((r.error for r in results if r.error), None)
            return None, failed or "no counters of the ports facing the watched hosts"
        self.last_results = results  # the window's bundle (rdmatool.watch.window)
        return reading, None

    def close(self) -> None:
        if self._session is not None:
            with contextlib.suppress(Exception):
                self._session.close()
            self._session = None


def facing(switches: list[Target], links, hosts: set[str]) -> dict[str, list[str]]:
    """switch -> its ports cabled to a watched host (the inventory's links), for the switches of `switches`."""
    names = {t.name for t in switches}
    out: dict[str, list[str]] = {}
    for link in links:
        if link.host in hosts and link.switch in names and link.switch_port:
            out.setdefault(link.switch, []).append(link.switch_port)
    return out
