"""Shared reading of NVIDIA Onyx (MLNX-OS) CLI output: port names, prompt/echo lines and CLI-error lines.

Onyx names ports `Eth1/1` (`Eth1/1/2` on a split port) in its tables and `ethernet 1/1` in commands; parsers emit
`Eth1/1`, the form Onyx prints.
"""

from __future__ import annotations

import re

from rdmatool.parsers.switch._cli import cli_error

__all__ = ["cli_error", "command_port", "is_echo", "port_name"]

# `switch [standalone: master] # show ...`, `switch (config) # show ...`, `switch >`, or the command alone.
_ECHO = re.compile(r"^\s*(?:[\w.\-]+(?:\s*\[[^\]]*\])?(?:\s*\([^)]*\))?\s*[#>]\s*(?:show\b.*)?|show\s.*)$")
_COMMAND_PORT = re.compile(r"\bshow\s+interfaces?\s+ethernet\s+(\d+/\d+(?:/\d+)?)\b", re.IGNORECASE)
_PORT = re.compile(r"^(?:Eth|ethernet\s*)(\d+/\d+(?:/\d+)?)$", re.IGNORECASE)


def is_echo(line: str) -> bool:
    return bool(_ECHO.match(line))


def command_port(line: str) -> str | None:
    """`Eth1/1` when the line is an echoed `show interfaces ethernet 1/1 ...` command."""
    match = _COMMAND_PORT.search(line)
    return f"Eth{match.group(1)}" if match and is_echo(line) else None


def port_name(raw: str) -> str | None:
    match = _PORT.match(raw.strip())
    return f"Eth{match.group(1)}" if match else None
