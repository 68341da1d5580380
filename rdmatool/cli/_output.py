"""Shared CLI plumbing: stderr messages and JSON on a clean stdout."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, NoReturn

import typer

if TYPE_CHECKING:
    from rich.console import Console

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INCONCLUSIVE = 0, 1, 2, 3
EXIT_INTERNAL = 4  # rdmatool itself failed: never a verdict (rdmatool.cli.exit_codes)


def die(message: str, code: int) -> NoReturn:
    """One line on stderr, then the exit code; the message names the file, host or line at fault."""
    from rdmatool.report.shown import terminal

    # a host's or a manifest's text quoted in the message is shown as characters, never sent to the terminal
    print(terminal(message, newlines=True), file=sys.stderr)
    raise typer.Exit(code)


def print_json(obj: object) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


def data_console(stderr: bool = False) -> Console:
    """A rich console for printing data, with markup off: a host's error, a parse failure quoting its line or a
    bundle's path may hold `[/x]`, which as markup would stop the command or restyle the rest of the line. rich is
    imported here, when something is printed through it, not when a command module is."""
    from rich.console import Console

    return Console(stderr=stderr, markup=False)
