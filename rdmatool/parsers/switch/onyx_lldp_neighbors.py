"""NVIDIA Onyx `show lldp remote`: the LLDP neighbour (system and port) seen on each local port.

Command: `show lldp remote`.
Emits (entity = local port as Onyx prints it, `Eth1/1`): `lldp_neighbor` with text `<remote system>|<remote port>`,
raw_key `System Name` (or `Device ID` when the neighbour does not advertise a system name).
Example:
    Local Interface     Device ID           Port ID             System Name
    Eth1/1              0c:42:a1:de:5a:10   ens1f0np0           gpu-node-017
Caveats: layout per the NVIDIA Onyx User Manual (LLDP, "show lldp remote"); no public verbatim capture exists. The
system name may hold spaces (`Not Advertised`), the other cells may not; when it is `Not Advertised`, `N/A` or `-`
the Device ID (chassis ID) stands for the remote system.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._samples import HOST, tool_error
from rdmatool.parsers.switch import _onyx
from rdmatool.parsers.switch._cli import cli_lines

NAME = "onyx_lldp_neighbors"

_HEADER = re.compile(r"^\s*Local Interface\s+Device ID\s+Port ID\s+System Name\s*$", re.IGNORECASE)
_RULE = re.compile(r"^\s*-{5,}\s*$")
_ROW = re.compile(r"^\s*(Eth\d+/\d+(?:/\d+)?|mgmt\d+)\s+(\S+)\s+(\S+)\s+(\S.*?)\s*$", re.IGNORECASE)
_NO_NAME = {"not advertised", "n/a", "-", "none"}


def parse(text: str) -> list[Sample]:
    samples: list[Sample] = []
    for line_no, line, error in cli_lines(text, _onyx.cli_error, _RULE, _HEADER):
        if error:
            samples.append(tool_error(HOST, error))
            continue
        row = _ROW.match(line)
        if row:
            local, device, port, system = row.groups()
            named = system.lower() not in _NO_NAME
            samples.append(
                Sample(
                    local,
                    "lldp_neighbor",
                    text=f"{system if named else device}|{port}",
                    raw_key="System Name" if named else "Device ID",
                )
            )
            continue
        if _onyx.is_echo(line):
            continue
        raise ParseError(NAME, line_no, line)
    return samples
