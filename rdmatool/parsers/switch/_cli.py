"""What the Onyx, EOS and NX-OS CLIs share: the caret marker above a refused command, the `%` refusal itself, and
their transcript line loop (the one of every parser, `_common.cli_lines`, with the caret markers skipped)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from rdmatool.parsers import _common
from rdmatool.parsers._common import tool_error_message

_CARET = re.compile(r"^\s*\^\s*$")
# `% Invalid input`, `% Incomplete command`, `% Unrecognized command "x".`, `% Interface ethernet 1/99 does not exist`.
_PERCENT_ERROR = re.compile(r"^\s*%\s*\S.*$")


def cli_lines(
    text: str, cli_error: Callable[[str], str | None], *furniture: re.Pattern[str]
) -> Iterator[tuple[int, str, str | None]]:
    """(line number, line, the CLI's complaint or None) for every line worth reading: blank lines, `#` comments,
    the `^` marker lines and lines matching `furniture` (table rules, headers) are skipped; `cli_error` is the
    vendor's recogniser of a refused command."""
    return _common.cli_lines(text, cli_error, _CARET, *furniture)


def cli_error(line: str) -> str | None:
    """The CLI's `%` refusal (Onyx, EOS) or a generic tool failure, else None."""
    if _PERCENT_ERROR.match(line):
        return line.strip()
    return tool_error_message(line)
