"""The fabric's cabling: which host NIC reaches which switch port.

One vocabulary for every source of cabling (LLDP seen from either end, an operator's expected-topology file,
InfiniBand's `iblinkinfo`, inventory `links`), so the topology rules, the gate's pair schedule and target
selection all read the same values.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    """One cable: a host port and the switch port at its other end. `source` says who told us (lldp,
    topology-file, iblinkinfo, inventory); `nic` is the host's RDMA device or netdev as the host names it."""

    host: str
    nic: str
    switch: str
    switch_port: str = ""
    source: str = ""


def placement(links: Iterable[Link]) -> dict[str, dict[str, str]]:
    """host -> nic -> switch: what a pair schedule needs to know about the cabling."""
    out: dict[str, dict[str, str]] = {}
    for link in links:
        out.setdefault(link.host, {})[link.nic] = link.switch
    return out


@dataclass(frozen=True)
class SwitchCable:
    """One switch's LLDP sighting of another switch of the bundle (a leaf's uplink, a peer link, an MLAG link):
    its port and the peer's port, both as the switch that owns the port names it."""

    switch: str
    port: str
    peer: str
    peer_port: str
