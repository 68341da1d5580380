"""`rdmatool diagnose`: the on-call view of a bundle, or of a live fabric collected first."""

from __future__ import annotations

import tempfile
from pathlib import Path

import typer
from rich.console import Console

from rdmatool.cli._output import EXIT_INCONCLUSIVE, EXIT_USAGE, die, print_json
from rdmatool.cli._targets import LIMIT_HELP, exclude_option, ignore_unknown_option, limit_option
from rdmatool.cli.collect_cmd import collect_to_bundle, load_targets, nothing_collected, print_summary
from rdmatool.cli.exit_codes import epilog
from rdmatool.errors import NoData, RdmatoolError
from rdmatool.verdict import EXIT_CODES

FORMATS = ("table", "json", "markdown", "commands")


def register(app: typer.Typer) -> None:
    app.command("diagnose", epilog=epilog("diagnose"))(diagnose_command)


def diagnose_command(
    bundle: str = typer.Argument(None, help="A collected bundle directory (omit with -i to collect live)."),
    inventory_file: str = typer.Option(None, "-i", "--inventory", help="Collect live from this inventory first."),
    save: str = typer.Option(None, "--save", help="With -i: keep the collected bundle here."),
    baseline: str = typer.Option(None, "--baseline", help="Baseline NAME in the store, or a baseline file PATH."),
    store: str = typer.Option("baselines", "--store", help="Baseline store directory."),
    playbooks: str = typer.Option(None, "--playbooks", help="Playbook directory (default: the shipped ones)."),
    topology: str = typer.Option(None, "--topology", help="Expected topology (topology.yaml) to diff the cabling against."),
    fmt: str = typer.Option("table", "--format", help="table | json | markdown | commands (the suggested "
                            "commands only, one block per target, ready to paste)"),
    show_all: bool = typer.Option(False, "--all", help="Table: every finding (info too) with its evidence, and each "
                                  "suggestion's rationale."),
    severity: str = typer.Option(None, "--severity", help="Lowest severity shown: info | warning | error | critical "
                                 "(table, markdown, commands; JSON lists everything). Default: warning."),
    interval: float = typer.Option(10.0, "--interval", help="With -i: seconds between the two snapshots."),
    limit: str = limit_option(help="With -i: " + LIMIT_HELP),
    exclude: str = exclude_option(),
    ignore_unknown: bool = ignore_unknown_option(),
    forks: int = typer.Option(64, "--forks", min=1),
    accept_new_host_keys: bool = typer.Option(False, "--accept-new-host-keys"),
    known_hosts: str = typer.Option(None, "--known-hosts"),
) -> None:
    """Diagnose a fabric: findings with symptom, cause, check, fix and evidence, plus suggested settings."""
    from rdmatool.diagnose import diagnose_bundle
    from rdmatool.report import markdown, text

    if fmt not in FORMATS:
        die(f"rdmatool diagnose: --format must be one of {', '.join(FORMATS)}", EXIT_USAGE)
    if bool(bundle) == bool(inventory_file):
        die("rdmatool diagnose: give either a BUNDLE or -i INVENTORY", EXIT_USAGE)
    minimum = _minimum_severity(severity, show_all)
    try:
        stats = _baseline_stats(baseline, store) if baseline else None
        if topology:  # a bad file is refused before a live collection, not after it
            from rdmatool.topology.expected import load as load_topology

            load_topology(topology)
        if inventory_file:
            from rdmatool.collect import CollectOptions

            targets = load_targets(inventory_file, limit, None, exclude=exclude, ignore_unknown=ignore_unknown,
                                   with_switches=True, baseline=baseline, store=store)
            options = CollectOptions(interval_s=max(0.0, interval), forks=forks,
                                     accept_new_host_keys=accept_new_host_keys, known_hosts=known_hosts)
            workdir = None if save else tempfile.TemporaryDirectory(prefix="rdmatool-")
            path = save or str(Path(workdir.name) / "bundle")
            outcomes, path = collect_to_bundle(targets, options, path)
            nothing = nothing_collected(outcomes)
            if nothing:
                if workdir:
                    workdir.cleanup()
                die(f"rdmatool diagnose: {inventory_file}: {nothing}", EXIT_INCONCLUSIVE)
            if fmt == "table":
                print_summary(outcomes)
            result = diagnose_bundle(path, on_skipped=_warn, playbooks_dir=playbooks, baseline=stats,
                                     topology=topology)
            if workdir:
                workdir.cleanup()
        else:
            result = diagnose_bundle(bundle, on_skipped=_warn, playbooks_dir=playbooks, baseline=stats,
                                     topology=topology)
    except NoData as exc:
        die(f"rdmatool diagnose: {exc}", EXIT_INCONCLUSIVE)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    if result.no_data:  # nothing to judge: one line, not an empty report that reads like a pass
        die(f"rdmatool diagnose: {bundle or inventory_file}: {result.no_data}", EXIT_INCONCLUSIVE)
    for note in result.notes:  # what the reading assumed: on stderr too, so a log shows it beside the verdict
        typer.echo(f"rdmatool: note: {note}", err=True)
    if fmt == "json":
        print_json(result.as_json())
    elif fmt == "markdown":
        typer.echo(markdown.render(result, minimum), nl=False)
    elif fmt == "commands":
        from rdmatool.report import commands

        typer.echo(commands.render(result, minimum), nl=False)
    else:
        text.render(result, Console(), minimum, show_all=show_all)
    raise typer.Exit(EXIT_CODES[result.verdict])


def _minimum_severity(name: str | None, show_all: bool):
    """The lowest severity shown: --severity, else info with --all, else warning (info is counted, not shown)."""
    from rdmatool.model import Severity
    from rdmatool.report.view import parse_severity

    if name is None:
        return Severity.INFO if show_all else Severity.WARNING
    try:
        return parse_severity(name)
    except ValueError as exc:
        die(f"rdmatool diagnose: {exc}", EXIT_USAGE)


def _warn(line: str) -> None:
    """A file of the bundle that was not read: on stderr, so a JSON or markdown report on stdout stays whole."""
    typer.echo(f"rdmatool: warning: {line}", err=True)


def _baseline_stats(ref: str, store: str):
    from rdmatool import baseline as baselines

    return baselines.stats_for_rules(baselines.resolve(ref, store))
