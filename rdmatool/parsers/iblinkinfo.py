"""`iblinkinfo`: every link of the InfiniBand subnet, port by port, as the subnet itself reports it.

Command: `iblinkinfo -C <device> -P <port>` (infiniband-diags; one host per fabric reads it, see rdmatool.commands).
Emits per port of each node (entity `<node description>/<port number>`, e.g. `MF0;ib-leaf01:MQM9790/U1/7` or
`gpu01 mlx5_0/1`; a description two nodes share gets, on the second node's ports, the GUID iblinkinfo prints
(the switch's, or the CA's port GUID): `<description> (0x...)/<port>`. The ports of one node keep one name: a
dual-port CA `gpu01 HCA-1` gives `gpu01 HCA-1/1` and `gpu01 HCA-1/2`, each the far end its switch port names):
`ib_link_state` (`Active`, `Down`, `Init`, `Armed`) and `ib_link_phys_state` (`LinkUp`, `Polling`, `Disabled` ...),
text; `ib_link_rate_gbps` (active width x the lane's nominal rate: 4X 53.125 Gbps → 200), only for a port that is not
Down; `ib_link_neighbor`, text `<remote node description>|<remote port>`, for a cabled port; `ib_link_capable`, the
`Could be ...` note iblinkinfo adds when both ends support more than the link runs at. raw_key: `Switch` or `CA`
(the local node's type as the header names it) for `ib_link_neighbor`, else iblinkinfo's field.
Example:
    Switch: 0x0c42a10300a1b2c0 MF0;ib-leaf01:MQM9790/U1:
               1    7[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      12    1[  ] "gpu01 mlx5_0" ( )
    -> Sample("MF0;ib-leaf01:MQM9790/U1/7", "ib_link_neighbor", text="gpu01 mlx5_0|1", raw_key="Switch"), ...
Line mode (`--line`, `-l`: a line per port, the node's port GUID and description, right-justified in quotes, first)
gives the same samples under the same names (the blanks around a description are padding there, so they are
dropped in both layouts and in the far end's name; runs of spaces inside are kept), and `ib_link_neighbor_guid`
(text, the far end's GUID line mode prints: tells apart far ends of one description). Line mode does not say a
node's type: a GUID seen with several port numbers is a switch's (its ports share it), any other a CA's (so a
switch of which one port alone shows is read as a CA); a CA's ports under one description, one after the other,
are one node. A port whose speed iblinkinfo could not put a number on (`Extended speed`: LinkSpeedActive 0, the
rate in LinkSpeedExtActive, which it did not read; `undefined (N)`) gets `ib_link_speed` (that text, raw_key
`LinkSpeedActive`) and no rate. Split ports (`2X`, port numbers above 64) are ports like the others.
Caveats: any line that is neither a node header nor a port line of either layout is a ParseError, as is a `--diff`
line. The lane rate printed is the signalling rate (25.78125 for
EDR, 53.125 HDR, 106.25 NDR); the nominal rate is used so that the figure matches the host's sysfs rate. A CA's node
description is `<hostname> <device>` by default (`ibstat`'s "Node description"; sites may change it).
`Failed to open ...` and a failed fabric discovery become `tool_error`. No real capture is in the corpus: the
fixtures follow iblinkinfo.c of infiniband-diags (print_node_header, print_port) and its manual page. The far-end
reading (`_port_samples`) also serves ibqueryerrors' `Link info` lines, which print the same.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._ibinfo import Collector, content_lines
from rdmatool.parsers._ibsubnet import NodeNames
from rdmatool.parsers._samples import HOST, tool_error

NAME = "iblinkinfo"

_SWITCH = re.compile(r"^\s*Switch:\s+(?P<guid>0x[0-9a-fA-F]+)\s+(?P<desc>.*):\s*$")
_CA = re.compile(r"^\s*(?P<type>CA|Router):\s+(?P<desc>.*):\s*$")
_PORT = re.compile(
    r"^\s*(?:(?P<guid>0x[0-9a-fA-F]+)\s+)?(?P<lid>\d+)\s+(?P<port>\d+)\[\s*(?P<ext>\d*)\s*\]\s+"
    r"==\((?P<link>.*?)\)(?:\s*\(HOQ:[^)]*\))?==>\s*(?P<remote>.*?)\s*$")
_UP = re.compile(r"^\s*(?P<width>\d+)X\s+(?P<speed>\d+(?:\.\d+)?)\s+Gbps(?:\s+\((?P<note>[^)]*)\))?\s+"
                 r"(?P<state>\S+)/\s*(?P<phys>\S+)\s*$")
# A speed the tool could not put a number on: LinkSpeedActive 0 (`Extended speed`: the rate is in LinkSpeedExtActive,
# which iblinkinfo did not read) or a code it does not know (`undefined (16)`).
_UP_UNKNOWN = re.compile(r"^\s*(?P<width>\d+)X\s+(?P<other>Extended speed|undefined \(\d+\))\s+"
                         r"(?P<state>\S+)/\s*(?P<phys>\S+)\s*$")
# `--line`: `0x<port GUID> "<description, right-justified in 30>" <LID> <port>[..] ==(...)==>  <far end>`.
_LINE = re.compile(
    r'^\s*(?P<guid>0x[0-9a-fA-F]+)\s+"(?P<desc>.*?)"\s+(?P<lid>\d+)\s+(?P<port>\d+)\[\s*(?P<ext>\d*)\s*\]\s+'
    r"==\((?P<link>.*?)\)(?:\s*\(HOQ:[^)]*\))?==>\s*(?P<remote>.*?)\s*$")
_GUID_PORT = re.compile(r'(0x[0-9a-fA-F]+)\s+(?:"[^"]*"\s+)?\d+\s+(\d+)\[')
_DOWN = re.compile(r"^\s*(?P<state>\S+)/\s*(?P<phys>\S+)\s*$")
_REMOTE = re.compile(r'^(?:(?P<rguid>0x[0-9a-fA-F]+)\s+)?(?P<lid>\d+)\s+(?P<port>\d+)\[\s*(?P<ext>\d*)\s*\]\s+"(?P<desc>.*)"\s+'
                     r"\((?P<capable>.*)\)$")
_NO_REMOTE = re.compile(r'^\[\s*\]\s+""\s+\(\s*\)$|^"Port not available"$')
_DISCOVERY_FAILED = re.compile(r"discover(?:y)?\s+(?:the\s+)?fabric\s+failed|failed to discover", re.IGNORECASE)
# Signalling rate per lane → nominal rate, as sysfs and ibstat print the port's rate (EDR: 4X 25.78125 → 100).
_NOMINAL = {2.5: 2.5, 5.0: 5.0, 10.0: 10.0, 14.0625: 14.0, 25.78125: 25.0, 53.125: 50.0, 106.25: 100.0,
            212.5: 200.0}


def parse(text: str) -> list[Sample]:
    out = Collector(NAME)
    node: tuple[str, str, str | None, int] | None = None  # (type, description, switch GUID, header line)
    # description → the header line of the node that printed it first. The ports under one header are one node's
    # (a dual-port CA's two ports, both `gpu01 HCA-1`) and keep the plain description, so that each matches the
    # far end the switch side names (`gpu01 HCA-1|2`); only another node printing the same description gets GUIDs.
    names = NodeNames()
    line_mode: _LineMode | None = None
    for line_no, line in content_lines(text, NAME, out):
        if _DISCOVERY_FAILED.search(line):
            out.add(tool_error(HOST, line.strip()), line_no, line)
            continue
        if match := _LINE.match(line):
            line_mode = line_mode or _LineMode(text)
            kind, key, desc = line_mode.node(match, line_no)
            name = names.name(desc, key, match["guid"].lower())
            entity = f"{name}/{int(match['port'])}"
            out.extend(_port_samples(entity, kind, match, line_no, line), line_no, line)
            continue
        if match := _SWITCH.match(line):
            node = ("Switch", match["desc"].strip(), match["guid"], line_no)
            continue
        if match := _CA.match(line):
            node = (match["type"], match["desc"].strip(), None, line_no)
            continue
        match = _PORT.match(line)
        if not match:
            raise ParseError(NAME, line_no, line)
        if node is None:
            raise ParseError(NAME, line_no, line, "port line before any `Switch:` or `CA:` header")
        kind, desc, switch_guid, header = node
        guid = switch_guid or match["guid"] or ""
        name = names.name(desc, header, guid)
        entity = f"{name}/{int(match['port'])}"
        out.extend(_port_samples(entity, kind, match, line_no, line), line_no, line)
    return out.samples


class _LineMode:
    """What `--line` does not print: whether a line's node is a switch, and which lines are one CA's ports.

    A switch's ports all carry the switch's GUID, a CA's each its own: a GUID seen with more than one port number
    (as the local end or as a far end) is a switch's. A node of which only one port shows (a switch read with `-d`,
    down ports only) is taken for a CA. A CA's ports follow one another, port numbers rising, under one
    description: such a run is one node, named as the default layout names it (its header)."""

    def __init__(self, text: str) -> None:
        ports: dict[str, set[str]] = {}
        for guid, port in _GUID_PORT.findall(text):
            ports.setdefault(guid.lower(), set()).add(port)
        self.switches = {guid for guid, seen in ports.items() if len(seen) > 1}
        self.last: tuple[str, int, object] | None = None  # the previous CA line: description, port, node key

    def node(self, match: re.Match[str], line_no: int) -> tuple[str, object, str]:
        """(`Switch` or `CA`, a key naming the node, the description) of one line."""
        guid, desc, port = match["guid"].lower(), match["desc"].strip(), int(match["port"])
        if guid in self.switches:
            self.last = None
            return "Switch", guid, desc
        last = self.last
        key = last[2] if last is not None and last[0] == desc and port > last[1] else ("line", line_no)
        self.last = (desc, port, key)
        return "CA", key, desc


def _port_samples(entity: str, kind: str, match: re.Match, line_no: int, line: str) -> list[Sample]:
    link = match["link"]
    found = _UP.match(link) or _UP_UNKNOWN.match(link) or _DOWN.match(link)
    if not found:
        raise ParseError(NAME, line_no, line, f"unrecognised link state {link.strip()!r}")
    samples = [Sample(entity, "ib_link_state", text=found["state"], raw_key="PortState"),
               Sample(entity, "ib_link_phys_state", text=found["phys"], raw_key="PortPhysicalState")]
    if "other" in found.groupdict():
        samples.append(Sample(entity, "ib_link_speed", text=found["other"], raw_key="LinkSpeedActive"))
    elif "width" in found.groupdict():
        lane = float(found["speed"])
        nominal = 10.0 if (found["note"] or "").upper() == "FDR10" else _NOMINAL.get(lane, lane)
        samples.append(Sample(entity, "ib_link_rate_gbps", int(found["width"]) * nominal,
                              raw_key="LinkWidthActive x LinkSpeedActive"))
    remote = match["remote"]
    if _NO_REMOTE.match(remote):
        return samples
    far = _REMOTE.match(remote)
    if not far:
        raise ParseError(NAME, line_no, line, f"unrecognised far end {remote!r}")
    samples.append(Sample(entity, "ib_link_neighbor", text=f"{far['desc'].strip()}|{int(far['port'])}", raw_key=kind))
    if far["rguid"]:  # printed in line mode (and by ibqueryerrors): tells apart far ends of one description
        samples.append(Sample(entity, "ib_link_neighbor_guid", text=far["rguid"].lower(), raw_key=kind))
    capable = " ".join(far["capable"].split())
    if capable:
        samples.append(Sample(entity, "ib_link_capable", text=capable, raw_key="max"))
    return samples


far_end_samples = _port_samples  # ibqueryerrors' `Link info` lines print a port's link exactly as iblinkinfo does
