"""`rdmatool report`: a bundle's diagnosis as one self-contained HTML file (rdmatool.report.html)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rdmatool.cli import _config
from rdmatool.cli._output import EXIT_INCONCLUSIVE, EXIT_USAGE, die
from rdmatool.cli._targets import (
    BUNDLE_LIMIT_HELP,
    bundle_selection,
    exclude_param,
    ignore_unknown_param,
    limit_param,
    with_selection,
)
from rdmatool.cli.exit_codes import epilog
from rdmatool.errors import NoData, RdmatoolError


def register(app: typer.Typer) -> None:
    app.command("report", epilog=epilog("report"))(report_command)


def report_command(
    bundle: Annotated[str, typer.Argument(help="A collected bundle directory.")],
    output: Annotated[str, typer.Option("-o", "--output",
                                        help="The HTML file to write (replaced atomically).")],
    baseline: Annotated[str, typer.Option("--baseline",
                                          help="Baseline NAME in the store, or a baseline file PATH: its "
                                               "statistics for the rules, its nights for the trend.")] = None,
    store: Annotated[str, typer.Option("--store", help=_config.STORE_HELP)] = None,
    playbooks: Annotated[str, typer.Option("--playbooks", help=_config.PLAYBOOKS_HELP)] = None,
    topology: Annotated[str, typer.Option(
        "--topology", help="Expected topology (topology.yaml) to diff the cabling against.")] = None,
    site_values: Annotated[list[str], _config.site_param()] = None,
    limit: Annotated[str, limit_param(help=BUNDLE_LIMIT_HELP)] = None,
    exclude: Annotated[str, exclude_param()] = None,
    ignore_unknown: Annotated[bool, ignore_unknown_param()] = False,
) -> None:
    """Write the HTML report of a bundle: verdict, on-call view, fleet table, plots (pause and ECN per priority,
    counter rates, perftest matrix, topology, the baseline's trend). One offline file; exits with the verdict."""
    from rdmatool import extras, files
    from rdmatool.outcome.verdict import EXIT_CODES

    try:
        extras.require("report", "drawing the HTML report's figures")
    except RdmatoolError as exc:
        die(f"rdmatool report: {exc}", EXIT_USAGE)
    from rdmatool.report import html, page

    store, playbooks, site = _config.store(store), _config.playbooks(playbooks), _config.site(site_values)
    target = Path(output)
    if target.is_dir():
        die(f"rdmatool report: {output}: is a directory, not a file to write", EXIT_USAGE)
    if not target.parent.is_dir():
        die(f"rdmatool report: {output}: no such directory {target.parent}", EXIT_USAGE)
    try:
        path = None
        if baseline:
            from rdmatool import baseline as baselines

            path = baselines.resolve(baseline, store)
        with bundle_selection("report", bundle, limit, exclude, ignore_unknown) as (read, selection):
            shown = page.build(read, baseline=path, playbooks_dir=playbooks, topology=topology, on_skipped=_warn,
                               profile=site, keep=selection.keeps if selection else None)
    except NoData as exc:
        die(f"rdmatool report: {exc}", EXIT_INCONCLUSIVE)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    result = with_selection(shown.result, bundle, selection)  # named as BUNDLE, the selection in its notes
    if result.no_data:  # nothing to judge: one line and no report that would read like an empty pass
        die(f"rdmatool report: {bundle}: {result.no_data}", EXIT_INCONCLUSIVE)
    try:
        files.write_atomic(target, html.render(shown).encode("utf-8"))
    except OSError as exc:
        die(f"rdmatool report: {output}: cannot write ({exc.strerror or exc})", EXIT_USAGE)
    typer.echo(f"rdmatool: report written to {output}: verdict {result.verdict.value}", err=True)
    raise typer.Exit(EXIT_CODES[result.verdict])


def _warn(line: str) -> None:
    typer.echo(f"rdmatool: warning: {line}", err=True)
