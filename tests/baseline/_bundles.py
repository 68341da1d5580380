"""Hand-built bundles for the baseline tests: a few hosts (sysfs, ethtool, perftest, mlnx_qos) and a SONiC switch.

Every figure a test asserts on is an input here; the tests compute their expectations from these inputs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from rdmatool.bundle import BundleWriter
from rdmatool.model import CommandResult, Platform, Target, TargetKind

WINDOW_S = 10.0
T0 = datetime(2024, 5, 1, 2, 0, 0, tzinfo=timezone.utc)
SPEEDS = {100: "EDR", 200: "HDR", 400: "NDR"}


@dataclass
class Host:
    name: str
    role: str = "compute"
    fw: str = "28.39.1002"
    ca_type: str = "MT4129"
    board_id: str = "MT_0000000838"
    link_rate: int = 400
    bw: dict[int, float] = field(default_factory=lambda: {65536: 96.5, 1048576: 97.4})
    pauses: tuple[int, int] = (1000, 1500)  # rx_prio3_pause in snapshot 0 and 1
    trust: str = "dscp"
    pfc: tuple[int, ...] = (3,)


@dataclass
class Switch:
    name: str = "leaf01"
    kmin: int = 102400
    kmax: int = 409600
    pmax: int = 20


def sysfs(h: Host) -> str:
    base = "/sys/class/infiniband/mlx5_0"
    return "\n".join([
        f"{base}/board_id:{h.board_id}",
        f"{base}/fw_ver:{h.fw}",
        f"{base}/hca_type:{h.ca_type}",
        f"{base}/ports/1/counters/port_xmit_wait:123",
        f"{base}/ports/1/link_layer:Ethernet",
        f"{base}/ports/1/rate:{h.link_rate} Gb/sec (4X {SPEEDS[h.link_rate]})",
        f"{base}/ports/1/state:4: ACTIVE",
    ]) + "\n"


def ethtool(pauses: int) -> str:
    return f"NIC statistics:\n     rx_packets: 100\n     rx_prio3_pause: {pauses}\n"


def perftest(h: Host) -> str:
    rule = "-" * 87
    rows = "\n".join(f" {size:<10} 5000             {bw + 0.1:.2f}              {bw:.2f}\t\t   0.1"
                     for size, bw in sorted(h.bw.items()))
    return (f"{rule}\n                    RDMA_Write BW Test\n Dual-port       : OFF\t\tDevice         : mlx5_0\n"
            f" Link type       : Ethernet\n{rule}\n"
            f" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n{rows}\n{rule}\n")


def mlnx_qos(h: Host) -> str:
    enabled = "   ".join("1" if p in h.pfc else "0" for p in range(8))
    return (f"DCBX mode: OS controlled\nPriority trust state: {h.trust}\n"
            f"PFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n\tenabled     {enabled}\n")


def sonic_ecn(s: Switch) -> str:
    return (f"Profile: ROCE_LOSSLESS\n-----------------------  ------\necn                      ecn_green\n"
            f"green_max_threshold      {s.kmax}\ngreen_min_threshold      {s.kmin}\n"
            f"green_drop_probability   {s.pmax}\n-----------------------  ------\n")


def write_bundle(path: Path, hosts: list[Host], switches: list[Switch] = (), night: int = 0) -> Path:
    """Two snapshots WINDOW_S apart; `night` sets the manifest's `created` (night n = T0 + n days)."""
    created = T0 + timedelta(days=night)
    writer = BundleWriter(path)

    def add(snapshot: int, target: str, parser: str, stdout: str, qualifier: str | None = None) -> None:
        started = (created + timedelta(seconds=WINDOW_S * snapshot)).isoformat()
        writer.add(snapshot, CommandResult(target=target, parser=parser, command=parser, stdout=stdout,
                                           qualifier=qualifier, started=started))

    for h in hosts:
        for snapshot in (0, 1):
            add(snapshot, h.name, "sysfs_counters", sysfs(h))
            add(snapshot, h.name, "ethtool_stats", ethtool(h.pauses[snapshot]), "eth0")
        add(0, h.name, "mlnx_qos", mlnx_qos(h), "eth0")
        add(1, h.name, "perftest", perftest(h), "ib_write_bw")
    for s in switches:
        add(0, s.name, "sonic_ecn", sonic_ecn(s))
    targets = [Target(h.name, h.name, role=h.role) for h in hosts]
    targets += [Target(s.name, s.name, kind=TargetKind.SWITCH, platform=Platform.SONIC, role="leaf") for s in switches]
    final = writer.commit(targets, [{"index": 0}, {"index": 1}], [], WINDOW_S)
    manifest = json.loads((final / "manifest.json").read_text())
    manifest["created"] = created.isoformat()
    (final / "manifest.json").write_text(json.dumps(manifest))
    return final


def pause_rate(h: Host) -> float:
    return (h.pauses[1] - h.pauses[0]) / WINDOW_S
