"""Which RDMA port a host tests with: parse the output of commands.PERF_DISCOVER_SCRIPT, then choose one port per host
(and, for a rail-aligned schedule, one per NIC of that port's link layer: `rail_ports`).

RoCE needs a RoCE v2 GID carrying an IPv4 address (its index is perftest's `-x`, the address is where the client
dials); InfiniBand runs without `-x` and dials the IPoIB netdev's IPv4, else the inventory address (perftest's
out-of-band exchange only needs some TCP path between the two hosts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rdmatool.perf.model import HostInfo

_SYSFS = re.compile(
    r"^/sys/class/infiniband/(?P<dev>[^/:]+)/ports/(?P<port>\d+)/"
    r"(?P<key>link_layer|state|rate|gid_attrs/types/\d+|gids/\d+|gid_attrs/ndevs/\d+):(?P<value>.*)$"
)
_IPV4_MAPPED = re.compile(r"^0000:0000:0000:0000:0000:ffff:([0-9a-f]{4}):([0-9a-f]{4})$", re.IGNORECASE)
_IP_ADDR = re.compile(r"\binet (\d{1,3}(?:\.\d{1,3}){3})/\d+")
_RATE = re.compile(r"^\s*([\d.]+)\s*Gb/sec")


@dataclass
class PortFacts:
    device: str
    port: int
    link_layer: str = ""
    active: bool = False
    state: str = ""  # as sysfs prints it (`1: DOWN`, `4: ACTIVE`)
    rate_gbps: float | None = None
    gid_types: dict[int, str] = field(default_factory=dict)
    gids: dict[int, str] = field(default_factory=dict)
    gid_ndevs: dict[int, str] = field(default_factory=dict)

    def roce_v2_ipv4(self) -> tuple[int, str, str | None] | None:
        """(GID index, IPv4, netdev) of the lowest-index RoCE v2 GID that carries an IPv4 address."""
        for index in sorted(self.gid_types):
            if self.gid_types[index].strip().lower() != "roce v2":
                continue
            mapped = _IPV4_MAPPED.match(self.gids.get(index, "").strip())
            if mapped:
                value = int(mapped.group(1) + mapped.group(2), 16)
                ipv4 = ".".join(str((value >> shift) & 0xFF) for shift in (24, 16, 8, 0))
                return index, ipv4, self.gid_ndevs.get(index) or None
        return None


def parse(text: str) -> tuple[list[PortFacts], dict[str, list[str]], dict[str, list[str]]]:
    """(ports, device -> netdevs, netdev -> IPv4 addresses) from the discovery script's output."""
    ports: dict[tuple[str, int], PortFacts] = {}
    netdevs: dict[str, list[str]] = {}
    ipv4: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        match = _SYSFS.match(line)
        if match:
            key = (match["dev"], int(match["port"]))
            facts = ports.setdefault(key, PortFacts(*key))
            name, value = match["key"], match["value"].strip()
            if name == "link_layer":
                facts.link_layer = value
            elif name == "state":
                facts.active = "ACTIVE" in value.upper()
                facts.state = value
            elif name == "rate":
                rate = _RATE.match(value)
                facts.rate_gbps = float(rate.group(1)) if rate else None
            else:
                index = int(name.rsplit("/", 1)[1])
                table = {"types": facts.gid_types, "gids": facts.gids, "ndevs": facts.gid_ndevs}[
                    name.split("/")[-2] if name.startswith("gid_attrs") else "gids"]
                table[index] = value
            continue
        if line.startswith("netdev:"):
            _, dev, netdev = line.split(":", 2)
            netdevs.setdefault(dev, []).append(netdev)
        elif line.startswith("ipv4:"):
            _, netdev, rest = line.split(":", 2)
            found = _IP_ADDR.search(rest)
            if found:
                ipv4.setdefault(netdev, []).append(found.group(1))
    return sorted(ports.values(), key=lambda p: (p.device, p.port)), netdevs, ipv4


def candidates(name: str, inventory_address: str, text: str) -> list[HostInfo]:
    """Every usable (active) port of a host as a HostInfo, RoCE ports with an IPv4 RoCE v2 GID, IB ports."""
    ports, netdevs, ipv4 = parse(text)
    out: list[HostInfo] = []
    for p in ports:
        if not p.active:
            continue
        if p.link_layer == "Ethernet":
            roce = p.roce_v2_ipv4()
            if roce is None:
                continue  # no RoCE v2 IPv4 GID: nothing to give perftest as -x
            index, address, netdev = roce
            out.append(HostInfo(name, p.device, p.port, "Ethernet", p.rate_gbps, index, address, "gid",
                                netdev or next(iter(netdevs.get(p.device, [])), None)))
        elif p.link_layer == "InfiniBand":
            netdev = next(iter(netdevs.get(p.device, [])), None)
            address = next(iter(ipv4.get(netdev, [])), None) if netdev else None
            out.append(HostInfo(name, p.device, p.port, "InfiniBand", p.rate_gbps, None,
                                address or inventory_address, "netdev" if address else "inventory", netdev))
    return out


def unusable(text: str) -> dict[str, tuple[str, str]]:
    """device -> (link layer, why perftest cannot run on it) for each RDMA device of a host none of whose ports
    `candidates` would take: not active (`port 1 DOWN`), or RoCE without a RoCE v2 GID carrying an IPv4 address."""
    ports, _, _ = parse(text)
    why: dict[str, tuple[str, str]] = {}
    usable = set()
    for p in ports:
        if not p.active:
            state = p.state.partition(":")[2].strip() or p.state or "not active"
            why.setdefault(p.device, (p.link_layer, f"port {p.port} {state}"))
        elif p.link_layer == "Ethernet" and p.roce_v2_ipv4() is None:
            why.setdefault(p.device, (p.link_layer, f"port {p.port}: no RoCE v2 GID with an IPv4 address"))
        elif p.link_layer in ("Ethernet", "InfiniBand"):
            usable.add(p.device)
    return {device: found for device, found in why.items() if device not in usable}


def choose(per_host: dict[str, list[HostInfo]], device: str | None = None,
           link_layer: str | None = None) -> dict[str, HostInfo | str]:
    """One port per host, the same link layer across the fleet: `device` if given, else `link_layer` if given,
    else the link layer every host has (RoCE first), else each host's first RoCE or IB port.
    A host without a fitting port maps to an error message instead."""
    if link_layer is None and device is None:
        have = [{c.link_layer for c in cands} for cands in per_host.values() if cands]
        for layer in ("Ethernet", "InfiniBand"):
            if have and all(layer in h for h in have):
                link_layer = layer
                break
    chosen: dict[str, HostInfo | str] = {}
    for name, cands in per_host.items():
        fitting = [c for c in cands if (device is None or c.device == device)
                   and (link_layer is None or c.link_layer == link_layer)]
        if not fitting and device is None and link_layer is None:
            fitting = sorted(cands, key=lambda c: c.link_layer != "Ethernet")
        if fitting:
            chosen[name] = fitting[0]
        else:
            wanted = " ".join(x for x in (device, link_layer) if x) or "RDMA"
            found = ", ".join(f"{c.device}/{c.ib_port} {c.link_layer}" for c in cands) or "none"
            chosen[name] = f"{name}: no active {wanted} port usable for perftest (found: {found})"
    return chosen


def rail_ports(cands: list[HostInfo], chosen: HostInfo) -> dict[str, HostInfo]:
    """device -> the port a rail-aligned schedule tests on each NIC of the host that shares the chosen port's link
    layer (its first usable port): NIC k of one host runs against NIC k of another, the fleet's layer throughout."""
    out: dict[str, HostInfo] = {}
    for c in cands:
        if c.link_layer == chosen.link_layer:
            out.setdefault(c.device, c)
    return out
