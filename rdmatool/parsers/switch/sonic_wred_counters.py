"""SONiC `show queue wredcounters`: WRED drops and ECN-marked packets per egress queue.

Command: `show queue wredcounters [IFACE] [--nonzero] [--summary] [--voq]` (wredstat; needs `counterpoll
wredqueue enable`). This is SONiC's per-queue ECN-marked counter.
Emits (entity = port as SONiC prints it, `host` for `--summary` which sums all ports; `priority` = queue index n
of `UCn` / `VOQn`; raw_key = queue + column as printed, e.g. `UC3 WredDrp/pkts`):
  `queue_drops` (`WredDrp/pkts` - WRED drops only, not tail drops), `queue_drop_bytes` (`WredDrp/bytes`),
  `ecn_marked_packets` (`EcnMarked/pkts`), `ecn_marked_bytes` (`EcnMarked/bytes`) - all counters.
  A failing tool (`Error: ...`) gives a `tool_error` sample on entity `host`.
Example:
         Port    TxQ    WredDrp/pkts    WredDrp/bytes    EcnMarked/pkts    EcnMarked/bytes
    ---------  -----  --------------  ---------------  ----------------  -----------------
    Ethernet0    UC1              60               43                39                  1
Caveats: `N/A` cells give value None (some platforms count no ECN-marked bytes on UC queues). As in
sonic_queue_counters, `MCn` / `ALLn` rows are checked and skipped. A pasted capture whose whitespace was collapsed
to single spaces, and the hand-edited doc sample with a blank line after the dashes, both parse. `--json` is not
supported (ParseError). Real-output owner of queue_wredcounters__*.
"""

from __future__ import annotations

import re

from rdmatool.model import Sample
from rdmatool.parsers._samples import HOST, counter
from rdmatool.parsers.switch._sonic import Row, Table, each_table, header_error, row_error

NAME = "sonic_wred_counters"

_COLUMNS = {
    "WredDrp/pkts": "queue_drops",
    "WredDrp/bytes": "queue_drop_bytes",
    "EcnMarked/pkts": "ecn_marked_packets",
    "EcnMarked/bytes": "ecn_marked_bytes",
}
_QUEUE = re.compile(r"^(?P<kind>UC|MC|ALL|VOQ)(?P<index>\d{1,3})$")
_EMITTED_KINDS = {"UC", "VOQ"}


def parse(text: str) -> list[Sample]:
    return each_table(NAME, text, _wred_table)


def _wred_table(table: Table) -> list[Sample]:
    header = table.header.cells
    per_port = header[:1] == ("Port",)
    keys = header[2:] if per_port else header[1:]
    queue_column = header[1] if per_port else header[0]
    if queue_column not in ("TxQ", "Voq") or not keys:
        raise header_error(NAME, table, "expected `[Port]  TxQ  WredDrp/pkts ...`")
    unknown = [name for name in keys if name not in _COLUMNS]
    if unknown:
        raise header_error(NAME, table, f"unknown wred counter column {unknown[0]!r}")
    samples = []
    for row in table.rows:
        port = row.cells[0] if per_port else HOST
        samples.extend(_queue_row(row, port, row.cells[1 if per_port else 0], keys, row.cells[-len(keys) :]))
    return samples


def _queue_row(
    row: Row, port: str, queue_name: str, keys: tuple[str, ...], cells: tuple[str, ...]
) -> list[Sample]:
    queue = _QUEUE.match(queue_name)
    if not queue:
        raise row_error(NAME, row, f"expected a queue like UC3, MC10, ALL20 or VOQ3, got {queue_name!r}")
    values = [counter(NAME, row.line_no, row.line, raw) for raw in cells]  # validated even when the queue is skipped
    if queue.group("kind") not in _EMITTED_KINDS:
        return []
    index = int(queue.group("index"))
    return [
        Sample(port, _COLUMNS[name], value, priority=index, raw_key=f"{queue_name} {name}")
        for name, value in zip(keys, values, strict=True)
    ]
