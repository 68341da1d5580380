"""Cisco NX-OS switches: an IOS-like CLI, read with `show … | json`.

The show commands are read-only (state and counters; no clear, no configure). SHOW_COMMANDS is gathered by
rdmatool/commands.py into SWITCH_COMMANDS, the one audited list of what rdmatool runs on a device: a change here is
a change to that list (tests/test_platforms.py checks every entry is a read-only show). `show interface` carries
the port speeds and states with its counters: there is no separate status view.

Port names: `Ethernet1/1`, `Ethernet1/1/1`; its LLDP and the far end may say `Eth1/1`.

Suggested commands (printed, never run): MQC policies, `random-detect … ecn`, `pause pfc-cos`,
`priority-flow-control mode on`: not verified against the vendor's documentation (Cisco's Nexus 9000 Series NX-OS
Quality of Service Configuration Guide). Policy and class names are the site profile's (SITE_DEFAULTS).
"""

from __future__ import annotations

import re

from rdmatool.platforms.shapes import EcnObject, SwitchCommand
from rdmatool.platforms.syntax import config_name, matched

NAME = "nxos"
TITLE = "NX-OS"
KIND = "switch"
ALIASES = ("nxos", "cisco.nxos.nxos")  # the ansible_network_os values that name it
SUGGESTION_KEY = NAME

# --- reaching it (rdmatool.transport.switch)
NETMIKO_DEVICE_TYPE = "cisco_nxos"
ENTER_ENABLE = False
LOGIN_PROMPT_END = None  # netmiko's own login

# --- what it runs: JSON forms (they survive firmware changes better than screen layouts); LLDP first
SHOW_COMMANDS = (
    SwitchCommand("nxos_lldp_neighbors", "show lldp neighbors | json"),
    SwitchCommand("nxos_pfc", "show interface priority-flow-control | json"),
    SwitchCommand("nxos_queuing", "show queuing interface | json"),
    SwitchCommand("nxos_interface", "show interface | json"),
)

# --- its port names
PORT_NAME = re.compile(r"Ethernet[0-9]{1,4}(?:/[0-9]{1,3}){1,2}")
CONFIG_PORT_NAME = re.compile(r"Ethernet[0-9]{1,3}/[0-9]{1,3}(?:/[0-9]{1,2})?")
PORT_PREFIXES = ("Ethernet", "Eth")  # what the far end may spell before the port number (rdmatool.platforms.port_names)


def port_argument(port: str) -> str:
    """The port as a command line takes it."""
    return port


def config_port(name) -> str:
    return port_argument(matched(CONFIG_PORT_NAME, name, f"not a {NAME} port name"))


# --- its suggestions (rdmatool.tune)
COMMENT = "!"  # `#` is no comment on this command line
VERIFIED_SYNTAX = None
VENDOR_DOCUMENT = "Cisco's Nexus 9000 Series NX-OS Quality of Service Configuration Guide"
SITE_DEFAULTS = {
    "nxos_qos_policy": "QOS_CLASSIFICATION",
    "nxos_network_qos_policy": "QOS_NETWORK",
    "nxos_queuing_policy": "QOS_EGRESS_PORT",
}
ECN_OBJECT = EcnObject("queuing-policy", site_key="nxos_queuing_policy")
ECN_NOTE = "NX-OS: the queuing policy is bound to each port it serves (service-policy lines)."
APPLY_LINE = None
NOT_RENDERED = {"cable_length": "PG headroom is sized from its own port-speed tables"}


def _policy(options: dict | None, key: str) -> str:
    return config_name({**SITE_DEFAULTS, **(options or {})}[key], "policy name")


def trust_dscp(port, options: dict | None = None) -> list[str]:
    """NX-OS has no trust knob: DSCP classification is a qos policy bound to the port."""
    return ["configure terminal", f"interface {config_port(port)}",
            f"service-policy type qos input {_policy(options, 'nxos_qos_policy')}", "end"]


def pfc(port, on: list[int], off: list[int], options: dict | None = None) -> list[str]:
    policy = _policy(options, "nxos_network_qos_policy")
    lines = ["configure terminal", f"policy-map type network-qos {policy}"]
    for q in on:
        lines += [f"class type network-qos c-8q-nq{q}", f"pause pfc-cos {q}", "mtu 9216"]
    for q in off:
        lines += [f"class type network-qos c-8q-nq{q}", f"no pause pfc-cos {q}"]
    lines += ["system qos", f"service-policy type network-qos {policy}",
              f"interface {config_port(port)}", "priority-flow-control mode on", "end"]
    return lines


def dscp_map(port, d: int, q: int, options: dict | None = None) -> list[str]:
    policy = _policy(options, "nxos_qos_policy")
    lines = ["configure terminal", f"class-map type qos match-all dscp{d}-prio{q}", f"match dscp {d}",
             f"policy-map type qos {policy}", f"class dscp{d}-prio{q}", f"set qos-group {q}"]
    if port is not None:
        lines += [f"interface {config_port(port)}", f"service-policy type qos input {policy}"]
    return [*lines, "end"]


def ecn(where, t: int, lo: int, hi: int, p: int, options: dict | None = None) -> list[str]:
    """`where`: the port or ports the queuing policy is bound to."""
    policy = _policy(options, "nxos_queuing_policy")
    lines = ["configure terminal", f"policy-map type queuing {policy}", f"class type queuing c-out-8q-q{t}",
             f"random-detect minimum-threshold {lo} bytes maximum-threshold {hi} bytes drop-probability {p} "
             "weight 0 ecn"]
    for port in [where] if isinstance(where, str) else list(where or []):
        lines += [f"interface {config_port(port)}", f"service-policy type queuing output {policy}"]
    return [*lines, "end"]


def cable_length(port, m: int) -> list[str]:
    return []


def strict_priority(port, t: int, options: dict | None = None) -> list[str]:
    return ["configure terminal", f"policy-map type queuing {_policy(options, 'nxos_queuing_policy')}",
            f"class type queuing c-out-8q-q{t}", "priority level 1", "end"]


def dscp_map_note(d: int, q: int) -> str:
    return ""
