"""The NCCL / UCX connection recipe of each compute host, from facts a bundle already holds, each value with why.

Read: the ports (link layer, state), the GID tables (show_gids, ibv_devinfo: index, type, IPv4, netdev), the QoS of
each RoCE netdev (mlnx_qos: trust mode, DSCP → priority), the LLDP cabling and the targets' roles. The site's RoCE
class comes from the site profile (rdmatool.config: SITE_DEFAULTS, the configuration file, `--site`), never from a
number written here.

The compute rails of a host are its active RDMA ports less its storage NICs: a port on the link layer the storage
hosts use while the host also has ports on another (by role), or a port cabled to a switch that serves storage hosts
and no other compute host (by topology). What no single recipe fits is a `Problem`, judged by the nccl playbook
(rdmatool.nccl.findings).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from rdmatool.config import site_profile
from rdmatool.table.facts import plain

# The keys of a recipe, in the order every format prints them.
KEYS = ("NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_ROCE_VERSION_NUM", "NCCL_IB_ADDR_FAMILY", "NCCL_IB_TC",
        "NCCL_IB_SL", "NCCL_SOCKET_IFNAME", "UCX_NET_DEVICES", "UCX_IB_GID_INDEX", "UCX_IB_TRAFFIC_CLASS",
        "UCX_IB_SL")
COMPUTE_ROLES = (None, "", "compute", "gpu", "training")  # a host without a role is taken for a compute host
_GID_INDEX = re.compile(r"GID\[(\d+)\]")
_IPV4_MAPPED = re.compile(r"^0000:0000:0000:0000:0000:ffff:([0-9a-f]{4}):([0-9a-f]{4})$", re.IGNORECASE)
_FACTS = ("link_layer", "port_state", "gid", "gid_type", "ipv4_address", "netdev", "trust_mode", "dscp_to_priority",
          "pfc_enabled")


@dataclass
class Gid:
    index: int
    gid: str = ""
    kind: str = ""  # "RoCE v2", "RoCE v1", "IB/RoCE v1"
    ipv4: str | None = None
    netdev: str | None = None

    @property
    def roce_v2_ipv4(self) -> bool:
        return self.kind.strip().lower() == "roce v2" and self.ipv4 is not None


@dataclass
class Port:
    device: str
    port: int
    link_layer: str = ""
    active: bool = False
    gids: dict[int, Gid] = field(default_factory=dict)
    switch: str | None = None
    storage: str | None = None  # why this port is a storage NIC, None for a compute rail

    @property
    def name(self) -> str:
        return f"{self.device}:{self.port}"

    @property
    def entity(self) -> str:
        return f"{self.device}/{self.port}"

    @property
    def roce(self) -> bool:
        return self.link_layer == "Ethernet"

    @property
    def netdev(self) -> str | None:
        return next((g.netdev for _, g in sorted(self.gids.items()) if g.netdev), None)

    def roce_v2_gid(self) -> Gid | None:
        """The lowest-index RoCE v2 GID carrying an IPv4 address: what NCCL_IB_GID_INDEX must name."""
        return next((g for _, g in sorted(self.gids.items()) if g.roce_v2_ipv4), None)


@dataclass
class Problem:
    """What no single recipe fits, on a host (`entity` None) or one of its ports; `verdict` names the playbook rule's
    case, `facts` the subject's other facts the rule's text names (metric → value)."""

    target: str
    entity: str | None
    verdict: str
    facts: dict = field(default_factory=dict)
    why: str = ""


@dataclass
class Setting:
    value: str | None
    why: str

    def as_json(self) -> dict:
        return {"value": self.value, "why": self.why}


@dataclass
class HostRecipe:
    name: str
    role: str | None
    rails: list[Port]
    left_out: list[Port]
    settings: dict[str, Setting]

    def env(self) -> dict[str, str]:
        """The variables to set, in KEYS order (a value of None: leave it unset)."""
        return {k: self.settings[k].value for k in KEYS if k in self.settings and self.settings[k].value is not None}

    def as_json(self) -> dict:
        return {
            "host": self.name, "role": self.role,
            "rails": [{"port": p.name, "link_layer": p.link_layer, "netdev": p.netdev} for p in self.rails],
            "left_out": [{"port": p.name, "link_layer": p.link_layer, "why": p.storage or "not active"}
                         for p in self.left_out],
            "env": {k: s.as_json() for k, s in self.settings.items()},
        }


@dataclass
class Recipe:
    hosts: list[HostRecipe]
    skipped: dict[str, str]  # host → why it has no recipe
    fleet: dict[str, str | None]  # the keys every host agrees on (None: every host leaves it unset)
    differ: list[str]  # the keys on which hosts disagree
    problems: list[Problem]
    site: dict

    @property
    def fits_all(self) -> bool:
        """One environment for every host that has a recipe: no key differs (the hosts without one are named in
        `skipped`: they cannot run NCCL over RDMA as they are)."""
        return bool(self.hosts) and not self.differ

    def fleet_env(self) -> dict[str, str]:
        return {k: v for k, v in self.fleet.items() if v is not None}


# --- reading the facts ----------------------------------------------------------------------------------------------


def _ipv4_of(gid: str) -> str | None:
    mapped = _IPV4_MAPPED.match(gid.strip())
    if not mapped:
        return None
    value = int(mapped.group(1) + mapped.group(2), 16)
    return ".".join(str((value >> shift) & 0xFF) for shift in (24, 16, 8, 0))


# What an RDMA device may be called in a recipe (mlx5_0, rocep59s0f0, ibp3s0): the names written into NCCL_IB_HCA,
# shell exports, TaskProlog and YAML values, and the nccl-tests command line.
_DEVICE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


def _ports(facts: pd.DataFrame) -> dict[str, dict[str, Port]]:
    """host → port entity → Port, from the link layer, state and GID facts of every source."""
    hosts: dict[str, dict[str, Port]] = {}

    def port_of(target: str, entity: str) -> Port | None:
        device, sep, number = str(entity).rpartition("/")
        if not sep or not number.isdigit() or not _DEVICE.fullmatch(device):
            return None  # a device name no launcher's syntax can carry (a host's output says it) names no rail
        return hosts.setdefault(target, {}).setdefault(entity, Port(device, int(number)))

    for target, entity, metric, text, raw_key in zip(facts["target"], facts["entity"], facts["metric"],
                                                     facts["text"], facts["raw_key"]):
        if metric not in ("link_layer", "port_state", "gid", "gid_type", "ipv4_address", "netdev"):
            continue
        port = port_of(target, entity)
        if port is None or not isinstance(text, str):
            continue
        if metric == "link_layer":
            port.link_layer = text
        elif metric == "port_state":
            state = text.strip().lower()  # `Active`, `PORT_ACTIVE (4)`, sysfs `4: ACTIVE`
            port.active = port.active or ("active" in state and "inactive" not in state)
        else:
            found = _GID_INDEX.fullmatch(str(raw_key))
            if not found:
                continue
            gid = port.gids.setdefault(int(found.group(1)), Gid(int(found.group(1))))
            if metric == "gid":
                gid.gid = text
                gid.ipv4 = gid.ipv4 or _ipv4_of(text)
            elif metric == "gid_type" and (not gid.kind or text.startswith("RoCE")):
                gid.kind = text  # show_gids' `RoCE v1` over ibv_devinfo's `IB/RoCE v1`
            elif metric == "ipv4_address":
                gid.ipv4 = text
            elif metric == "netdev":
                gid.netdev = text
    return hosts


def _qos(facts: pd.DataFrame) -> dict[tuple[str, str], dict]:
    """(host, netdev) → {"trust": text, "dscp": {dscp: priority}, "pfc": {priority: 0/1}} from mlnx_qos."""
    out: dict[tuple[str, str], dict] = {}
    for target, entity, metric, value, text, priority in zip(facts["target"], facts["entity"], facts["metric"],
                                                             facts["value"], facts["text"], facts["priority"]):
        if metric not in ("trust_mode", "dscp_to_priority", "pfc_enabled"):
            continue
        qos = out.setdefault((target, str(entity)), {"trust": None, "dscp": {}, "pfc": {}})
        if metric == "trust_mode":
            qos["trust"] = text
        elif metric == "dscp_to_priority" and isinstance(text, str) and text.isdigit() and not pd.isna(value):
            qos["dscp"][int(text)] = int(value)
        elif metric == "pfc_enabled" and not pd.isna(priority) and not pd.isna(value):
            qos["pfc"][int(priority)] = int(value)
    return out


# --- the rails ------------------------------------------------------------------------------------------------------


def _roles(targets: list[dict]) -> dict[str, str | None]:
    return {t["name"]: t.get("role") for t in targets if t.get("kind", "host") == "host"}


def _mark_storage(hosts: dict[str, dict[str, Port]], roles: dict[str, str | None]) -> None:
    """Mark each compute host's storage NICs (see the module's docstring), with why."""
    compute = {h for h, r in roles.items() if r in COMPUTE_ROLES}
    storage_hosts = sorted(h for h in hosts if h in roles and h not in compute)
    storage_layers = {p.link_layer for h in storage_hosts for p in hosts[h].values() if p.active and p.link_layer}
    served: dict[str, set[str]] = {}  # switch → the hosts cabled to it
    for host, ports in hosts.items():
        for p in ports.values():
            if p.switch:
                served.setdefault(p.switch, set()).add(host)
    for host in compute & set(hosts):
        ports = [p for p in hosts[host].values() if p.active and p.link_layer]
        layers = {p.link_layer for p in hosts[host].values() if p.link_layer}  # a rail that is down counts too
        for p in ports:
            others = served.get(p.switch or "", set()) - {host}
            if p.switch and others and not others & compute:
                p.storage = (f"cabled to {p.switch}, which serves storage hosts ({', '.join(sorted(others))}) and "
                             f"no other compute host")
            elif len(layers) > 1 and p.link_layer in storage_layers and layers - storage_layers:
                fabric = ", ".join(sorted(layers - storage_layers))
                p.storage = (f"{_layer(p.link_layer)} is the storage hosts' network ({', '.join(storage_hosts[:3])}"
                             f"{' ...' if len(storage_hosts) > 3 else ''}); this host's {_layer(fabric)} ports are its "
                             f"compute fabric")


def _layer(link_layer: str) -> str:
    return {"Ethernet": "RoCE (Ethernet)", "InfiniBand": "InfiniBand"}.get(link_layer, link_layer)


# --- the recipe -----------------------------------------------------------------------------------------------------


def build(facts: pd.DataFrame, targets: list[dict], links: pd.DataFrame | None = None, site: dict | None = None,
          only: set[str] | None = None) -> Recipe:
    """The recipe of every compute host of the facts (of `only` when given) and of the fleet."""
    profile = site_profile(site)
    wanted = plain(facts[facts["metric"].isin(_FACTS)])  # (plain texts: None where missing)
    hosts = _ports(wanted)
    qos = _qos(wanted)
    roles = _roles(targets)
    for host, port_name, switch in _cabling(links):
        for p in hosts.get(host, {}).values():
            if p.netdev == port_name:
                p.switch = switch
    _mark_storage(hosts, roles)
    recipes, skipped, problems = [], {}, []
    for name in sorted(roles):
        if only is not None and name not in only:
            continue
        if roles[name] not in COMPUTE_ROLES:
            skipped[name] = f"role {roles[name]}: not a compute host"
            continue
        ports = sorted(hosts.get(name, {}).values(), key=lambda p: (p.device, p.port))
        rails = [p for p in ports if p.active and p.link_layer in ("InfiniBand", "Ethernet") and not p.storage]
        if not rails:
            skipped[name] = ("no active RDMA port on the compute fabric" if ports else
                             "no RDMA port in the bundle (ibstat, ibv_devinfo)")
            problems.append(Problem(name, None, "no_rail", {"nccl_ports": len(ports)}, skipped[name]))
            continue
        left_out = [p for p in ports if p not in rails]
        host = HostRecipe(name, roles[name], rails, left_out, {})
        problems += _settings(host, qos, profile)
        problems += [Problem(name, p.entity, "storage_nic", {"nccl_hca": _hca(rails)}, p.storage or "")
                     for p in left_out if p.storage]
        recipes.append(host)
    fleet, differ = _fleet(recipes)
    problems += _across_hosts(recipes)
    return Recipe(recipes, skipped, fleet, differ, problems, profile)


def _cabling(links: pd.DataFrame | None) -> list[tuple[str, str, str]]:
    if links is None or links.empty:
        return []
    return list(zip(links["host"], links["host_port"], links["switch"]))


def _hca(rails: list[Port]) -> str:
    # `=`: exact names; without it `mlx5_1` also matches mlx5_10 ... mlx5_17 (NCCL reads the list as prefixes)
    return "=" + ",".join(p.name for p in rails)


def _settings(host: HostRecipe, qos: dict, profile: dict) -> list[Problem]:
    """Fill the host's settings; the problems met on the way."""
    rails, s, problems = host.rails, host.settings, []
    names = ", ".join(p.name for p in rails)
    left = "; left out: " + "; ".join(f"{p.name} ({p.storage or 'not active'})" for p in host.left_out) \
        if host.left_out else ""
    s["NCCL_IB_HCA"] = Setting(_hca(rails), f"the active compute rails {names}{left}; `=` matches the names "
                                            f"exactly (`mlx5_1` alone also takes mlx5_10 ...)")
    s["UCX_NET_DEVICES"] = Setting(",".join(p.name for p in rails), "the same rails, as UCX names them (device:port)")
    layers = Counter(p.link_layer for p in rails)
    if len(layers) > 1:
        main = layers.most_common(1)[0][0]
        for p in rails:
            if p.link_layer != main:
                problems.append(Problem(host.name, p.entity, "link_layer_differs",
                                        {"link_layer": p.link_layer, "nccl_rail_link_layer": main},
                                        f"{p.name} is {p.link_layer}, the host's other rails {main}"))
    roce = [p for p in rails if p.roce]
    ib = [p for p in rails if not p.roce]
    if roce:
        problems += _gid(host, roce)
        problems += _traffic_class(host, roce, qos, profile)
    if ib:
        s["NCCL_IB_SL"] = Setting("0", f"InfiniBand rails ({', '.join(p.name for p in ib)}): service level 0, NCCL's "
                                       "default; the bundle holds no subnet-manager QoS (SL to VL) that names another")
        s["UCX_IB_SL"] = Setting("0", "the same service level for UCX")
    s["NCCL_SOCKET_IFNAME"] = _socket_ifname(rails)
    return problems


def _gid(host: HostRecipe, roce: list[Port]) -> list[Problem]:
    s, problems = host.settings, []
    found = {p.name: p.roce_v2_gid() for p in roce}
    for p in roce:
        if found[p.name] is None:
            kinds = ", ".join(f"[{g.index}] {g.kind or '?'}{' ' + g.ipv4 if g.ipv4 else ''}"
                              for _, g in sorted(p.gids.items())) or "no GID read"
            problems.append(Problem(host.name, p.entity, "no_roce_v2_ipv4_gid", {"nccl_gids": kinds},
                                    f"{p.name}: no RoCE v2 GID with an IPv4 address ({kinds})"))
    indexes = {name: g.index for name, g in found.items() if g is not None}
    rows = "; ".join(f"{name} GID[{g.index}] {g.kind} {g.ipv4}{' on ' + g.netdev if g.netdev else ''}"
                     for name, g in found.items() if g is not None)
    if indexes and len(set(indexes.values())) == 1:
        index = str(next(iter(indexes.values())))
        s["NCCL_IB_GID_INDEX"] = Setting(index, f"the RoCE v2 IPv4 GID of every RoCE rail: {rows}")
        s["UCX_IB_GID_INDEX"] = Setting(index, "the same GID row for UCX")
        return problems
    if len(set(indexes.values())) > 1:
        for p in roce:
            if p.name in indexes:
                problems.append(Problem(host.name, p.entity, "gid_index_split",
                                        {"nccl_gid_index": indexes[p.name],
                                         "nccl_gid_indexes": ", ".join(f"{n} {i}" for n, i in indexes.items())},
                                        f"RoCE v2 IPv4 GIDs at different indexes: {rows}"))
        why = (f"no one index fits ({rows}) and NCCL takes one per process: left unset, NCCL 2.21 and later "
               f"choose each port's own RoCE v2 IPv4 GID (NCCL_IB_ROCE_VERSION_NUM, NCCL_IB_ADDR_FAMILY)")
    else:
        why = "no RoCE rail has a RoCE v2 GID with an IPv4 address (show_gids)"
    s["NCCL_IB_GID_INDEX"] = Setting(None, why)
    s["NCCL_IB_ROCE_VERSION_NUM"] = Setting("2", "RoCE v2: routable, carries the DSCP the traffic class sets")
    s["NCCL_IB_ADDR_FAMILY"] = Setting("AF_INET", "the GIDs carrying an IPv4 address")
    s["UCX_IB_GID_INDEX"] = Setting(None, "left unset: UCX finds each port's RoCE v2 IPv4 GID itself")
    return problems


def _traffic_class(host: HostRecipe, roce: list[Port], qos: dict, profile: dict) -> list[Problem]:
    dscp, priority = int(profile["roce_dscp"]), int(profile["roce_priority"])
    tc = str(dscp * 4)
    problems, checked = [], []
    for p in roce:
        netdev = p.netdev
        settings = qos.get((host.name, netdev or ""))
        if settings is None:
            checked.append(f"{p.name}: no mlnx_qos output, not checked")
            continue
        trust, mapped = settings["trust"], settings["dscp"].get(dscp)
        pfc = settings["pfc"].get(priority)
        if trust and trust.lower() != "dscp":
            problems.append(Problem(host.name, p.entity, "dscp_not_lossless",
                                    {"trust_mode": trust, "nccl_dscp_priority": mapped},
                                    f"{netdev} trusts {trust}: the DSCP NCCL_IB_TC sets does not choose the priority"))
            checked.append(f"{netdev} trusts {trust} (not dscp)")
        elif mapped is not None and mapped != priority:
            problems.append(Problem(host.name, p.entity, "dscp_not_lossless",
                                    {"trust_mode": trust, "nccl_dscp_priority": mapped},
                                    f"{netdev} maps DSCP {dscp} to priority {mapped}, not {priority}"))
            checked.append(f"{netdev} maps DSCP {dscp} to priority {mapped}")
        else:
            state = "" if pfc is None else (", PFC on" if pfc else ", PFC off there")
            checked.append(f"{netdev} trusts {trust or '?'}, DSCP {dscp} → priority "
                           f"{mapped if mapped is not None else '? (map not printed)'}{state}")
    why = (f"the site's RoCE class: DSCP {dscp} × 4 = {tc} (the traffic class byte; the NIC sets the ECN bits), "
           f"lossless priority {priority}; " + "; ".join(checked))
    host.settings["NCCL_IB_TC"] = Setting(tc, why)
    host.settings["UCX_IB_TRAFFIC_CLASS"] = Setting(tc, "the same traffic class for UCX")
    return problems


def _socket_ifname(rails: list[Port]) -> Setting:
    for p in rails:
        gid = p.roce_v2_gid() if p.roce else None
        if gid is not None and gid.netdev:
            return Setting(gid.netdev, f"the bootstrap's TCP runs over the first rail's netdev, which has an IPv4 "
                                       f"address ({gid.ipv4}, GID[{gid.index}] of {p.name})")
    return Setting(None, "left unset: no fact of the bundle names the interface of this host's management address; "
                         "set it to that interface (NCCL's default takes the first that is not lo or docker)")


def _fleet(hosts: list[HostRecipe]) -> tuple[dict[str, str | None], list[str]]:
    fleet: dict[str, str | None] = {}
    differ = []
    for key in KEYS:
        values = {h.settings[key].value if key in h.settings else None for h in hosts}
        if len(values) == 1:
            fleet[key] = next(iter(values))
        else:
            differ.append(key)
    return fleet, differ


def _across_hosts(hosts: list[HostRecipe]) -> list[Problem]:
    """A GID index that differs from the other hosts': one job-wide environment cannot fit them all."""
    values = {h.name: h.settings["NCCL_IB_GID_INDEX"].value for h in hosts if "NCCL_IB_GID_INDEX" in h.settings}
    counted = Counter(v for v in values.values() if v is not None)
    if len(counted) < 2:
        return []
    common, _ = counted.most_common(1)[0]
    return [Problem(name, None, "gid_index_differs_across_hosts",
                    {"nccl_gid_index": int(value), "nccl_fleet_gid_index": int(common)},
                    f"GID index {value}, the fleet's {common}")
            for name, value in sorted(values.items()) if value is not None and value != common]
