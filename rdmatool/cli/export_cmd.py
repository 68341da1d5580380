"""`rdmatool export prometheus BUNDLE [-o FILE | --per-target DIR]`: a bundle's figures, findings and verdict for
Prometheus (docs/prometheus.md)."""

from __future__ import annotations

import sys
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
)
from rdmatool.cli.exit_codes import epilog
from rdmatool.errors import NoData, RdmatoolError

# rdmatool.report.prometheus.DEFAULT_MAX_SERIES, here so that --help needs no pandas (tests keep the two in step)
MAX_SERIES = 10_000

export_app = typer.Typer(help="Export a bundle's figures to other tools.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")


@export_app.command("prometheus", epilog=epilog("export prometheus"))
def prometheus_command(
    bundle: Annotated[str, typer.Argument(help="A collected bundle directory.")],
    out: Annotated[str, typer.Option("-o", "--out",
                                     help="File to replace atomically, e.g. TEXTFILE_DIR/rdmatool.prom for "
                                          "node_exporter's textfile collector (default: stdout).")] = None,
    per_target: Annotated[str, typer.Option(
        "--per-target", metavar="DIR",
        help="Write one file per target, DIR/rdmatool-TARGET.prom (only its series, for the textfile "
             "collector on that node), and the fleet-wide series (verdict, fabric findings, the bundle's "
             "figures) once, in DIR/rdmatool.prom.")] = None,
    max_series: Annotated[int, typer.Option(
        "--max-series", min=1, help="Series per target at most; over it whole families of the target are "
                                    "left out, raw counter totals first, and counted in "
                                    "rdmatool_export_dropped_series (docs/prometheus.md).")] = MAX_SERIES,
    baseline: Annotated[str, typer.Option(
        "--baseline", help="Baseline NAME in the store, or a baseline file PATH.")] = None,
    store: Annotated[str, typer.Option("--store", help=_config.STORE_HELP)] = None,
    playbooks: Annotated[str, typer.Option("--playbooks", help=_config.PLAYBOOKS_HELP)] = None,
    limit: Annotated[str, limit_param(help=BUNDLE_LIMIT_HELP)] = None,
    exclude: Annotated[str, exclude_param()] = None,
    ignore_unknown: Annotated[bool, ignore_unknown_param()] = False,
) -> None:
    """Latest values, counter rates, findings and the verdict in the Prometheus text format."""
    from rdmatool.report.prometheus import bundle_export

    if out and per_target:
        die("rdmatool export prometheus: -o and --per-target: give one of them", EXIT_USAGE)
    if per_target and not Path(per_target).is_dir():  # said before the diagnosis, not after it
        why = "not a directory" if Path(per_target).exists() else "no such directory"
        die(f"rdmatool export prometheus: {per_target}: {why}", EXIT_USAGE)
    store, playbooks = _config.store(store), _config.playbooks(playbooks)
    try:
        stats = None
        if baseline:
            from rdmatool import baseline as baselines

            stats = baselines.stats_for_rules(baselines.resolve(baseline, store))
        with bundle_selection("export prometheus", bundle, limit, exclude, ignore_unknown) as (read, selection):
            export = bundle_export(read, max_series=max_series, playbooks_dir=playbooks, baseline=stats,
                                   profile=_config.site(), **({"keep": selection.keeps} if selection else {}))
        if selection:  # the figures and findings of the selection alone: said in the log beside the file
            typer.echo(f"rdmatool: note: {selection.note()}", err=True)
    except NoData as exc:
        die(f"rdmatool export prometheus: {exc}", EXIT_INCONCLUSIVE)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    if per_target:
        _write_per_target(per_target, export)
    elif out:
        _write(out, export.text())
    else:
        sys.stdout.write(export.text())
    if export.result.no_data:  # written anyway: its verdict says inconclusive, so an alert on it fires
        die(f"rdmatool export prometheus: {bundle}: {export.result.no_data}", EXIT_INCONCLUSIVE)


def _write(out: str, text: str) -> None:
    from rdmatool.files import write_atomic

    try:
        write_atomic(out, text.encode())
    except OSError as exc:  # the file as it was: the collector keeps reading yesterday's figures
        die(f"rdmatool export prometheus: {out}: cannot write: {exc.strerror or exc}", EXIT_USAGE)


def _write_per_target(directory: str, export) -> None:
    from rdmatool.report.prometheus.textfiles import write_per_target

    try:
        refused = write_per_target(directory, export)
    except OSError as exc:  # each file written before is whole; this one and the rest are as they were
        die(f"rdmatool export prometheus: {exc.filename or directory}: cannot write: {exc.strerror or exc}",
            EXIT_USAGE)
    if refused:
        names = ", ".join(repr(t) for t in refused)
        die(f"rdmatool export prometheus: {directory}: target names that cannot name a file, not written: {names} "
            "(letters, digits, '.', '_', ':' and '-' only)", EXIT_USAGE)
