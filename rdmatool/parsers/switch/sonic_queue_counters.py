"""SONiC `show queue counters` (table, `--voq`, `--json`) and `show queue watermark`: egress queue counters.

Command: `show queue counters [IFACE] [--nonzero] [--voq] [--json]` (queuestat); the `Port  UC0 ... UCn` table
of `show queue watermark unicast|multicast|all` is read too (its title line chooses the metric).
Emits (entity = port as SONiC prints it; `--voq` ports keep their `host|Ethernet0` form, because VOQs of
different linecards towards one port are different queues; `priority` = queue index n of `UCn` / `VOQn`):
  `tx_packets` (`Counter/pkts`, JSON `totalpacket`), `tx_bytes` (`Counter/bytes`, `totalbytes`), `queue_drops`
  (`Drop/pkts`, `droppacket`), `queue_drop_bytes` (`Drop/bytes`, `dropbytes`), `queue_credit_wd_drops`
  (`Credit-WD-Del/pkts`, VOQ only) - counters, raw_key `UC3 Drop/pkts` (queue + column as printed);
  `queue_watermark_bytes` (gauge, raw_key `UC3`) under `Egress shared pool occupancy per ... queue:`.
  A failing tool (`Error: ...`) gives a `tool_error` sample on entity `host`.
Example:
    For namespace :
         Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes
    ---------  -----  --------------  ---------------  -----------  ------------
    Ethernet0    UC1              60               43           39             1
Caveats: only unicast (`UCn`) and VOQ queues are emitted: their index is the traffic class RoCE uses. `MCn` and
`ALLn` rows are checked for format and skipped - multicast is never lossless RoCE traffic, and their indexes
(MC10 on some ASICs, MC0 on others) would collide with the UC priorities. `N/A` cells give value None. The
`For namespace :` header (2024+) and the older form without it both parse. Real-output owner of queue_counters__*
and queue_watermark_*__*.
"""

from __future__ import annotations

import json
import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines
from rdmatool.parsers._samples import counter
from rdmatool.parsers.switch._sonic import PROMPT, Loose, Row, Table, each_table, header_error, row_error

NAME = "sonic_queue_counters"

_COUNTER_COLUMNS = {
    "Counter/pkts": "tx_packets",
    "Counter/bytes": "tx_bytes",
    "Drop/pkts": "queue_drops",
    "Drop/bytes": "queue_drop_bytes",
    "Credit-WD-Del/pkts": "queue_credit_wd_drops",
}
_JSON_FIELDS = {
    "totalpacket": "tx_packets",
    "totalbytes": "tx_bytes",
    "droppacket": "queue_drops",
    "dropbytes": "queue_drop_bytes",
}
_QUEUE = re.compile(r"^(?P<kind>UC|MC|ALL|VOQ)(?P<index>\d{1,3})$")
_EMITTED_KINDS = {"UC", "VOQ"}
_WATERMARK_TITLE = re.compile(r"^\s*Egress shared pool occupancy per (?:unicast|multicast|all) queue:\s*$")


def parse(text: str) -> list[Sample]:
    json_start = _json_start(text)
    if json_start is not None:
        return _parse_json(text, json_start)
    watermark = False  # after the `Egress shared pool occupancy` title, tables are watermarks

    def title(item: Loose) -> list[Sample] | None:
        nonlocal watermark
        if not _WATERMARK_TITLE.match(item.line):
            return None
        watermark = True
        return []

    def table(item: Table) -> list[Sample]:
        return _watermark_table(item) if watermark else _counters_table(item)

    return each_table(NAME, text, table, title)


def _queue(name: str) -> tuple[str, int] | None:
    match = _QUEUE.match(name)
    return (match.group("kind"), int(match.group("index"))) if match else None


def _counters_table(table: Table) -> list[Sample]:
    header = table.header.cells
    if header[:2] not in (("Port", "TxQ"), ("Port", "Voq")) or len(header) < 3:
        raise header_error(NAME, table, "expected `Port  TxQ|Voq  Counter/pkts ...`")
    unknown = [name for name in header[2:] if name not in _COUNTER_COLUMNS]
    if unknown:
        raise header_error(NAME, table, f"unknown queue counter column {unknown[0]!r}")
    samples = []
    for row in table.rows:
        samples.extend(_queue_row(row, header))
    return samples


def _queue_row(row: Row, header: tuple[str, ...]) -> list[Sample]:
    port, queue_name = row.cells[0], row.cells[1]
    queue = _queue(queue_name)
    if queue is None:
        raise row_error(NAME, row, f"expected a queue like UC3, MC10, ALL20 or VOQ3, got {queue_name!r}")
    values = [counter(NAME, row.line_no, row.line, raw) for raw in row.cells[2:]]  # validated even when the queue is skipped
    if queue[0] not in _EMITTED_KINDS:
        return []
    return [
        Sample(port, _COUNTER_COLUMNS[name], value, priority=queue[1], raw_key=f"{queue_name} {name}")
        for name, value in zip(header[2:], values, strict=True)
    ]


def _watermark_table(table: Table) -> list[Sample]:
    header = table.header.cells
    queues = [_queue(name) for name in header[1:]]
    if header[0] != "Port" or not queues or None in queues:
        raise header_error(NAME, table, "expected `Port  UC0 ... UCn`")
    samples = []
    for row in table.rows:
        port = row.cells[0]
        for name, queue, raw in zip(header[1:], queues, row.cells[1:], strict=True):
            value = counter(NAME, row.line_no, row.line, raw)
            if queue[0] in _EMITTED_KINDS:
                samples.append(Sample(port, "queue_watermark_bytes", value, priority=queue[1], raw_key=name))
    return samples


def _json_start(text: str) -> int | None:
    """0-based index of the line opening a `--json` document, after any prompt or provenance comment."""
    for index, (_, line) in enumerate(lines(text)):
        if not line.strip() or (line.lstrip().startswith("#") and not line.lstrip().startswith("#{")):
            continue
        if PROMPT.match(line):
            continue
        return index if line.lstrip().startswith("{") else None
    return None


def _parse_json(text: str, start: int) -> list[Sample]:
    """`--json`: {port: {queue: {totalpacket, totalbytes, droppacket, dropbytes}}} with string values."""
    all_lines = text.splitlines()
    body = "\n".join(all_lines[start:])
    try:
        document = json.loads(body)
    except json.JSONDecodeError as exc:
        line_no = start + exc.lineno
        line = all_lines[line_no - 1] if 0 < line_no <= len(all_lines) else ""
        raise ParseError(NAME, line_no, line, f"invalid JSON ({exc.msg})") from None
    except (RecursionError, ValueError) as exc:
        raise ParseError(NAME, start + 1, all_lines[start], f"invalid JSON ({type(exc).__name__})") from None
    locate = _Locator(all_lines, start)
    if not isinstance(document, dict):
        raise ParseError(NAME, start + 1, locate.line(start + 1), "expected a JSON object of ports")
    samples = []
    for port, queues in document.items():
        if not isinstance(queues, dict):
            raise locate.error(port, "expected an object of queues")
        for queue_name, fields in queues.items():
            samples.extend(_json_queue(locate, port, queue_name, fields))
    return samples


def _json_queue(locate: _Locator, port: str, queue_name: str, fields: object) -> list[Sample]:
    queue = _queue(queue_name)
    if queue is None or not isinstance(fields, dict):
        raise locate.error(queue_name, "expected a queue like UC3 holding an object of counters")
    unknown = [key for key in fields if key not in _JSON_FIELDS]
    if unknown:
        raise locate.error(unknown[0], "unknown queue counter field")
    samples = []
    for key, raw in fields.items():
        if not isinstance(raw, (str, int)) or isinstance(raw, bool):
            raise locate.error(key, "expected a counter string")
        line_no = locate.line_no(key)
        value = counter(NAME, line_no, locate.line(line_no), str(raw))
        if queue[0] in _EMITTED_KINDS:
            samples.append(
                Sample(port, _JSON_FIELDS[key], value, priority=queue[1], raw_key=f"{queue_name} {key}")
            )
    return samples


class _Locator:
    """Best-effort line numbers for JSON keys (json.loads keeps none): the next line holding `"key"`."""

    def __init__(self, all_lines: list[str], start: int) -> None:
        self._lines = all_lines or [""]
        self._cursor = start

    def line(self, line_no: int) -> str:
        return self._lines[line_no - 1] if 0 < line_no <= len(self._lines) else ""

    def line_no(self, key: str) -> int:
        needle = json.dumps(key)
        for index in range(self._cursor, len(self._lines)):
            if needle in self._lines[index]:
                self._cursor = index
                return index + 1
        return self._cursor + 1

    def error(self, key: str, message: str) -> ParseError:
        line_no = self.line_no(str(key))
        return ParseError(NAME, line_no, self.line(line_no), f"{message}: {str(key)[:40]!r}")
