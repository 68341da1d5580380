"""A switch port as both ends of its cable spell it.

LLDP, the switch's own counters and a topology file name one switch port differently (`Ethernet1/1`, `Eth1/1`,
`et1/1`); the cabling judge (topology) and the rules engine's cross-cable `explains_far_end` (rules) must find it
under each spelling, and they are siblings that may not import each other, so the one spelling lives here.
"""

from __future__ import annotations

import re

_PORT_PREFIX = re.compile(r"^(?:ethernet|eth|et)", re.IGNORECASE)


def port_key(port: str) -> str:
    """A switch port as both ends may spell it (`Ethernet1/1`, `Eth1/1`, `et1/1` → `1/1`)."""
    return _PORT_PREFIX.sub("", str(port).strip()).lower()
