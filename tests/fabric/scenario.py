"""Scenario model of the simulated fabric: dataclasses loaded from YAML (or built for N hosts), plus faults.

A scenario names hosts (loopback 127.0.1.N) with their NICs, switches (127.0.2.N) with their ports, the cables
between them (for LLDP), counters (`[base, rate]`, see counters.py), QoS configuration and injected faults.
`Scenario.effective()` applies the faults and returns plain dicts: the per-target JSON the wrapper and the shims
read (they never import yaml or this module, to stay fast).

YAML layout (see scenarios/healthy.yaml): `nic_profiles` (named lists of NICs), `host_qos`, `switch_qos`,
`hosts` (name / address may be a single bracket range: `gpu[01-12]`, `127.0.1.[1-12]`), `switches`,
`links` (`auto`, or a list of {host, nic, port, switch, switch_port}), `switch_links` (switch to switch, with LLDP on
both ends: uplinks.py), `faults`, `unreachable`; for an InfiniBand
subnet `ib_switches` ({name, ports, model, rate_gbps}: switches of the subnet, not SSH targets; a link's
`switch_port` to one is its port number) and `ib_links` ({switch, port, peer, peer_port}: switch to switch), which
the hosts' `iblinkinfo` reports (subnet.py).
"""

from __future__ import annotations

import copy
import ipaddress
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tests.fabric import congestion, subnet, uplinks
from tests.fabric import counters as C

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
PLATFORMS = ("sonic", "cumulus", "onyx", "eos", "nxos")
FAULT_KINDS = (
    "flapping_cable", "pfc_storm", "pfc_mismatch", "ecn_above_xoff", "dcqcn_rp_disabled", "dcqcn_np_disabled",
    "firmware_outlier",
    "port_down", "port_disabled", "width_downgrade", "mtu_1024", "missing_tool", "garbage_tool", "hanging_tool",
    "slow_node", "slow_nic",
    "slow_link", "perftest_no_server", "perftest_hung_server", "unreachable", "forged_markers", "lldp_port_newline",
    "swapped_rails", "unexpected_leaf", "one_sided_neighbor", "switch_port_speed", "recabled_between_snapshots",
    "slow_banner", "slow_login", "uplink_one_sided", "periodic_spike", "switch_port_drops",
    *subnet.FAULT_KINDS,  # the InfiniBand subnet's (target: an ib_switches name, port its port number; subnet.py)
)


@dataclass
class HostQos:
    pfc: list[int] = field(default_factory=lambda: [3])
    trust: str = "dscp"
    roce_prio: int = 3
    roce_dscp: int = 26
    np_enable: list[int] = field(default_factory=lambda: list(range(8)))
    rp_enable: list[int] = field(default_factory=lambda: list(range(8)))
    cnp_dscp: int = 48
    cnp_prio: int = 6


@dataclass
class NicPort:
    num: int = 1
    state: str = "Active"  # Active | Down | Initializing | Armed
    phys_state: str = "LinkUp"  # LinkUp | Polling | Disabled | LinkErrorRecovery
    rate_gbps: int = 400
    width: str = "4X"
    mtu: int = 4096
    lid: int = 0
    sm_lid: int = 0
    counters: dict = field(default_factory=dict)  # overrides {"ib"|"hw"|"eth": {name: [base, rate]}}


@dataclass
class Nic:
    device: str
    link_layer: str = "InfiniBand"  # InfiniBand | Ethernet
    netdev: str = ""
    firmware: str = "28.39.1002"
    board_id: str = "MT_0000000838"
    hca_type: str = "MT4129"
    rate_gbps: int = 400
    width: str = "4X"
    mtu: int = 4096
    ports: list[NicPort] = field(default_factory=list)
    node_guid: str = ""
    mac: str = ""
    ipv4: str = ""
    # An IPv6 address on a RoCE netdev added before its IPv4 one: its GID pair comes first, so the RoCE v2 IPv4 GID
    # sits at index 5 instead of 3 (a host whose NCCL_IB_GID_INDEX differs from the fleet's)
    ipv6: str = ""
    qos: HostQos = field(default_factory=HostQos)


@dataclass
class Host:
    name: str
    address: str
    role: str = "compute"  # compute | storage
    nics: list[Nic] = field(default_factory=list)
    load: list[float] = field(default_factory=lambda: [0.42, 0.51, 0.48])
    psi_io: float = 0.1
    psi_cpu: float = 0.5
    # GPUs (the nvidia-smi shim): None = 8 on a compute host, none elsewhere; 0 = no GPU, no nvidia-smi on the PATH
    gpus: int | None = None
    gpu_util: float = 92.0  # mean utilisation, percent
    gpu_memory_pct: float = 85.0  # of each GPU's memory a job holds (0: idle GPUs)
    net_util: float | None = None  # every RDMA port's data counters at this share of its line rate (None: 25-35 %)


@dataclass
class SwitchQos:
    pfc: list[int] = field(default_factory=lambda: [3])
    trust: str = "dscp"
    roce_prio: int = 3
    ecn_min_bytes: int = 153600
    ecn_max_bytes: int = 1499136
    ecn_probability: int = 100
    xoff_bytes: int = 524288
    pfcwd_detection_ms: int = 200
    pfcwd_restoration_ms: int = 200


@dataclass
class SwitchPort:
    name: str
    speed_gbps: int = 400
    up: bool = True
    counters: dict = field(default_factory=dict)  # overrides {name: [base, rate]}


@dataclass
class Switch:
    name: str
    platform: str
    address: str
    ports: list[SwitchPort] = field(default_factory=list)
    qos: SwitchQos = field(default_factory=SwitchQos)


@dataclass
class Link:
    host: str
    nic: str
    switch: str
    switch_port: str
    port: int = 1


@dataclass
class IbSwitch:
    """A switch of the InfiniBand subnet, seen only through it (iblinkinfo), never logged into."""

    name: str
    ports: int = 0  # ports iblinkinfo lists (0: up to the highest cabled one)
    model: str = "MQM9790"
    rate_gbps: int = 400  # of its switch-to-switch links


@dataclass
class IbLink:
    """A switch-to-switch cable of the subnet (a leaf's uplink to a spine)."""

    switch: str
    port: int
    peer: str
    peer_port: int


@dataclass
class Fault:
    kind: str
    target: str
    nic: str | None = None
    port: int = 1
    priority: int | None = None
    tool: str | None = None
    value: float | str | None = None
    peer: str | None = None


@dataclass
class Scenario:
    name: str
    hosts: list[Host] = field(default_factory=list)
    switches: list[Switch] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)
    ib_switches: list[IbSwitch] = field(default_factory=list)
    ib_links: list[IbLink] = field(default_factory=list)
    switch_links: list[uplinks.SwitchLink] = field(default_factory=list)
    # a steady load (x the ports' rate) toward every cabled RoCE port: the ECN / PFC settings decide its pauses
    # and marks (congestion.steady; a trial's before and after). None: the counters' own profile.
    background_load: float | None = None

    @property
    def targets(self) -> list[Host | Switch]:
        return [*self.hosts, *self.switches]

    def target(self, name: str) -> Host | Switch:
        for t in self.targets:
            if t.name == name:
                return t
        raise KeyError(name)

    def effective(self) -> dict:
        """Plain-dict view with the faults applied: {"targets": {address: spec}, "index": {...}}."""
        return _effective(self)


# ---------------------------------------------------------------------------------------------------- building


def switch_port_name(platform: str, i: int) -> str:
    """Name of the i-th (0-based) front-panel port on a platform, as its CLI prints it."""
    return {
        "sonic": f"Ethernet{4 * i}", "cumulus": f"swp{i + 1}", "onyx": f"Eth1/{i + 1}",
        "eos": f"Ethernet{i + 1}", "nxos": f"Ethernet1/{i + 1}",
    }[platform]


def expand(pattern: str) -> list[str]:
    """`gpu[01-16]` -> gpu01..gpu16 (zero padding kept); a plain string -> [string]."""
    m = re.fullmatch(r"(.*)\[(\d+)-(\d+)\](.*)", pattern)
    if not m:
        return [pattern]
    pre, lo, hi, post = m.groups()
    width = len(lo) if lo.startswith("0") else 0
    return [f"{pre}{i:0{width}d}{post}" for i in range(int(lo), int(hi) + 1)]


def _nic(raw: dict, host_index: int, nic_index: int, qos: dict) -> Nic:
    raw = dict(raw)
    ports = raw.pop("ports", None) or [1]
    nic_qos = HostQos(**{**qos, **raw.pop("qos", {})})
    nic = Nic(**raw, qos=nic_qos)
    nic.ports = [
        p if isinstance(p, NicPort) else NicPort(**p) if isinstance(p, dict) else
        NicPort(num=p, rate_gbps=nic.rate_gbps, width=nic.width, mtu=nic.mtu)
        for p in ports
    ]
    serial = (host_index << 8) | nic_index
    if not nic.node_guid:
        nic.node_guid = f"b83fd20300{serial:06x}"
    if not nic.mac:
        nic.mac = ":".join(f"{b:02x}" for b in (0xB8, 0x3F, 0xD2, (serial >> 16) & 0xFF, (serial >> 8) & 0xFF,
                                                 serial & 0xFF))
    if nic.link_layer == "Ethernet" and not nic.ipv4:
        nic.ipv4 = f"192.168.{nic_index + 1}.{host_index % 250 + 1}" if host_index < 250 else \
            f"10.{nic_index + 1}.{host_index // 250}.{host_index % 250 + 1}"
    if nic.link_layer == "InfiniBand":
        for p in nic.ports:
            p.lid = p.lid or 100 + host_index * 8 + nic_index
            p.sm_lid = p.sm_lid or 1
    return nic


def _auto_links(sc: Scenario) -> None:
    """Cable every Ethernet NIC port round-robin to the switches, allocating the next free switch port."""
    if not sc.switches:
        return
    used = {s.name: len(s.ports) for s in sc.switches}
    i = 0
    for h in sc.hosts:
        for nic in h.nics:
            if nic.link_layer != "Ethernet":
                continue
            for p in nic.ports:
                sw = sc.switches[i % len(sc.switches)]
                i += 1
                pname = switch_port_name(sw.platform, used[sw.name])
                used[sw.name] += 1
                sw.ports.append(SwitchPort(name=pname, speed_gbps=nic.rate_gbps))
                sc.links.append(Link(host=h.name, nic=nic.device, port=p.num, switch=sw.name, switch_port=pname))


def from_dict(data: dict) -> Scenario:
    profiles = data.get("nic_profiles", {})
    host_qos = data.get("host_qos", {})
    sw_qos = data.get("switch_qos", {})
    sc = Scenario(name=data.get("name", "scenario"), unreachable=list(data.get("unreachable", [])),
                  background_load=data.get("background_load"))
    index = 0
    for entry in data.get("hosts", []):
        names, addrs = expand(entry["name"]), expand(entry["address"])
        assert len(names) == len(addrs), f"host pattern {entry['name']} vs {entry['address']}"
        nics = entry.get("nics", "compute")
        nic_list = profiles[nics] if isinstance(nics, str) else nics
        extra = {k: v for k, v in entry.items() if k not in ("name", "address", "nics")}
        for name, addr in zip(names, addrs, strict=True):
            sc.hosts.append(Host(name=name, address=addr, **extra,
                                 nics=[_nic(n, index, j, host_qos) for j, n in enumerate(nic_list)]))
            index += 1
    for entry in data.get("switches", []):
        entry = dict(entry)
        ports = [SwitchPort(**p) for p in entry.pop("ports", [])]
        qos = SwitchQos(**{**sw_qos, **entry.pop("qos", {})})
        sc.switches.append(Switch(**entry, ports=ports, qos=qos))
    sc.ib_switches = [IbSwitch(**entry) for entry in data.get("ib_switches", [])]
    sc.ib_links = [IbLink(**entry) for entry in data.get("ib_links", [])]
    sc.switch_links = [uplinks.SwitchLink(**entry) for entry in data.get("switch_links", [])]
    links = data.get("links", "auto")
    if links == "auto":
        _auto_links(sc)
    else:
        sc.links = [Link(**link) for link in links]
    sc.faults = [Fault(**f) for f in data.get("faults", [])]
    bad = [f.kind for f in sc.faults if f.kind not in FAULT_KINDS]
    assert not bad, f"unknown fault kinds {bad}; known: {FAULT_KINDS}"
    return sc


def load(name_or_path: str | Path) -> Scenario:
    """Load `healthy`, `degraded` (from tests/fabric/scenarios/) or a YAML file path."""
    import yaml

    path = Path(name_or_path)
    if not path.suffix:
        path = SCENARIOS / f"{name_or_path}.yaml"
    return from_dict(yaml.safe_load(path.read_text()))


COMPUTE_NICS = [
    {"device": "mlx5_0", "link_layer": "InfiniBand", "netdev": "ibp24s0", "rate_gbps": 400, "width": "4X",
     "mtu": 4096, "firmware": "28.39.1002", "board_id": "MT_0000000838", "hca_type": "MT4129"},
    {"device": "mlx5_1", "link_layer": "Ethernet", "netdev": "ens1f0np0", "rate_gbps": 200, "width": "4X",
     "mtu": 4096, "firmware": "22.39.1002", "board_id": "MT_0000000359", "hca_type": "MT4125"},
]
STORAGE_NICS = [
    {"device": "mlx5_0", "link_layer": "Ethernet", "netdev": "ens2f0np0", "rate_gbps": 200, "width": "4X",
     "mtu": 4096, "firmware": "22.39.1002", "board_id": "MT_0000000359", "hca_type": "MT4125"},
]
# a storage node's second NIC (build(storage_nics=2)): both read at once, each its own RoCE address
STORAGE_NIC_2 = {**STORAGE_NICS[0], "device": "mlx5_1", "netdev": "ens2f1np1"}


def build(n_hosts: int = 16, n_storage: int | None = None, platforms: tuple[str, ...] = PLATFORMS,
          faults: list[dict] | None = None, name: str | None = None, storage_nics: int = 1) -> Scenario:
    """A scenario with `n_hosts` hosts (the last quarter storage unless n_storage says otherwise), one switch
    per platform, cables auto-assigned. A storage node has
    `storage_nics` RoCE NICs (1 or 2). Addresses: hosts 127.0.1.1.. (127.1.x.y beyond 254), switches 127.0.2.N."""
    n_storage = n_hosts // 4 if n_storage is None else n_storage

    def addr(i: int) -> str:
        return f"127.0.1.{i + 1}" if n_hosts <= 254 else f"127.1.{i // 250}.{i % 250 + 1}"

    hosts = [
        {"name": f"gpu{i + 1:03d}" if n_hosts > 99 else f"gpu{i + 1:02d}", "address": addr(i), "role": "compute",
         "nics": COMPUTE_NICS}
        for i in range(n_hosts - n_storage)
    ] + [
        {"name": f"stor{j + 1:02d}", "address": addr(n_hosts - n_storage + j), "role": "storage",
         "nics": STORAGE_NICS + [STORAGE_NIC_2] * (storage_nics - 1), "load": [3.1, 2.8, 2.5], "psi_io": 4.2}
        for j in range(n_storage)
    ]
    switches = [{"name": f"leaf{k + 1:02d}", "platform": p, "address": f"127.0.2.{k + 1}"}
                for k, p in enumerate(platforms)]
    return from_dict({"name": name or f"built-{n_hosts}", "hosts": hosts, "switches": switches,
                      "faults": faults or []})


# ---------------------------------------------------------------------------------------------------- effective


def _speed_name(lane_gbps: float) -> str:
    for limit, label in ((200, "XDR"), (100, "NDR"), (50, "HDR"), (25, "EDR"), (14, "FDR"), (10, "QDR")):
        if lane_gbps >= limit:
            return label
    return "SDR"


def _nic_spec(host: Host, nic: Nic) -> dict:
    spec = asdict(nic)
    for p in spec["ports"]:
        lanes = int(p["width"].rstrip("X"))
        p["speed"] = _speed_name(p["rate_gbps"] / lanes)
        prof = C.host_profile(nic.link_layer, p["rate_gbps"], nic.qos.roce_prio, f"{host.name}/{nic.device}/{p['num']}")
        if host.net_util is not None:  # the knob of the triage scenarios: PMA data words per second at that share
            words = p["rate_gbps"] * 1e9 / 8 * host.net_util / 4
            prof["ib"]["port_xmit_data"] = [prof["ib"]["port_xmit_data"][0], words]
            prof["ib"]["port_rcv_data"] = [prof["ib"]["port_rcv_data"][0], words * 0.98]
        for ns, over in p["counters"].items():
            prof.setdefault(ns, {}).update(over)
        p["counters"] = prof
        mac = nic.mac.split(":")
        eui = f"{int(mac[0], 16) ^ 2:02x}{mac[1]}:{mac[2]}ff:fe{mac[3]}:{mac[4]}{mac[5]}"
        if nic.link_layer == "Ethernet":
            p["port_guid"] = f"0x{eui.replace(':', '')}"
            ll = f"fe80:0000:0000:0000:{eui}"
            a, b, c, d = (int(x) for x in nic.ipv4.split("."))
            v4 = f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}"
            p["gids"] = [[ll, "IB/RoCE v1", ""], [ll, "RoCE v2", ""], [v4, "IB/RoCE v1", nic.ipv4],
                         [v4, "RoCE v2", nic.ipv4]]
            if nic.ipv6:
                v6 = ipaddress.IPv6Address(nic.ipv6).exploded
                p["gids"][2:2] = [[v6, "IB/RoCE v1", ""], [v6, "RoCE v2", ""]]
        else:
            guid = f"{nic.node_guid[:-6]}{int(nic.node_guid[-6:], 16) + p['num'] - 1:06x}"
            p["port_guid"] = f"0x{guid}"
            p["gids"] = [[f"fe80:0000:0000:0000:{guid[0:4]}:{guid[4:8]}:{guid[8:12]}:{guid[12:16]}", "IB/RoCE v1",
                          ""]]
        p["neighbor"] = None
    return spec


def _effective(sc: Scenario) -> dict:
    sc = copy.deepcopy(sc)
    perf: dict[str, dict] = {h.name: {"factor": 1.0, "no_server": False, "hung_server": False, "nic_factor": {}}
                             for h in sc.hosts}
    tools: dict[str, dict[str, list]] = {t.name: {"missing": [], "garbage": [], "hanging": [], "forged": []}
                                         for t in sc.targets}
    lldp_extra: dict[str, list[str]] = {}
    lldp_hidden: set[tuple[str, str]] = set()  # (host, nic) the switch's LLDP does not see (fault one_sided_neighbor)
    port_speeds: dict[tuple[str, str], int] = {}  # (host, nic) → its switch port's speed (fault switch_port_speed)
    moved: dict[tuple[str, str], tuple[str, str]] = {}  # (host, nic) → the switch port it reaches after the first read
    slow_links: dict[str, float] = {}
    slow_banners: dict[str, float] = {}  # switch → seconds its CLI pauses inside each login banner line
    slow_logins: dict[str, float] = {}  # switch → seconds its interactive shell or CLI takes to start
    unreachable = set(sc.unreachable)
    post: list[Fault] = []
    for f in sc.faults:
        if f.kind in subnet.FAULT_KINDS:  # a fault of the subnet's own switches or SM: subnet.build applies it
            continue
        t = sc.target(f.target)
        nic = next((n for n in getattr(t, "nics", []) if n.device == (f.nic or n.device)), None)
        port = next((p for p in nic.ports if p.num == f.port), None) if nic else None
        prio = f.priority if f.priority is not None else 3
        if f.kind in ("missing_tool", "garbage_tool", "hanging_tool"):
            tools[t.name][f.kind.split("_")[0]].append(f.tool)
        elif f.kind == "forged_markers":  # a hostile host: `tool` prints a section that names parser `value`
            tools[t.name]["forged"].append([f.tool or "sh", str(f.value)])
        elif f.kind == "lldp_port_newline":  # a hostile switch: LLDP reports a local port named `value`
            lldp_extra.setdefault(t.name, []).append(str(f.value))
        elif f.kind == "swapped_rails":  # the cables of NICs `nic` and `value` swapped at the leaf end
            _swap_cables(sc, t.name, nic.device, str(f.value))
        elif f.kind == "unexpected_leaf":  # NIC `nic` cabled to a free port of switch `value` instead
            _recable(sc, t.name, nic.device, str(f.value))
        elif f.kind == "one_sided_neighbor":  # the switch port does not see the host NIC (LLDP receive off)
            lldp_hidden.add((t.name, nic.device))
        elif f.kind == "recabled_between_snapshots":  # NIC `nic` moved to a free port of switch `value` after the
            moved[(t.name, nic.device)] = _free_port(sc, str(f.value))  # first LLDP read of each end
        elif f.kind == "switch_port_speed":  # the switch port of NIC `nic` runs at `value` Gb/s
            port_speeds[(t.name, nic.device)] = int(f.value)
        elif f.kind == "slow_banner":  # a switch under load: its login banner arrives in pieces, `value` s apart
            slow_banners[t.name] = float(f.value or 0.4)
        elif f.kind == "slow_login":  # a switch whose management CPU is busy: its CLI starts `value` s late
            slow_logins[t.name] = float(f.value or 25.0)
        elif f.kind == "unreachable":
            unreachable.add(t.name)
        elif f.kind == "slow_node":
            perf[t.name]["factor"] = float(f.value or 0.5)
        elif f.kind == "slow_nic":  # perftest on NIC `nic` alone runs at `value` of its rate (the host's others not)
            assert f.nic, "slow_nic names its NIC"
            perf[t.name]["nic_factor"][f.nic] = float(f.value or 0.5)
        elif f.kind == "slow_link":
            slow_links["|".join(sorted((t.name, f.peer)))] = float(f.value or 0.3)
        elif f.kind == "perftest_no_server":
            perf[t.name]["no_server"] = True
        elif f.kind == "perftest_hung_server":
            perf[t.name]["hung_server"] = True
        elif f.kind == "firmware_outlier":
            nic.firmware = str(f.value or "28.35.1012")
        elif f.kind == "port_down":
            port.state, port.phys_state = "Down", "Polling"
            port.rate_gbps = 10 if nic.link_layer == "InfiniBand" else 40
            port.width = "4X" if nic.link_layer == "InfiniBand" else "1X"
        elif f.kind == "port_disabled":  # administratively disabled: Down / Disabled, its switch port down too
            port.state, port.phys_state = "Down", "Disabled"
        elif f.kind == "width_downgrade":
            lanes = int(port.width.rstrip("X"))
            port.rate_gbps, port.width = port.rate_gbps // lanes, "1X"
        elif f.kind == "mtu_1024":
            port.mtu = 1024
        elif f.kind == "pfc_mismatch":
            nic.qos.pfc = [int(f.value if f.value is not None else 4)]
        elif f.kind == "dcqcn_rp_disabled":
            nic.qos.rp_enable = [p for p in nic.qos.rp_enable if p != prio]
        elif f.kind == "dcqcn_np_disabled":  # marks arrive, no CNP goes back (under incast: congestion.py)
            nic.qos.np_enable = [p for p in nic.qos.np_enable if p != prio]
        elif f.kind == "ecn_above_xoff":
            t.qos.ecn_min_bytes, t.qos.ecn_max_bytes = t.qos.xoff_bytes * 2, t.qos.xoff_bytes * 6
        elif f.kind in ("flapping_cable", "pfc_storm", "switch_port_drops"):
            post.append(f)
        elif f.kind == "periodic_spike":  # pauses and latency in bursts every `value` s (0.4 of it long)
            period = float(f.value or 4.0)
            perf[t.name]["lat_spike"] = [period, period * 0.4, 8.0]  # perftest latency x8 during a burst
            post.append(f)
    out_targets: dict[str, dict] = {}
    hosts_spec: dict[str, dict] = {}
    for h in sc.hosts:
        gpus = h.gpus if h.gpus is not None else (8 if h.role == "compute" else 0)
        if not gpus:  # no GPU: the host has no nvidia-smi either (a monitoring gap the triage reports at info)
            tools[h.name]["missing"].append("nvidia-smi")
        spec = {"kind": "host", "platform": "linux", "name": h.name, "address": h.address, "role": h.role,
                "load": h.load, "psi_io": h.psi_io, "psi_cpu": h.psi_cpu, "perf": perf[h.name],
                "tools": tools[h.name], "nics": [_nic_spec(h, n) for n in h.nics],
                "gpu": {"count": gpus, "util": h.gpu_util, "memory_pct": h.gpu_memory_pct}}
        hosts_spec[h.name] = spec
        out_targets[h.address] = spec
    sw_spec: dict[str, dict] = {}
    for k, s in enumerate(sc.switches):
        spec = {"kind": "switch", "platform": s.platform, "name": s.name, "address": s.address,
                "qos": asdict(s.qos), "tools": tools[s.name], "mac": f"0c:42:a1:00:{k:02x}:00", "ports": [],
                "lldp_extra": lldp_extra.get(s.name, []), "slow_banner": slow_banners.get(s.name, 0.0),
                "slow_login": slow_logins.get(s.name, 0.0)}
        for i, p in enumerate(s.ports):
            counters = C.switch_profile(p.speed_gbps, s.qos.roce_prio, f"{s.name}/{p.name}")
            counters.update(p.counters)
            spec["ports"].append({"name": p.name, "speed_gbps": p.speed_gbps, "up": p.up, "counters": counters,
                                  "neighbor": None, "stormed": [], "alias": uplinks.sonic_alias(i)})
        sw_spec[s.name] = spec
        out_targets[s.address] = spec
    for link in sc.links:
        if link.switch not in sw_spec:  # a switch of the InfiniBand subnet: seen through iblinkinfo (subnet.py)
            continue
        h, s = hosts_spec[link.host], sw_spec[link.switch]
        nic = next(n for n in h["nics"] if n["device"] == link.nic)
        hp = next(p for p in nic["ports"] if p["num"] == link.port)
        sp = next(p for p in s["ports"] if p["name"] == link.switch_port)
        hp["neighbor"] = uplinks.neighbor_of(s, sp)  # a SONiC port as its LLDP advertises it: by its alias
        if (link.host, link.nic) not in lldp_hidden:
            sp["neighbor"] = {"name": h["name"], "port": nic["netdev"], "mac": nic["mac"], "address": h["address"]}
        if (link.host, link.nic) in moved:  # LLDP on both ends sees the new cable from the second read on
            switch, port = moved[(link.host, link.nic)]
            later = next(p for p in sw_spec[switch]["ports"] if p["name"] == port)
            hp["neighbor_later"] = uplinks.neighbor_of(sw_spec[switch], later)
            sp["neighbor_later"], later["neighbor_later"] = None, sp["neighbor"]
        if (link.host, link.nic) in port_speeds:
            sp["speed_gbps"] = port_speeds[(link.host, link.nic)]
        if hp["state"] != "Active":
            sp["up"] = False
    if sc.background_load:  # the trial's steady load: the switches' ECN / PFC settings shape its counters
        congestion.apply_steady([(k.host, k.nic, k.port, k.switch, k.switch_port) for k in sc.links], hosts_spec,
                                sw_spec, float(sc.background_load))
    uplinks.apply(sc.switch_links, sc.faults, sw_spec)
    for f in post:
        _counter_fault(f, hosts_spec, sw_spec)
    for name in unreachable:
        spec = hosts_spec.get(name) or sw_spec[name]
        spec["unreachable"] = True
    ib = subnet.build(sc, hosts_spec, [f for f in sc.faults if f.kind in subnet.FAULT_KINDS])
    for name in subnet.members(ib):
        hosts_spec[name]["ib_subnet"] = True
    index = {
        "hosts": {h["address"]: {"name": h["name"], "perf": h["perf"],
                                 "ips": [n["ipv4"] for n in h["nics"] if n["ipv4"]],
                                 "unreachable": h.get("unreachable", False)}
                  for h in hosts_spec.values()},
        "slow_links": slow_links,
        "subnet": ib,
    }
    return {"name": sc.name, "targets": out_targets, "index": index}


def _swap_cables(sc: Scenario, host: str, nic: str, other: str) -> None:
    one = next(link for link in sc.links if (link.host, link.nic) == (host, nic))
    two = next(link for link in sc.links if (link.host, link.nic) == (host, other))
    (one.switch, one.switch_port), (two.switch, two.switch_port) = (two.switch, two.switch_port), (one.switch, one.switch_port)


def _free_port(sc: Scenario, switch: str) -> tuple[str, str]:
    """A new front-panel port of `switch`, at the speed of its others: (switch, port name)."""
    sw = next(s for s in sc.switches if s.name == switch)
    name = switch_port_name(sw.platform, len(sw.ports))
    sw.ports.append(SwitchPort(name=name, speed_gbps=next(p.speed_gbps for p in sw.ports) if sw.ports else 200))
    return switch, name


def _recable(sc: Scenario, host: str, nic: str, switch: str) -> None:
    link = next(link for link in sc.links if (link.host, link.nic) == (host, nic))
    link.switch, link.switch_port = _free_port(sc, switch)


def _counter_fault(f: Fault, hosts: dict, switches: dict) -> None:
    h = hosts[f.target]
    nic = next(n for n in h["nics"] if n["device"] == (f.nic or n["device"]))
    port = next(p for p in nic["ports"] if p["num"] == f.port)
    c = port["counters"]
    nb = port["neighbor"]
    sp = next(p for p in switches[nb["name"]]["ports"] if p["name"] == nb["port"]) if nb else None

    def grow(table: dict, name: str, rate: float) -> None:
        base = table.get(name, [0, 0.0])[0]
        table[name] = [base, rate]

    if f.kind == "flapping_cable":
        for name, rate in (("link_downed", 0.2), ("symbol_error", 25.0), ("link_error_recovery", 0.3),
                           ("port_rcv_errors", 8.0)):
            grow(c["ib"], name, rate)
        if "eth" in c:
            for name, rate in (("link_down_events_phy", 0.2), ("rx_crc_errors_phy", 20.0),
                               ("rx_symbol_err_phy", 25.0), ("rx_fec_uncorrectable_blocks_phy", 4.0),
                               ("rx_pcs_symbol_err_phy", 25.0)):
                grow(c["eth"], name, rate)
        if sp:
            grow(sp["counters"], "rx_err", 20.0)
    elif f.kind == "periodic_spike":  # the host is paused (and its switch port pauses it) in each burst
        period = float(f.value or 4.0)
        p = f.priority if f.priority is not None else nic["qos"]["roce_prio"]
        if "eth" in c:
            for name, rate in ((f"rx_prio{p}_pause", 20000.0), (f"rx_prio{p}_pause_duration", 900000.0)):
                c["eth"][name] = [*c["eth"].get(name, [0, 0.0]), C.periodic(period, period * 0.4, rate)]
        if sp:
            sp["counters"][f"tx_pfc{p}"] = [*sp["counters"].get(f"tx_pfc{p}", [0, 0.0]),
                                            C.periodic(period, period * 0.4, 20000.0)]
    elif f.kind == "switch_port_drops" and sp:  # the leaf's queue toward the NIC starts to overflow at `value`
        p = f.priority if f.priority is not None else nic["qos"]["roce_prio"]
        for name, rate in ((f"q{p}_drop_pkts", 5000.0), (f"q{p}_drop_bytes", 5000.0 * 4096)):
            if f.value is None:  # since the fabric's start: a steady rate
                grow(sp["counters"], name, rate)
                continue
            # from wall-clock second `value` on, a load as the congestion model's: flat before it, `rate` a second
            start = float(f.value)
            sp["counters"][name] = [*sp["counters"].get(name, [0, 0.0]), (start, start + 1e9, rate * 1e9)]
    elif f.kind == "pfc_storm":
        p = f.priority if f.priority is not None else nic["qos"]["roce_prio"]
        if "eth" in c:
            grow(c["eth"], f"tx_prio{p}_pause", 15000.0)
            grow(c["eth"], f"tx_prio{p}_pause_duration", 950000.0)
            grow(c["eth"], "tx_pause_storm_warning_events", 0.5)
        if sp:
            grow(sp["counters"], f"rx_pfc{p}", 15000.0)
            grow(sp["counters"], f"rx_pfc{p}_duration", 950000.0)
            grow(sp["counters"], "pfcwd_detected", 0.05)
            grow(sp["counters"], f"q{p}_drop_pkts", 5000.0)
            grow(sp["counters"], f"q{p}_drop_bytes", 5000.0 * 4096)
            sp["stormed"].append(p)
