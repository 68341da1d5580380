"""`rdmatool collect`, `rdmatool inventory show`, `rdmatool bundle show`, `rdmatool bundle diff` and `rdmatool bundle
merge`."""

from __future__ import annotations

import sys
from collections import Counter
from typing import TYPE_CHECKING, Annotated

import typer

from rdmatool.cli import _config
from rdmatool.cli._format import JSON, TABLE, chosen, format_param, json_param
from rdmatool.cli._output import (
    EXIT_FAIL,
    EXIT_INCONCLUSIVE,
    EXIT_USAGE,
    data_console,
    die,
    print_json,
    print_wrapped,
)
from rdmatool.cli._targets import (
    BUNDLE_LIMIT_HELP,
    bundle_selection,
    choose_targets,
    exclude_param,
    ignore_unknown_param,
    limit_param,
)
from rdmatool.cli.exit_codes import epilog
from rdmatool.errors import BundleError, NoData, NothingCollected, RdmatoolError
from rdmatool.model import Target

if TYPE_CHECKING:
    from rdmatool.collect import CollectOptions, TargetOutcome

# The inventory, SSH fan-out and bundle modules (paramiko among them) are imported by the commands that use them:
# every `rdmatool` invocation imports this module to register the commands. rich too: a collection that went well
# prints two plain lines, and `collect` runs on every node of a fleet from a prolog or a health check.

inventory_app = typer.Typer(help="Inspect an inventory.", no_args_is_help=True)
bundle_app = typer.Typer(help="Inspect a collected bundle, compare two, or merge shards.", no_args_is_help=True)
SHOW_FORMATS = ("table", "json")


def register(app: typer.Typer) -> None:
    app.command("collect", epilog=epilog("collect"))(collect_command)
    app.add_typer(inventory_app, name="inventory")
    app.add_typer(bundle_app, name="bundle")


def load_targets(path: str, limit: str | None, shard: str | None, **selection) -> list[Target]:
    """`selection`: exclude, ignore_unknown, with_switches, baseline, store (rdmatool.cli._targets)."""
    targets = choose_targets(path, limit, shard, **selection)
    if not targets:  # nothing to check is no data (inconclusive), never a pass
        die(f"rdmatool: {path}: no target selected by --limit/--exclude/--shard; nothing to check", EXIT_INCONCLUSIVE)
    return targets


def collect_command(
    *,  # keyword-only, as typer passes them: lets a required option follow one with a default
    inventory_file: Annotated[str, typer.Option("-i", "--inventory", help=_config.INVENTORY_HELP)] = None,
    out: Annotated[str, typer.Option("-o", "--out", help="Bundle directory to write.")],
    local: Annotated[bool, typer.Option(
        "--local", help="Read this machine itself (no SSH, no inventory): the same script as a child "
                        "process, plus the verbs API when pyverbs is importable.")] = False,
    interval: Annotated[float, typer.Option(
        "--interval", help="Seconds between the two snapshots (0: one snapshot).")] = 10.0,
    forks: Annotated[int, typer.Option("--forks", min=1, metavar="N",
                                       help="Targets collected at once.")] = 64,
    timeout: Annotated[int, typer.Option("--timeout", min=1, metavar="S",
                                         help="Per-command timeout, seconds.")] = 20,
    deadline: Annotated[float, typer.Option("--deadline",
                                            help="Per-target deadline for one snapshot, seconds.")] = 120.0,
    limit: Annotated[str, limit_param()] = None,
    exclude: Annotated[str, exclude_param()] = None,
    ignore_unknown: Annotated[bool, ignore_unknown_param()] = False,
    shard: Annotated[str, typer.Option("--shard", help="K/N: collect only the K-th of N shards.")] = None,
    accept_new_host_keys: Annotated[bool, typer.Option("--accept-new-host-keys",
                                                       help="Record unknown host keys.")] = False,
    known_hosts: Annotated[str, typer.Option("--known-hosts",
                                             help="Extra known_hosts file (new keys go here).")] = None,
    accept_new_key_types: Annotated[bool, typer.Option(
        "--accept-new-key-types", help="With --accept-new-host-keys: also record a known host's key of a new "
                                       "type (else refused as changed).")] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace an existing bundle even if nothing was collected.")] = False,
) -> None:
    """Collect a bundle from every target over SSH, or from this machine with --local (read-only commands only)."""
    from rdmatool.collect import CollectOptions, nothing_collected

    if accept_new_key_types and not accept_new_host_keys:
        die("rdmatool: --accept-new-key-types only applies together with --accept-new-host-keys", EXIT_USAGE)
    targets = local_or_inventory(local, inventory_file, limit, shard, exclude=exclude, ignore_unknown=ignore_unknown,
                                 with_switches=True)
    inventory_file = "local" if local else _config.inventory(inventory_file)  # what the messages below name
    options = CollectOptions(
        interval_s=max(0.0, interval), forks=forks, command_timeout=timeout, target_deadline=deadline,
        connect_timeout=min(10.0, deadline), accept_new_host_keys=accept_new_host_keys, known_hosts=known_hosts,
        accept_new_key_types=accept_new_key_types, local=local,
    )
    try:
        outcomes, path = collect_to_bundle(targets, options, out, force=force)
    except BundleError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    except NothingCollected as exc:
        die(f"rdmatool: {exc}", EXIT_INCONCLUSIVE)
    except RdmatoolError as exc:  # a known_hosts file this user cannot read or write: bad input, named
        die(f"rdmatool: {exc}", EXIT_USAGE)
    nothing = nothing_collected(outcomes)
    if nothing:  # one line, not a table of a thousand identical refusals
        die(f"rdmatool: {inventory_file}: {nothing}; bundle written to {path}", EXIT_INCONCLUSIVE)
    code = print_summary(outcomes)
    print(f"bundle written to {path}", file=sys.stderr)
    raise typer.Exit(code)


def local_or_inventory(local: bool, inventory_file: str | None, limit: str | None, shard: str | None,
                       **selection) -> list[Target]:
    """This machine alone (--local), or the inventory's selection; never both, never neither."""
    if local:
        if inventory_file or limit or shard or selection.get("exclude"):
            die("rdmatool: --local reads this machine only; it takes no -i, --limit, --exclude or --shard", EXIT_USAGE)
        from rdmatool.transport.local import local_target

        return [local_target()]
    inventory_file = _config.inventory(inventory_file)
    if not inventory_file:
        die("rdmatool: give -i INVENTORY (or `inventory` in the config file), or --local to read this machine",
            EXIT_USAGE)
    return load_targets(inventory_file, limit, shard, **selection)


def collect_to_bundle(targets: list[Target], options: CollectOptions, out: str, force: bool = False,
                      ) -> tuple[list[TargetOutcome], str]:
    """The collect service with a progress bar on an interactive stderr."""
    from rdmatool.collect import collect_to_bundle as collect_service

    if not sys.stderr.isatty():
        return collect_service(targets, options, out, force)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("collecting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=data_console(True),
        transient=True,
    ) as bar:
        task = bar.add_task("collect", total=len(targets))
        return collect_service(targets, options, out, force, lambda name, event: bar.advance(task))


def print_summary(outcomes: list[TargetOutcome]) -> int:
    """The targets with something to say, on stderr, and the collection's exit code: 3 when a target was not
    collected, else 0. A tool missing on a target is a `warning`, as diagnose and the gate judge it
    (rdmatool.outcome.failures.tool_gaps); other command failures leave the target `partial`."""
    from rdmatool.outcome.failures import NOT_INSTALLED, command_gap

    ok = [o for o in outcomes if o.ok]
    code = EXIT_INCONCLUSIVE if len(ok) < len(outcomes) else 0
    rows = []
    for outcome in outcomes:
        command_errors = [r.error for rs in outcome.snapshots.values() for r in rs if r.error]
        if outcome.ok and not command_errors:
            continue
        missing_tools = all(command_gap(e) == NOT_INSTALLED for e in command_errors)
        status = "failed" if not outcome.ok else "warning" if missing_tools else "partial"
        rows.append((outcome.target.name, status, outcome.error or "; ".join(sorted(set(command_errors))[:4])))
    if not rows:
        print(f"collected {len(ok)}/{len(outcomes)} targets, no errors", file=sys.stderr)
        return code
    from rdmatool.report import tables  # only for a table to show (rich with it)

    err = data_console(True)
    err.print(tables.fitted(err, ("target", "status", "detail"), rows, keys=("target", "status"),
                            title=f"collected {len(ok)}/{len(outcomes)} targets"))
    return code


@inventory_app.command("show", epilog=epilog("inventory show"))
def inventory_show(
    inventory_file: Annotated[str, typer.Option("-i", "--inventory", help=_config.INVENTORY_HELP)] = None,
    limit: Annotated[str, limit_param()] = None,
    exclude: Annotated[str, exclude_param()] = None,
    ignore_unknown: Annotated[bool, ignore_unknown_param()] = False,
    shard: Annotated[str, typer.Option("--shard",
                                       help="K/N: only the K-th of N shards (as collect --shard).")] = None,
    fmt: Annotated[str, format_param(SHOW_FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
) -> None:
    """Print the resolved targets (ranges expanded, groups and ssh config applied; no secrets)."""
    fmt = chosen("inventory show", fmt, as_json, SHOW_FORMATS)
    inventory_file = _config.inventory(inventory_file)
    if not inventory_file:
        die("rdmatool inventory show: give -i INVENTORY (or `inventory` in the config file)", EXIT_USAGE)
    targets = load_targets(inventory_file, limit, shard, exclude=exclude, ignore_unknown=ignore_unknown)
    if fmt == JSON:
        from rdmatool.schemas import tag

        print_json({"schema": tag("inventory-show"), "inventory": inventory_file,
                    "targets": [t.public() for t in targets]})
        return
    from rdmatool.report import tables

    out = data_console()
    headers, rows = _inventory_rows(targets, out)
    out.print(tables.fitted(out, headers, rows, keys=("name", "address", "name / address"), right=("port",),
                            title=f"{len(targets)} targets", show_lines=headers != INVENTORY_COLUMNS))


INVENTORY_COLUMNS = ("name", "address", "port", "user", "kind", "platform", "role", "groups", "identity_file")
DETAILS_WIDTH = 24  # the least a narrow layout leaves the folded details beside the name and the address


def _inventory_rows(targets: list[Target], console) -> tuple[tuple[str, ...], list[list]]:
    """A column per field when they fit the console; else the name, the address and the rest in one folded column;
    else the address under the name. A name or an address is never cut nor broken (`10.0.…` is no address)."""
    from rdmatool.report import tables

    def shown(value) -> str:
        return "" if value is None else ",".join(value) if isinstance(value, list) else str(value)

    rows = [[shown(t.public()[c]) for c in INVENTORY_COLUMNS] for t in targets]
    if tables.fits(console, INVENTORY_COLUMNS, rows):
        return INVENTORY_COLUMNS, rows
    details = ["; ".join(part for part in (
        f"user {row[3]}" if row[3] else "", f"port {row[2]}", " ".join(v for v in row[4:7] if v),
        f"groups {row[7]}" if row[7] else "", f"key {row[8]}" if row[8] else "") if part) for row in rows]
    side_by_side = [[row[0], row[1], "x" * DETAILS_WIDTH] for row in rows]
    if tables.fits(console, ("name", "address", "details"), side_by_side):
        return ("name", "address", "details"), [[row[0], row[1], d] for row, d in zip(rows, details)]
    return ("name / address", "details"), [[tables.lines(row[0], row[1]), d] for row, d in zip(rows, details)]


@bundle_app.command("show", epilog=epilog("bundle show"))
def bundle_show(
    path: Annotated[str, typer.Argument(help="A collected bundle directory.")],
    fmt: Annotated[str, format_param(SHOW_FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
    limit: Annotated[str, limit_param(
        help=BUNDLE_LIMIT_HELP.replace("to judge (with -i: to collect)", "to summarise"))] = None,
    exclude: Annotated[str, exclude_param()] = None,
    ignore_unknown: Annotated[bool, ignore_unknown_param()] = False,
) -> None:
    """Summarise a bundle: targets, snapshots, outputs per parser, failures."""
    from rdmatool import bundle as bundle_io
    from rdmatool.outcome.failures import bundle_failures
    from rdmatool.schemas import tag
    from rdmatool.table import frame

    fmt = chosen("bundle show", fmt, as_json, SHOW_FORMATS)
    with bundle_selection("bundle show", path, limit, exclude, ignore_unknown) as (read, selection):
        try:
            loaded = bundle_io.read(read)
            # The parse failures too, so that this list is the one `diagnose` reports (through the samples store: a
            # stored bundle is not parsed again; nothing is written here).
            table = frame.load(read, write_store=False)
        except BundleError as exc:
            die(f"rdmatool: {exc}", EXIT_USAGE)
    failures_list = bundle_failures(table.collection_failures, table.parse_failures)
    per_parser = Counter(e.result.parser for e in loaded.entries)
    summary = {
        "schema": tag("bundle-show"),  # the shape and its version: rdmatool/schemas/bundle-show.schema.json
        "path": str(loaded.path) if selection is None else path,
        "created": loaded.manifest.get("created"),
        "interval_s": loaded.manifest.get("interval_s"),
        "snapshots": len(loaded.manifest.get("snapshots", [])),
        "targets": len(loaded.targets),
        "outputs": len(loaded.entries),
        "outputs_per_parser": dict(sorted(per_parser.items())),
        "failures": failures_list,
        **({"selection": selection.as_json()} if selection else {}),
    }
    if fmt == JSON:
        print_json(summary)
        return
    from rich.text import Text

    from rdmatool.report import tables
    from rdmatool.report.shown import terminal

    out = data_console()  # a manifest's and a host's text shown as characters (report.shown, report.tables)
    out.print(Text.assemble((terminal(summary["path"]), "bold"), f"  created {terminal(summary['created'])}  "
                            f"interval {terminal(summary['interval_s'])} s"))
    out.print(f"{summary['targets']} targets, {summary['snapshots']} snapshots, {summary['outputs']} outputs",
              highlight=False)
    if selection:
        print_wrapped(out, selection.note(), hanging=4)
    out.print(tables.fitted(out, ("parser", "files"), [[name, str(count)] for name, count in
                                                        summary["outputs_per_parser"].items()],
                            keys=("parser",), right=("files",), title="outputs per parser"))
    if failures_list:
        rows = [[str(f["target"]), str((f["parser"] if f["kind"] != "parse" else f"{f['parser']} (parse)")
                                       or "connection"), ",".join(map(str, f["snapshots"])) or "-",
                 str(f["error"] or "")] for f in failures_list]
        out.print(tables.fitted(out, ("target", "what", "snapshots", "error"), rows, keys=("target", "what"),
                                title=f"{len(failures_list)} failures"))


@bundle_app.command("merge", epilog=epilog("bundle merge"))
def bundle_merge(
    bundles: Annotated[list[str], typer.Argument(help="The shards of one collection.")],
    out: Annotated[str, typer.Option("-o", "--out", help="The merged bundle to write.")],
    prefer: Annotated[str, typer.Option(
        "--prefer",
        help="first | last | newest: whose data wins for a target in several bundles (the earliest listed, "
             "the latest listed, the one that read it last); without it such a target is refused.")] = None,
    max_skew: Annotated[float, typer.Option(
        "--max-skew", min=0.0, help="Seconds a snapshot's time may differ between the bundles.")] = 300.0,
    ignore_times: Annotated[bool, typer.Option(
        "--ignore-times",
        help="Do not compare the snapshots' times (their number must still agree).")] = False,
    copy: Annotated[bool, typer.Option(
        "--copy", help="Copy every file (default: hard links where the filesystem allows them).")] = False,
) -> None:
    """Merge the bundles of one sharded collection into one, without parsing again; refused (exit 2, nothing
    written) when the snapshots are not aligned or a target is in two bundles without --prefer."""
    from rdmatool.bundle_ops.merge import MergeOptions, merge

    options = MergeOptions(prefer=prefer, max_skew_s=max_skew, check_times=not ignore_times, copy=copy)
    try:
        result = merge(bundles, out, options)
    except RdmatoolError as exc:
        die(f"rdmatool bundle merge: {exc}", EXIT_USAGE)
    # Plain lines (never wrapped): a scheduler's log is read by grep.
    for note in result.notes:
        typer.echo(f"rdmatool: note: {note}", err=True)
    for source, names in result.dropped.items():
        typer.echo(f"rdmatool: note: {source}: {len(names)} target(s) left to another bundle (--prefer {prefer}): "
                   f"{', '.join(names[:10])}{' ...' if len(names) > 10 else ''}", err=True)
    typer.echo(f"merged {result.inputs} bundles: {result.targets} targets, {result.outputs} outputs "
               f"({result.linked} files linked, {result.copied} copied) into {result.path}", err=True)


DIFF_FORMATS = ("table", "json", "markdown")


@bundle_app.command("diff", epilog=epilog("bundle diff"))
def bundle_diff(
    a: Annotated[str, typer.Argument(help="The earlier bundle (e.g. last night's).")],
    b: Annotated[str, typer.Argument(help="The later bundle.")],
    fmt: Annotated[str, format_param(DIFF_FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
    tolerance: Annotated[float, typer.Option(
        "--tolerance", min=0.0,
        help="A rate has moved when it changed by more than this share of its value in A.")] = 0.5,
    min_rate: Annotated[float, typer.Option(
        "--min-rate", min=0.0,
        help="...and by at least this much per second (0.01 for a share such as a pause fraction).")] = 1.0,
    no_rates: Annotated[bool, typer.Option("--no-rates",
                                           help="Compare targets, configuration and cabling only.")] = False,
) -> None:
    """What changed from A to B: targets added, removed or unreachable, configuration (firmware, PFC, trust, ECN,
    MTU, speed), cabling, and counter rates that moved beyond --tolerance."""
    from rdmatool.bundle_ops.diff import diff_paths
    from rdmatool.report import bundle_diff as render
    from rdmatool.topology.ib_fabric import with_ib_fabric

    fmt = chosen("bundle diff", fmt, as_json, DIFF_FORMATS)
    try:
        result = diff_paths(a, b, tolerance=tolerance, min_rate=min_rate, rates=not no_rates,
                            prepare=with_ib_fabric).as_json()  # a subnet sweep's switch ports on their switches
    except NoData as exc:
        die(f"rdmatool bundle diff: {exc}", EXIT_INCONCLUSIVE)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    if fmt == "json":
        print_json(result)
    elif fmt == "markdown":
        typer.echo(render.render_markdown(result), nl=False)
    else:
        render.render_text(result, data_console())  # what a device said shown as characters (report.shown)
    raise typer.Exit(EXIT_FAIL if result["changes"] else 0)
