"""Render one desired setting as the exact commands for one platform. Printed for an engineer, never executed.

Every value placed in a command is validated first (names by strict patterns, numbers as ints in range), and
shell commands (Linux hosts, SONiC) quote every argument with `shlex.quote`. A function returns [] when a platform
has no rendering for that setting; it raises ValueError when a value does not validate.

Syntax sources, per platform (source labels as in docs/tuning.md §8):

* host — NVIDIA's MLNX_OFED documentation, "Quality of Service (QoS)" for `mlnx_qos` [C12] and "Explicit Congestion
  Notification (ECN)" for `/sys/class/net/<if>/ecn/...` [C8]; `cma_roce_tos` as in docs/tuning.md §1.3 item 3, whose
  file locations differ between driver releases.
* sonic — the sonic-utilities CLI (`config interface pfc priority`, `ecnconfig -p … -gmin … -gmax … -gdrop …`,
  `ecnconfig -q`), github.com/sonic-net/sonic-utilities. DSCP_TO_TC_MAP and PORT_QOS_MAP have no CLI, so they are
  CONFIG_DB writes with `sonic-db-cli`, in the table layout of sonic-buildimage's `qos_config.j2` (docs/tuning.md
  §1.2). `config interface cable-length` (dynamic buffer model): not verified against the vendor's documentation.
* cumulus — NVUE as in NVIDIA's Cumulus Linux 5.x user guide, RoCE and QoS chapters [C1]
  (`nv set qos congestion-control default-global traffic-class …`, `nv set qos pfc default-global …`,
  `nv set qos mapping default-global …`, `nv config apply`). NVUE QoS profiles are global (`default-global`).
* onyx — the ECN line (`interface ethernet <port> traffic-class <tc> congestion-control ecn minimum-absolute <KB>
  maximum-absolute <KB>`, thresholds in KB of 1024 bytes, as the onyx_ecn parser reads them) follows public
  deployment guides; it and the PFC / trust / ETS lines are not verified against the vendor's documentation (the
  NVIDIA Onyx / MLNX-OS user manual).
* eos — `priority-flow-control priority N no-drop`, `qos trust dscp`, `qos map dscp … to traffic-class …`,
  `tx-queue N` / `random-detect ecn …`: not verified against the vendor's documentation (Arista's EOS QoS
  configuration guide).
* nxos — MQC policies, `random-detect … ecn`, `pause pfc-cos`, `priority-flow-control mode on`: not verified against
  the vendor's documentation (Cisco's Nexus 9000 Series NX-OS Quality of Service Configuration Guide). Policy and
  class names are the site profile's (defaults below).
"""

from __future__ import annotations

import re
import shlex

HOST = "host"
SWITCH_PLATFORMS = ("sonic", "cumulus", "onyx", "eos", "nxos")
PLATFORMS = (HOST, *SWITCH_PLATFORMS)

# Matched whole (`fullmatch`): `$` would also accept a trailing newline, i.e. a second line in a pasted command.
_NETDEV = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@:-]{0,14}")  # IFNAMSIZ 16 incl. NUL; no '/', no spaces
_RDMA_DEV = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")  # mlx5_0, rocep59s0f0, ibp3s0
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")  # WRED profile, QoS map, policy / class names
_PORTS = {
    "sonic": re.compile(r"Ethernet[0-9]{1,4}"),
    "cumulus": re.compile(r"swp[0-9]{1,3}(?:s[0-9]{1,2})?"),
    "onyx": re.compile(r"(?:Eth)?([0-9]{1,2}/[0-9]{1,2}(?:/[0-9]{1,2})?)"),
    "eos": re.compile(r"Ethernet[0-9]{1,3}(?:/[0-9]{1,2}){0,2}"),
    "nxos": re.compile(r"Ethernet[0-9]{1,3}/[0-9]{1,3}(?:/[0-9]{1,2})?"),
}

# The one list of platforms whose command syntax the project has checked against the vendor's own documentation,
# with the document (docs/tuning.md §9 keeps the same list with the full references). Every other platform's
# commands are printed with syntax_note(): a suggestion never looks more certain than it is.
VERIFIED_SYNTAX: dict[str, str] = {
    HOST: "NVIDIA MLNX_OFED documentation, QoS (mlnx_qos) [C12] and ECN (/sys/class/net/<if>/ecn) [C8]",
    "sonic": "the sonic-utilities CLI (config interface pfc, ecnconfig) and sonic-buildimage qos_config.j2 [C2]",
    "cumulus": "NVIDIA Cumulus Linux 5.x user guide, RoCE and QoS chapters (NVUE) [C1]",
}
VENDOR_DOCUMENTS: dict[str, str] = {
    "onyx": "the NVIDIA Onyx (MLNX-OS) user manual",
    "eos": "Arista's EOS QoS configuration guide",
    "nxos": "Cisco's Nexus 9000 Series NX-OS Quality of Service Configuration Guide",
}


def syntax_note(platform: str) -> str | None:
    """The warning printed with a platform's commands when their syntax is not verified; None when it is."""
    if platform in VERIFIED_SYNTAX:
        return None
    document = VENDOR_DOCUMENTS.get(platform, "the vendor's documentation")
    return (f"{platform} commands: syntax not verified against the vendor's documentation ({document}); check them "
            "there before use.")


NXOS_DEFAULTS = {
    "nxos_qos_policy": "QOS_CLASSIFICATION",
    "nxos_network_qos_policy": "QOS_NETWORK",
    "nxos_queuing_policy": "QOS_EGRESS_PORT",
}


# --- validation ----------------------------------------------------------------------------------------------------


def integer(value, lo: int, hi: int, what: str) -> int:
    """An int in [lo, hi]; integral floats (e.g. 3.0 from a DataFrame) are accepted, bools and fractions are not."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: expected an integer, got {value!r}")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"{what}: expected an integer, got {value!r}")
        value = int(value)
    if not isinstance(value, int) and hasattr(value, "item"):  # numpy scalar
        return integer(value.item(), lo, hi, what)
    if not isinstance(value, int):
        raise ValueError(f"{what}: expected an integer, got {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"{what}: {value} is outside {lo}..{hi}")
    return value


def priority(value) -> int:
    return integer(value, 0, 7, "priority")


def dscp(value) -> int:
    return integer(value, 0, 63, "DSCP")


def netdev(name) -> str:
    if not isinstance(name, str) or not _NETDEV.fullmatch(name):
        raise ValueError(f"not a Linux interface name: {name!r}")
    return name


def rdma_device(name) -> str:
    if not isinstance(name, str) or not _RDMA_DEV.fullmatch(name):
        raise ValueError(f"not an RDMA device name: {name!r}")
    return name


def config_name(name, what: str = "name") -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"not a valid {what}: {name!r}")
    return name


def switch_port(platform: str, name) -> str:
    """The port as the platform's config syntax wants it (Onyx `Eth1/1` → `1/1`); ValueError when it does not match."""
    pattern = _PORTS.get(platform)
    if pattern is None:
        raise ValueError(f"unknown switch platform {platform!r}")
    match = pattern.fullmatch(name) if isinstance(name, str) else None
    if match is None:
        raise ValueError(f"not a {platform} port name: {name!r}")
    return match.group(1) if platform == "onyx" else name


def is_port(platform: str, name) -> bool:
    try:
        switch_port(platform, name)
    except ValueError:
        return False
    return True


def _sh(*args) -> str:
    return " ".join(shlex.quote(str(a)) for a in args)


def _echo(value: int, path: str) -> str:
    return f"echo {int(value)} > {shlex.quote(path)}"


def pfc_vector(priorities) -> str:
    """`0,0,0,1,0,0,0,0` for {3}: the mlnx_qos --pfc argument (one flag per priority 0..7)."""
    wanted = {priority(p) for p in priorities}
    return ",".join("1" if p in wanted else "0" for p in range(8))


# --- host (Linux, mlx5 / MLNX_OFED) -----------------------------------------------------------------------------


def host_trust_dscp(ifname: str) -> list[str]:
    return [_sh("mlnx_qos", "-i", netdev(ifname), "--trust", "dscp")]


def host_pfc(ifname: str, priorities) -> list[str]:
    return [_sh("mlnx_qos", "-i", netdev(ifname), "--pfc", pfc_vector(priorities))]


def host_dscp2prio(ifname: str, dscp_value: int, prio: int) -> list[str]:
    return [_sh("mlnx_qos", "-i", netdev(ifname), "--dscp2prio", f"set,{dscp(dscp_value)},{priority(prio)}")]


def host_cable_len(ifname: str, meters: int) -> list[str]:
    return [_sh("mlnx_qos", "-i", netdev(ifname), "--cable_len", integer(meters, 1, 10000, "cable length (m)"))]


def host_dcqcn(ifname: str, point: str, prio: int, enable: bool = True) -> list[str]:
    """NP (notification point, sends CNPs) or RP (reaction point, rate limiter) enable per priority."""
    if point not in ("np", "rp"):
        raise ValueError(f"DCQCN point must be np or rp, got {point!r}")
    return [_echo(1 if enable else 0, f"/sys/class/net/{netdev(ifname)}/ecn/roce_{point}/enable/{priority(prio)}")]


def host_cnp(ifname: str, cnp_dscp: int | None = None, cnp_prio: int | None = None) -> list[str]:
    base = f"/sys/class/net/{netdev(ifname)}/ecn/roce_np"
    out = []
    if cnp_dscp is not None:
        out.append(_echo(dscp(cnp_dscp), f"{base}/cnp_dscp"))
    if cnp_prio is not None:
        out.append(_echo(priority(cnp_prio), f"{base}/cnp_802p_prio"))
    return out


def host_roce_tos(device: str, tos: int, port: int | None = None) -> list[str]:
    """RDMA-CM default TOS (`cma_roce_tos`) and, with a port, the verbs `traffic_class` of that port."""
    dev = rdma_device(device)
    value = integer(tos, 0, 255, "TOS")
    out = [_sh("cma_roce_tos", "-d", dev, "-t", value)]
    if port is not None:
        out.append(_echo(value, f"/sys/class/infiniband/{dev}/tc/{integer(port, 1, 255, 'port')}/traffic_class"))
    return out


# --- switches ----------------------------------------------------------------------------------------------------


def _nv(*lines: str) -> list[str]:
    return [*lines, "nv config apply"]


def switch_trust_dscp(platform: str, port: str | None, options: dict | None = None) -> list[str]:
    opts = {**NXOS_DEFAULTS, "sonic_dscp_map": "AZURE", **(options or {})}
    if platform == "sonic":
        p = switch_port("sonic", port)
        return [_sh("sonic-db-cli", "CONFIG_DB", "HSET", f"PORT_QOS_MAP|{p}", "dscp_to_tc_map",
                    config_name(opts["sonic_dscp_map"], "DSCP_TO_TC_MAP name"))]
    if platform == "cumulus":
        return _nv("nv set qos mapping default-global trust l3")
    if platform == "onyx":
        return ["configure terminal", f"interface ethernet {switch_port('onyx', port)} qos trust L3", "exit"]
    if platform == "eos":
        return ["configure", f"interface {switch_port('eos', port)}", "qos trust dscp", "end"]
    if platform == "nxos":  # NX-OS has no trust knob: DSCP classification is a qos policy bound to the port
        return ["configure terminal", f"interface {switch_port('nxos', port)}",
                f"service-policy type qos input {config_name(opts['nxos_qos_policy'], 'policy name')}", "end"]
    raise ValueError(f"unknown switch platform {platform!r}")


def switch_pfc(platform: str, port: str | None, enable, disable=(), options: dict | None = None) -> list[str]:
    """PFC on the `enable` priorities and off on `disable` (those currently on that should not be)."""
    opts = {**NXOS_DEFAULTS, **(options or {})}
    on = sorted({priority(p) for p in enable})
    off = sorted({priority(p) for p in disable} - set(on))
    if platform == "sonic":
        p = switch_port("sonic", port)
        return ([_sh("config", "interface", "pfc", "priority", p, q, "on") for q in on]
                + [_sh("config", "interface", "pfc", "priority", p, q, "off") for q in off])
    if platform == "cumulus":
        return _nv(f"nv set qos pfc default-global switch-priority {','.join(map(str, on))}",
                   "nv set qos pfc default-global rx enable", "nv set qos pfc default-global tx enable")
    if platform == "onyx":
        p = switch_port("onyx", port)
        return ["configure terminal", "dcb priority-flow-control enable force",
                *[f"dcb priority-flow-control priority {q} enable" for q in on],
                *[f"no dcb priority-flow-control priority {q} enable" for q in off],
                f"interface ethernet {p} dcb priority-flow-control mode on force", "exit"]
    if platform == "eos":
        return ["configure", f"interface {switch_port('eos', port)}", "priority-flow-control on",
                *[f"priority-flow-control priority {q} no-drop" for q in on],
                *[f"no priority-flow-control priority {q} no-drop" for q in off], "end"]
    if platform == "nxos":
        policy = config_name(opts["nxos_network_qos_policy"], "policy name")
        lines = ["configure terminal", f"policy-map type network-qos {policy}"]
        for q in on:
            lines += [f"class type network-qos c-8q-nq{q}", f"pause pfc-cos {q}", "mtu 9216"]
        for q in off:
            lines += [f"class type network-qos c-8q-nq{q}", f"no pause pfc-cos {q}"]
        lines += ["system qos", f"service-policy type network-qos {policy}",
                  f"interface {switch_port('nxos', port)}", "priority-flow-control mode on", "end"]
        return lines
    raise ValueError(f"unknown switch platform {platform!r}")


def switch_dscp_map(platform: str, port: str | None, dscp_value: int, prio: int,
                    options: dict | None = None) -> list[str]:
    """Classify a DSCP into a switch priority / traffic class (identity priority = TC = queue assumed)."""
    opts = {**NXOS_DEFAULTS, "sonic_dscp_map": "AZURE", **(options or {})}
    d, q = dscp(dscp_value), priority(prio)
    if platform == "sonic":
        return [_sh("sonic-db-cli", "CONFIG_DB", "HSET",
                    f"DSCP_TO_TC_MAP|{config_name(opts['sonic_dscp_map'], 'DSCP_TO_TC_MAP name')}", d, q)]
    if platform == "cumulus":
        return _nv(f"nv set qos mapping default-global dscp {d} switch-priority {q}")
    if platform == "onyx":
        return []  # no verified Onyx syntax for a per-DSCP map; Spectrum's default maps DSCP >> 3 (pfc.py says so)
    if platform == "eos":
        return ["configure", f"qos map dscp {d} to traffic-class {q}", "end"]
    if platform == "nxos":
        policy = config_name(opts["nxos_qos_policy"], "policy name")
        lines = ["configure terminal", f"class-map type qos match-all dscp{d}-prio{q}", f"match dscp {d}",
                 f"policy-map type qos {policy}", f"class dscp{d}-prio{q}", f"set qos-group {q}"]
        if port is not None:
            lines += [f"interface {switch_port('nxos', port)}", f"service-policy type qos input {policy}"]
        return [*lines, "end"]
    raise ValueError(f"unknown switch platform {platform!r}")


def switch_ecn(platform: str, where: str | list[str] | None, tc: int, kmin: int, kmax: int, pmax_pct: int,
               options: dict | None = None) -> list[str]:
    """WRED/ECN thresholds of the lossless egress queue. `where` is the SONiC WRED profile name, the port on Onyx /
    EOS, the port or ports an NX-OS queuing policy is bound to (unused on Cumulus, whose congestion-control profile
    is global)."""
    opts = {**NXOS_DEFAULTS, **(options or {})}
    t = priority(tc)
    lo = integer(kmin, 1, 2**32 - 1, "Kmin (bytes)")
    hi = integer(kmax, 1, 2**32 - 1, "Kmax (bytes)")
    p = integer(pmax_pct, 0, 100, "Pmax (%)")
    if lo >= hi:
        raise ValueError(f"Kmin {lo} must be below Kmax {hi}")
    if platform == "sonic":
        profile = config_name(where, "WRED profile name")
        return [_sh("ecnconfig", "-p", profile, "-gmin", lo, "-gmax", hi, "-gdrop", p), _sh("ecnconfig", "-q", t, "on")]
    if platform == "cumulus":
        return _nv(f"nv set qos congestion-control default-global traffic-class {t} min-threshold {lo} "
                   f"max-threshold {hi} probability {p} ecn enable")
    if platform == "onyx":  # thresholds in KB (1024 B); floor keeps Kmax under the PFC trigger
        lo_kb, hi_kb = max(1, lo // 1024), max(2, hi // 1024)
        if lo_kb >= hi_kb:
            lo_kb = hi_kb - 1
        return ["configure terminal",
                f"interface ethernet {switch_port('onyx', where)} traffic-class {t} congestion-control ecn "
                f"minimum-absolute {lo_kb} maximum-absolute {hi_kb}", "exit"]
    if platform == "eos":
        return ["configure", f"interface {switch_port('eos', where)}", f"tx-queue {t}",
                f"random-detect ecn minimum-threshold {lo} bytes maximum-threshold {hi} bytes "
                f"max-mark-probability {p}", "end"]
    if platform == "nxos":
        policy = config_name(opts["nxos_queuing_policy"], "policy name")
        lines = ["configure terminal", f"policy-map type queuing {policy}", f"class type queuing c-out-8q-q{t}",
                 f"random-detect minimum-threshold {lo} bytes maximum-threshold {hi} bytes drop-probability {p} "
                 "weight 0 ecn"]
        for port in [where] if isinstance(where, str) else list(where or []):
            lines += [f"interface {switch_port('nxos', port)}", f"service-policy type queuing output {policy}"]
        return [*lines, "end"]
    raise ValueError(f"unknown switch platform {platform!r}")


def switch_cable_length(platform: str, port: str | None, meters: int) -> list[str]:
    m = integer(meters, 1, 10000, "cable length (m)")
    if platform == "sonic":
        return [_sh("config", "interface", "cable-length", switch_port("sonic", port), f"{m}m")]
    if platform == "cumulus":
        return _nv(f"nv set qos pfc default-global cable-length {m}")
    return []  # Onyx / EOS / NX-OS size PG headroom from their own port-speed tables: no cable-length knob rendered


def switch_strict_priority(platform: str, port: str | None, tc: int, options: dict | None = None) -> list[str]:
    """Strict-priority scheduling for the CNP traffic class (docs/tuning.md §1.1: CNPs ride TC 6, strict)."""
    opts = {**NXOS_DEFAULTS, **(options or {})}
    t = priority(tc)
    if platform == "cumulus":
        return _nv(f"nv set qos egress-scheduler default-global traffic-class {t} mode strict")
    if platform == "onyx":
        return ["configure terminal", f"interface ethernet {switch_port('onyx', port)} traffic-class {t} dcb ets strict",
                "exit"]
    if platform == "nxos":
        return ["configure terminal",
                f"policy-map type queuing {config_name(opts['nxos_queuing_policy'], 'policy name')}",
                f"class type queuing c-out-8q-q{t}", "priority level 1", "end"]
    return []  # SONiC: SCHEDULER table (no CLI); EOS: queues are strict unless a bandwidth share is configured
