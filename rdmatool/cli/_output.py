"""Shared CLI plumbing: stderr messages and JSON on a clean stdout."""

from __future__ import annotations

import json
import os
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
    """The console every human view prints through (tables, the on-call text, summaries), made when the view prints.

    Its width is `COLUMNS` when set (a log, a pipe, a test, a narrow pane), else the terminal's, else 80: tables fit
    it (rdmatool.report.tables) and prose wraps to it. Markup is off: a host's error, a parse failure quoting its line
    or a bundle's path may hold `[/x]`, which as markup would stop the command or restyle the rest of the line (a
    view styles with rich Text, never with markup). rich is imported here, when something is printed through it,
    not when a command module is."""
    from rich.console import Console

    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() and int(columns) > 0 else None
    return Console(stderr=stderr, markup=False, width=width)


def print_wrapped(console: Console, line: str, hanging: int = 2) -> None:
    """One line of a plain view (`config show`, `doctor`) wrapped to the console's width between words: the lines
    it continues on are indented `hanging` columns more than its own indent, and a word wider than the console is
    folded. What it quotes (a path, a tool's reason) is shown as characters (rdmatool.report.shown)."""
    from rich.text import Text

    from rdmatool.report.shown import terminal

    indent = len(line) - len(line.lstrip(" "))
    text = terminal(line.lstrip(" "))
    first = Text(text).wrap(console, max(20, console.width - indent), overflow="fold")
    parts = [first[0].plain.rstrip()] if first else [""]
    rest = text[len(parts[0]):].lstrip(" ")
    if rest:  # the rest at the narrower width of the lines it goes on
        parts += [p.plain.rstrip() for p in Text(rest).wrap(console, max(20, console.width - indent - hanging),
                                                             overflow="fold")]
    for number, part in enumerate(parts):
        console.print(" " * (indent + (hanging if number else 0)) + part, soft_wrap=True, highlight=False)
