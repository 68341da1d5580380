"""SONiC `show pfc counters` / `pfcstat` (and `--history`): PFC pause frames per port and priority.

Command: `show pfc counters` (= `pfcstat -s all`), `pfcstat`, `show pfc counters --history`; any `-n asicN` /
`-s all` multi-ASIC form (backplane ports `Ethernet-BP256` are entities like any other port).
Emits (entity = port as SONiC prints it, `priority` = n of the `PFCn` column):
  `rx_pause_frames` / `tx_pause_frames` (counters; raw_key `Rx PFC3` / `Tx PFC3`) from the `Port Rx` / `Port Tx`
  tables; from the history table: `rx_pause_transitions` (raw_key `RX Pause Transitions`),
  `rx_pause_duration_us` (`Total RX Pause Time US`), `rx_pause_last_duration_us` (gauge, `Recent RX Pause Time
  US`) and `rx_pause_last_time` (state, text as printed, `Recent RX Pause Timestamp`).
  A failing tool (`Error: ...`, `command not found` ...) gives a `tool_error` sample on entity `host`.
Example:
      Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7
    ---------  ------  ------  ------  ------  ------  ------  ------  ------
    Ethernet0   1,200     201     202     203     204     205     206     207
Caveats: `N/A` cells (ports without PFC counters) are emitted with value None. After `sonic-clear pfccounters`
the tool prints `Last cached time was ...` and deltas since then (skipped line; values are then not absolute).
Pasted shell prompts, a trailing `...` and a hand-written `<---- note` after a row are ignored. Real-output
owner of pfc_counters__* and pfc_counters_history__* (sonic-utilities pfcstat tests and PR #1755 captures).
"""

from __future__ import annotations

import re

from rdmatool.model import Sample
from rdmatool.parsers._samples import counter, number
from rdmatool.parsers.switch._sonic import Table, each_table, header_error, indexed, row_error

NAME = "sonic_pfc_counters"

_DIRECTION = re.compile(r"^Port (Rx|Tx)$")
_DIRECTION_METRIC = {"Rx": "rx_pause_frames", "Tx": "tx_pause_frames"}
_HISTORY_HEADER = (
    "Port",
    "Priority",
    "RX Pause Transitions",
    "Total RX Pause Time US",
    "Recent RX Pause Time US",
    "Recent RX Pause Timestamp",
)
_TIMESTAMP = re.compile(r"^\d\d/\d\d/\d{4}, \d\d:\d\d:\d\d$")


def parse(text: str) -> list[Sample]:
    return each_table(NAME, text, _table, blank_ends_table=False)


def _table(table: Table) -> list[Sample]:
    return _history_table(table) if table.header.cells == _HISTORY_HEADER else _frames_table(table)


def _frames_table(table: Table) -> list[Sample]:
    header = table.header.cells
    direction = _DIRECTION.match(header[0])
    priorities = [indexed(name, "PFC") for name in header[1:]]
    if not direction or not priorities or None in priorities:
        raise header_error(NAME, table, "expected `Port Rx|Tx  PFC0 ... PFC7` or the --history header")
    label = direction.group(1)
    metric = _DIRECTION_METRIC[label]
    samples = []
    for row in table.rows:
        port = row.cells[0]
        for priority, raw in zip(priorities, row.cells[1:], strict=True):
            value = counter(NAME, row.line_no, row.line, raw)
            samples.append(Sample(port, metric, value, priority=priority, raw_key=f"{label} PFC{priority}"))
    return samples


def _history_table(table: Table) -> list[Sample]:
    samples = []
    for row in table.rows:
        port, prio_name, transitions, total_us, recent_us, stamp = row.cells
        priority = indexed(prio_name, "PFC")
        if priority is None:
            raise row_error(NAME, row, f"expected a priority like PFC3, got {prio_name!r}")
        if number(stamp) is not None or not (_TIMESTAMP.match(stamp) or stamp.strip().upper() == "N/A"):
            raise row_error(NAME, row, f"expected a timestamp MM/DD/YYYY, HH:MM:SS, got {stamp!r}")
        samples += [
            Sample(
                port,
                "rx_pause_transitions",
                counter(NAME, row.line_no, row.line, transitions),
                priority=priority,
                raw_key=_HISTORY_HEADER[2],
            ),
            Sample(
                port,
                "rx_pause_duration_us",
                counter(NAME, row.line_no, row.line, total_us),
                priority=priority,
                raw_key=_HISTORY_HEADER[3],
            ),
            Sample(
                port,
                "rx_pause_last_duration_us",
                counter(NAME, row.line_no, row.line, recent_us),
                priority=priority,
                raw_key=_HISTORY_HEADER[4],
            ),
            Sample(
                port,
                "rx_pause_last_time",
                None,
                text=None if stamp.upper() == "N/A" else stamp,
                priority=priority,
                raw_key=_HISTORY_HEADER[5],
            ),
        ]
    return samples
