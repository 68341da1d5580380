"""`perfquery [-x|-E] [lid] [port]`: InfiniBand PMA port counters (PortCounters, extended, RcvErrorDetails).

Command: `perfquery -x` (PortCountersExtended, 64-bit data counters), `perfquery` (legacy PortCounters, 32-bit),
`perfquery -E` (PortRcvErrorDetails) or `perfquery -D` (PortXmitDiscardDetails), of the local port or by LID
(`perfquery -x LID PORT`: a switch port read from a host); several blocks may follow one another (`-a`, or one call
per port). Emits (entity `lid<LID>/<port>` from the block header, e.g. `lid2052/1`; `lid<LID>/ALL` for the ports'
sum a switch gives for port 255 -- perfquery knows only the LID and the port number, not the device name, and a
LID is unique only within its subnet, so the caller keeps which subnet it asked): the canonical IB counters
`symbol_errors`, `link_error_recovery`,
`link_downed`, `port_rcv_errors`, `port_rcv_remote_physical_errors`, `port_rcv_switch_relay_errors`,
`port_xmit_discards`, `port_xmit_constraint_errors`, `port_rcv_constraint_errors`, `local_link_integrity_errors`,
`excessive_buffer_overrun_errors`, `vl15_dropped`, `qp1_dropped`, `port_xmit_wait`, `port_xmit_data_bytes` and
`port_rcv_data_bytes` (PortXmitData/PortRcvData are 4-octet words: x4, ints), `port_xmit_packets`,
`port_rcv_packets`, `port_{unicast,multicast}_{xmit,rcv}_packets`; with -E `port_local_physical_errors`,
`port_malformed_packet_errors`, `port_buffer_overrun_errors`, `port_dlid_mapping_errors`,
`port_vl_mapping_errors`, `port_looping_errors`; with -D `port_inactive_discards`, `port_neighbor_mtu_discards`,
`port_sw_lifetime_limit_discards`, `port_sw_hoq_lifetime_limit_discards`. raw_key is perfquery's name
(`PortXmitWait`), also in the legacy OFED spelling older releases print (`SymbolErrors`, `LinkRecovers`, `XmtData`,
`XmtWait` ...: the same fields and widths). Fields are read by name, in any order (old releases print `QP1Dropped`
before `VL15Dropped`, a header without CapMask).
A counter pinned at the maximum of its PMA field also gets a `counter_saturated` sample (value 1, text = the
canonical metric, raw_key = perfquery's name): the error counters at their narrow widths in every form
(LinkDownedCounter / LinkErrorRecoveryCounter / constraint errors 255, LocalLinkIntegrityErrors and
ExcessiveBufferOverrunErrors 15, the others 65535), and in the legacy form only the 32-bit PortXmitData,
PortRcvData, PortXmitPkts, PortRcvPkts, PortXmitWait at 4294967295 (64-bit in -x: they never saturate).
Example:
    # Port extended counters: Lid 2052 port 1 (CapMask: 0x5300 CapMask2: 0x0000002)
    PortSelect:......................1
    PortXmitData:....................178791657177235
    LinkDownedCounter:...............1
Caveats: PortSelect, CounterSelect and CounterSelect2 are metadata and skipped, as is the CapMask of the header.
A header wrapped onto two lines is joined. `# ...` comment lines are skipped before the first header only; an
unknown counter name, a counter before any header, another counter group (-X, -T, PortSamples) or a
directed-route header is a ParseError. `N/A` gives value None. `iberror:` lines, `ibwarn:` lines that report a
failure (failed / can't / cannot) and the shared tool failures (`can't open UMAD port`, `ibpanic:` ...) become
`tool_error` samples (entity `host`: a failing perfquery has not printed which port it was asked for); other
`ibwarn:` lines are warnings and skipped. A LID/port queried twice yields its samples twice, in input order.
An empty output (nothing, or white space only) is a ParseError, `empty output: perfquery printed nothing`, on which
`rdmatool parse` exits 2: perfquery always prints its `# Port counters` header when it succeeds, so an empty answer
is missing data, not "nothing wrong".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers import _ibcounters
from rdmatool.parsers._common import lines, refuse_empty, tool_error_message
from rdmatool.parsers._samples import HOST, counter, tool_error

NAME = "perfquery"

_HEADER_START = re.compile(r"^\s*#\s*(?:Port|PortRcvErrorDetails|PortXmitDiscardDetails)\b")
_HEADER = re.compile(
    r"^\s*#\s*(?P<group>Port extended counters|Port counters|PortRcvErrorDetails counters"
    r"|PortXmitDiscardDetails counters):\s*"
    r"Lid\s+(?P<lid>\d+)\s+port\s+(?P<port>\d+)\s*"
    r"(?:\(\s*CapMask:\s*0x[0-9A-Fa-f]+(?:\s+CapMask2:\s*0x[0-9A-Fa-f]+)?\s*\))?\s*$"
)
_PAIR = re.compile(r"^\s*(?P<name>[A-Za-z][A-Za-z0-9]*):(?:\.+\s*|\s+)(?P<value>\S.*?)\s*$")
_METADATA = {"PortSelect", "CounterSelect", "CounterSelect2"}
_ALL_PORTS = 255  # `perfquery -a` on a switch that sums its ports itself (AllPortSelect): the header says port 255
_IBWARN_FAILURE = re.compile(r"fail|can'?t|cannot|unable", re.IGNORECASE)


@dataclass(frozen=True)
class _Block:
    entity: str
    extended: bool  # PortCountersExtended: data counters 64-bit, error counters keep their PMA widths


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "perfquery", text)
    numbered = list(lines(text))
    samples: list[Sample] = []
    block: _Block | None = None
    index = 0
    while index < len(numbered):
        line_no, line = numbered[index]
        index += 1
        if not line.strip():
            continue
        if line.lstrip().startswith("#"):
            header, consumed = _header(numbered, index - 1)
            if header is not None:
                block, index = header, index + consumed
            elif block is not None or samples or _HEADER_START.match(line):
                raise ParseError(NAME, line_no, line, "unsupported perfquery header")
            continue  # a comment (provenance note) before the first block
        failure = _tool_failure(line)
        if failure is not None:
            samples.append(tool_error(HOST, failure))
            continue
        if line.lstrip().lower().startswith("ibwarn:"):
            continue  # a warning that does not say the query failed
        samples.extend(_counter(block, line_no, line))
    return samples


def _header(numbered: list[tuple[int, str]], index: int) -> tuple[_Block | None, int]:
    """The block a header line opens and how many continuation lines it used (a header may wrap once)."""
    line = numbered[index][1]
    match = _HEADER.match(line)
    consumed = 0
    if match is None and _HEADER_START.match(line) and index + 1 < len(numbered):
        match = _HEADER.match(f"{line.rstrip()} {numbered[index + 1][1].strip()}")
        consumed = 1
    if match is None:
        return None, 0
    port = int(match["port"])
    entity = f"lid{int(match['lid'])}/{'ALL' if port == _ALL_PORTS else port}"
    return _Block(entity, extended=match["group"] != "Port counters"), consumed


def _tool_failure(line: str) -> str | None:
    stripped = line.strip()
    lowered = stripped.lower()
    if "iberror:" in lowered:
        return stripped
    if lowered.startswith("ibwarn:") and not _IBWARN_FAILURE.search(stripped):
        return None
    return tool_error_message(line) or (stripped if lowered.startswith("ibwarn:") else None)


def _counter(block: _Block | None, line_no: int, line: str) -> list[Sample]:
    match = _PAIR.match(line)
    if match is None:
        raise ParseError(NAME, line_no, line)
    if block is None:
        raise ParseError(NAME, line_no, line, "counter before any `# Port ... counters:` header")
    name = match["name"]
    if name in _METADATA:
        return []
    pma = _ibcounters.by_printed_name(name)
    if pma is None:
        raise ParseError(NAME, line_no, line, f"unknown perfquery counter {name!r}")
    value = counter(NAME, line_no, line, match["value"], fraction="a counter must be a whole number")
    bits = pma.extended_bits if block.extended else pma.pma_bits
    return _ibcounters.counter_samples(block.entity, pma, name, value, bits)
