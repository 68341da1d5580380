"""`ibnetdiscover [-p]`: every node of the InfiniBand subnet (switches, CAs, routers), their GUIDs and LIDs, and
which port is cabled to which, with each link's width and speed.

Command: `ibnetdiscover -p` (the ports report, a line per port) or `ibnetdiscover` (the topology file, a block per
node; `-g` grouping and `-f` full information accepted). Emits per port (entity `<node description>/<port>` as
iblinkinfo names it, e.g. `MF0;ib-leaf01:MQM9790/U1/65`; a description a second node shares gets that node's GUID,
`<description> (0x...)/<port>`, see rdmatool.parsers._ibsubnet): `ib_node_type` (`Switch`, `CA`, `Router`),
`ib_port_guid`, `ib_lid` (a switch port: the switch's LID); the topology file adds `ib_node_guid`. A cabled port
also gets `ib_link_width` (`4X`, `2X` for a split port), `ib_link_speed` (`NDR`, `FDR10`, `???` when the tool
could not tell), `ib_link_rate_gbps` (lanes x nominal lane rate, only when both are known), `ib_link_neighbor`
(text `<far description>|<far port>`, raw_key the local node's type, as iblinkinfo) and `ib_link_neighbor_guid`
(the far end's GUID: a CA's port GUID, a switch's GUID). A port of the ports report with no far end (not cabled,
or down) gets only its type, GUID and LID: ibnetdiscover prints no state, and the width and speed of a port that is
not up are not to be read (IBTA C14-24.2.1).
Examples:
    SW    12 65 0xb83fd20300a1b2c0 2x NDR - CA   101  1 0xb83fd20300000011 ( 'MF0;ib-leaf01' - 'gpu01 mlx5_0' )
    [65]	"H-b83fd20300000010"[1](b83fd20300000011) 		# "gpu01 mlx5_0" lid 101 2xNDR
    -> Sample("MF0;ib-leaf01/65", "ib_link_rate_gbps", 200.0, raw_key="ibnetdiscover"), ...
Caveats: a LID is unique only within its subnet: the caller keeps which subnet a sweep read. Split ports are
plain port numbers (65-128 on a 64-port switch split in two). The ports report quotes descriptions (older releases
did not: a port line ending in a bare description is read as unquoted). `#` comments (the file's header), the
`vendid=`, `devid=`, `sysimgguid=` lines, the grouping's chassis lines and the command line are skipped;
`ibwarn:` lines too; `iberror:` lines, `discover failed` and the shared tool failures become `tool_error` (entity
`host`). A port line before any node header, a diff (`--diff`, lines starting `<` or `>`) and any other line are a
ParseError. An empty output is a ParseError (`rdmatool parse` exits 2): a subnet always has the node asked from.
The fixtures follow ibnetdiscover.c of infiniband-diags (out_switch_port, out_ca_port, dump_ports_report).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import refuse_empty
from rdmatool.parsers._ibinfo import Collector, content_lines
from rdmatool.parsers._ibsubnet import NodeNames, description, guid, width_speed
from rdmatool.parsers._samples import HOST, tool_error

NAME = "ibnetdiscover"

_TYPES = {"SW": "Switch", "CA": "CA", "RT": "Router", "Switch": "Switch", "Ca": "CA", "Rt": "Router"}
_WIDTH_SPEED = r"(?P<width>\d+x|\?\?)(?P<speed>[A-Za-z0-9]+|\?\?\?)"
# -p: `%2s %5d %2d 0x%016x %s %s` then ` - %2s %5d %2d 0x%016x ( '%s' - '%s' )` or `%36s'%s'`.
_REPORT = re.compile(
    r"^\s*(?P<type>SW|CA|RT)\s+(?P<lid>\d+)\s+(?P<port>\d+)\s+(?P<guid>0x[0-9a-fA-F]+)\s+"
    r"(?P<width>\d+x|\?\?)\s+(?P<speed>[A-Za-z0-9]+|\?\?\?)\s+"
    r"(?:-\s+(?P<rtype>SW|CA|RT)\s+(?P<rlid>\d+)\s+(?P<rport>\d+)\s+(?P<rguid>0x[0-9a-fA-F]+)\s+"
    r"\( '(?P<desc>.*)' - '(?P<rdesc>.*)' \)|'(?P<alone>.*)'|(?!-\s)(?P<bare>[^'\s].*?))\s*$"
)
_NODE = re.compile(
    r"^\s*(?P<type>Switch|Ca|Rt)\s+(?P<ports>\d+)\s+\"[SHR?]-(?P<guid>[0-9a-fA-F]+)\"\s*#\s*\"(?P<desc>.*)\""
    r"(?:\s+(?:enhanced|base)\s+port\s+0\s+lid\s+(?P<lid>\d+)\s+lmc\s+\d+)?(?:\s+\(scp\))?\s*$"
)
_NODE_GUID = re.compile(r"^\s*(?:switch|ca|rt)guid=0x(?P<guid>[0-9a-fA-F]+)(?:\((?P<port>[0-9a-fA-F]+)\))?")
_PORT = re.compile(
    r"^\s*\[(?P<port>\d+)\](?:\[ext \d+\])?(?:\((?P<pguid>[0-9a-fA-F]+)\))?\s+"
    r"\"(?P<rtype>[SHR?])-(?P<rnode>[0-9a-fA-F]+)\"\[(?P<rport>\d+)\](?:\[ext \d+\])?"
    r"(?:\s*\((?P<rguid>[0-9a-fA-F]+)\))?\s*#\s*(?:lid\s+(?P<lid>\d+)\s+lmc\s+\d+\s+)?"
    rf"\"(?P<rdesc>.*)\"\s+lid\s+\d+\s+{_WIDTH_SPEED}(?:\s+s=\d+\s+w=\d+\s+v=\d+)?(?:\s+slot \d+|\s+\(scp\))?\s*$"
)
_SKIP = re.compile(r"^\s*(?:vendid=|devid=|sysimgguid=|Chassis\s+\d+|Hostname:|Non-Chassis Nodes\s*$)")
_ERROR = re.compile(r"\biberror:|\bdiscover failed\b", re.IGNORECASE)


@dataclass
class _Node:
    kind: str
    desc: str
    shared: bool  # another node printed this description first: the ports' names carry a GUID
    node_guid: str
    port_guid: str | None  # a switch's, from its `switchguid=` line; a CA's are on its port lines
    lid: int | None


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "ibnetdiscover", text)
    out = Collector(NAME)
    names = NodeNames()
    node: _Node | None = None
    pending: tuple[str, str | None] | None = None  # the `switchguid=` line before a node header
    last_ca: tuple[str, int, object] | None = None  # -p: (description, port, key) of the previous CA line
    for line_no, line in content_lines(text, NAME, out):
        if _ERROR.search(line):
            out.add(tool_error(HOST, line.strip()), line_no, line)
        elif match := _REPORT.match(line):
            last_ca = _report_line(out, names, match, last_ca, (line_no, line))
        elif match := _NODE_GUID.match(line):
            pending = (match["guid"], match["port"])
        elif match := _NODE.match(line):
            node = _node(names, match, pending, line_no)
            pending = None
        elif match := _PORT.match(line):
            if node is None:
                raise ParseError(NAME, line_no, line, "port line before any `Switch` or `Ca` node line")
            out.extend(_topology_port(node, match), line_no, line)
        elif not _SKIP.match(line):
            raise ParseError(NAME, line_no, line)
    return out.samples


def _node(names: NodeNames, match: re.Match[str], pending: tuple[str, str | None] | None, line_no: int) -> _Node:
    kind = _TYPES[match["type"]]
    node_guid = guid(match["guid"])
    port_guid = guid(pending[1]) if pending is not None and pending[1] else None
    desc = description(match["desc"])
    lid = int(match["lid"]) if match["lid"] is not None else None
    shared = names.name(desc, node_guid, node_guid) != desc
    return _Node(kind, desc, shared, node_guid, port_guid, lid)


def _topology_port(node: _Node, match: re.Match[str]) -> list[Sample]:
    port_guid = guid(match["pguid"]) if match["pguid"] else node.port_guid
    # as iblinkinfo names them: a switch's ports by the switch's GUID, a CA's each by its own
    name = f"{node.desc} ({port_guid or node.node_guid})" if node.shared else node.desc
    entity = f"{name}/{int(match['port'])}"
    lid = int(match["lid"]) if match["lid"] is not None else node.lid
    samples = [Sample(entity, "ib_node_type", text=node.kind, raw_key=NAME),
               Sample(entity, "ib_node_guid", text=node.node_guid, raw_key=NAME)]
    if port_guid:
        samples.append(Sample(entity, "ib_port_guid", text=port_guid, raw_key=NAME))
    if lid is not None:
        samples.append(Sample(entity, "ib_lid", lid, raw_key=NAME))
    samples.extend(width_speed(entity, match["width"], match["speed"], NAME))
    far_guid = guid(match["rguid"] or match["rnode"])
    samples.append(Sample(entity, "ib_link_neighbor", text=f"{description(match['rdesc'])}|{int(match['rport'])}",
                          raw_key=node.kind))
    samples.append(Sample(entity, "ib_link_neighbor_guid", text=far_guid, raw_key=node.kind))
    return samples


def _report_line(
    out: Collector, names: NodeNames, match: re.Match[str], last_ca: tuple[str, int, object] | None,
    where: tuple[int, str],
) -> tuple[str, int, object] | None:
    """The samples of one line of the ports report; returns what tells the next CA line whether it is the same CA
    (a CA's ports come one after another, highest first, each with its own GUID and LID)."""
    kind = _TYPES[match["type"]]
    desc = description(next(d for d in (match["desc"], match["alone"], match["bare"]) if d is not None))
    port, port_guid = int(match["port"]), guid(match["guid"])
    key: object = port_guid
    if kind != "Switch":
        same = last_ca is not None and last_ca[0] == desc and port < last_ca[1]
        key = last_ca[2] if same and last_ca is not None else where[0]
    name = names.name(desc, key, port_guid)
    entity = f"{name}/{port}"
    samples = [Sample(entity, "ib_node_type", text=kind, raw_key=NAME),
               Sample(entity, "ib_port_guid", text=port_guid, raw_key=NAME),
               Sample(entity, "ib_lid", int(match["lid"]), raw_key=NAME)]
    if match["rtype"] is not None:
        samples.extend(width_speed(entity, match["width"], match["speed"], NAME))
        samples.append(Sample(entity, "ib_link_neighbor", text=f"{description(match['rdesc'])}|{int(match['rport'])}",
                              raw_key=kind))
        samples.append(Sample(entity, "ib_link_neighbor_guid", text=guid(match["rguid"]), raw_key=kind))
    out.extend(samples, *where)
    return (desc, port, key) if kind != "Switch" else None
