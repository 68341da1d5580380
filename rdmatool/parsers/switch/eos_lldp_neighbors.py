"""Arista EOS `show lldp neighbors`: the LLDP neighbour (system and port) seen on each local port.

Command: `show lldp neighbors` (`| json` accepted too).
Emits (entity = local port, long form `Ethernet1/1`): `lldp_neighbor` with text `<remote system>|<remote port>`,
raw_key `Neighbor Device ID`.
Example:
    Port          Neighbor Device ID       Neighbor Port ID    TTL
    ---------- ------------------------ ---------------------- ---
    Et1/1         gpu-node-017             ens1f0np0           120
Caveats: layout per the Arista EOS User Manual, "Link Layer Discovery Protocol" (show lldp neighbors); the table
statistics lines above the table (`Last table change time`, `Number of table inserts` ...) are recognised and skipped.
Device and port IDs are single words in this table; a row with another shape is a ParseError. JSON:
`{"lldpNeighbors": [{"port": ..., "neighborDevice": ..., "neighborPort": ..., "ttl": ...}]}`.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._samples import HOST, tool_error
from rdmatool.parsers.switch import _eos
from rdmatool.parsers.switch._cli import cli_lines

NAME = "eos_lldp_neighbors"

_STATS = re.compile(r"^\s*(Last table change time|Number of table \w+(?:-\w+)?)\s*:.*$", re.IGNORECASE)
_HEADER = re.compile(r"^\s*Port\s+Neighbor Device ID\s+Neighbor Port ID\s+TTL\s*$", re.IGNORECASE)
_RULE = re.compile(r"^\s*[-\s]{5,}$")
_ROW = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s*$")


def parse(text: str) -> list[Sample]:
    start = _eos.json_start(text)
    if start is not None:
        return _parse_json(text, start)
    samples: list[Sample] = []
    for line_no, line, error in cli_lines(text, _eos.cli_error):
        if error:
            samples.append(tool_error(HOST, error))
            continue
        if _STATS.match(line) or _HEADER.match(line) or _RULE.match(line):
            continue
        row = _ROW.match(line)
        if row:
            port, device, remote_port, _ = row.groups()
            samples.append(
                Sample(
                    _eos.long_port(port),
                    "lldp_neighbor",
                    text=f"{device}|{remote_port}",
                    raw_key="Neighbor Device ID",
                )
            )
            continue
        if _eos.is_echo(line):
            continue
        raise ParseError(NAME, line_no, line)
    return samples


def _parse_json(text: str, start: int) -> list[Sample]:
    line_no = start + 1
    document = _eos.load_json(NAME, text, start)
    neighbours = document.get("lldpNeighbors")
    if not isinstance(neighbours, list):
        raise ParseError(NAME, line_no, text.splitlines()[start], "expected an lldpNeighbors list")
    samples: list[Sample] = []
    for entry in neighbours:
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(k), str) and entry[k].strip()
            for k in ("port", "neighborDevice", "neighborPort")
        ):
            raise ParseError(
                NAME, line_no, str(entry)[:120], "neighbour needs port, neighborDevice and neighborPort"
            )
        text_value = f"{entry['neighborDevice']}|{entry['neighborPort']}"
        samples.append(
            Sample(_eos.long_port(entry["port"]), "lldp_neighbor", text=text_value, raw_key="neighborDevice")
        )
    return samples
