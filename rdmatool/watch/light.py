"""The light subset a watch reads each interval, and the reading of one host.

What runs on the host is the audited script in its `watch` mode (commands.SNAPSHOT_WATCH): sysfs port state and
counters, perfquery on InfiniBand ports, ethtool -S on each netdev. Of what their parsers give, a watch keeps the
counters below (pause per priority, ECN marks, CNPs, drops, errors) and the port state: the rest (byte counts,
firmware, GUIDs) would only multiply the series a long run holds.

Parsing is most of an interval's cost at 1,000 hosts, and most lines of `ethtool -S` and of the sysfs dump are
counters a watch does not keep. Their lines are line-local (`name: value`, `path:value`), so each is first told
apart by its name (`_light`): a name is learnt once, by the parser itself on that one line, as kept (it gives a
counter or state above, or the parser refuses the line) or dropped; the parser then reads the kept lines only. The
reading is the same as the whole output's, except that a malformed line of a counter the watch does not keep no
longer costs it the output's other counters.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field

from rdmatool import commands, parsers
from rdmatool.errors import ParseError
from rdmatool.model import CommandResult, Sample, Target
from rdmatool.table.sample_columns import entity_namer

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
FILTERED = frozenset({"ethtool_stats", "sysfs_counters"})  # line-local outputs, read through _light
MAX_NAMES = 50_000  # names learnt (a fleet prints a few hundred); past it, lines are kept unlearnt
_KEEP: dict[tuple[str, str], bool] = {}


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
        text = _light(result.parser, result.stdout) if result.parser in FILTERED else result.stdout
        if not text:
            continue  # nothing the watch keeps
        try:
            samples: list[Sample] = parsers.parse(result.parser, text)
        except ParseError:
            continue
        # The bundle's names: a placeholder entity (ethtool's `netdev`) or perfquery's LID becomes the port or
        # netdev the command was run for, so a watch's series are the ones `rdmatool export prometheus` names.
        name = entity_namer(result.parser, result.qualifier) or (lambda entity: entity)
        for s in samples:
            if s.metric in COUNTERS and isinstance(s.value, (int, float)):
                counters.setdefault((name(s.entity), s.metric, s.priority), float(s.value))  # the first tool's
            elif s.metric in STATES and s.text:
                states.setdefault((name(s.entity), s.metric), s.text)
    return Reading(target, at, counters, states)


def _light(parser: str, text: str) -> str:
    """The lines of a line-local output whose name gives something the watch keeps (module docstring)."""
    kept = []
    for line in text.splitlines(keepends=True):
        name = line.partition(":")[0].strip()
        keep = _KEEP.get((parser, name))
        if keep is None:
            keep = _learn(parser, name, line)
        if keep:
            kept.append(line)
    return "".join(kept)


def _learn(parser: str, name: str, line: str) -> bool:
    try:
        samples = parsers.parse(parser, line if line.endswith("\n") else line + "\n")
    except ParseError:
        return True  # the parser refuses the line: the whole output is refused, as without the filter
    keep = any(s.metric in COUNTERS or s.metric in STATES for s in samples)
    if len(_KEEP) < MAX_NAMES:
        _KEEP[(parser, name)] = keep
    return keep or len(_KEEP) >= MAX_NAMES


class HostReader:
    """Reads one host's light snapshot each interval over one session, kept open between intervals and opened
    again after a failure (a host that leaves and comes back is a gap, not an error for the others)."""

    def __init__(self, target: Target, opener, command_timeout: int = 20) -> None:
        self.target = target
        self._opener = opener  # target -> a session with run_snapshot (transport.ssh.Session, transport.local)
        self._session = None
        self.command_timeout = command_timeout

    def read(self, deadline: float, stop: threading.Event | None = None) -> tuple[Reading | None, str | None]:
        try:
            if self._session is None:
                self._session = self._opener(self.target)
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
        return reading, None

    def close(self) -> None:
        if self._session is not None:
            with contextlib.suppress(Exception):  # a session already broken closes as it can
                self._session.close()
            self._session = None
