"""Shared reading of Cisco NX-OS CLI output: port names, prompt/echo and CLI-error lines, and the `| json` form.

NX-OS answers every show command in text and, with `| json`, as a `TABLE_<x>` / `ROW_<x>` nesting where a table
with one row holds a dict and a table with several rows holds a list; numbers are often quoted strings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from rdmatool.errors import ParseError
from rdmatool.parsers._common import tool_error_message

# Short forms NX-OS prints in narrow tables (`Eth1/1`, `Po10`); the long form is what `show interface` prints, so
# every NX-OS parser emits the long form and samples of different commands join on the same entity.
_SHORT_PORT = re.compile(r"^(Eth|Ethernet|Po|port-channel|mgmt)(\d.*)$", re.IGNORECASE)
_LONG = {
    "eth": "Ethernet",
    "ethernet": "Ethernet",
    "po": "port-channel",
    "port-channel": "port-channel",
    "mgmt": "mgmt",
}

# `leaf1# show interface`, `leaf1(config)# show ...`, a bare prompt, or the echoed command alone.
_ECHO = re.compile(r"^\s*(?:[\w.\-()]+\s?[#>]\s*(?:show\b.*)?|show\s.*)$")
# Messages with which the NX-OS CLI refuses a command: data for the caller, not a parse error.
_CLI_ERROR = re.compile(
    r"^\s*(%.*|Syntax error while parsing .*|Invalid command.*|Cmd exec error.*)$", re.IGNORECASE
)


def long_port(name: str) -> str:
    match = _SHORT_PORT.match(name.strip())
    if not match:
        return name.strip()
    return _LONG[match.group(1).lower()] + match.group(2)


def is_echo(line: str) -> bool:
    """A prompt, or the command echoed by the CLI (kept by some collectors, pasted by humans)."""
    return bool(_ECHO.match(line))


def cli_error(line: str) -> str | None:
    """The switch's own refusal (`% Invalid command at '^' marker.`) or a generic tool failure, else None."""
    if _CLI_ERROR.match(line):
        return line.strip()
    return tool_error_message(line)


def json_start(text: str) -> int | None:
    """Index (0-based line) where a `| json` document starts, when the first meaningful line opens with `{`.

    Provenance comments (`# ...`), blank lines and the echoed command may precede it.
    """
    for index, line in enumerate(text.splitlines()):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or (is_echo(line) and not stripped.startswith("{")):
            continue
        return index if stripped.startswith("{") else None
    return None


def load_json(parser: str, text: str, start: int) -> dict:
    body = "\n".join(text.splitlines()[start:])
    try:
        document = json.loads(body)
    except json.JSONDecodeError as exc:
        line_no = start + exc.lineno
        bad = text.splitlines()[line_no - 1] if line_no - 1 < len(text.splitlines()) else ""
        raise ParseError(parser, line_no, bad, f"invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise ParseError(parser, start + 1, "", "JSON nested too deeply") from None
    if not isinstance(document, dict):
        raise ParseError(parser, start + 1, text.splitlines()[start], "expected a JSON object")
    return document


def table_rows(parser: str, line_no: int, document: object, table: str) -> Iterator[dict]:
    """Every row of `TABLE_<table>` found anywhere in the document (a single row is a dict, several a list)."""
    for found in _find_key(document, f"TABLE_{table}"):
        if not isinstance(found, dict):
            raise ParseError(parser, line_no, f"TABLE_{table}", "expected an object")
        rows = found.get(f"ROW_{table}", [])
        for row in rows if isinstance(rows, list) else [rows]:
            if not isinstance(row, dict):
                raise ParseError(parser, line_no, f"ROW_{table}", "expected an object per row")
            yield row


def _find_key(node: object, key: str) -> Iterator[object]:
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                yield v
            else:
                yield from _find_key(v, key)
    elif isinstance(node, list):
        for item in node:
            yield from _find_key(item, key)


def field(row: dict, *names: str) -> object:
    """The first of several spellings a JSON key has had across releases."""
    for name in names:
        if name in row:
            return row[name]
    return None
