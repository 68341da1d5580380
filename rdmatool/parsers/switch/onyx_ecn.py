"""NVIDIA Onyx `show interfaces ethernet 1/1 congestion-control`: ECN/RED per traffic class and ECN-marked packets.

Command: `show interfaces ethernet 1/<p> congestion-control` (several ports may follow each other).
Emits (entity `Eth1/1`; priority = the traffic class for per-TC values, None for port totals): `ecn_enabled` (1 when
the TC's mode is ecn or both), `ecn_min_threshold_bytes`, `ecn_max_threshold_bytes` (absolute mode only),
`ecn_max_probability_pct` (gauges); `ecn_marked_packets`, `queue_drops` (RED/WRED dropped packets) (counters).
Example:
    Interface ethernet 1/1
      ECN marked packets  : 52,118
      Traffic class 3:
        Congestion control  : ecn
        Threshold mode      : absolute
        Minimum threshold   : 150 KB
        Maximum threshold   : 1500 KB
        Mark probability    : 20%
Caveats: follows the NVIDIA Onyx User Manual (ECN / congestion control: `traffic-class <tc> congestion-control ecn
minimum-absolute <KB> maximum-absolute <KB>` and its show command); no public verbatim capture exists, so the
`key : value` layout is read liberally (`Traffic-class 3`, `TC 3`, `Min/Minimum threshold`, `Mode`) but an unknown key
is a ParseError. KB means 1024 bytes (the configuration command takes KB); `bytes` and `MB` are accepted. Relative
thresholds (percent of the buffer) have no byte value and are not emitted as thresholds.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._samples import HOST, gauge, tool_error
from rdmatool.parsers.switch import _onyx
from rdmatool.parsers.switch._cli import cli_lines

NAME = "onyx_ecn"

_PORT = re.compile(
    r"^\s*(?:Interface\s+ethernet\s*(\d+/\d+(?:/\d+)?)|(Eth\d+/\d+(?:/\d+)?))\b[^:]*:?\s*$", re.IGNORECASE
)
_TC = re.compile(r"^\s*(?:Traffic[- ]class|TC)\s*([0-7])\s*:?\s*$", re.IGNORECASE)
_KEY_VALUE = re.compile(r"^\s*([A-Za-z][A-Za-z /-]*?)\s*:\s*(.*?)\s*$")
_SIZE = re.compile(r"^([\d,.]+)\s*(bytes|B|KB|K|MB|M)?$", re.IGNORECASE)
_UNIT = {"": 1024, "b": 1, "bytes": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2}

_MODE_KEYS = {"congestion control", "mode", "congestion control mode"}
_THRESHOLD_KEYS = {
    "minimum threshold": "ecn_min_threshold_bytes",
    "min threshold": "ecn_min_threshold_bytes",
    "minimum absolute": "ecn_min_threshold_bytes",
    "maximum threshold": "ecn_max_threshold_bytes",
    "max threshold": "ecn_max_threshold_bytes",
    "maximum absolute": "ecn_max_threshold_bytes",
}
_COUNTER_KEYS = {
    "ecn marked packets": "ecn_marked_packets",
    "red dropped packets": "queue_drops",
    "wred dropped packets": "queue_drops",
}
_PROBABILITY_KEYS = {"mark probability", "probability", "max mark probability", "marking probability"}
_SKIPPED_KEYS = {"threshold mode", "ecn marked bytes", "red dropped bytes", "status"}


class _Reader:
    def __init__(self) -> None:
        self.samples: list[Sample] = []
        self.port: str | None = None
        self.tc: int | None = None
        self.relative = False

    def line(self, line_no: int, line: str) -> None:
        port = _PORT.match(line)
        if port:
            self.port, self.tc, self.relative = (
                _onyx.port_name(port.group(1) or port.group(2)) or None,
                None,
                False,
            )
            if port.group(1):
                self.port = f"Eth{port.group(1)}"
            return
        if _onyx.is_echo(line):
            self.port = _onyx.command_port(line) or self.port
            self.tc = None
            return
        tc = _TC.match(line)
        if tc:
            self.tc, self.relative = int(tc.group(1)), False
            return
        pair = _KEY_VALUE.match(line)
        if not pair:
            raise ParseError(NAME, line_no, line)
        self.key_value(line_no, line, " ".join(pair.group(1).lower().split()), pair.group(1), pair.group(2))

    def key_value(self, line_no: int, line: str, key: str, raw_key: str, value: str) -> None:
        if self.port is None:
            raise ParseError(NAME, line_no, line, "value before any `Interface ethernet X` line")
        if key == "threshold mode":
            self.relative = value.strip().lower() == "relative"
        if key in _SKIPPED_KEYS:
            return
        if key in _MODE_KEYS:
            self.need_tc(line_no, line)
            enabled = int(value.strip().lower() in ("ecn", "both", "ecn and red", "red and ecn", "enabled"))
            self.add("ecn_enabled", enabled, raw_key)
        elif key in _COUNTER_KEYS:
            self.add(_COUNTER_KEYS[key], gauge(NAME, line_no, line, value), raw_key)
        elif key in _PROBABILITY_KEYS:
            self.need_tc(line_no, line)
            self.add(
                "ecn_max_probability_pct", gauge(NAME, line_no, line, value.rstrip("% ")), raw_key
            )
        elif key in _THRESHOLD_KEYS:
            self.need_tc(line_no, line)
            if not self.relative:
                self.add(_THRESHOLD_KEYS[key], _bytes(line_no, line, value), raw_key)
        else:
            raise ParseError(NAME, line_no, line, f"unknown congestion-control field {raw_key!r}")

    def need_tc(self, line_no: int, line: str) -> None:
        if self.tc is None:
            raise ParseError(NAME, line_no, line, "per-traffic-class value outside a `Traffic class N` block")

    def add(self, metric: str, value: int | float | None, raw_key: str) -> None:
        assert self.port is not None
        self.samples.append(Sample(self.port, metric, value, priority=self.tc, raw_key=raw_key))


def _bytes(line_no: int, line: str, value: str) -> int | float | None:
    if value.strip().lower() in ("n/a", "-", ""):
        return None
    size = _SIZE.match(value.strip())
    if not size:
        raise ParseError(NAME, line_no, line, f"expected a size such as `150 KB`, got {value!r}")
    amount = gauge(NAME, line_no, line, size.group(1))
    factor = _UNIT[(size.group(2) or "").lower()]
    return None if amount is None else round(amount * factor)


def parse(text: str) -> list[Sample]:
    reader = _Reader()
    for line_no, line, error in cli_lines(text, _onyx.cli_error):
        if error:
            reader.samples.append(tool_error(HOST, error))
            continue
        reader.line(line_no, line)
    return reader.samples
