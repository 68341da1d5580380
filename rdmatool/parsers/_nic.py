"""Helpers shared by the NIC-side parsers (ethtool, mlnx_qos, mlxlink, flint / mlxfwmanager).

These tools are run per interface or per device, so their outputs rarely name what they describe; the parsers use
placeholder entities that the bundle analysis replaces with the real name it stored the output under.
"""

from __future__ import annotations

import re

from rdmatool.parsers._common import any_of, tool_error_message

NETDEV = "netdev"  # placeholder entity: ethtool / mlnx_qos output never names the interface
PORT = "port"  # placeholder entity: mlxlink output never names the device/port it was pointed at
DEVICE = "device"  # placeholder entity: flint output never names the device
NA_NIC = frozenset({"n/a", "na", "none", "-", ""})  # what these tools print for "no value" (`null` is a value)

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# Failure messages of these particular tools that the shared list does not know. MFT tools prefix errors with
# `-E-`; ethtool says `Cannot get ...`; netlink-based ethtool says `netlink error: ...`.
_LOCAL_TOOL_ERRORS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"^-e-",  # written lowercase, as every literal here: see _common.AnyOf
        r"^cannot (?:get|open|read)\b",
        r"^no stats available",
        r"^netlink error:",
        r"^(?:error|fatal)\b\s*:",
        r"^failed to\b",
        r"^mlxlink: ",
        r"^interface name is required",
        r"^bad arguments",
        r"^operation not supported",
        r"^permission denied",
    )
)

# A shell prompt or `set -x` trace echoing the command, as pasted into issues and web pages
# (`[root@h ~]# mlnx_qos -i eth2`, `+ mlnx_qos -i eth4 --trust dscp`).
_PROMPT = re.compile(
    r"^\s*(?:\+\s*|(?:\[[^\]]*\]|[\w.@:~/-]*)\s*[$#>]\s*)?(?:sudo\s+)?(?:ethtool|mlnx_qos|mlxlink|flint|mstflint|mlxfwmanager)(?:\s|$)"
)


def strip_ansi(line: str) -> str:
    return _ANSI.sub("", line) if "\x1b" in line else line  # the test first: most lines have no escape at all


_ANY_LOCAL_TOOL_ERROR = any_of(_LOCAL_TOOL_ERRORS)


def nic_tool_error(line: str) -> str | None:
    """The stripped line when it is a failure message of the tool (shared patterns plus the NIC tools' own)."""
    message = tool_error_message(line)
    if message is not None:
        return message
    stripped = line.strip()
    if _ANY_LOCAL_TOOL_ERROR.search(stripped):
        return stripped
    return None


_ELLIPSIS = re.compile(r"^(?:\.{3,}|\u2026|\[\.\.\.\]|<snip>|\(truncated\))$", re.IGNORECASE)
# An ellipsis starts with one of these: tested before the expression, which every line would otherwise pay for.
_ELLIPSIS_START = ".\u2026[<("


def is_noise(line: str) -> bool:
    """Blank lines, `#` provenance comments, an echoed command line and the `...` a paste was cut at: skipped."""
    stripped = line.strip()
    return (
        not stripped
        or stripped.startswith("#")
        # an echoed command names one of _PROMPT's tools (`mstflint` contains `flint`): the cheap test first
        or (("ethtool" in stripped or "mlnx_qos" in stripped or "mlxlink" in stripped or "flint" in stripped
             or "mlxfwmanager" in stripped) and bool(_PROMPT.match(stripped)))
        or (stripped[0] in _ELLIPSIS_START and bool(_ELLIPSIS.match(stripped)))
    )
