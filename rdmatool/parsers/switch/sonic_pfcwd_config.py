"""SONiC `show pfcwd config`: PFC watchdog action, detection and restoration times per port.

Command: `show pfcwd config` (multi-ASIC prints one poll-interval and BIG_RED_SWITCH line per ASIC first).
Emits:
  per port (entity = port as SONiC prints it): `pfc_watchdog_action` (state: drop / forward / alert),
  `pfc_watchdog_detection_time_ms`, `pfc_watchdog_restoration_time_ms` (gauges), `pfc_watchdog_history` (state:
  enable / disable, when the HISTORY column is present);
  per ASIC (entity `host` on a single-ASIC switch, else the namespace `asic0` named on the line):
  `pfc_watchdog_poll_interval_ms` (gauge, from `Changed polling interval to 600ms` - SONiC's wording for the
  current interval) and `pfc_watchdog_big_red_switch` (state, from `BIG_RED_SWITCH status is enable`).
  A failing tool (`Error: ...`) gives a `tool_error` sample on entity `host`.
Example:
    Changed polling interval to 600ms
         PORT    ACTION    DETECTION TIME    RESTORATION TIME    HISTORY
    ---------  --------  ----------------  ------------------  ---------
    Ethernet0      drop               600                 600    disable
Caveats: `N/A` cells are emitted with value (or text) None. `SKIPPED: PFC is not enabled on port: X` (printed
by `pfcwd start`) is recognised and skipped. Columns are matched by header name (`RESTORATION TIME (ms)` also
accepted); an unknown column is a ParseError. Real-output owner of pfcwd_config__*.
"""

from __future__ import annotations

import re

from rdmatool.model import Sample
from rdmatool.parsers._samples import HOST, gauge
from rdmatool.parsers.switch._sonic import Loose, Row, Table, each_table, header_error, row_error

NAME = "sonic_pfcwd_config"

_POLL = re.compile(r"^\s*Changed polling interval to (?P<ms>\d+)\s*ms(?: on (?P<asic>[\w-]+))?\s*$")
_BIG_RED = re.compile(r"^\s*BIG_RED_SWITCH status is (?P<state>\w+)(?: on (?P<asic>[\w-]+))?\s*$")
_SKIPPED = re.compile(r"^\s*SKIPPED: PFC is not enabled on port: \S+\s*$")

_TIME_COLUMNS = {
    "DETECTION TIME": "pfc_watchdog_detection_time_ms",
    "DETECTION TIME (ms)": "pfc_watchdog_detection_time_ms",
    "RESTORATION TIME": "pfc_watchdog_restoration_time_ms",
    "RESTORATION TIME (ms)": "pfc_watchdog_restoration_time_ms",
}
_STATE_COLUMNS = {
    "ACTION": ("pfc_watchdog_action", {"drop", "forward", "alert"}),
    "HISTORY": ("pfc_watchdog_history", {"enable", "disable"}),
}


def parse(text: str) -> list[Sample]:
    return each_table(NAME, text, _config_table, _loose_line)


def _loose_line(item: Loose) -> list[Sample] | None:
    poll = _POLL.match(item.line)
    if poll:
        entity = poll.group("asic") or HOST
        raw_key = "polling interval"
        return [Sample(entity, "pfc_watchdog_poll_interval_ms", int(poll.group("ms")), raw_key=raw_key)]
    big_red = _BIG_RED.match(item.line)
    if big_red:
        entity = big_red.group("asic") or HOST
        return [
            Sample(
                entity,
                "pfc_watchdog_big_red_switch",
                None,
                text=big_red.group("state"),
                raw_key="BIG_RED_SWITCH",
            )
        ]
    if _SKIPPED.match(item.line):
        return []
    return None


def _config_table(table: Table) -> list[Sample]:
    header = table.header.cells
    if header[0] != "PORT" or "ACTION" not in header:
        raise header_error(NAME, table, "expected `PORT  ACTION  DETECTION TIME  RESTORATION TIME ...`")
    unknown = [name for name in header[1:] if name not in _TIME_COLUMNS and name not in _STATE_COLUMNS]
    if unknown:
        raise header_error(NAME, table, f"unknown pfcwd config column {unknown[0]!r}")
    samples = []
    for row in table.rows:
        samples.extend(_port_row(row, header))
    return samples


def _port_row(row: Row, header: tuple[str, ...]) -> list[Sample]:
    port = row.cells[0]
    samples = []
    for name, cell in zip(header[1:], row.cells[1:], strict=True):
        if name in _TIME_COLUMNS:
            value = gauge(NAME, row.line_no, row.line, cell)
            samples.append(Sample(port, _TIME_COLUMNS[name], value, raw_key=name))
            continue
        metric, allowed = _STATE_COLUMNS[name]
        text = None if cell.upper() == "N/A" else cell
        if text is not None and text not in allowed:
            raise row_error(NAME, row, f"unexpected {name} value {cell!r}")
        samples.append(Sample(port, metric, None, text=text, raw_key=name))
    return samples
