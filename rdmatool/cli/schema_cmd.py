"""`rdmatool schema NAME`: print a shipped JSON Schema (the JSON outputs and the bundle format), to validate against."""

from __future__ import annotations

from typing import Annotated

import typer

from rdmatool.cli._output import EXIT_USAGE, die, print_json
from rdmatool.cli.exit_codes import epilog


def register(app: typer.Typer) -> None:
    app.command("schema", epilog=epilog("schema"))(schema_command)


def schema_command(
    name: Annotated[str, typer.Argument(
        help="diagnose | gate | pcap | perf | bundle-show | bundle-diff | bundle-manifest | bundle-side | "
             "... (omit to list them)")] = None,
) -> None:
    """Print the JSON Schema of an output (`diagnose`: `diagnose --format json`) or of the bundle format. Exit 2
    for a name that is not shipped."""
    from rdmatool import schemas

    if not name:
        typer.echo("\n".join(schemas.names()))
        return
    try:
        print_json(schemas.load(name))
    except KeyError as exc:
        die(f"rdmatool schema: {exc.args[0]}", EXIT_USAGE)
