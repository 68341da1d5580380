"""Arista EOS `show interfaces counters errors`: FCS, symbol and all receive errors, and transmit errors per port.

Command: `show interfaces counters errors` (`| json` accepted too; the collector asks for it).
Emits (entity = port, long form `Ethernet1/1`; priority None): `rx_crc_errors` (FCS / `fcsErrors`: frames with a bad
frame check sequence), `rx_symbol_errors` (Symbol / `symbolErrors`), `rx_errors` (Rx / `inErrors`: all receive
errors), `tx_errors` (Tx / `outErrors`) - counters; raw_key = the column or JSON key. Alignment errors, runts
(`frameTooShorts`) and giants (`frameTooLongs`) are read and not emitted: `inErrors` counts them, and a bad cable or
optic shows in FCS and symbol errors.
Example:
    Port          FCS    Align   Symbol       Rx    Runts   Giants       Tx
    Et1/1          37        0       52       37        0        0        0
    Et2/1           0        0        0        0        0        0        0
Caveats: the JSON keys follow the public test data of Arista's network test framework ANTA (`interfaceErrorCounters`
→ port → `fcsErrors`, `alignmentErrors`, `symbolErrors`, `inErrors`, `frameTooShorts`, `frameTooLongs`,
`outErrors`); the text columns follow the Arista EOS User Manual's description of the command. Neither is verified
against a real capture. Text columns are found by name in the header line, so order and widths may vary; a row with
a different number of cells, or an unknown column, is a ParseError; other JSON keys of a port are ignored. Management
and Port-Channel rows are read like the others. `N/A` gives value None. A refused command (`% ...`) gives a
`tool_error` sample on entity `host`.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._samples import HOST, counter, json_number, tool_error
from rdmatool.parsers.switch import _eos
from rdmatool.parsers.switch._cli import cli_lines

NAME = "eos_interface_errors"

_RULE = re.compile(r"^\s*[-=\s]{5,}$")
# text column → (JSON key, metric or None when read and not emitted)
_COLUMNS: dict[str, tuple[str, str | None]] = {
    "fcs": ("fcsErrors", "rx_crc_errors"),
    "align": ("alignmentErrors", None),
    "symbol": ("symbolErrors", "rx_symbol_errors"),
    "rx": ("inErrors", "rx_errors"),
    "runts": ("frameTooShorts", None),
    "giants": ("frameTooLongs", None),
    "tx": ("outErrors", "tx_errors"),
}
_PORT_COLUMNS = {"port", "interface"}


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
        if words[0].lower() in _PORT_COLUMNS and "fcs" in (w.lower() for w in words):
            columns = _header(line_no, line, words)
            continue
        if columns and len(words) == len(columns):
            samples.extend(_row(line_no, line, dict(zip(columns, words, strict=True))))
            continue
        if _eos.is_echo(line):
            continue
        raise ParseError(NAME, line_no, line, "unrecognised line" if columns else "row before the FCS header")
    return samples


def _header(line_no: int, line: str, words: list[str]) -> list[str]:
    """The columns as printed (`Port`, `FCS`, `Align` ...): each is the raw_key of its samples."""
    names = [w.lower() for w in words[1:]]
    unknown = [w for w in names if w not in _COLUMNS]
    if unknown or len(set(names)) != len(names):
        raise ParseError(NAME, line_no, line, f"unknown error counters header ({unknown[0] if unknown else 'repeated'})")
    return words


def _row(line_no: int, line: str, cells: dict[str, str]) -> list[Sample]:
    (_, name), *counts = cells.items()
    port = _eos.long_port(name)
    out = []
    for column, raw in counts:
        value = counter(NAME, line_no, line, raw)
        metric = _COLUMNS[column.lower()][1]
        if metric is not None:
            out.append(Sample(port, metric, value, raw_key=column))
    return out


def _parse_json(text: str, start: int) -> list[Sample]:
    line_no = start + 1
    document = _eos.load_json(NAME, text, start)
    if "interfaceErrorCounters" not in document:
        raise ParseError(NAME, line_no, text.splitlines()[start], "no interfaceErrorCounters in the JSON document")
    samples: list[Sample] = []
    ports = _eos.mapping(NAME, line_no, document["interfaceErrorCounters"], "interfaceErrorCounters")
    for name, counters in ports.items():
        port = _eos.long_port(name)
        counters = _eos.mapping(NAME, line_no, counters, name)
        for key, metric in _COLUMNS.values():
            if key not in counters:
                continue
            value = json_number(NAME, line_no, key, counters[key])
            if metric is not None:
                samples.append(Sample(port, metric, value, raw_key=key))
    return samples
