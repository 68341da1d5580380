"""Arista EOS ECN: per-queue ECN/WRED thresholds and marking probability, and per-queue ECN-marked packet counts.

Command: `show qos interfaces ethernet 1/1 ecn` (configuration) and `show qos interfaces ecn counters queue`
(counters, needs `random-detect ecn count` on the queue); both outputs may be concatenated; `| json` accepted too.
Emits (entity = port, long form `Ethernet1/1`; priority = the transmit queue index): `ecn_enabled`,
`ecn_min_threshold_bytes`, `ecn_max_threshold_bytes`, `ecn_max_probability_pct` (gauges); `ecn_marked_packets`
(counter).
Example:
    Ethernet1/1:
       Tx-Queue  ECN       Min Threshold    Max Threshold    Max Mark Probability
       3         enabled   150 kbytes       1500 kbytes      20%
    Port       TxQ   ECN Marked Packets
    Et1/1      3     1,234
Caveats: layouts per the Arista EOS User Manual, "Quality of Service" (ECN configuration and `show qos interfaces ...
ecn` / ECN counters); no public verbatim capture exists and the column set differs between releases, so rows are
read by shape: `<queue> <enabled|disabled> <min> <unit> <max> <unit> <prob>%`. Units bytes, kbytes (x1024), mbytes
(x1024^2), or segments / cells converted at 208 bytes per cell (the Broadcom XGS MMU cell of Trident/Tomahawk
platforms; other ASICs differ, so the raw `N segments` is kept in `text`). `-` or `N/A` thresholds are skipped.
A queue with ECN disabled keeps whatever thresholds the view prints for it, beside its `ecn_enabled` 0: they mark
nothing, and the playbooks judge thresholds only where `ecn_enabled` is 1.
JSON: `{"interfaces": {"Ethernet1/1": {"txQueues": {"3": {"ecnEnabled", "minThreshold", "maxThreshold", "unit",
"maxMarkProbability", "ecnMarkedPackets"}}}}}`; other keys ignored.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._samples import HOST, gauge, json_number, tool_error
from rdmatool.parsers.switch import _eos
from rdmatool.parsers.switch._cli import cli_lines

NAME = "eos_ecn"

CELL_BYTES = 208
_UNIT_BYTES = {"bytes": 1, "byte": 1, "kbytes": 1024, "kb": 1024, "mbytes": 1024**2, "mb": 1024**2}
_CELL_UNITS = {"segments", "segment", "cells", "cell"}

_PORT_HEADER = re.compile(r"^\s*(?:Interface\s+)?((?:Ethernet|Et)\d[\d/.]*)\s*:?\s*$", re.IGNORECASE)
_CONFIG_HEADER = re.compile(r"^\s*(Tx-?Queue|TxQ|Queue)\s+(ECN|Status)\b.*Threshold.*$", re.IGNORECASE)
_COUNTER_HEADER = re.compile(
    r"^\s*(Port|Interface)\s+(TxQ|Tx-?Queue|Queue)\s+ECN[- ]Marked.*$", re.IGNORECASE
)
_SUBHEADER = re.compile(r"^\s*(Threshold|Probability|Status|Threshold\s+Threshold.*)\s*$", re.IGNORECASE)
_RULE = re.compile(r"^\s*[-=\s]{5,}$")
_CONFIG_ROW = re.compile(
    r"^\s*(?:UC)?([0-7])\s+(enabled|disabled)\s+(?:(\S+)\s+([A-Za-z]+)|(-|N/A))\s+(?:(\S+)\s+([A-Za-z]+)|(-|N/A))"
    r"\s+(?:(\S+?)\s*%|(-|N/A))(?:\s+\S+)?\s*$",
    re.IGNORECASE,
)
_COUNTER_ROW = re.compile(r"^\s*(\S+)\s+(?:UC)?([0-7])\s+(\S+)\s*$", re.IGNORECASE)


def parse(text: str) -> list[Sample]:
    start = _eos.json_start(text)
    if start is not None:
        return _parse_json(text, start)
    samples: list[Sample] = []
    port: str | None = None
    for line_no, line, error in cli_lines(text, _eos.cli_error, _RULE):
        if error:
            samples.append(tool_error(HOST, error))
            continue
        header = _PORT_HEADER.match(line)
        if header:
            port = _eos.long_port(header.group(1))
            continue
        if _CONFIG_HEADER.match(line) or _COUNTER_HEADER.match(line) or _SUBHEADER.match(line):
            continue
        config = _CONFIG_ROW.match(line)
        if config:
            if port is None:
                raise ParseError(NAME, line_no, line, "queue row before any `EthernetX:` header")
            samples.extend(_config_samples(line_no, line, port, config))
            continue
        counter = _COUNTER_ROW.match(line)
        if counter and re.match(r"(?i)^(Et|Ethernet)\d", counter.group(1)):
            value = gauge(NAME, line_no, line, counter.group(3))
            prio = int(counter.group(2))
            samples.append(
                Sample(
                    _eos.long_port(counter.group(1)),
                    "ecn_marked_packets",
                    value,
                    priority=prio,
                    raw_key="ECN Marked Packets",
                )
            )
            continue
        if _eos.is_echo(line):
            continue
        raise ParseError(NAME, line_no, line)
    return samples


def _config_samples(line_no: int, line: str, port: str, row: re.Match[str]) -> list[Sample]:
    queue = int(row.group(1))
    out = [Sample(port, "ecn_enabled", int(row.group(2).lower() == "enabled"), priority=queue, raw_key="ECN")]
    for metric, raw, unit, raw_key in (
        ("ecn_min_threshold_bytes", row.group(3), row.group(4), "Min Threshold"),
        ("ecn_max_threshold_bytes", row.group(6), row.group(7), "Max Threshold"),
    ):
        if raw is not None:
            out.append(_threshold(line_no, line, port, queue, metric, raw, unit, raw_key))
    if row.group(9) is not None:
        pct = gauge(NAME, line_no, line, row.group(9))
        out.append(
            Sample(port, "ecn_max_probability_pct", pct, priority=queue, raw_key="Max Mark Probability")
        )
    return out


def _threshold(
    line_no: int, line: str, port: str, queue: int, metric: str, raw: str, unit: str, raw_key: str
) -> Sample:
    value = gauge(NAME, line_no, line, raw)
    key = unit.lower()
    if key in _UNIT_BYTES:
        factor, note = _UNIT_BYTES[key], None
    elif key in _CELL_UNITS:
        factor, note = CELL_BYTES, f"{raw} {unit}"
    else:
        raise ParseError(NAME, line_no, line, f"unknown threshold unit {unit!r}")
    scaled = None if value is None else round(value * factor)
    return Sample(port, metric, scaled, text=note, priority=queue, raw_key=raw_key)


def _parse_json(text: str, start: int) -> list[Sample]:
    line_no = start + 1
    document = _eos.load_json(NAME, text, start)
    if "interfaces" not in document:
        raise ParseError(NAME, line_no, text.splitlines()[start], "no interfaces in the JSON document")
    samples: list[Sample] = []
    for name, intf in _eos.mapping(NAME, line_no, document["interfaces"], "interfaces").items():
        port = _eos.long_port(name)
        queues = _eos.mapping(
            NAME, line_no, _eos.mapping(NAME, line_no, intf, name).get("txQueues", {}), "txQueues"
        )
        for queue_name, queue in queues.items():
            match = re.fullmatch(r"(?:UC)?([0-7])", str(queue_name))
            if not match:
                raise ParseError(NAME, line_no, f"txQueues: {queue_name!r}", "queue must be 0-7")
            samples.extend(
                _json_queue(
                    line_no, port, int(match.group(1)), _eos.mapping(NAME, line_no, queue, queue_name)
                )
            )
    return samples


def _json_queue(line_no: int, port: str, queue: int, fields: dict) -> list[Sample]:
    out: list[Sample] = []
    if isinstance(fields.get("ecnEnabled"), bool):
        out.append(
            Sample(port, "ecn_enabled", int(fields["ecnEnabled"]), priority=queue, raw_key="ecnEnabled")
        )
    unit = fields.get("unit", "bytes")
    for metric, key in (
        ("ecn_min_threshold_bytes", "minThreshold"),
        ("ecn_max_threshold_bytes", "maxThreshold"),
    ):
        if key in fields:
            raw = json_number(NAME, line_no, key, fields[key])
            if raw is None:
                continue
            if not isinstance(unit, str):
                raise ParseError(NAME, line_no, f"unit: {unit!r}", "unit must be a string")
            out.append(_threshold(line_no, f"{key}: {raw} {unit}", port, queue, metric, str(raw), unit, key))
    for metric, key in (
        ("ecn_max_probability_pct", "maxMarkProbability"),
        ("ecn_marked_packets", "ecnMarkedPackets"),
    ):
        if key in fields:
            out.append(
                Sample(
                    port,
                    metric,
                    json_number(NAME, line_no, key, fields[key]),
                    priority=queue,
                    raw_key=key,
                )
            )
    return out
