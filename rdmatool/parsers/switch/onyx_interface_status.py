"""NVIDIA Onyx `show interfaces ethernet status`: each Ethernet port's operational state and speed.

Command: `show interfaces ethernet status`.
Emits (entity = port as Onyx prints it, `Eth1/1`, `Eth1/1/2` on a split port: the name `show lldp remote` gives):
  `link_rate_gbps` (gauge, raw_key `Speed`): the port's speed in Gb/s (`100 Gbps`, `100G` -> 100.0, `10000 Mbps` ->
  10.0), only when the port is Up;
  `oper_state` (state, raw_key `Operational state`): Up, Down, or Disabled for an administratively disabled port.
  A refused command (`% ...`) gives a `tool_error` sample on entity `host`.
Example:
    Port                Operational state           Speed           Negotiation
    ----                -----------------           -----           -----------
    Eth1/1              Up                          100 Gbps        Auto
    Eth1/2              Down                        -               Auto
Caveats: the layout is the four columns of the NVIDIA Onyx User Manual (Ethernet interfaces) and of a published
MLNX-OS capture (`Eth1/6  Up  10 Gbps  No-Negotiation`), which shows a down port's configured speed where newer
releases print `-`: either way a port that is not Up gives no rate (never 0), what it prints is no negotiated rate.
Rows are read by pattern, not by column position, so collapsed whitespace is read too; the Negotiation column is
not emitted. A state may carry a note in brackets (`Down (Suspended)`). The table prints no MTU. The prompt and the
echoed command line are skipped; any other line is a ParseError.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._samples import HOST, speed_gbps, tool_error
from rdmatool.parsers.switch import _onyx
from rdmatool.parsers.switch._cli import cli_lines

NAME = "onyx_interface_status"

_HEADER = re.compile(r"^\s*Port\s+Operational\s+state\s+Speed\b.*$", re.IGNORECASE)
_RULE = re.compile(r"^\s*-{3,}(?:\s+-{3,})*\s*$")
_ROW = re.compile(
    r"^\s*(?P<port>Eth\d+/\d+(?:/\d+)?)\s+"
    r"(?P<state>Up|Down|Disabled|Admin[ -]?down|Error[ -]?disabled|Suspended)(?:\s*\((?P<note>[^)]*)\))?\s+"
    r"(?P<speed>\d+(?:\.\d+)?\s*[MG](?:bps|b/s|bE)?|-|N/A|Unknown)(?:\s+(?P<negotiation>\S.*?))?\s*$",
    re.IGNORECASE,
)
_SPEED = re.compile(r"^(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[MG])", re.IGNORECASE)
_DISABLED = re.compile(r"^(?:disabled|admin[ -]?down)$", re.IGNORECASE)


def parse(text: str) -> list[Sample]:
    samples: list[Sample] = []
    header_seen = False
    for line_no, line, error in cli_lines(text, _onyx.cli_error, _RULE):
        if error:
            samples.append(tool_error(HOST, error))
            continue
        if _HEADER.match(line):
            header_seen = True
            continue
        row = _ROW.match(line)
        if row and header_seen:
            samples.extend(_port(row))
            continue
        if _onyx.is_echo(line):
            continue
        raise ParseError(NAME, line_no, line, "unrecognised line" if header_seen else "row before the table header")
    return samples


def _port(row: re.Match[str]) -> list[Sample]:
    port, state = row.group("port"), row.group("state")
    if state.lower() == "up":
        oper = "Up"
    elif _DISABLED.match(state):
        oper = "Disabled"
    else:
        oper = "Down"
    out = [Sample(port, "oper_state", None, text=oper, raw_key="Operational state")]
    speed = _SPEED.match(row.group("speed"))
    if speed and oper == "Up":
        gbps = speed_gbps(speed.group("number"), speed.group("unit"))
        out.append(Sample(port, "link_rate_gbps", gbps, raw_key="Speed"))
    return out
