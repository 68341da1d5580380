"""`rdmatool docs [NAME [PLACE...]]`: the reference documents the findings and the suggestions cite, as installed.

A finding says `(rdmatool docs tuning §2.5, row 6)`: that line, run as it reads, prints those places."""

from __future__ import annotations

from typing import Annotated

import typer

from rdmatool.cli._output import EXIT_USAGE, die
from rdmatool.cli.exit_codes import epilog


def register(app: typer.Typer) -> None:
    app.command("docs", epilog=epilog("docs"))(docs_command)


def docs_command(
    name: Annotated[str, typer.Argument(help="tuning | ... (omit to list them).")] = None,
    place: Annotated[list[str], typer.Argument(
        help="A section or rows, as the findings cite them: §2.5 (or 2.5), row 6, rows 6/9 (omit for the "
             "whole document).")] = None,
    show_path: Annotated[bool, typer.Option("--path",
                                            help="Print where the document is installed instead.")] = False,
) -> None:
    """Print a shipped reference document (the tuning reference behind the rules' thresholds and the suggested
    values), or the sections and rows a finding cites. Exit 2 for a name or a place the document does not have."""
    from rdmatool import docs_data

    if not name:
        for shipped in docs_data.names():
            typer.echo(f"{shipped:12} {docs_data.load(shipped).title}")
        return
    try:
        if show_path:
            typer.echo(docs_data.path(name))
        elif place:
            typer.echo(docs_data.excerpt(name, " ".join(place)), nl=False)
        else:
            typer.echo("\n".join(docs_data.load(name).lines))
    except KeyError as exc:
        die(f"rdmatool docs: {exc.args[0]}", EXIT_USAGE)
    except ValueError as exc:
        die(f"rdmatool docs: {exc}", EXIT_USAGE)
