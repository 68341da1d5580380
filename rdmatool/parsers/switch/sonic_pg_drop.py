"""SONiC `show priority-group drop counters` (and PG watermarks): ingress drops and occupancy per priority group.

Command: `show priority-group drop counters` (pg-drop); the same `Port  PG0 ... PGn` table printed by
`show priority-group watermark|persistent-watermark shared|headroom` is read too, the title line above the table
choosing the metric.
Emits (entity = port as SONiC prints it, `priority` = n of the `PGn` column, raw_key `PG3`):
  `queue_drops` (counter) under `Ingress PG dropped packets:`;
  `pg_shared_watermark_bytes` (gauge) under `Ingress shared pool occupancy per PG:`;
  `pg_headroom_watermark_bytes` (gauge) under `Ingress headroom per PG:`.
  A failing tool (`Error: ...`) gives a `tool_error` sample on entity `host`.
Example:
    Ingress PG dropped packets:
         Port    PG0    PG1    PG2    PG3    PG4    PG5    PG6    PG7
    ---------  -----  -----  -----  -----  -----  -----  -----  -----
    Ethernet0    800    801    802    803    804    805    806    807
Caveats: `N/A` cells (ports without PG counters, multi-ASIC backplane ports) are emitted with value None. Some
platforms print PG0..PG15: the priority column then holds the PG index, not an 802.1p priority. A table without
one of the titles above is a ParseError (its unit would be unknown). The persistent and the user watermark views
print the same title and cannot be told apart. Real-output owner of pg_drop_counters__*, pg_watermark_*__* and
pg_persistent_watermark_*__*.
"""

from __future__ import annotations

import re

from rdmatool.model import Sample
from rdmatool.parsers._samples import counter
from rdmatool.parsers.switch._sonic import Loose, Table, each_table, header_error, indexed

NAME = "sonic_pg_drop"

_TITLES = {
    "Ingress PG dropped packets:": "queue_drops",
    "Ingress shared pool occupancy per PG:": "pg_shared_watermark_bytes",
    "Ingress headroom per PG:": "pg_headroom_watermark_bytes",
}
_SPACES = re.compile(r"\s+")


def parse(text: str) -> list[Sample]:
    metric: str | None = None  # what the tables below the last title count

    def title(item: Loose) -> list[Sample] | None:
        nonlocal metric
        found = _TITLES.get(_SPACES.sub(" ", item.line.strip()))
        if found is None:
            return None
        metric = found
        return []

    def table(item: Table) -> list[Sample]:
        if metric is None:
            raise header_error(NAME, item, "table without a title line (`Ingress PG dropped packets:` ...)")
        return _pg_table(item, metric)

    return each_table(NAME, text, table, title)


def _pg_table(table: Table, metric: str) -> list[Sample]:
    header = table.header.cells
    groups = [indexed(name, "PG") for name in header[1:]]
    if header[0] != "Port" or not groups or None in groups:
        raise header_error(NAME, table, "expected `Port  PG0 ... PGn`")
    samples = []
    for row in table.rows:
        port = row.cells[0]
        for group, raw in zip(groups, row.cells[1:], strict=True):
            samples.append(
                Sample(port, metric, counter(NAME, row.line_no, row.line, raw), priority=group, raw_key=f"PG{group}")
            )
    return samples
