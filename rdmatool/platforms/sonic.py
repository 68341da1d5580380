"""SONiC switches: reached as a Linux shell, read with sonic-utilities' `show` commands.

The show commands are read-only (state and counters; no clear, no config verb). SHOW_COMMANDS is gathered by
rdmatool/commands.py into SWITCH_COMMANDS, the one audited list of what rdmatool runs on a device: a change here is
a change to that list (tests/test_platforms.py checks every entry is a read-only show).

Port names: `Ethernet0` (`PORT_NAME` for a show command line, `CONFIG_PORT_NAME` for a suggested configuration
line). Its LLDP advertises the port *alias* (`etp1`, `fortyGigE0/0`, `Eth1/1`) as the port ID and the port name as
its description; `show interfaces status` maps the two (its Alias column), which rdmatool.platforms.port_names uses.

Suggested commands (printed, never run) follow the sonic-utilities CLI (`config interface pfc priority`,
`ecnconfig -p … -gmin … -gmax … -gdrop …`, `ecnconfig -q`), github.com/sonic-net/sonic-utilities [C2].
DSCP_TO_TC_MAP and PORT_QOS_MAP have no CLI, so they are CONFIG_DB writes with `sonic-db-cli`, in the table layout
of sonic-buildimage's `qos_config.j2` (docs/tuning.md §1.2). `config interface cable-length` (dynamic buffer model):
not verified against the vendor's documentation. Every argument is quoted (a shell runs them).
"""

from __future__ import annotations

import re

from rdmatool.platforms.shapes import EcnObject, SwitchCommand
from rdmatool.platforms.syntax import config_name, matched, sh

NAME = "sonic"
TITLE = "SONiC"
KIND = "switch"
ALIASES = ("sonic", "dellemc.enterprise_sonic.sonic")  # the ansible_network_os values that name it
SUGGESTION_KEY = NAME

# --- reaching it (rdmatool.transport.switch)
NETMIKO_DEVICE_TYPE = "linux"
ENTER_ENABLE = False
LOGIN_PROMPT_END = None  # netmiko's own login

# --- what it runs: JSON where the platform has it; LLDP first (it finds the ports facing hosts)
SHOW_COMMANDS = (
    SwitchCommand("lldpctl", "lldpctl -f json"),
    SwitchCommand("sonic_pfc_counters", "show pfc counters"),
    SwitchCommand("sonic_pfc_priority", "show pfc priority", counters=False),
    SwitchCommand("sonic_queue_counters", "show queue counters"),
    SwitchCommand("sonic_wred_counters", "show queue wredcounters"),
    SwitchCommand("sonic_ecn", "show ecn", counters=False),
    SwitchCommand("sonic_pfcwd_stats", "show pfcwd stats"),
    SwitchCommand("sonic_pfcwd_config", "show pfcwd config", counters=False),
    SwitchCommand("sonic_pg_drop", "show priority-group drop counters"),
    SwitchCommand("sonic_portstat", "show interfaces counters"),
    SwitchCommand("sonic_interface_status", "show interfaces status", counters=False),
)

# --- its port names
PORT_NAME = re.compile(r"Ethernet[0-9]{1,5}")
CONFIG_PORT_NAME = re.compile(r"Ethernet[0-9]{1,4}")
PORT_PREFIXES = ("Ethernet",)  # what the far end may spell before the port number (rdmatool.platforms.port_names)


def port_argument(port: str) -> str:
    """The port as a command line takes it."""
    return port


def config_port(name) -> str:
    return port_argument(matched(CONFIG_PORT_NAME, name, f"not a {NAME} port name"))


# --- its suggestions (rdmatool.tune)
COMMENT = "#"
VERIFIED_SYNTAX = "the sonic-utilities CLI (config interface pfc, ecnconfig) and sonic-buildimage qos_config.j2 [C2]"
VENDOR_DOCUMENT = None
SITE_DEFAULTS = {"sonic_dscp_map": "AZURE", "sonic_wred_profile": "AZURE_LOSSLESS"}
ECN_OBJECT = EcnObject("wred-profile", site_key="sonic_wred_profile")
ECN_NOTE = ""
APPLY_LINE = None  # each command applies itself
NOT_RENDERED = {"strict_priority": "SCHEDULER table"}  # no CLI: a CONFIG_DB table


def trust_dscp(port, options: dict | None = None) -> list[str]:
    opts = {**SITE_DEFAULTS, **(options or {})}
    p = config_port(port)
    return [sh("sonic-db-cli", "CONFIG_DB", "HSET", f"PORT_QOS_MAP|{p}", "dscp_to_tc_map",
               config_name(opts["sonic_dscp_map"], "DSCP_TO_TC_MAP name"))]


def pfc(port, on: list[int], off: list[int], options: dict | None = None) -> list[str]:
    p = config_port(port)
    return ([sh("config", "interface", "pfc", "priority", p, q, "on") for q in on]
            + [sh("config", "interface", "pfc", "priority", p, q, "off") for q in off])


def dscp_map(port, d: int, q: int, options: dict | None = None) -> list[str]:
    opts = {**SITE_DEFAULTS, **(options or {})}
    return [sh("sonic-db-cli", "CONFIG_DB", "HSET",
               f"DSCP_TO_TC_MAP|{config_name(opts['sonic_dscp_map'], 'DSCP_TO_TC_MAP name')}", d, q)]


def ecn(where, t: int, lo: int, hi: int, p: int, options: dict | None = None) -> list[str]:
    """`where`: the WRED profile."""
    profile = config_name(where, "WRED profile name")
    return [sh("ecnconfig", "-p", profile, "-gmin", lo, "-gmax", hi, "-gdrop", p), sh("ecnconfig", "-q", t, "on")]


def cable_length(port, m: int) -> list[str]:
    return [sh("config", "interface", "cable-length", config_port(port), f"{m}m")]


def strict_priority(port, t: int, options: dict | None = None) -> list[str]:
    return []


def dscp_map_note(d: int, q: int) -> str:
    return ""
