"""NVIDIA Onyx `show interfaces ethernet 1/1 counters pfc prio N`: per-priority packets, bytes and PFC pause counts.

Command: `show interfaces ethernet 1/<p> counters pfc prio <0-7>`; the collector keeps the echoed command line (or
concatenates several runs, each after its own command line), because the output itself names neither port nor
priority.
Emits (entity `Eth1/1`, priority = the prio of the command): `rx_packets`, `rx_bytes`, `rx_pause_frames`,
`rx_pause_duration_us`, and the same `tx_*` metrics (counters); unicast / multicast / broadcast / discard counts are
recognised and not emitted.
Example:
    switch [standalone: master] # show interfaces ethernet 1/1 counters pfc prio 3
    Rx:
      1,204,551            packets
      17,220               pause packets
      88,400               pause duration
Caveats: format per the NVIDIA Onyx User Manual (interface counters / "show interfaces ethernet counters pfc prio")
and the Mellanox QoS MIB (RxPausePkts, RxPauseDuration, TxPausePkts, TxPauseDuration per priority); no public
verbatim capture exists. `frames` is accepted for `packets`. Pause duration is taken as microseconds (the unit of the
Spectrum per-priority pause-duration counter) unless the line names `msec`. A counter line before any command line
naming the port and priority is a ParseError (the samples would have no entity).
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._samples import HOST, gauge, tool_error
from rdmatool.parsers.switch import _onyx
from rdmatool.parsers.switch._cli import cli_lines

NAME = "onyx_pfc_counters"

_PRIO = re.compile(r"\bcounters\s+pfc\s+prio(?:rity)?\s+([0-7])\b", re.IGNORECASE)
_SECTION = re.compile(r"^\s*(Rx|Tx)\s*:?\s*$", re.IGNORECASE)
_COUNTER = re.compile(r"^\s*(\S+)\s+([A-Za-z][A-Za-z ]*?)(?:\s*\(?(usec|us|msec|ms)\)?)?\s*$", re.IGNORECASE)
_EMITTED = {
    "packets": "packets",
    "bytes": "bytes",
    "pause packets": "pause_frames",
    "pause duration": "pause_duration_us",
}
_KNOWN = {"unicast packets", "multicast packets", "broadcast packets", "discard packets", "error packets"}


def parse(text: str) -> list[Sample]:
    samples: list[Sample] = []
    port: str | None = None
    priority: int | None = None
    direction: str | None = None
    for line_no, line, error in cli_lines(text, _onyx.cli_error):
        if error:
            samples.append(tool_error(HOST, error))
            continue
        if _onyx.is_echo(line):
            port, prio = _onyx.command_port(line), _PRIO.search(line)
            priority, direction = (int(prio.group(1)) if prio else None), None
            continue
        section = _SECTION.match(line)
        if section:
            direction = section.group(1).lower()
            continue
        samples.extend(_counter(line_no, line, port, priority, direction))
    return samples


def _counter(
    line_no: int, line: str, port: str | None, priority: int | None, direction: str | None
) -> list[Sample]:
    match = _COUNTER.match(line)
    if not match:
        raise ParseError(NAME, line_no, line)
    raw, label, unit = match.group(1), " ".join(match.group(2).lower().split()), match.group(3)
    label = label.replace("frames", "packets")
    if label not in _EMITTED and label not in _KNOWN:
        raise ParseError(NAME, line_no, line, f"unknown PFC counter {match.group(2)!r}")
    if port is None or priority is None or direction is None:
        raise ParseError(
            NAME,
            line_no,
            line,
            "counter before the `show interfaces ethernet X counters pfc prio N` line and Rx/Tx",
        )
    value = gauge(NAME, line_no, line, raw)
    if label not in _EMITTED:
        return []
    if unit and unit.lower() in ("msec", "ms") and value is not None:
        value *= 1000
    metric = f"{direction}_{_EMITTED[label]}"
    return [
        Sample(
            port,
            metric,
            value,
            priority=priority,
            raw_key=f"{direction.capitalize()} {match.group(2).strip()}",
        )
    ]
