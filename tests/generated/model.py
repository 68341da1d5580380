"""Random but realistic fabrics, described as data: what the hosts and switches of a site are, how they are cabled
and how fast their counters move. The renderers (host_text, switch_text) turn a Fabric into the tools' own outputs
and bundle_writer lays them out in the public bundle format (docs/bundle-format.md). Nothing here comes from
tests/fabric: these fabrics are written from the format and the real outputs' shapes, so that the diagnosis is judged
against data its own simulator did not shape.

Counters are `Counter(base, rate)`: the value read at time t (seconds after the first snapshot) is base + rate·t.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

NOSES = ("sonic", "cumulus", "onyx", "eos", "nxos")
# (RoCE priority, RoCE DSCP, CNP priority, CNP DSCP): the class a site chose. The default mlx5 DSCP map sends DSCP d
# to priority d >> 3, so every one of these is reachable without a custom DSCP map on the NIC.
SITE_CLASSES = ((3, 26, 6, 48), (4, 34, 6, 48), (5, 40, 7, 56), (3, 24, 6, 48))
RATES_GBPS = (100, 200, 400)


@dataclass
class Counter:
    base: float
    rate: float = 0.0

    def at(self, t: float) -> int:
        return int(self.base + self.rate * t)


@dataclass(frozen=True)
class Site:
    roce_priority: int
    roce_dscp: int
    cnp_priority: int
    cnp_dscp: int

    def config(self) -> dict:
        return {"roce_priority": self.roce_priority, "roce_dscp": self.roce_dscp,
                "cnp_priority": self.cnp_priority, "cnp_dscp": self.cnp_dscp}


@dataclass
class Rail:
    """One RDMA port of a host: its verbs device, netdev (RoCE) and the switch port it is cabled to."""

    device: str
    netdev: str
    rate_gbps: int
    leaf: str = ""
    leaf_port: str = ""
    state: str = "Active"
    phys: str = "LinkUp"
    mtu: int = 4096
    width: str = "4X"
    # the QoS a host's NIC is set to: (trust, {dscp: priority}, lossless priorities, np/rp enabled priorities)
    pfc: tuple[int, ...] = ()
    trust: str = "dscp"
    dscp_map: dict[int, int] = field(default_factory=dict)
    np_enabled: tuple[int, ...] = tuple(range(8))
    rp_enabled: tuple[int, ...] = tuple(range(8))
    counters: dict[str, Counter] = field(default_factory=dict)
    fw: str = ""
    lldp_seen: bool = True  # the host's lldpd sees its switch
    all_priorities: bool = False  # ethtool -S lists every priority's counters (newer mlx5), not only those that moved


@dataclass
class Host:
    name: str
    role: str  # compute | storage
    address: str
    rails: list[Rail] = field(default_factory=list)
    load1: float = 4.0
    psi_io: float = 0.1
    psi_cpu: float = 0.5
    gpus: int = 8
    gpu_util: float = 93.0
    mgmt_lldp: bool = False  # the management port's LLDP neighbour (an out-of-band switch) is listed too


@dataclass
class SwitchPort:
    name: str  # the NOS's own name (Ethernet0, swp1, Eth1/1, Ethernet1/1)
    alias: str = ""  # SONiC's alias column (etp1, Eth1/1 ...), what its LLDP advertises as the port ID
    speed_gbps: int = 400
    up: bool = True
    peer: str = ""  # the device at the other end (a host or a switch name)
    peer_port: str = ""  # its port as that device itself names it
    lldp_seen: bool = True  # this switch's LLDP sees the peer
    pfc_on: bool = True  # the port's own PFC state, where the NOS keeps one per port
    counters: dict[str, Counter] = field(default_factory=dict)
    width: str = "4X"  # an InfiniBand link's width as the subnet sweep prints it (a degraded cable trains at 1X/2X)
    gone_last: bool = False  # an InfiniBand cable the last sweep no longer sees (pulled during the window)


@dataclass
class Switch:
    name: str
    nos: str
    role: str  # leaf | spine
    address: str
    ports: list[SwitchPort] = field(default_factory=list)
    pfc: tuple[int, ...] = ()
    ecn_min: int = 150_000
    ecn_max: int = 1_000_000
    ecn_prob: int = 20
    ecn_on: bool = True
    chassis: bool = False  # a multi-ASIC SONiC box: its counters list backplane ports (Ethernet-BP*) with N/A
    # InfiniBand: the node description the switch answers with (`MF0;leaf01:MQM8700/U1`, a firmware default that
    # several switches share, or a plain name), its GUID and LID
    desc: str = ""
    guid: str = ""
    lid: int = 0

    def port(self, name: str) -> SwitchPort:
        return next(p for p in self.ports if p.name == name)


@dataclass
class Fabric:
    seed: int
    link_layer: str  # Ethernet (RoCE) | InfiniBand
    site: Site
    hosts: list[Host]
    switches: list[Switch]
    snapshots: int
    interval_s: float
    fmt: int  # bundle format /1, /2, /3
    load: float  # 0 idle .. 1 busy
    fw: str
    pairs: list[tuple[str, str, str, float]] = field(default_factory=list)  # client, server, device, Gb/s
    perf_writer: str = "rdmatool"  # how the per-peer perftest outputs are named: rdmatool | peer | command
    domain: str = ""  # the DNS domain lldpd sends after each system name (`gpu01.pod1.example.net`), or none

    hosts_run_lldpd: bool = True  # many sites run no LLDP agent on hosts: only the switches' LLDP shows the cabling
    upper_switch_names: bool = False  # switches whose hostname is set in capitals (LEAF01) while the inventory has leaf01
    # InfiniBand: the link speed's name (EDR, HDR, NDR, FDR10), the subnet managers sminfo shows as
    # (lid, guid, priority, state 3 master / 2 standby), and the LID of each host rail
    ib_speed: str = ""
    sms: list[tuple[int, str, int, int]] = field(default_factory=list)
    ca_lids: dict[tuple[str, str], int] = field(default_factory=dict)
    ca_style: str = "plain"  # the CAs' node descriptions: plain `gpu01 mlx5_0`, fqdn, or padded inside the quotes

    def lldp_name(self, name: str) -> str:
        """A device's name as its LLDP advertises it: the hostname, fully qualified where the site's are."""
        if self.upper_switch_names and any(s.name == name for s in self.switches):
            name = name.upper()
        return f"{name}.{self.domain}" if self.domain else name

    def switch(self, name: str) -> Switch:
        return next(s for s in self.switches if s.name == name)

    def host(self, name: str) -> Host:
        return next(h for h in self.hosts if h.name == name)

    def describe(self) -> str:
        noses = sorted({s.nos for s in self.switches})
        rails = len(self.hosts[0].rails) if self.hosts else 0
        return (f"seed {self.seed}: {self.link_layer}, site {self.site.roce_priority}/{self.site.roce_dscp}, "
                f"{sum(s.role == 'spine' for s in self.switches)} spines, "
                f"{sum(s.role == 'leaf' for s in self.switches)} leaves ({','.join(noses) or 'unmanaged'}), "
                f"{len(self.hosts)} hosts x {rails} rails, {self.snapshots} snapshots, format /{self.fmt}, "
                f"load {self.load:.2f}")


def port_names(nos: str, count: int, rng: random.Random) -> list[tuple[str, str]]:
    """(name, alias) of `count` front-panel ports as the NOS spells them, with the variation real switches show."""
    if nos == "sonic":
        step = rng.choice((4, 8))
        style = rng.choice(("etp", "eth", "fortyGigE"))
        out = []
        for i in range(count):
            alias = {"etp": f"etp{i + 1}", "eth": f"Eth1/{i + 1}", "fortyGigE": f"fortyGigE0/{i * step}"}[style]
            out.append((f"Ethernet{i * step}", alias))
        return out
    if nos == "cumulus":
        if rng.random() < 0.3:  # breakout cables: four ports per cage
            return [(f"swp{1 + i // 4}s{i % 4}", "") for i in range(count)]
        return [(f"swp{i + 1}", "") for i in range(count)]
    if nos == "onyx":
        if rng.random() < 0.25:  # split ports: Eth1/1/1 .. Eth1/1/2
            return [(f"Eth1/{1 + i // 2}/{1 + i % 2}", "") for i in range(count)]
        return [(f"Eth1/{i + 1}", "") for i in range(count)]
    if nos == "eos":
        if rng.random() < 0.5:
            return [(f"Ethernet{i + 1}/1", "") for i in range(count)]
        return [(f"Ethernet{i + 1}", "") for i in range(count)]
    return [(f"Ethernet1/{i + 1}", "") for i in range(count)]  # nxos


def advertised_port_id(switch: Switch, port: SwitchPort) -> str:
    """What a switch's LLDP sends as the port ID of one of its ports (what its neighbours print)."""
    if switch.nos == "sonic":
        return port.alias  # SONiC sends the alias as the ID and the name as the description
    if switch.nos == "onyx":
        return port.name  # Eth1/1
    return port.name
