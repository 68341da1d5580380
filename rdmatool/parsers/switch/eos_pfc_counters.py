"""Arista EOS `show priority-flow-control counters`: PFC frames received and sent per port (and per priority).

Command: `show priority-flow-control counters` (or `... counters detail`); `| json` accepted too.
Emits (entity = port, long form `Ethernet1/1`): `rx_pause_frames` (RxPfc) and `tx_pause_frames` (TxPfc); priority
None for the per-port totals, the priority for per-priority rows (a `Prio`/`Priority` column, or JSON `priorities`).
Example:
    Port        RxPfc       TxPfc
    Et1/1           0      12,331
    Et2/1      48,201           0
Caveats: layout per the Arista EOS User Manual, "DCBX and Flow Control" (PFC counters); no public verbatim capture
exists. Columns are found by name in the header line (`Port`/`Interface`, optional `Prio`/`Priority`, `RxPfc`,
`TxPfc`), so column order and widths may vary; a row with a different number of cells is a ParseError. JSON:
`{"interfaceCounters": {"Ethernet1/1": {"rxFrames": n, "txFrames": n, "priorities": {"3": {...}}}}}`; other keys are
ignored. `N/A` gives value None. Watchdog counters are another command and not read here.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._samples import HOST, gauge, json_number, tool_error
from rdmatool.parsers.switch import _eos
from rdmatool.parsers.switch._cli import cli_lines

NAME = "eos_pfc_counters"

_RULE = re.compile(r"^\s*[-=\s]{5,}$")
_COLUMN = {
    "port": "port",
    "interface": "port",
    "prio": "prio",
    "priority": "prio",
    "rxpfc": "rx",
    "txpfc": "tx",
}
_METRICS = (("rx", "rx_pause_frames", "RxPfc", "rxFrames"), ("tx", "tx_pause_frames", "TxPfc", "txFrames"))


def parse(text: str) -> list[Sample]:
    start = _eos.json_start(text)
    if start is not None:
        return _parse_json(text, start)
    samples: list[Sample] = []
    columns: list[str] | None = None
    for line_no, line, error in cli_lines(text, _eos.cli_error, _RULE):
        if error:
            samples.append(tool_error(HOST, error))
            continue
        words = line.split()
        if "rxpfc" in (w.lower() for w in words):
            columns = _header(line_no, line, words)
            continue
        if columns and len(words) == len(columns):
            samples.extend(_row(line_no, line, dict(zip(columns, words, strict=True))))
            continue
        if _eos.is_echo(line):
            continue
        raise ParseError(
            NAME, line_no, line, "unrecognised line" if columns else "row before the RxPfc header"
        )
    return samples


def _header(line_no: int, line: str, words: list[str]) -> list[str]:
    columns = [_COLUMN.get(w.lower()) for w in words]
    if None in columns or "port" not in columns or "tx" not in columns or len(set(columns)) != len(columns):
        raise ParseError(NAME, line_no, line, "unknown PFC counters header")
    return columns  # type: ignore[return-value]


def _row(line_no: int, line: str, cells: dict[str, str]) -> list[Sample]:
    port = _eos.long_port(cells["port"])
    priority = None
    if "prio" in cells:
        if not re.fullmatch(r"[0-7]", cells["prio"]):
            raise ParseError(NAME, line_no, line, f"priority {cells['prio']!r} is not 0-7")
        priority = int(cells["prio"])
    return [
        Sample(port, metric, gauge(NAME, line_no, line, cells[col]), priority=priority, raw_key=raw)
        for col, metric, raw, _ in _METRICS
    ]


def _parse_json(text: str, start: int) -> list[Sample]:
    line_no = start + 1
    document = _eos.load_json(NAME, text, start)
    if "interfaceCounters" not in document:
        raise ParseError(NAME, line_no, text.splitlines()[start], "no interfaceCounters in the JSON document")
    samples: list[Sample] = []
    for name, counters in _eos.mapping(
        NAME, line_no, document["interfaceCounters"], "interfaceCounters"
    ).items():
        port = _eos.long_port(name)
        counters = _eos.mapping(NAME, line_no, counters, name)
        samples.extend(_json_counters(line_no, port, counters, None))
        priorities = _eos.mapping(NAME, line_no, counters.get("priorities", {}), "priorities")
        for prio, per_prio in priorities.items():
            if not re.fullmatch(r"[0-7]", str(prio)):
                raise ParseError(NAME, line_no, f"priorities: {prio!r}", "priority is not 0-7")
            samples.extend(
                _json_counters(line_no, port, _eos.mapping(NAME, line_no, per_prio, prio), int(prio))
            )
    return samples


def _json_counters(line_no: int, port: str, counters: dict, priority: int | None) -> list[Sample]:
    return [
        Sample(
            port, metric, json_number(NAME, line_no, key, counters[key]), priority=priority, raw_key=key
        )
        for _, metric, _, key in _METRICS
        if key in counters
    ]
