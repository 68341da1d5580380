"""The light subset a watch reads each interval, and the reading of one host.

What runs on the host is the audited script in its `watch` mode (commands.SNAPSHOT_WATCH): sysfs port state and
counters, perfquery on InfiniBand ports, ethtool -S on each netdev. Of what their parsers give, a watch keeps the
counters below (pause per priority, ECN marks, CNPs, drops, errors) and the port state: the rest (byte counts,
firmware, GUIDs) would only multiply the series a long run holds.

The line-local outputs (`ethtool -S`, the sysfs dump) are read through rdmatool.watch.lines, at the cost of their
values; the others through their parsers.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field

from rdmatool import commands, parsers
from rdmatool.errors import ParseError
from rdmatool.model import CommandResult, Target
from rdmatool.table.sample_columns import entity_namer
from rdmatool.watch import lines

COUNTERS = frozenset({
    # PFC, per priority where the NIC says so
    "rx_pause_frames", "tx_pause_frames", "rx_pause_duration_us", "tx_pause_duration_us", "port_xmit_wait",
    # congestion notification
    "ecn_marked_packets", "cnp_sent", "cnp_handled", "cnp_ignored",
    # drops
    "rx_discards", "tx_discards", "rx_out_of_buffer", "port_xmit_discards", "port_rcv_errors", "vl15_dropped",
    "queue_drops",
    # link and transport errors
    "symbol_errors", "link_downed", "link_error_recovery", "rx_crc_errors", "rx_symbol_errors",
    "local_link_integrity_errors", "excessive_buffer_overrun_errors", "port_rcv_remote_physical_errors",
    "out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "roce_adp_retrans",
})
STATES = frozenset({"port_state", "phys_state"})
FILTERED = frozenset({"ethtool_stats", "sysfs_counters", "perfquery"})  # read through rdmatool.watch.lines
KEPT = COUNTERS | STATES


@dataclass(frozen=True)
class Reading:
    """One host's light counters at one time (`at`: seconds on the collector's clock), or its probe figures."""

    target: str
    at: float
    counters: dict[tuple[str, str, int | None], float] = field(default_factory=dict)  # (entity, metric, prio)
    states: dict[tuple[str, str], str] = field(default_factory=dict)  # (entity, metric) -> text
    gauges: dict[tuple[str, str, int | None], float] = field(default_factory=dict)  # probe figures, kept as read


def reading_of(target: str, at: float, results: list[CommandResult]) -> Reading:
    """The light subset of a snapshot's outputs; an output its parser refuses is left out (the others still count)."""
    counters: dict[tuple[str, str, int | None], float] = {}
    states: dict[tuple[str, str], str] = {}
    for result in results:
        if not result.ok or result.parser not in parsers.names():
            continue
        try:
            if result.parser in FILTERED:
                found = lines.items(result.parser, result.stdout, KEPT, (target, result.qualifier))
            else:
                found = [(x.entity, x.metric, x.priority, x.value, x.text)
                         for x in parsers.parse(result.parser, result.stdout)]
        except ParseError:
            continue
        # The bundle's names: a placeholder entity (ethtool's `netdev`) or perfquery's LID becomes the port or
        # netdev the command was run for, so a watch's series are the ones `rdmatool export prometheus` names.
        name = entity_namer(result.parser, result.qualifier) or (lambda entity: entity)
        for entity, metric, priority, value, text in found:
            if metric in COUNTERS and isinstance(value, (int, float)):
                counters.setdefault((name(entity), metric, priority), float(value))  # the first tool's
            elif metric in STATES and text:
                states.setdefault((name(entity), metric), text)
    return Reading(target, at, counters, states)


class HostReader:
    """Reads one host's light snapshot each interval over one session, kept open between intervals and opened
    again after a failure (a host that leaves and comes back is a gap, not an error for the others)."""

    def __init__(self, target: Target, opener, command_timeout: int = 20) -> None:
        self.target = target
        # (target, deadline) -> a session with run_snapshot (transport.ssh.Session, transport.local), its set-up
        # bounded by the interval's deadline: a host that takes the connection and never answers is one host's gap,
        # not an interval held up for every host
        self._opener = opener
        self._session = None
        self.command_timeout = command_timeout
        self.last_results: list[CommandResult] = []

    def read(self, deadline: float, stop: threading.Event | None = None) -> tuple[Reading | None, str | None]:
        try:
            if self._session is None:
                self._session = self._opener(self.target, deadline)
            at = time.time()
            results, error = self._session.run_snapshot(commands.SNAPSHOT_WATCH, self.command_timeout, deadline, stop)
        except Exception as exc:  # noqa: BLE001 - any failure of one host is that host's gap
            self.close()
            return None, f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        if error:
            self.close()
            return None, error
        reading = reading_of(self.target.name, at, results)
        if not reading.counters and not reading.states:
            return None, "no RDMA port counters in the snapshot"
        self.last_results = results  # the window's bundle (rdmatool.watch.window)
        return reading, None

    def close(self) -> None:
        if self._session is not None:
            with contextlib.suppress(Exception):  # a session already broken closes as it can
                self._session.close()
            self._session = None
