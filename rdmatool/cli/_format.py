"""`--format` and its alias `--json`: one definition for every command that prints, so that the spelling cannot
drift from one command to the next (tests/test_cli_conventions.py checks every command has it)."""

from __future__ import annotations

import typer

from rdmatool.cli._output import EXIT_USAGE, die

TABLE, JSON = "table", "json"


def format_param(choices: tuple[str, ...], note: str = ""):
    """`--format` with its choices in the help (and completed by the shell); `table` is the human view. In a
    command's signature: `fmt: Annotated[str, format_param(FORMATS)] = TABLE`."""
    def complete(incomplete: str) -> list[str]:
        return [c for c in choices if c.startswith(incomplete)]

    return typer.Option("--format", metavar="FORMAT", autocompletion=complete,
                        help=" | ".join(choices) + (f" ({note})" if note else "") + ".")


def json_param():
    """`--json`, kept for the scripts that spell it so: `as_json: Annotated[bool, json_param()] = False`."""
    return typer.Option("--json", help="Same as --format json.")


def chosen(command: str, fmt: str, as_json: bool, choices: tuple[str, ...]) -> str:
    """The format asked for; an unknown one, or --json beside another --format, is one line and exit 2."""
    if fmt not in choices:
        die(f"rdmatool {command}: --format must be one of {', '.join(choices)}", EXIT_USAGE)
    if as_json and fmt not in (TABLE, JSON):
        die(f"rdmatool {command}: --json is --format json; it cannot go with --format {fmt}", EXIT_USAGE)
    return JSON if as_json else fmt


# The metavar of an option that takes the same kind of value in every command that has it; the others are named by
# their type (N, NUMBER) or, for text, by their own name, as argparse does.
METAVARS = {
    "--inventory": "FILE", "--known-hosts": "FILE", "--topology": "FILE", "--profile": "FILE", "--junit": "FILE",
    "--drain-file": "FILE", "--limit": "PATTERN", "--exclude": "PATTERN", "--store": "DIR", "--playbooks": "DIR",
    "--save": "DIR", "--bundle": "BUNDLE", "--replay": "BUNDLE", "--out": "PATH", "--baseline": "NAME|FILE",
    "--shard": "K/N", "--severity": "LEVEL", "--interval": "S", "--deadline": "S", "--budget": "S",
    "--max-skew": "S", "--link-gbps": "GBPS", "--expected-gbps": "GBPS", "--write-gbps": "GBPS",
}
_BY_TYPE = {int: "N", float: "NUMBER", "integer": "N", "float": "NUMBER"}  # typer's own click, or the package's


def _no_type(ctx) -> None:  # noqa: ANN001 - click's context, unused
    return None


def plain_metavars(command) -> None:  # noqa: ANN001 - a click command or group (typer brings its own click)
    """Give every option and argument of the command tree a plain metavar (FILE, N, PATTERN, BUNDLE) where its
    declaration gives none: typer's help would show the Python type (`<str>`, `<bool>`, `<list[str]>`). A flag
    takes no value and shows none. The help option is made here for the same reason (click makes it on first use).
    Run when the root command is parsed: typer adds the completion options to the root after building it."""
    for sub in (getattr(command, "commands", None) or {}).values():
        plain_metavars(sub)
    help_option = command.get_help_option(command.context_class(command))
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if param.metavar is not None:  # the declaration's own, or set by an earlier call
            continue
        if param.param_type_name == "argument":
            param.metavar = (param.name or "VALUE").upper()
            if hasattr(param, "display_type_rich"):  # the name column says it already; the type column would add <str>
                param.display_type_rich = _no_type
        elif getattr(param, "is_flag", False) or getattr(param, "count", False):
            param.metavar = ""
        else:
            long = next((o for o in param.opts if o.startswith("--")), "")
            kind = getattr(getattr(param, "type_descriptor", None), "annotation", None) or getattr(
                getattr(param, "type", None), "name", None)
            param.metavar = METAVARS.get(long) or _BY_TYPE.get(kind) or (param.name or "VALUE").upper()
