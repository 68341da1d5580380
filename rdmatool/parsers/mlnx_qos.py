"""`mlnx_qos -i <if>`: NIC QoS configuration: trust, DSCP map, PFC, buffers, priority-to-TC and ETS.

Command: `mlnx_qos -i <netdev>` (MLNX_OFED / mlnx-tools; once per RoCE interface, stored per interface).
Emits (entity `netdev`, a placeholder: the output does not name the interface, the bundle analysis replaces it):
    `dcbx_mode` (text as printed: "OS controlled" / "Firmware controlled"), `trust_mode` (pcp | dscp),
    `dscp_to_priority` (one per DSCP listed: value = priority, text = the DSCP, raw_key `dscp26`, priority None),
    `default_priority` (value), `rx_buffer_size_bytes` (priority column = buffer index), `rx_buffer_total_bytes`
    (total_size when printed), `cable_length_m`, `pfc_enabled` and `priority_buffer` (priority column = priority),
    per TC block: `tc_tsa` and `tc_ratelimit` (text) and `tc_bandwidth_pct` (ets only), all with priority column =
    TC, and `priority_to_tc` (priority column = priority, value = TC) for each `priority: N` line under it;
    a `tool_error` sample when the tool reports its own failure.
Example:
    DCBX mode: OS controlled
    Priority trust state: dscp
    dscp2prio mapping:
            prio:3 dscp:31,30,29,28,27,26,25,24,
    PFC configuration:
            priority    0   1   2   3   4   5   6   7
            enabled     0   0   0   1   0   0   0   0
    tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%
             priority:  3
Caveats: sections are found by keyword, not position: MLNX_OFED 4.x prints no default priority, buffer sizes or
buffer row, older ones no Cable len; blank lines between rows (as on the NVIDIA doc pages) are fine. The lldpad
warning and the "... is not supported on your system" notes are skipped. No verbatim capture was available here:
the fixtures follow the NVIDIA MLNX_OFED "mlnx_qos" documentation and the mlnx-tools print format.
An empty output (nothing, or white space only) is a ParseError, `empty output: mlnx_qos printed nothing`, on which
`rdmatool parse` exits 2: mlnx_qos always prints the port's trust state and PFC configuration when it succeeds, so an
empty answer is missing data, not "nothing wrong".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines, refuse_empty
from rdmatool.parsers._nic import NETDEV, is_noise, nic_tool_error, strip_ansi
from rdmatool.parsers._samples import tool_error

NAME = "mlnx_qos"

_DCBX = re.compile(r"^DCBX mode\s*:\s*(?P<mode>.+?)\s*$", re.IGNORECASE)
_TRUST = re.compile(r"^Priority trust (?:state|mode)\s*:\s*(?P<trust>\S+)\s*$", re.IGNORECASE)
_DSCP_HEADER = re.compile(r"^dscp2prio mapping\s*:\s*$", re.IGNORECASE)
_DSCP_ROW = re.compile(r"^prio\s*:\s*(?P<prio>[0-7])\s+dscp\s*:\s*(?P<dscps>[\d,\s]*)$", re.IGNORECASE)
_DEFAULT_HEADER = re.compile(r"^default priority\s*:\s*(?P<prio>[0-7])?\s*$", re.IGNORECASE)
_DEFAULT_ROW = re.compile(r"^prio\s*:\s*(?P<prio>[0-7])\s*$", re.IGNORECASE)
_BUFFERS = re.compile(r"^Receive buffer size(?: \(bytes\))?\s*:\s*(?P<sizes>.*)$", re.IGNORECASE)
_CABLE = re.compile(r"^Cable len(?:gth)?\s*:\s*(?P<len>\S+)\s*$", re.IGNORECASE)
_PFC_HEADER = re.compile(r"^PFC configuration\s*:\s*$", re.IGNORECASE)
_PFC_ROW = re.compile(r"^(?P<row>priority|enabled|buffer)\s*:?\s+(?P<cells>\S.*)$", re.IGNORECASE)
_TC = re.compile(
    r"^tc\s*:\s*(?P<tc>\d+)\s+ratelimit\s*:\s*(?P<rate>[^,]+?)\s*,\s*tsa\s*:\s*(?P<tsa>[A-Za-z_]+)"
    r"(?:\s*,\s*bw\s*:\s*(?P<bw>\d+(?:\.\d+)?)\s*%)?\s*$",
    re.IGNORECASE,
)
_TC_PRIORITY = re.compile(r"^priority\s*:\s*(?P<prio>[0-7])\s*$", re.IGNORECASE)
# Notes the tool prints and carries on: the lldpad warning banner, "Buffers commands are not supported ...".
_NOTES = re.compile(r"^(?:\*+\s*WARNING\b.*|.*\bnot supported on your system\b.*)$", re.IGNORECASE)


@dataclass
class _State:
    samples: list[Sample] = field(default_factory=list)
    section: str | None = None  # "dscp", "default", "pfc" or "tc": where indented rows belong
    current_tc: int | None = None
    pfc_header: list[int] | None = None  # the priorities of the `priority 0 1 ... 7` row


def _fail(line_no: int, line: str, message: str = "unrecognised line") -> ParseError:
    return ParseError(NAME, line_no, line, message)


def _dscp_samples(prio: int, dscps: str, line_no: int, line: str) -> list[Sample]:
    out = []
    for token in (t.strip() for t in dscps.split(",")):
        if not token:
            continue
        if not token.isdigit() or int(token) > 63:
            raise _fail(line_no, line, f"bad DSCP {token!r}")
        dscp = int(token)
        out.append(Sample(NETDEV, "dscp_to_priority", prio, text=str(dscp), raw_key=f"dscp{dscp}"))
    return out


def _buffer_samples(sizes: str, line_no: int, line: str) -> list[Sample]:
    out = []
    index = 0
    for token in (t.strip() for t in sizes.split(",")):
        if not token:
            continue
        if "=" in token:  # `total_size=1027584` (and any other name=value the tool may append)
            name, _, total = (part.strip() for part in token.partition("="))
            if not total.isdigit():
                raise _fail(line_no, line, f"bad buffer figure {token!r}")
            if name.lower() == "total_size":
                out.append(Sample(NETDEV, "rx_buffer_total_bytes", int(total), raw_key="total_size"))
            continue
        if not token.isdigit():
            raise _fail(line_no, line, f"bad buffer size {token!r}")
        out.append(
            Sample(NETDEV, "rx_buffer_size_bytes", int(token), priority=index, raw_key="Receive buffer size")
        )
        index += 1
    return out


def _pfc_row(state: _State, row: str, cells: list[str], line_no: int, line: str) -> list[Sample]:
    if not all(c.isdigit() for c in cells):
        raise _fail(line_no, line, "PFC row cells must be numbers")
    values = [int(c) for c in cells]
    if row == "priority":
        if any(v > 7 for v in values) or len(set(values)) != len(values):
            raise _fail(line_no, line, "bad PFC priority header")
        state.pfc_header = values
        return []
    header = state.pfc_header if state.pfc_header is not None else list(range(8))
    if len(values) != len(header):
        raise _fail(line_no, line, f"expected {len(header)} PFC columns, got {len(values)}")
    metric = "pfc_enabled" if row == "enabled" else "priority_buffer"
    if metric == "pfc_enabled" and any(v > 1 for v in values):
        raise _fail(line_no, line, "PFC enabled flags must be 0 or 1")
    return [Sample(NETDEV, metric, v, priority=p, raw_key=row) for p, v in zip(header, values, strict=True)]


def _tc_samples(match: re.Match[str]) -> list[Sample]:
    tc = int(match["tc"])
    out = [
        Sample(NETDEV, "tc_ratelimit", text=match["rate"].strip(), priority=tc, raw_key="ratelimit"),
        Sample(NETDEV, "tc_tsa", text=match["tsa"].lower(), priority=tc, raw_key="tsa"),
    ]
    if match["bw"] is not None:
        bw = float(match["bw"])
        out.append(
            Sample(NETDEV, "tc_bandwidth_pct", int(bw) if bw.is_integer() else bw, priority=tc, raw_key="bw")
        )
    return out


def _parse_line(state: _State, line_no: int, raw_line: str, line: str) -> None:
    """Recognise one stripped, non-noise line; sections are entered by their keyword lines."""
    add = state.samples.extend
    if match := _DCBX.match(line):
        state.section = None
        add([Sample(NETDEV, "dcbx_mode", text=match["mode"], raw_key="DCBX mode")])
    elif match := _TRUST.match(line):
        state.section = None
        add([Sample(NETDEV, "trust_mode", text=match["trust"].lower(), raw_key="Priority trust state")])
    elif _DSCP_HEADER.match(line):
        state.section = "dscp"
    elif match := _DEFAULT_HEADER.match(line):
        state.section = "default"
        if match["prio"] is not None:
            add([Sample(NETDEV, "default_priority", int(match["prio"]), raw_key="default priority")])
    elif state.section == "dscp" and (match := _DSCP_ROW.match(line)):
        add(_dscp_samples(int(match["prio"]), match["dscps"], line_no, raw_line))
    elif state.section == "default" and (match := _DEFAULT_ROW.match(line)):
        add([Sample(NETDEV, "default_priority", int(match["prio"]), raw_key="default priority")])
    elif match := _BUFFERS.match(line):
        state.section = None
        add(_buffer_samples(match["sizes"], line_no, raw_line))
    elif match := _CABLE.match(line):
        state.section = None
        if not match["len"].isdigit():
            raise _fail(line_no, raw_line, "cable length must be a number of metres")
        add([Sample(NETDEV, "cable_length_m", int(match["len"]), raw_key="Cable len")])
    elif _PFC_HEADER.match(line):
        state.section, state.pfc_header = "pfc", None
    elif state.section == "pfc" and (match := _PFC_ROW.match(line)):
        add(_pfc_row(state, match["row"].lower(), match["cells"].split(), line_no, raw_line))
    elif match := _TC.match(line):
        state.section, state.current_tc = "tc", int(match["tc"])
        add(_tc_samples(match))
    elif state.section == "tc" and state.current_tc is not None and (match := _TC_PRIORITY.match(line)):
        add(
            [
                Sample(
                    NETDEV,
                    "priority_to_tc",
                    state.current_tc,
                    priority=int(match["prio"]),
                    raw_key="priority",
                )
            ]
        )
    else:
        raise _fail(line_no, raw_line)


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "mlnx_qos", text)
    state = _State()
    for line_no, raw_line in lines(text):
        line = strip_ansi(raw_line).strip()
        if is_noise(line) or _NOTES.match(line):
            continue
        message = nic_tool_error(line)
        if message is not None:
            state.samples.append(tool_error(NETDEV, message))
            continue
        _parse_line(state, line_no, raw_line, line)
    return state.samples
