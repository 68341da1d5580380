"""Cisco NX-OS `show lldp neighbors`: the LLDP neighbour (system and port) seen on each local port.

Command: `show lldp neighbors` (`| json` accepted too).
Emits (entity = local port in long form, `Ethernet1/1`): `lldp_neighbor` with text `<remote system>|<remote port>`,
raw_key `Device ID`.
Example:
    Device ID            Local Intf      Hold-time  Capability  Port ID
    spine-01.pod1        Eth1/49         120        BR          Ethernet1/1
    Total entries displayed: 1
Caveats: layout per the Cisco Nexus 9000 Series NX-OS System Management Configuration Guide (LLDP verification);
the capability legend, the `Total entries displayed` line and an empty Capability cell are accepted; a device ID too
long for its column, printed alone on its own line with the rest of the row on the next line, is joined. JSON:
`TABLE_nbor` rows (`l_port_id`, `sys_name` or else `chassis_id`, `port_id`).
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._samples import HOST, tool_error
from rdmatool.parsers.switch import _nxos
from rdmatool.parsers.switch._cli import cli_lines

NAME = "nxos_lldp_neighbors"

_HEADER = re.compile(
    r"^\s*Device\s*ID\s+Local\s+Intf\s+Hold-?time\s+Capability\s+Port\s+ID\s*$", re.IGNORECASE
)
_LEGEND = re.compile(r"^\s*(Capability codes:|\([A-Z]\)\s+\w+)", re.IGNORECASE)
_TOTAL = re.compile(r"^\s*Total entries displayed:\s*\d+\s*$", re.IGNORECASE)
_ROW = re.compile(
    r"^(?P<device>\S+)?\s+(?P<local>\S+)\s+(?P<hold>\d+)\s+(?:(?P<cap>[A-Za-z,]{1,12})\s+)?(?P<port>\S+)\s*$"
)
_LONE_DEVICE = re.compile(r"^(\S+)\s*$")


def parse(text: str) -> list[Sample]:
    start = _nxos.json_start(text)
    if start is not None:
        return _parse_json(text, start)
    samples: list[Sample] = []
    pending_device: str | None = None
    for line_no, line, error in cli_lines(text, _nxos.cli_error):
        if error:
            samples.append(tool_error(HOST, error))
            continue
        if _HEADER.match(line) or _LEGEND.match(line) or _TOTAL.match(line):
            continue
        row = _ROW.match(line)
        if row and (row["device"] or pending_device):
            device = row["device"] or pending_device
            local = _nxos.long_port(row["local"])
            samples.append(
                Sample(local, "lldp_neighbor", text=f"{device}|{row['port']}", raw_key="Device ID")
            )
            pending_device = None
            continue
        lone = _LONE_DEVICE.match(line)
        if lone and not _nxos.is_echo(line) and pending_device is None:
            pending_device = lone.group(1)
            continue
        if _nxos.is_echo(line):
            continue
        raise ParseError(NAME, line_no, line)
    return samples


def _parse_json(text: str, start: int) -> list[Sample]:
    line_no = start + 1
    document = _nxos.load_json(NAME, text, start)
    samples: list[Sample] = []
    for row in _nxos.table_rows(NAME, line_no, document, "nbor"):
        local = row.get("l_port_id")
        system = _nxos.field(row, "chassis_id", "sys_name")
        port = row.get("port_id")
        if not all(isinstance(v, str) and v.strip() for v in (local, system, port)):
            raise ParseError(
                NAME, line_no, str(row)[:120], "neighbour row needs l_port_id, chassis_id and port_id"
            )
        key = "sys_name" if isinstance(row.get("sys_name"), str) and row["sys_name"].strip() else "chassis_id"
        system = row[key]
        samples.append(Sample(_nxos.long_port(local), "lldp_neighbor", text=f"{system}|{port}", raw_key=key))
    if not samples and "neigh_count" not in document:
        raise ParseError(NAME, line_no, text.splitlines()[start], "no TABLE_nbor rows in the JSON document")
    return samples
