"""Shared pieces of the subnet-sweep parsers (ibnetdiscover, ibqueryerrors, iblinkinfo): how a node and its ports
are named, and a link's width and speed read into samples. No I/O here.

Naming, the one rule all of them follow (iblinkinfo set it): a port is `<node description>/<port number>`, the
description stripped of the blanks around it (iblinkinfo's line mode right-justifies it in 30 columns, so blanks at
its ends cannot be told from padding) with the runs of spaces inside kept (firmware defaults such as `MT4123
ConnectX6   Mellanox Technologies` keep theirs, so every tool spells the name alike). The first node to print a
description keeps it plain; another node printing the same description (several switches of one name) gets its
GUID as well: `<description> (0x...)/<port>`. Every parser also emits the GUIDs, which tell nodes apart whatever
the order the tools list them in.
"""

from __future__ import annotations

from rdmatool.model import Sample

# Nominal lane rate per speed name, as sysfs and ibstat count a port's rate (EDR: 4X x 25 = 100 Gb/s).
LANE_GBPS = {"SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.0, "FDR": 14.0, "EDR": 25.0, "HDR": 50.0,
             "NDR": 100.0, "XDR": 200.0}


def description(raw: str) -> str:
    """A node description as every sweep parser names it: the blanks around it dropped, the ones inside kept."""
    return raw.strip()


def guid(raw: str) -> str:
    """A GUID spelled as iblinkinfo prints it: `0x` and 16 lower-case hex digits (`b83fd2...` -> `0xb83fd2...`)."""
    return f"0x{int(raw, 16):016x}"


class NodeNames:
    """The name of each node's ports: the first node to print a description keeps it, another one of that
    description is told apart by its GUID (see the module's docstring)."""

    def __init__(self) -> None:
        self._owner: dict[str, object] = {}

    def name(self, desc: str, node: object, node_guid: str) -> str:
        """`desc` for the first node (`node`: any key that identifies it) to claim it, `desc (guid)` for others."""
        return desc if self._owner.setdefault(desc, node) == node else f"{desc} ({node_guid})"


def width_speed(entity: str, width: str, speed: str, raw_key: str) -> list[Sample]:
    """`ib_link_width`, `ib_link_speed` and, when both are known, `ib_link_rate_gbps` (lanes x nominal lane rate).

    `width` as printed (`4x`, `2x` for a split port, `??` unknown), `speed` a name (`NDR`, `FDR10`, `???`)."""
    samples = []
    lanes = width[:-1] if width[-1:] in "xX" and width[:-1].isdigit() else None
    if lanes is not None:
        samples.append(Sample(entity, "ib_link_width", text=f"{lanes}X", raw_key=raw_key))
    samples.append(Sample(entity, "ib_link_speed", text=speed, raw_key=raw_key))
    lane = LANE_GBPS.get(speed.upper())
    if lanes is not None and lane is not None:
        samples.append(Sample(entity, "ib_link_rate_gbps", int(lanes) * lane, raw_key=raw_key))
    return samples
