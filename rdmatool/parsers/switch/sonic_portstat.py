"""SONiC `show interfaces counters` (portstat) and its `detailed IFACE` view: port packets, errors, drops, state.

Command: `show interfaces counters [-a]` (= `portstat`), `show interfaces counters detailed IFACE`.
Emits (entity = port as SONiC prints it; raw_key = the column or label as printed):
  table view: `oper_state` (state from STATE: U or UP -> Up, D or DOWN -> Down, X -> Disabled (admin down),
  N/A -> None; older releases spell UP/DOWN out),
  `rx_packets` / `tx_packets` (RX_OK / TX_OK), `rx_errors` / `tx_errors` (RX_ERR / TX_ERR), `rx_discards` /
  `tx_discards` (RX_DRP / TX_DRP), `rx_overruns` / `tx_overruns` (RX_OVR / TX_OVR) - counters; the tool's own
  rates `rx_bandwidth_gbps` / `tx_bandwidth_gbps` (RX_BPS / TX_BPS in bytes/s, `MB/s` = 10^6 B/s, converted to
  Gb/s), `rx_rate_pps` / `tx_rate_pps` (RX_PPS / TX_PPS) and `rx_util_pct` / `tx_util_pct` (RX_UTIL / TX_UTIL) -
  gauges. Column names are read in any case (older releases print `Tx_PPS` beside `RX_PPS`).
  detailed view: `rx_packets` (`Total Packets Received Without Errors`), `tx_packets` (`Total Packets Transmitted
  Successfully`), `rx_overruns` (`Overruns Received`), `queue_drops` (`WRED Total Dropped Packets`, port total).
  A failing tool (`Error: ...`) gives a `tool_error` sample on entity `host`.
Example:
        IFACE    STATE    RX_OK        RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR    TX_OK  ...
    ---------  -------  -------  ------------  ---------  --------  --------  --------  -------  ...
    Ethernet0        D        8  2000.00 MB/s     64.00%        10       100       N/A       10  ...
Caveats: the detailed view does not name its port: the entity is taken from a pasted prompt line
(`... show interfaces counters detailed Ethernet4`) when there is one, else it is the placeholder `port` (the
collector knows which port it asked for). Its size buckets, unicast/multicast/broadcast splits, per-colour WRED
lines, jabbers/fragments/undersize, trimming lines and `Time Since Counters Last Cleared` are recognised and not
emitted. `TRIM*` table columns (`-a` on new releases) are skipped. portstat prints no byte counters. `N/A` cells
give value None. Real-output owner of interfaces_counters__* and interfaces_counters_detailed__*.
"""

from __future__ import annotations

import re
from decimal import Decimal

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._samples import counter
from rdmatool.parsers.switch._sonic import PROMPT, Loose, Row, Table, each_table, header_error, row_error

NAME = "sonic_portstat"
DETAILED_PLACEHOLDER = "port"

_COUNTER_COLUMNS = {
    "RX_OK": "rx_packets",
    "RX_ERR": "rx_errors",
    "RX_DRP": "rx_discards",
    "RX_OVR": "rx_overruns",
    "TX_OK": "tx_packets",
    "TX_ERR": "tx_errors",
    "TX_DRP": "tx_discards",
    "TX_OVR": "tx_overruns",
}
_RATE_COLUMNS = {"RX_BPS": "rx_bandwidth_gbps", "TX_BPS": "tx_bandwidth_gbps"}
_PPS_COLUMNS = {"RX_PPS": "rx_rate_pps", "TX_PPS": "tx_rate_pps"}
_UTIL_COLUMNS = {"RX_UTIL": "rx_util_pct", "TX_UTIL": "tx_util_pct"}
# Current releases print one letter; older ones spelled the state out (`UP`, `DOWN`).
_STATES = {"U": "Up", "UP": "Up", "D": "Down", "DOWN": "Down", "X": "Disabled", "N/A": None}
_BYTE_RATE = re.compile(r"^(?P<number>[\d,]+(?:\.\d+)?) (?P<unit>B|KB|MB|GB)/s$")
# Bytes per second -> Gb/s. portstat scales by 1000, not 1024 (25G port: 2000.00 MB/s = 64.00% util).
_GBPS_PER_UNIT = {
    "B": Decimal(8) / 10**9,
    "KB": Decimal(8) / 10**6,
    "MB": Decimal(8) / 10**3,
    "GB": Decimal(8),
}
_PACKET_RATE = re.compile(r"^(?P<number>[\d,]+(?:\.\d+)?)/s$")
_PERCENT = re.compile(r"^(?P<number>\d+(?:\.\d+)?)%$")

_DETAIL_LINE = re.compile(r"^\s*(?P<label>\S.*?)\.{2,}\s*(?P<value>\S.*?)\s*$")
_DETAIL_METRICS = {
    "Total Packets Received Without Errors": "rx_packets",
    "Total Packets Transmitted Successfully": "tx_packets",
    "Overruns Received": "rx_overruns",
    "WRED Total Dropped Packets": "queue_drops",
}
_DETAIL_SKIPPED = re.compile(
    r"^(?:Packets (?:Received|Transmitted) \d+(?:-\d+)? Octets"
    r"|(?:Unicast|Multicast|Broadcast) Packets (?:Received|Transmitted)"
    r"|(?:Jabbers|Fragments|Undersize) Received"
    r"|WRED (?:Green|Yellow|Red) Dropped Packets"
    r"|Trimmed(?: Sent| Dropped)? Packets"
    r"|Time Since Counters Last Cleared)$"
)
_DETAILED_COMMAND = re.compile(r"\bcounters\s+detailed\s+(?P<port>\S+)")


def parse(text: str) -> list[Sample]:
    port = _detailed_port(text)

    def detail(item: Loose) -> list[Sample] | None:
        match = _DETAIL_LINE.match(item.line)
        return _detail(item, port, match.group("label").strip(), match.group("value")) if match else None

    return each_table(NAME, text, _counters_table, detail)


def _detailed_port(text: str) -> str:
    """The port of `show interfaces counters detailed IFACE` when a pasted prompt line names it."""
    for line in text.splitlines():
        prompt = PROMPT.match(line)
        command = prompt.group("command") if prompt else None
        found = _DETAILED_COMMAND.search(command or "")
        if found:
            return found.group("port")
    return DETAILED_PLACEHOLDER


def _detail(item: Loose, port: str, label: str, raw: str) -> list[Sample]:
    if _DETAIL_SKIPPED.match(label):
        return []
    metric = _DETAIL_METRICS.get(label)
    if metric is None:
        raise ParseError(NAME, item.line_no, item.line, f"unknown detailed counter {label!r}")
    return [Sample(port, metric, counter(NAME, item.line_no, item.line, raw), raw_key=label)]


def _counters_table(table: Table) -> list[Sample]:
    # Column names in capitals: some releases print `Tx_PPS` beside `RX_PPS`; raw_key keeps the printed spelling.
    printed = table.header.cells
    header = tuple(name.upper() for name in printed)
    if header[0] != "IFACE":
        raise header_error(NAME, table, "expected `IFACE  STATE  RX_OK ...`")
    known = {"STATE"} | set(_COUNTER_COLUMNS) | set(_RATE_COLUMNS) | set(_PPS_COLUMNS) | set(_UTIL_COLUMNS)
    unknown = [name for name in header[1:] if name not in known and not name.startswith("TRIM")]
    if unknown:
        raise header_error(NAME, table, f"unknown portstat column {unknown[0]!r}")
    samples = []
    for row in table.rows:
        samples.extend(_port_row(row, header, printed))
    return samples


def _port_row(row: Row, header: tuple[str, ...], printed: tuple[str, ...]) -> list[Sample]:
    port = row.cells[0]
    samples = []
    for name, raw, cell in zip(header[1:], printed[1:], row.cells[1:], strict=True):
        if name == "STATE":
            if cell.upper() not in _STATES:
                raise row_error(NAME, row, f"expected state U, D, X, UP, DOWN or N/A, got {cell!r}")
            samples.append(Sample(port, "oper_state", None, text=_STATES[cell.upper()], raw_key=raw))
        elif name in _COUNTER_COLUMNS:
            value = counter(NAME, row.line_no, row.line, cell)
            samples.append(Sample(port, _COUNTER_COLUMNS[name], value, raw_key=raw))
        elif name in _RATE_COLUMNS:
            samples.append(Sample(port, _RATE_COLUMNS[name], _scaled(row, cell, _BYTE_RATE), raw_key=raw))
        elif name in _PPS_COLUMNS:
            samples.append(Sample(port, _PPS_COLUMNS[name], _scaled(row, cell, _PACKET_RATE), raw_key=raw))
        elif name in _UTIL_COLUMNS:
            samples.append(Sample(port, _UTIL_COLUMNS[name], _scaled(row, cell, _PERCENT), raw_key=raw))
    return samples


def _scaled(row: Row, cell: str, pattern: re.Pattern[str]) -> float | None:
    """`2000.00 MB/s` -> 16.0 Gb/s, `12.50/s` -> 12.5, `64.00%` -> 64.0; `N/A` -> None."""
    if cell.strip().upper() == "N/A":
        return None
    match = pattern.match(cell.strip())
    if not match:
        raise row_error(NAME, row, f"unexpected rate or utilisation {cell!r}")
    value = Decimal(match.group("number").replace(",", ""))  # exact scaling: 204.80 KB/s is 0.0016384 Gb/s
    unit = match.groupdict().get("unit")
    return float(value * _GBPS_PER_UNIT[unit]) if unit else float(value)
