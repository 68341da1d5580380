"""SONiC `show pfcwd stats`: PFC watchdog storms, status and drops per port queue.

Command: `show pfcwd stats` (multi-ASIC: all namespaces in one table).
Emits (entity = port of `QUEUE` `Ethernet0:3`, `priority` = the queue index after the colon, 0..15 on some ASICs):
  `pfc_watchdog_status` (state: text `stormed` / `operational`, None for `N/A` = watchdog not running there),
  `pfc_watchdog_storms` (counter, raw_key `STORM DETECTED`), `pfc_watchdog_restorations` (counter, `STORM
  RESTORED`), `pfc_watchdog_tx_drops` (`TX DROP`) and `pfc_watchdog_rx_drops` (`RX DROP`).
  A failing tool (`Error: ...`) gives a `tool_error` sample on entity `host`.
Example:
          QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP
    -----------  -----------  -------------------------  ------------  ------------  -----------------  -----------------
    Ethernet0:3      stormed                        1/0       100/300       100/300              0/200              0/200
Caveats: a storm is in progress when status is `stormed` (detected > restored). The OK halves and the `LAST`
columns (the latest storm only) are checked for format but not emitted. A pair cell `N/A` gives None for both
halves. Columns are matched by header name; an unknown column is a ParseError. Real-output owner of
pfcwd_stats__*.
"""

from __future__ import annotations

import re

from rdmatool.model import Sample
from rdmatool.parsers._samples import counter
from rdmatool.parsers.switch._sonic import Row, Table, each_table, header_error, row_error

NAME = "sonic_pfcwd_stats"

_PAIR_COLUMNS = {
    # column: (metric of the first half or None, metric of the second half or None, raw_key halves)
    "STORM DETECTED/RESTORED": (
        "pfc_watchdog_storms",
        "pfc_watchdog_restorations",
        ("STORM DETECTED", "STORM RESTORED"),
    ),
    "TX OK/DROP": (None, "pfc_watchdog_tx_drops", ("TX OK", "TX DROP")),
    "RX OK/DROP": (None, "pfc_watchdog_rx_drops", ("RX OK", "RX DROP")),
    "TX LAST OK/DROP": (None, None, ("TX LAST OK", "TX LAST DROP")),
    "RX LAST OK/DROP": (None, None, ("RX LAST OK", "RX LAST DROP")),
}
_QUEUE = re.compile(r"^(?P<port>\S+):(?P<queue>\d{1,3})$")
_STATUS = {"stormed": "stormed", "operational": "operational", "n/a": None}


def parse(text: str) -> list[Sample]:
    return each_table(NAME, text, _stats_table)


def _stats_table(table: Table) -> list[Sample]:
    header = table.header.cells
    if header[:2] != ("QUEUE", "STATUS") or "STORM DETECTED/RESTORED" not in header[2:]:
        raise header_error(NAME, table, "expected `QUEUE  STATUS  STORM DETECTED/RESTORED ...`")
    unknown = [name for name in header[2:] if name not in _PAIR_COLUMNS]
    if unknown:
        raise header_error(NAME, table, f"unknown pfcwd column {unknown[0]!r}")
    samples = []
    for row in table.rows:
        samples.extend(_queue_row(row, header))
    return samples


def _queue_row(row: Row, header: tuple[str, ...]) -> list[Sample]:
    queue = _QUEUE.match(row.cells[0])
    if not queue:
        raise row_error(NAME, row, f"expected a queue like Ethernet0:3, got {row.cells[0]!r}")
    port, index = queue.group("port"), int(queue.group("queue"))
    status = row.cells[1]
    if status.lower() not in _STATUS:
        raise row_error(NAME, row, f"expected status stormed, operational or N/A, got {status!r}")
    samples = [
        Sample(
            port, "pfc_watchdog_status", None, text=_STATUS[status.lower()], priority=index, raw_key="STATUS"
        )
    ]
    for name, cell in zip(header[2:], row.cells[2:], strict=True):
        first_metric, second_metric, raw_keys = _PAIR_COLUMNS[name]
        first, second = _pair(row, cell)
        for metric, value, raw_key in (
            (first_metric, first, raw_keys[0]),
            (second_metric, second, raw_keys[1]),
        ):
            if metric is not None:
                samples.append(Sample(port, metric, value, priority=index, raw_key=raw_key))
    return samples


def _pair(row: Row, cell: str) -> tuple[int | None, int | None]:
    """`1/0` -> (1, 0); `N/A` -> (None, None)."""
    if cell.strip().upper() == "N/A":
        return None, None
    halves = cell.split("/")
    if len(halves) != 2:
        raise row_error(NAME, row, f"expected a pair like 1/0, got {cell!r}")
    return counter(NAME, row.line_no, row.line, halves[0]), counter(NAME, row.line_no, row.line, halves[1])
