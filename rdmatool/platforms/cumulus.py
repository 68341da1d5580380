"""Cumulus Linux switches: reached as a Linux shell, read with NVUE's `nv show` commands.

The show commands are read-only (state and counters; no clear, no `nv set`). SHOW_COMMANDS is gathered by
rdmatool/commands.py into SWITCH_COMMANDS, the one audited list of what rdmatool runs on a device: a change here is
a change to that list (tests/test_platforms.py checks every entry is a read-only show).

Port names: `swp1`, and breakouts `swp1s0`, `swp1s1`, which are ports of their own, never `swp1`.

Suggested commands (printed, never run) are NVUE as in NVIDIA's Cumulus Linux 5.x user guide, RoCE and QoS
chapters [C1] (`nv set qos congestion-control default-global traffic-class …`, `nv set qos pfc default-global …`,
`nv set qos mapping default-global …`, `nv config apply`). NVUE QoS profiles are global (`default-global`): no
command names a port.
"""

from __future__ import annotations

import re

from rdmatool.platforms.shapes import EcnObject, SwitchCommand
from rdmatool.platforms.syntax import matched

NAME = "cumulus"
TITLE = "Cumulus"
KIND = "switch"
ALIASES = ("cumulus", "nvidia.nvue.nvue", "cumulus_linux")  # the ansible_network_os values that name it
SUGGESTION_KEY = NAME

# --- reaching it (rdmatool.transport.switch)
NETMIKO_DEVICE_TYPE = "linux"
ENTER_ENABLE = False
LOGIN_PROMPT_END = None  # netmiko's own login

# --- what it runs: LLDP first (it finds the ports facing hosts), then per port the ones LLDP found
SHOW_COMMANDS = (
    SwitchCommand("lldpctl", "lldpctl -f json"),
    SwitchCommand("cumulus_roce", "nv show qos roce", counters=False),
    SwitchCommand("cumulus_pfc_stats", "nv show interface {port} counters qos pfc-stats", per_port=True),
    SwitchCommand("cumulus_port_stats", "nv show interface {port} counters qos port-stats", per_port=True),
    SwitchCommand("cumulus_egress_queue", "nv show interface {port} counters qos egress-queue-stats", per_port=True),
    SwitchCommand(
        "cumulus_ingress_buffer", "nv show interface {port} counters qos ingress-buffer-stats", per_port=True
    ),
    SwitchCommand("cumulus_roce_counters", "nv show interface {port} qos roce counters", per_port=True),
    SwitchCommand("cumulus_roce_status", "nv show interface {port} qos roce status", per_port=True, counters=False),
    SwitchCommand("cumulus_counters_errors", "nv show interface {port} counters errors", per_port=True),
    SwitchCommand("cumulus_interface_status", "nv show interface -o json", counters=False),
)

# --- its port names
PORT_NAME = re.compile(r"swp[0-9]{1,5}(?:s[0-9]{1,3})?")
CONFIG_PORT_NAME = re.compile(r"swp[0-9]{1,3}(?:s[0-9]{1,2})?")
PORT_PREFIXES = ()  # `swp` is part of the name: `swp1` is not port `1`


def port_argument(port: str) -> str:
    """The port as a command line takes it."""
    return port


def config_port(name) -> str:
    return port_argument(matched(CONFIG_PORT_NAME, name, f"not a {NAME} port name"))


# --- its suggestions (rdmatool.tune)
COMMENT = "#"
VERIFIED_SYNTAX = "NVIDIA Cumulus Linux 5.x user guide, RoCE and QoS chapters (NVUE) [C1]"
VENDOR_DOCUMENT = None
SITE_DEFAULTS: dict[str, str] = {}
ECN_OBJECT = EcnObject("global-profile", name="default-global")
ECN_NOTE = ""
APPLY_LINE = "nv config apply"  # ends the whole change, once (rdmatool.tune.suggest.context.add_commands)
NOT_RENDERED: dict[str, str] = {}


def _nv(*lines: str) -> list[str]:
    return [*lines, APPLY_LINE]


def trust_dscp(port, options: dict | None = None) -> list[str]:
    return _nv("nv set qos mapping default-global trust l3")


def pfc(port, on: list[int], off: list[int], options: dict | None = None) -> list[str]:
    return _nv(f"nv set qos pfc default-global switch-priority {','.join(map(str, on))}",
               "nv set qos pfc default-global rx enable", "nv set qos pfc default-global tx enable")


def dscp_map(port, d: int, q: int, options: dict | None = None) -> list[str]:
    return _nv(f"nv set qos mapping default-global dscp {d} switch-priority {q}")


def ecn(where, t: int, lo: int, hi: int, p: int, options: dict | None = None) -> list[str]:
    """`where` is unused: the congestion-control profile is global."""
    return _nv(f"nv set qos congestion-control default-global traffic-class {t} min-threshold {lo} "
               f"max-threshold {hi} probability {p} ecn enable")


def cable_length(port, m: int) -> list[str]:
    return _nv(f"nv set qos pfc default-global cable-length {m}")


def strict_priority(port, t: int, options: dict | None = None) -> list[str]:
    return _nv(f"nv set qos egress-scheduler default-global traffic-class {t} mode strict")


def dscp_map_note(d: int, q: int) -> str:
    return ""
