"""What NCCL_DEBUG=INFO logs show NCCL really chose, per process, and where that departs from the recipe.

The log's samples (rdmatool.parsers.nccl_debug) become one `Process` per `host:pid`. Checked against the recipe of
the process's host (rdmatool.nccl.recipe, from a bundle of the job's hosts): a fallback to TCP sockets (`Using
network Socket`; a net plugin that uses RDMA with NCCL_IB_DISABLE=1 is no fallback), a compute rail it did not use,
a device it used that is no compute rail, a GID index or traffic class other than the recipe's; GPU Direct RDMA off
without a recipe too. A host of the log the bundle has no recipe for is matched by its short name (`gpu01` for
`gpu01.cluster.local`), else left unchecked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rdmatool import schemas
from rdmatool.model import Sample
from rdmatool.nccl.findings import finding_json, findings_lines
from rdmatool.nccl.recipe import Problem, Recipe

NO_RECORD = "no NCCL record"  # how the parser's error for a log without NCCL_DEBUG=INFO begins


@dataclass
class Process:
    host: str
    pid: str
    source: str
    net: str | None = None
    devices: list[str] = field(default_factory=list)  # `mlx5_0:1/RoCE` as listed, or a socket's interface
    transport: str | None = None  # NET/IB, NET/Socket, NET/gIB ...
    no_device: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    gid_indexes: set[int] = field(default_factory=set)
    gdr: dict[str, int] = field(default_factory=dict)
    connections: dict[str, int] = field(default_factory=dict)
    ranks: list[int] = field(default_factory=list)
    nranks: int | None = None
    connected: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    version: str | None = None

    @property
    def entity(self) -> str:
        return f"{self.host}:{self.pid}"

    @property
    def socket(self) -> bool:
        return (self.net or "").lower() == "socket" or any("/Socket/" in p for p in self.connections)

    @property
    def ports(self) -> list[str]:
        """The RDMA ports used, `mlx5_0:1` (the link layer cut)."""
        if self.socket or not self.transport or self.transport == "NET/Socket":
            return []
        return [d.split("/", 1)[0] for d in self.devices]

    def as_json(self) -> dict:
        return {"host": self.host, "pid": self.pid, "log": self.source, "version": self.version, "network": self.net,
                "transport": self.transport, "devices": self.devices, "no_device": self.no_device, "env": self.env,
                "gid_indexes": sorted(self.gid_indexes), "gdr": self.gdr, "connections": self.connections,
                "ranks": self.ranks, "nranks": self.nranks, "connected": self.connected, "warnings": self.warnings}


def parse(text: str) -> list[Sample]:
    """The log's samples (the nccl_debug parser's, a trailing shell prompt dropped as `rdmatool parse` drops it)."""
    from rdmatool.parsers import nccl_debug
    from rdmatool.parsers._common import without_trailing_prompt

    return nccl_debug.parse(without_trailing_prompt(text)[0])


def read(samples: list[Sample], source: str) -> list[Process]:
    """The processes of one log's samples, in the order the log first names them."""
    processes: dict[str, Process] = {}
    version = None
    for s in samples:
        if s.metric == "nccl_version":
            version = version or s.text
            continue
        if ":" not in s.entity or s.entity in ("log", "other", "prompt"):
            continue
        host, _, pid = s.entity.rpartition(":")
        p = processes.setdefault(s.entity, Process(host, pid, source))
        if s.metric == "nccl_net":
            p.net = s.text
        elif s.metric == "nccl_net_device":
            if p.transport != s.raw_key:  # a later `Using` line (another transport) replaces the list
                p.transport, p.devices = s.raw_key, []
            p.devices.append(s.text or "")
        elif s.metric == "nccl_no_device":
            p.no_device.append(s.text or "")
        elif s.metric == "nccl_env":
            p.env[s.raw_key or ""] = s.text or ""
        elif s.metric == "nccl_gid_index" and s.value is not None:
            p.gid_indexes.add(int(s.value))
        elif s.metric == "nccl_gdr":
            p.gdr[s.raw_key or ""] = int(s.value or 0)
        elif s.metric == "nccl_connections":
            p.connections[s.raw_key or ""] = int(s.value or 0)
        elif s.metric == "nccl_rank" and s.value is not None:
            p.ranks.append(int(s.value))
        elif s.metric == "nccl_nranks" and s.value is not None:
            p.nranks = int(s.value)
        elif s.metric == "nccl_connected":
            p.connected.append(s.text or "")
        elif s.metric == "nccl_warning":
            p.warnings.append(s.text or "")
    for p in processes.values():
        p.version = version
    return list(processes.values())


def _host_recipe(recipe: Recipe | None, host: str):
    if recipe is None:
        return None
    by_name = {h.name: h for h in recipe.hosts}
    return by_name.get(host) or by_name.get(host.split(".", 1)[0])


def _port(device: str) -> str:
    """`mlx5_2:1` as the facts name a port: `mlx5_2/1`."""
    name, _, number = device.partition(":")
    return f"{name}/{number or 1}"


def check(processes: list[Process], recipe: Recipe | None, site: dict | None = None) -> list[Problem]:
    """The problems of each process, against its host's recipe where the bundle gives one."""
    problems: list[Problem] = []
    for p in processes:
        own = _host_recipe(recipe, p.host)
        target = own.name if own else p.host
        wanted_env = own.env() if own else {}

        def problem(verdict: str, entity: str, seen: str, wanted: str, why: str, _target=target) -> None:
            problems.append(Problem(_target, entity, verdict, {"nccl_log_seen": seen, "nccl_log_wanted": wanted},
                                    why))

        # Each verdict on its own entity (the process, a port, the process and its variable): a rule's text reads
        # the facts of its subject, which two verdicts on one subject would share.
        if p.socket:
            via = ", ".join(p.devices) if p.transport == "NET/Socket" and p.devices else "sockets"
            problem("socket_fallback", p.entity, f"NET/Socket ({via})",
                    " ".join(f"{k}={v}" for k, v in wanted_env.items()) or "an RDMA device NCCL can open",
                    "Using network Socket")
        for hca, on in sorted(p.gdr.items()):
            if not on:
                problem("gdr_off", f"{p.entity} {hca}", f"GPU Direct RDMA disabled for {hca}", "enabled",
                        "GPU Direct RDMA disabled")
        if own is None:
            continue
        rails = [r.name for r in own.rails]
        used = p.ports
        if used:
            for rail in rails:
                if rail not in used:
                    problem("missing_rail", _port(rail), ", ".join(used), ", ".join(rails), f"{rail} not used")
            for device in used:
                if device not in rails:
                    problem("foreign_hca", _port(device), f"{device} ({p.entity})", ", ".join(rails),
                            f"{device} is no compute rail")
        wanted_gid = own.settings.get("NCCL_IB_GID_INDEX")
        seen_gids = set(p.gid_indexes)
        if "NCCL_IB_GID_INDEX" in p.env and p.env["NCCL_IB_GID_INDEX"].lstrip("-").isdigit():
            seen_gids.add(int(p.env["NCCL_IB_GID_INDEX"]))
        if wanted_gid is not None and wanted_gid.value is not None and used:
            other = sorted(g for g in seen_gids if str(g) != wanted_gid.value and g >= 0)
            if other:
                problem("gid_index", f"{p.entity} NCCL_IB_GID_INDEX", ", ".join(map(str, other)), wanted_gid.value,
                        "GID index")
        wanted_tc = own.settings.get("NCCL_IB_TC")
        if wanted_tc is not None and wanted_tc.value is not None and used and any("RoCE" in d for d in p.devices):
            seen_tc = p.env.get("NCCL_IB_TC", "0")  # unset: NCCL's default traffic class 0
            if seen_tc.strip() != wanted_tc.value:
                problem("traffic_class", f"{p.entity} NCCL_IB_TC",
                        seen_tc + ("" if "NCCL_IB_TC" in p.env else " (NCCL_IB_TC unset)"), wanted_tc.value,
                        "traffic class")
    return problems


def as_json(processes: list[Process], found: list, bundle: str | None) -> dict:
    return {"schema": schemas.tag("nccl-check"), "bundle": bundle, "processes": [p.as_json() for p in processes],
            "findings": [finding_json(f) for f in found]}


def table(processes: list[Process], found: list, bundle: str | None) -> list[str]:
    out = []
    for p in processes:
        head = f"{p.entity} ({p.source})"
        if p.ranks:
            head += f" rank {', '.join(map(str, p.ranks))}" + (f" of {p.nranks}" if p.nranks else "")
        out.append(head)
        out.append(f"  network {p.net or '?'}: {p.transport or ''} {' '.join(p.devices) or '(no device listed)'}")
        if p.no_device:
            out.append(f"  no device: {', '.join(p.no_device)}")
        if p.env:
            out.append("  env: " + " ".join(f"{k}={v}" for k, v in p.env.items()))
        if p.gid_indexes:
            out.append(f"  GID index in use: {', '.join(map(str, sorted(p.gid_indexes)))}")
        if p.gdr:
            out.append("  GPU Direct RDMA: " + ", ".join(f"{k} {'on' if v else 'off'}" for k, v in p.gdr.items()))
        if p.connections:
            out.append("  connections: " + ", ".join(f"{k} ×{v}" for k, v in p.connections.items()))
        if p.connected:
            out.append(f"  connected all {' and '.join(p.connected)}")
        for warning in p.warnings[:3]:
            out.append(f"  WARN {warning}")
    if not bundle:
        out.append("")
        out.append("not checked against a recipe: give --bundle B (a bundle of the job's hosts)")
    return out + findings_lines(found)
