"""Shared reading of Arista EOS CLI output: port names, prompt/echo and CLI-error lines, and the `| json` form.

EOS tables abbreviate ports (`Et1/1`, `Et49/1`, `Ma1`, `Po10`) while its JSON spells them out (`Ethernet1/1`); every
EOS parser emits the long form so that text and JSON captures join on the same entity. The prompt and the `| json`
document have the NX-OS shape (`_nxos`); refusals are `%` lines, as on Onyx (`_cli`).
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.parsers.switch._cli import cli_error
from rdmatool.parsers.switch._nxos import is_echo, json_start, load_json

__all__ = ["cli_error", "is_echo", "json_start", "load_json", "long_port", "mapping"]

_SHORT = re.compile(r"^(Et|Ethernet|Ma|Management|Po|Port-Channel)(\d[\d/.]*)$", re.IGNORECASE)
_LONG = {"et": "Ethernet", "ma": "Management", "po": "Port-Channel"}


def long_port(name: str) -> str:
    match = _SHORT.match(name.strip())
    if not match:
        return name.strip()
    return _LONG.get(match.group(1).lower(), match.group(1)) + match.group(2)


def mapping(parser: str, line_no: int, node: object, key: str) -> dict:
    """A JSON member that must be an object (EOS keys its tables by port and queue name)."""
    if not isinstance(node, dict):
        raise ParseError(parser, line_no, f"{key}: {str(node)[:80]}", "expected a JSON object")
    return node
