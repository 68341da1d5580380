"""`rdmatool diagnose`: the on-call view of a bundle, or of a live fabric collected first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from rdmatool.cli import _config
from rdmatool.cli._format import TABLE, chosen, format_param, json_param
from rdmatool.cli._output import EXIT_INCONCLUSIVE, EXIT_USAGE, data_console, die, print_json
from rdmatool.cli._targets import (
    BUNDLE_LIMIT_HELP,
    bundle_selection,
    exclude_param,
    ignore_unknown_param,
    limit_param,
    with_selection,
)
from rdmatool.cli.collect_cmd import collect_to_bundle, load_targets, print_summary
from rdmatool.cli.exit_codes import epilog
from rdmatool.errors import NoData, RdmatoolError
from rdmatool.outcome.verdict import EXIT_CODES
from rdmatool.report.shown import terminal

if TYPE_CHECKING:
    from rdmatool.model import Severity
    from rdmatool.outcome.result import DiagnoseResult

FORMATS = ("table", "json", "markdown", "commands")


def register(app: typer.Typer) -> None:
    app.command("diagnose", epilog=epilog("diagnose"))(diagnose_command)


def diagnose_command(
    bundle: Annotated[str, typer.Argument(
        help="A collected bundle directory (omit with -i to collect live).")] = None,
    inventory_file: Annotated[str, typer.Option("-i", "--inventory",
                                                help="Collect live from this inventory first (without a "
                                                     "BUNDLE: the config file's `inventory`).")] = None,
    save: Annotated[str, typer.Option("--save", help="With -i: keep the collected bundle here.")] = None,
    baseline: Annotated[str, typer.Option(
        "--baseline", help="Baseline NAME in the store, or a baseline file PATH.")] = None,
    store: Annotated[str, typer.Option("--store", help=_config.STORE_HELP)] = None,
    playbooks: Annotated[str, typer.Option("--playbooks", help=_config.PLAYBOOKS_HELP)] = None,
    topology: Annotated[str, typer.Option(
        "--topology", help="Expected topology (topology.yaml) to diff the cabling against.")] = None,
    site_values: Annotated[list[str], _config.site_param()] = None,
    fmt: Annotated[str, format_param(
        FORMATS, "commands: the suggested commands only, one block per target, ready to paste")] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
    show_all: Annotated[bool, typer.Option("--all", help="Table: every finding (info too) with its evidence, "
                                                         "and each suggestion's rationale.")] = False,
    severity: Annotated[str, typer.Option(
        "--severity", help="Lowest severity shown: info | warning | error | critical (table, markdown, "
                           "commands; JSON lists everything). Default: warning.")] = None,
    interval: Annotated[float, typer.Option("--interval",
                                            help="With -i: seconds between the two snapshots.")] = 10.0,
    limit: Annotated[str, limit_param(help=BUNDLE_LIMIT_HELP)] = None,
    exclude: Annotated[str, exclude_param()] = None,
    ignore_unknown: Annotated[bool, ignore_unknown_param()] = False,
    forks: Annotated[int, typer.Option("--forks", min=1, metavar="N",
                                       help="With -i: targets collected at once.")] = 64,
    accept_new_host_keys: Annotated[bool, typer.Option("--accept-new-host-keys",
                                                       help="With -i: record unknown host keys.")] = False,
    known_hosts: Annotated[str, typer.Option(
        "--known-hosts", help="With -i: extra known_hosts file (new keys go here).")] = None,
) -> None:
    """Diagnose a fabric: findings with symptom, cause, check, fix and evidence, plus suggested settings."""
    from rdmatool.diagnose.pipeline import diagnose_bundle

    fmt = chosen("diagnose", fmt, as_json, FORMATS)
    inventory_file = _inventory(bundle, inventory_file)
    store, playbooks, site = _config.store(store), _config.playbooks(playbooks), _config.site(site_values)
    minimum = _minimum_severity(severity, show_all)
    try:
        stats = _baseline_stats(baseline, store) if baseline else None
        if topology:  # a bad file is refused before a live collection, not after it
            from rdmatool.topology.expected import load as load_topology

            load_topology(topology)
        if inventory_file:
            from rdmatool.collect import CollectOptions
            from rdmatool.diagnose.collect_diagnose import collect_and_diagnose

            targets = load_targets(inventory_file, limit, None, exclude=exclude, ignore_unknown=ignore_unknown,
                                   with_switches=True, baseline=baseline, store=store)
            options = CollectOptions(interval_s=max(0.0, interval), forks=forks,
                                     accept_new_host_keys=accept_new_host_keys, known_hosts=known_hosts)
            result = collect_and_diagnose(targets, options, save, source=inventory_file, collect=collect_to_bundle,
                                          on_collected=print_summary if fmt == "table" else None,
                                          on_skipped=_warn, playbooks_dir=playbooks, baseline=stats,
                                          topology=topology, profile=site)
        else:  # a nightly bundle narrowed to a job's nodes and their switches with --limit / --exclude
            with bundle_selection("diagnose", bundle, limit, exclude, ignore_unknown) as (path, selection):
                result = diagnose_bundle(path, on_skipped=_warn, playbooks_dir=playbooks, baseline=stats,
                                         topology=topology, profile=site,
                                         **({"keep": selection.keeps} if selection else {}))
            result = with_selection(result, bundle, selection)
    except NoData as exc:
        die(f"rdmatool diagnose: {exc}", EXIT_INCONCLUSIVE)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    if result.no_data:  # nothing to judge: one line, not an empty report that reads like a pass
        die(f"rdmatool diagnose: {bundle or inventory_file}: {result.no_data}", EXIT_INCONCLUSIVE)
    _render(result, fmt, minimum, show_all)
    raise typer.Exit(EXIT_CODES[result.verdict])


def _render(result: DiagnoseResult, fmt: str, minimum: Severity, show_all: bool) -> None:
    """The result in the format asked for, on stdout; the notes (what the reading assumed) on stderr beside a
    machine format, where the table has its NOTES block."""
    from rdmatool.report import markdown, text

    if fmt != "table":  # what the reading assumed, beside the verdict in a log; the table's NOTES block says it there
        for note in result.notes:
            typer.echo(f"rdmatool: note: {terminal(note)}", err=True)
    if fmt == "json":
        print_json(result.as_json())
    elif fmt == "markdown":
        typer.echo(markdown.render(result, minimum), nl=False)
    elif fmt == "commands":
        from rdmatool.report import commands

        typer.echo(commands.render(result, minimum), nl=False)
    else:
        text.render(result, data_console(), minimum, show_all=show_all)


def _inventory(bundle: str | None, inventory_file: str | None) -> str | None:
    """The inventory to collect live from (-i, else the config file's when no BUNDLE is given), or None for a
    BUNDLE; both or neither is one line and exit 2."""
    if bundle and inventory_file:
        die("rdmatool diagnose: give either a BUNDLE or -i INVENTORY", EXIT_USAGE)
    if not bundle:
        inventory_file = _config.inventory(inventory_file)
    if not bundle and not inventory_file:
        die("rdmatool diagnose: give either a BUNDLE or -i INVENTORY (or `inventory` in the config file)", EXIT_USAGE)
    return inventory_file


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
    """A file of the bundle that was not read: on stderr, so a JSON or markdown report on stdout stays whole (its
    name shown as characters: rdmatool.report.shown)."""
    typer.echo(f"rdmatool: warning: {terminal(line)}", err=True)


def _baseline_stats(ref: str, store: str):
    from rdmatool import baseline as baselines

    return baselines.stats_for_rules(baselines.resolve(ref, store))
