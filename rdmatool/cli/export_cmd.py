"""`rdmatool export prometheus BUNDLE [-o FILE]`: a bundle's figures, findings and verdict for Prometheus."""

from __future__ import annotations

import sys

import typer

from rdmatool.cli import _config
from rdmatool.cli._output import EXIT_INCONCLUSIVE, EXIT_USAGE, die
from rdmatool.cli.exit_codes import epilog
from rdmatool.errors import NoData, RdmatoolError

export_app = typer.Typer(help="Export a bundle's figures to other tools.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")


@export_app.command("prometheus", epilog=epilog("export prometheus"))
def prometheus_command(
    bundle: str = typer.Argument(..., help="A collected bundle directory."),
    out: str = typer.Option(None, "-o", "--out",
                            help="File to replace atomically, e.g. TEXTFILE_DIR/rdmatool.prom for node_exporter's "
                                 "textfile collector (default: stdout)."),
    baseline: str = typer.Option(None, "--baseline", help="Baseline NAME in the store, or a baseline file PATH."),
    store: str = typer.Option(None, "--store", help=_config.STORE_HELP),
    playbooks: str = typer.Option(None, "--playbooks", help=_config.PLAYBOOKS_HELP),
) -> None:
    """Latest values, counter rates, findings and the verdict in the Prometheus text format."""
    from rdmatool.files import write_atomic
    from rdmatool.report.prometheus import bundle_exposition

    store, playbooks = _config.store(store), _config.playbooks(playbooks)
    try:
        stats = None
        if baseline:
            from rdmatool import baseline as baselines

            stats = baselines.stats_for_rules(baselines.resolve(baseline, store))
        text, result = bundle_exposition(bundle, playbooks_dir=playbooks, baseline=stats, profile=_config.site())
    except NoData as exc:
        die(f"rdmatool export prometheus: {exc}", EXIT_INCONCLUSIVE)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    if out:
        try:
            write_atomic(out, text.encode())
        except OSError as exc:  # the file as it was: the collector keeps reading yesterday's figures
            die(f"rdmatool export prometheus: {out}: cannot write: {exc.strerror or exc}", EXIT_USAGE)
    else:
        sys.stdout.write(text)
    if result.no_data:  # written anyway: its verdict says inconclusive, so an alert on it fires
        die(f"rdmatool export prometheus: {bundle}: {result.no_data}", EXIT_INCONCLUSIVE)
