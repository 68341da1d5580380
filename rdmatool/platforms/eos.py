"""Arista EOS switches: an IOS-like CLI, read with `show … | json`.

The show commands are read-only (state and counters; no clear, no configure). SHOW_COMMANDS is gathered by
rdmatool/commands.py into SWITCH_COMMANDS, the one audited list of what rdmatool runs on a device: a change here is
a change to that list (tests/test_platforms.py checks every entry is a read-only show).

Port names: `Ethernet1`, `Ethernet1/1`, `Ethernet1/1/1`; its LLDP and the far end may say `Et1/1`.

Suggested commands (printed, never run): `priority-flow-control priority N no-drop`, `qos trust dscp`, `qos map
dscp … to traffic-class …`, `tx-queue N` / `random-detect ecn …`: not verified against the vendor's documentation
(Arista's EOS QoS configuration guide).
"""

from __future__ import annotations

import re

from rdmatool.platforms.shapes import EcnObject, SwitchCommand
from rdmatool.platforms.syntax import matched

NAME = "eos"
TITLE = "EOS"
KIND = "switch"
ALIASES = ("eos", "arista.eos.eos")  # the ansible_network_os values that name it
SUGGESTION_KEY = NAME

# --- reaching it (rdmatool.transport.switch)
NETMIKO_DEVICE_TYPE = "arista_eos"
ENTER_ENABLE = False
LOGIN_PROMPT_END = None  # netmiko's own login

# --- what it runs: JSON forms (they survive firmware changes better than screen layouts); LLDP first
SHOW_COMMANDS = (
    SwitchCommand("eos_lldp_neighbors", "show lldp neighbors | json"),
    SwitchCommand("eos_pfc_counters", "show priority-flow-control counters | json"),
    SwitchCommand("eos_ecn", "show qos interfaces ecn counters queue | json"),
    SwitchCommand("eos_interface_errors", "show interfaces counters errors | json"),
    SwitchCommand("eos_interface_status", "show interfaces status | json", counters=False),
)

# --- its port names
PORT_NAME = re.compile(r"Ethernet[0-9]{1,4}(?:/[0-9]{1,3}){0,2}")
CONFIG_PORT_NAME = re.compile(r"Ethernet[0-9]{1,3}(?:/[0-9]{1,2}){0,2}")
PORT_PREFIXES = ("Ethernet", "Et")  # what the far end may spell before the port number (rdmatool.platforms.port_names)


def port_argument(port: str) -> str:
    """The port as a command line takes it."""
    return port


def config_port(name) -> str:
    return port_argument(matched(CONFIG_PORT_NAME, name, f"not a {NAME} port name"))


# --- its suggestions (rdmatool.tune)
COMMENT = "!"  # `#` is no comment on this command line
VERIFIED_SYNTAX = None
VENDOR_DOCUMENT = "Arista's EOS QoS configuration guide"
SITE_DEFAULTS: dict[str, str] = {}
ECN_OBJECT = EcnObject("port")  # ECN thresholds are set per interface
ECN_NOTE = ""
APPLY_LINE = None
NOT_RENDERED = {
    "cable_length": "PG headroom is sized from its own port-speed tables",
    "strict_priority": "EOS default",  # queues are strict unless a bandwidth share is configured
}


def trust_dscp(port, options: dict | None = None) -> list[str]:
    return ["configure", f"interface {config_port(port)}", "qos trust dscp", "end"]


def pfc(port, on: list[int], off: list[int], options: dict | None = None) -> list[str]:
    return ["configure", f"interface {config_port(port)}", "priority-flow-control on",
            *[f"priority-flow-control priority {q} no-drop" for q in on],
            *[f"no priority-flow-control priority {q} no-drop" for q in off], "end"]


def dscp_map(port, d: int, q: int, options: dict | None = None) -> list[str]:
    return ["configure", f"qos map dscp {d} to traffic-class {q}", "end"]


def ecn(where, t: int, lo: int, hi: int, p: int, options: dict | None = None) -> list[str]:
    """`where`: the port."""
    return ["configure", f"interface {config_port(where)}", f"tx-queue {t}",
            f"random-detect ecn minimum-threshold {lo} bytes maximum-threshold {hi} bytes "
            f"max-mark-probability {p}", "end"]


def cable_length(port, m: int) -> list[str]:
    return []


def strict_priority(port, t: int, options: dict | None = None) -> list[str]:
    return []


def dscp_map_note(d: int, q: int) -> str:
    return ""
