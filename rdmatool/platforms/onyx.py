"""NVIDIA Onyx (MLNX-OS) switches: an IOS-like CLI, read with `show` commands after `enable`.

The show commands are read-only (state and counters; no clear, no configure). SHOW_COMMANDS is gathered by
rdmatool/commands.py into SWITCH_COMMANDS, the one audited list of what rdmatool runs on a device: a change here is
a change to that list (tests/test_platforms.py checks every entry is a read-only show).

Login quirks: the CLI starts in a restricted mode and needs `enable` (a privilege level, not a configuration
change) before its show commands answer fully; without it netmiko also stalls on logout waiting for `#`. netmiko's
MLNX-OS driver waits for two seconds of silence after the prompt; rdmatool.transport.switch_drivers reads up to
LOGIN_PROMPT_END instead, the characters its prompt ends with (`switch [standalone: master] >`, `... #`).

Port names: `Eth1/1` or `1/1` (and `Eth1/1/2` for a split port); the per-port show commands and the configuration
lines take `1/1`. Several outputs name no port (the counters views): the echoed command line says which.

Suggested commands (printed, never run): the ECN line (`interface ethernet <port> traffic-class <tc>
congestion-control ecn minimum-absolute <KB> maximum-absolute <KB>`, thresholds in KB of 1024 bytes, as the onyx_ecn
parser reads them) follows public deployment guides; it and the PFC / trust / ETS lines are not verified against the
vendor's documentation (the NVIDIA Onyx / MLNX-OS user manual).
"""

from __future__ import annotations

import re

from rdmatool.platforms.shapes import EcnObject, SwitchCommand
from rdmatool.platforms.syntax import matched

NAME = "onyx"
TITLE = "Onyx"
KIND = "switch"
ALIASES = ("onyx", "mellanox.onyx.onyx", "mlnxos")  # the ansible_network_os values that name it
SUGGESTION_KEY = NAME

# --- reaching it (rdmatool.transport.switch)
NETMIKO_DEVICE_TYPE = "mellanox_mlnxos"
ENTER_ENABLE = True
LOGIN_PROMPT_END = r"[>#]"

# --- what it runs: LLDP first (it finds the ports facing hosts), then per port the ones LLDP found
SHOW_COMMANDS = (
    SwitchCommand("onyx_lldp_neighbors", "show lldp remote"),
    SwitchCommand("onyx_dcb_pfc", "show dcb priority-flow-control", counters=False),
    SwitchCommand("onyx_ecn", "show interfaces ethernet {port} congestion-control", per_port=True),
    *(
        SwitchCommand(
            "onyx_pfc_counters", f"show interfaces ethernet {{port}} counters pfc prio {prio}", per_port=True,
            qualifier=f"prio{prio}", keep_echo=True,
        )
        for prio in range(8)
    ),
    # the output names no port: the echoed command line says which
    SwitchCommand("onyx_interface_counters", "show interfaces ethernet {port} counters", per_port=True,
                  keep_echo=True),
    SwitchCommand("onyx_interface_status", "show interfaces ethernet status", counters=False),
)

# --- its port names
PORT_NAME = re.compile(r"(?:Eth)?[0-9]{1,3}/[0-9]{1,3}(?:/[0-9]{1,3})?")
CONFIG_PORT_NAME = re.compile(r"(?:Eth)?[0-9]{1,2}/[0-9]{1,2}(?:/[0-9]{1,2})?")
PORT_PREFIXES = ("Eth",)  # what the far end may spell before the port number (rdmatool.platforms.port_names)


def port_argument(port: str) -> str:
    """The port as a command line takes it: `1/1` for `Eth1/1`."""
    return port[3:] if port.startswith("Eth") else port


def config_port(name) -> str:
    return port_argument(matched(CONFIG_PORT_NAME, name, f"not a {NAME} port name"))


# --- its suggestions (rdmatool.tune)
COMMENT = "!"  # `#` is no comment on this command line
VERIFIED_SYNTAX = None
VENDOR_DOCUMENT = "the NVIDIA Onyx (MLNX-OS) user manual"
SITE_DEFAULTS: dict[str, str] = {}
ECN_OBJECT = EcnObject("port")  # ECN thresholds are set per interface
ECN_NOTE = "Onyx takes thresholds in KB (1024 B, rounded down) and no Pmax in this command."
APPLY_LINE = None
NOT_RENDERED = {
    "dscp_map": "no verified syntax for a per-DSCP map; Spectrum's default maps DSCP >> 3 (dscp_map_note)",
    "cable_length": "PG headroom is sized from its own port-speed tables",
}


def trust_dscp(port, options: dict | None = None) -> list[str]:
    return ["configure terminal", f"interface ethernet {config_port(port)} qos trust L3", "exit"]


def pfc(port, on: list[int], off: list[int], options: dict | None = None) -> list[str]:
    p = config_port(port)
    return ["configure terminal", "dcb priority-flow-control enable force",
            *[f"dcb priority-flow-control priority {q} enable" for q in on],
            *[f"no dcb priority-flow-control priority {q} enable" for q in off],
            f"interface ethernet {p} dcb priority-flow-control mode on force", "exit"]


def dscp_map(port, d: int, q: int, options: dict | None = None) -> list[str]:
    return []


def ecn(where, t: int, lo: int, hi: int, p: int, options: dict | None = None) -> list[str]:
    """`where`: the port. Thresholds in KB (1024 B); the floor keeps Kmax under the PFC trigger."""
    lo_kb, hi_kb = max(1, lo // 1024), max(2, hi // 1024)
    if lo_kb >= hi_kb:
        lo_kb = hi_kb - 1
    return ["configure terminal",
            f"interface ethernet {config_port(where)} traffic-class {t} congestion-control ecn "
            f"minimum-absolute {lo_kb} maximum-absolute {hi_kb}", "exit"]


def cable_length(port, m: int) -> list[str]:
    return []


def strict_priority(port, t: int, options: dict | None = None) -> list[str]:
    return ["configure terminal", f"interface ethernet {config_port(port)} traffic-class {t} dcb ets strict", "exit"]


def dscp_map_note(d: int, q: int) -> str:
    """No per-DSCP map is rendered: say whether the default DSCP>>3 map already gives the site's class, or that it
    must be set by hand."""
    if d >> 3 == q:
        return f" Onyx: no per-DSCP map rendered; its default DSCP>>3 map already sends {d}→{q}."
    return (f" Onyx: no per-DSCP map rendered, and its default DSCP>>3 map sends {d} to priority {d >> 3}, not "
            f"{q}: map DSCP {d} to priority {q} on the switch by hand ({VENDOR_DOCUMENT}).")
