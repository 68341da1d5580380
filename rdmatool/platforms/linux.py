"""Linux hosts (mlx5 NICs, MLNX_OFED): the one host platform.

Hosts run no show commands of their own: rdmatool/commands.py sends each host its one audited script (HOST_SCRIPT),
which finds the RDMA devices, ports and netdevs itself. What this module declares is the host's name, and how a
suggestion's change is written as the host's commands (filed under `host` in a suggestion's commands).

Syntax sources (source labels as in docs/tuning.md §8): NVIDIA's MLNX_OFED documentation, "Quality of Service
(QoS)" for `mlnx_qos` [C12] and "Explicit Congestion Notification (ECN)" for `/sys/class/net/<if>/ecn/...` [C8];
`cma_roce_tos` as in docs/tuning.md §1.3 item 3, whose file locations differ between driver releases. Every argument
is validated (rdmatool.platforms.syntax) and shell-quoted.
"""

from __future__ import annotations

from rdmatool.platforms.syntax import dscp, echo, integer, netdev, pfc_vector, priority, rdma_device, sh

NAME = "linux"
TITLE = "Linux"
KIND = "host"
ALIASES = ("linux",)  # the ansible_network_os values that name it
SUGGESTION_KEY = "host"  # a suggestion's commands for a host are filed under `host`

COMMENT = "#"  # a comment line in the shell the commands are pasted into
VERIFIED_SYNTAX = "NVIDIA MLNX_OFED documentation, QoS (mlnx_qos) [C12] and ECN (/sys/class/net/<if>/ecn) [C8]"
VENDOR_DOCUMENT = None


def host_trust_dscp(ifname: str) -> list[str]:
    return [sh("mlnx_qos", "-i", netdev(ifname), "--trust", "dscp")]


def host_pfc(ifname: str, priorities) -> list[str]:
    return [sh("mlnx_qos", "-i", netdev(ifname), "--pfc", pfc_vector(priorities))]


def host_dscp2prio(ifname: str, dscp_value: int, prio: int) -> list[str]:
    return [sh("mlnx_qos", "-i", netdev(ifname), "--dscp2prio", f"set,{dscp(dscp_value)},{priority(prio)}")]


def host_cable_len(ifname: str, meters: int) -> list[str]:
    return [sh("mlnx_qos", "-i", netdev(ifname), "--cable_len", integer(meters, 1, 10000, "cable length (m)"))]


def host_dcqcn(ifname: str, point: str, prio: int, enable: bool = True) -> list[str]:
    """NP (notification point, sends CNPs) or RP (reaction point, rate limiter) enable per priority."""
    if point not in ("np", "rp"):
        raise ValueError(f"DCQCN point must be np or rp, got {point!r}")
    return [echo(1 if enable else 0, f"/sys/class/net/{netdev(ifname)}/ecn/roce_{point}/enable/{priority(prio)}")]


def host_cnp(ifname: str, cnp_dscp: int | None = None, cnp_prio: int | None = None) -> list[str]:
    base = f"/sys/class/net/{netdev(ifname)}/ecn/roce_np"
    out = []
    if cnp_dscp is not None:
        out.append(echo(dscp(cnp_dscp), f"{base}/cnp_dscp"))
    if cnp_prio is not None:
        out.append(echo(priority(cnp_prio), f"{base}/cnp_802p_prio"))
    return out


def host_roce_tos(device: str, tos: int, port: int | None = None) -> list[str]:
    """RDMA-CM default TOS (`cma_roce_tos`) and, with a port, the verbs `traffic_class` of that port."""
    dev = rdma_device(device)
    value = integer(tos, 0, 255, "TOS")
    out = [sh("cma_roce_tos", "-d", dev, "-t", value)]
    if port is not None:
        out.append(echo(value, f"/sys/class/infiniband/{dev}/tc/{integer(port, 1, 255, 'port')}/traffic_class"))
    return out
