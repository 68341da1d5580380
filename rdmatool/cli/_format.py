"""`--format` and its alias `--json`: one definition for every command that prints, so that the spelling cannot
drift from one command to the next (tests/test_cli_conventions.py checks every command has it)."""

from __future__ import annotations

import typer

from rdmatool.cli._output import EXIT_USAGE, die

TABLE, JSON = "table", "json"


def format_option(choices: tuple[str, ...], note: str = ""):
    """`--format` with its choices in the help (and completed by the shell); `table` is the human view."""
    def complete(incomplete: str) -> list[str]:
        return [c for c in choices if c.startswith(incomplete)]

    return typer.Option(TABLE, "--format", metavar="FORMAT", autocompletion=complete,
                        help=" | ".join(choices) + (f" ({note})" if note else "") + ".")


def json_option():
    """`--json`, kept for the scripts that spell it so."""
    return typer.Option(False, "--json", help="Same as --format json.")


def chosen(command: str, fmt: str, as_json: bool, choices: tuple[str, ...]) -> str:
    """The format asked for; an unknown one, or --json beside another --format, is one line and exit 2."""
    if fmt not in choices:
        die(f"rdmatool {command}: --format must be one of {', '.join(choices)}", EXIT_USAGE)
    if as_json and fmt not in (TABLE, JSON):
        die(f"rdmatool {command}: --json is --format json; it cannot go with --format {fmt}", EXIT_USAGE)
    return JSON if as_json else fmt
