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
Caveats: the default (node by node) layout only; `--line` output is refused (ParseError on its first line), as is
any line that is neither a node header nor a port line. The lane rate printed is the signalling rate (25.78125 for
EDR, 53.125 HDR, 106.25 NDR); the nominal rate is used so that the figure matches the host's sysfs rate. A CA's node
description is `<hostname> <device>` by default (`ibstat`'s "Node description"; sites may change it).
`Failed to open ...` and a failed fabric discovery become `tool_error`. No real capture is in the corpus: the
fixtures follow iblinkinfo.c of infiniband-diags (print_node_header, print_port) and its manual page.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._ibinfo import Collector, content_lines
from rdmatool.parsers._samples import HOST, tool_error

NAME = "iblinkinfo"

_SWITCH = re.compile(r"^\s*Switch:\s+(?P<guid>0x[0-9a-fA-F]+)\s+(?P<desc>.*):\s*$")
_CA = re.compile(r"^\s*(?P<type>CA|Router):\s+(?P<desc>.*):\s*$")
_PORT = re.compile(
    r"^\s*(?:(?P<guid>0x[0-9a-fA-F]+)\s+)?(?P<lid>\d+)\s+(?P<port>\d+)\[\s*(?P<ext>\d*)\s*\]\s+"
    r"==\((?P<link>.*?)\)(?:\s*\(HOQ:[^)]*\))?==>\s*(?P<remote>.*?)\s*$")
_UP = re.compile(r"^\s*(?P<width>\d+)X\s+(?P<speed>\d+(?:\.\d+)?)\s+Gbps(?:\s+\((?P<note>[^)]*)\))?\s+"
                 r"(?P<state>\S+)/\s*(?P<phys>\S+)\s*$")
_DOWN = re.compile(r"^\s*(?P<state>\S+)/\s*(?P<phys>\S+)\s*$")
_REMOTE = re.compile(r'^(?:0x[0-9a-fA-F]+\s+)?(?P<lid>\d+)\s+(?P<port>\d+)\[\s*(?P<ext>\d*)\s*\]\s+"(?P<desc>.*)"\s+'
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
    owner_of: dict[str, int] = {}
    for line_no, line in content_lines(text, NAME, out):
        if _DISCOVERY_FAILED.search(line):
            out.add(tool_error(HOST, line.strip()), line_no, line)
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
        name = desc if owner_of.setdefault(desc, header) == header else f"{desc} ({guid})"
        entity = f"{name}/{int(match['port'])}"
        out.extend(_port_samples(entity, kind, match, line_no, line), line_no, line)
    return out.samples


def _port_samples(entity: str, kind: str, match: re.Match, line_no: int, line: str) -> list[Sample]:
    link = match["link"]
    found = _UP.match(link) or _DOWN.match(link)
    if not found:
        raise ParseError(NAME, line_no, line, f"unrecognised link state {link.strip()!r}")
    samples = [Sample(entity, "ib_link_state", text=found["state"], raw_key="PortState"),
               Sample(entity, "ib_link_phys_state", text=found["phys"], raw_key="PortPhysicalState")]
    if "width" in found.groupdict():
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
    samples.append(Sample(entity, "ib_link_neighbor", text=f"{far['desc']}|{int(far['port'])}", raw_key=kind))
    capable = " ".join(far["capable"].split())
    if capable:
        samples.append(Sample(entity, "ib_link_capable", text=capable, raw_key="max"))
    return samples
