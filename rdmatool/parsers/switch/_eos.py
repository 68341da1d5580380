"""Shared reading of Arista EOS CLI output: port names, prompt/echo and CLI-error lines, and the `| json` form.

EOS tables abbreviate ports (`Et1/1`, `Et49/1`, `Ma1`, `Po10`) while its JSON spells them out (`Ethernet1/1`); every
EOS parser emits the long form so that text and JSON captures join on the same entity.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import tool_error, tool_error_message
from rdmatool.parsers.switch._nxos import is_caret, json_number, json_start, load_json

__all__ = [
    "cli_error",
    "error_sample",
    "is_caret",
    "is_echo",
    "json_number",
    "json_start",
    "load_json",
    "long_port",
]

_SHORT = re.compile(r"^(Et|Ethernet|Ma|Management|Po|Port-Channel)(\d[\d/.]*)$", re.IGNORECASE)
_LONG = {"et": "Ethernet", "ma": "Management", "po": "Port-Channel"}
_ECHO = re.compile(r"^\s*(?:[\w.\-()]+\s?[#>]\s*(?:show\b.*)?|show\s.*)$")
# `% Invalid input`, `% Incomplete command`, `% Unavailable command (not supported on this hardware platform)`.
_CLI_ERROR = re.compile(r"^\s*%\s*\S.*$")


def long_port(name: str) -> str:
    match = _SHORT.match(name.strip())
    if not match:
        return name.strip()
    return _LONG.get(match.group(1).lower(), match.group(1)) + match.group(2)


def is_echo(line: str) -> bool:
    return bool(_ECHO.match(line))


def cli_error(line: str) -> str | None:
    if _CLI_ERROR.match(line):
        return line.strip()
    return tool_error_message(line)


def error_sample(message: str) -> Sample:
    return tool_error("host", message)


def mapping(parser: str, line_no: int, node: object, key: str) -> dict:
    """A JSON member that must be an object (EOS keys its tables by port and queue name)."""
    if not isinstance(node, dict):
        raise ParseError(parser, line_no, f"{key}: {str(node)[:80]}", "expected a JSON object")
    return node
