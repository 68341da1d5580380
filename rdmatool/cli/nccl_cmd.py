"""`rdmatool nccl env` (the NCCL / UCX connection recipe per host) and `rdmatool nccl check` (what NCCL_DEBUG=INFO
logs show NCCL really chose, against that recipe). The work is rdmatool.nccl's; this module reads options, prints
and exits."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from rdmatool.cli import _config
from rdmatool.cli._format import TABLE, chosen, format_param, json_param
from rdmatool.cli._output import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_USAGE, data_console, die, print_json
from rdmatool.cli._targets import limit_param
from rdmatool.cli.exit_codes import epilog

ENV_FORMATS = ("table", "json", "env", "slurm", "k8s")
CHECK_FORMATS = ("table", "json")
FAILING = ("error", "critical")
LOGS_HELP = "NCCL_DEBUG=INFO logs (a job's output; mpirun, srun and torchrun prefixes are read through)."


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="NCCL / UCX: the connection recipe per host, and a check of what NCCL really chose.",
                        no_args_is_help=True)
    group.command("env", epilog=epilog("nccl env"))(env_command)
    group.command("check", epilog=epilog("nccl check"))(check_command)
    app.add_typer(group, name="nccl")


def env_command(
    bundle: Annotated[str, typer.Argument(
        help="A collected bundle directory (omit with -i to collect live).")] = None,
    inventory_file: Annotated[str, typer.Option("-i", "--inventory",
                                                help="Collect live from this inventory first (without a "
                                                     "BUNDLE: the config file's `inventory`).")] = None,
    limit: Annotated[str, limit_param(help="The hosts to give a recipe (of the bundle, or of the inventory "
                                           "to collect): names, ranges gpu[01-16], @group, globs.")] = None,
    site_values: Annotated[list[str], _config.site_param()] = None,
    fmt: Annotated[str, format_param(ENV_FORMATS,
                                     "env: shell exports; slurm: a TaskProlog; k8s: a container env list, or "
                                     "a ConfigMap per node when the hosts differ")] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
    accept_new_host_keys: Annotated[bool, typer.Option("--accept-new-host-keys",
                                                       help="With -i: record unknown host keys.")] = False,
    known_hosts: Annotated[str, typer.Option(
        "--known-hosts", help="With -i: extra known_hosts file (new keys go here).")] = None,
) -> None:
    """NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_IB_TC, NCCL_IB_SL, NCCL_SOCKET_IFNAME and the UCX equivalents of each
    compute host, from a bundle's facts and the site profile, each value with why; findings where no one fits."""
    from rdmatool.errors import RdmatoolError
    from rdmatool.nccl import findings, recipe, render

    fmt = chosen("nccl env", fmt, as_json, ENV_FORMATS)
    if bundle and inventory_file:
        die("rdmatool nccl env: give either a BUNDLE or -i INVENTORY", EXIT_USAGE)
    if not bundle:
        inventory_file = _config.inventory(inventory_file)
    if not bundle and not inventory_file:
        die("rdmatool nccl env: give either a BUNDLE or -i INVENTORY (or `inventory` in the config file)", EXIT_USAGE)
    site = _config.site(site_values)
    try:
        analysis, only = _analysis(bundle, inventory_file, limit,
                                   CollectKeys(accept_new_host_keys=accept_new_host_keys, known_hosts=known_hosts))
        built = recipe.build(analysis.facts, analysis.targets, analysis.links, site=site, only=only)
        found = findings.judged(analysis, built.problems, "nccl_recipe_verdict", site=site)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    if not built.hosts:
        why = "; ".join(f"{n}: {w}" for n, w in sorted(built.skipped.items())[:5]) or "no host in the bundle"
        die(f"rdmatool nccl env: {bundle or inventory_file}: no compute host with an active RDMA rail ({why})",
            EXIT_INCONCLUSIVE)
    if fmt == "json":
        print_json(render.as_json(built, found))
    elif fmt == "env":
        typer.echo(render.shell(built), nl=False)
    elif fmt == "slurm":
        typer.echo(render.slurm(built), nl=False)
    elif fmt == "k8s":
        typer.echo(render.k8s(built), nl=False)
    else:
        from rdmatool.cli._output import print_wrapped

        console = data_console()
        for line in render.table(built, found):
            print_wrapped(console, line, hanging=4)
    if fmt not in ("json", "table"):  # the shell or YAML on stdout stays clean; what is wrong goes to stderr
        from rdmatool.report.shown import terminal

        for f in found:  # a symptom quotes the hosts' values: shown as characters
            typer.echo(terminal(f"rdmatool: {f.severity.value}: {f.rule}: {f.symptom}"), err=True)
    raise typer.Exit(EXIT_FAIL if any(f.severity.value in FAILING for f in found) else 0)


@dataclass(frozen=True)
class CollectKeys:
    """How a live collection (-i) verifies the hosts' keys: as collect's --known-hosts / --accept-new-host-keys."""

    accept_new_host_keys: bool = False
    known_hosts: str | None = None


def _analysis(bundle: str | None, inventory_file: str | None, limit: str | None, keys: CollectKeys = CollectKeys()):
    """The analysis to build the recipe from, and the host names --limit selects (None: every host)."""
    from rdmatool.table.analysis import analyse_path

    if bundle:
        analysis = analyse_path(bundle)
        return analysis, _selected(analysis.targets, limit) if limit else None
    from rdmatool.cli.collect_cmd import collect_to_bundle, load_targets
    from rdmatool.collect import CollectOptions, nothing_collected

    targets = load_targets(inventory_file, limit, None, with_switches=True)
    with tempfile.TemporaryDirectory(prefix="rdmatool-") as workdir:
        outcomes, path = collect_to_bundle(targets, CollectOptions(interval_s=0.0, accept_new_host_keys=keys.accept_new_host_keys,
                                                                    known_hosts=keys.known_hosts), str(Path(workdir) / "bundle"))
        nothing = nothing_collected(outcomes)
        if nothing:
            die(f"rdmatool nccl env: {inventory_file}: {nothing}", EXIT_INCONCLUSIVE)
        return analyse_path(path), None


def _selected(targets: list[dict], limit: str) -> set[str]:
    from rdmatool.errors import InventoryError
    from rdmatool.inventory.selection import selection
    from rdmatool.model import Target

    known = [Target(name=t["name"], address=str(t.get("address") or ""), groups=tuple(t.get("groups") or ()))
             for t in targets if isinstance(t, dict) and t.get("name")]
    try:
        picked = selection(known, limit).targets
    except InventoryError as exc:
        die(f"rdmatool nccl env: {exc}", EXIT_USAGE)
    if not picked:
        die(f"rdmatool nccl env: --limit {limit}: selects no host of the bundle", EXIT_INCONCLUSIVE)
    return {t.name for t in picked}


def check_command(
    logs: Annotated[list[str], typer.Argument(help=LOGS_HELP)],
    bundle: Annotated[str, typer.Option("--bundle",
                                        help="A bundle of the job's hosts: the log is checked against their "
                                             "recipe (rails, GID index, traffic class).")] = None,
    site_values: Annotated[list[str], _config.site_param()] = None,
    fmt: Annotated[str, format_param(CHECK_FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
) -> None:
    """What NCCL really chose, per process: devices and ports, GID index, traffic class, socket fallback, GPU Direct
    RDMA, rings and trees; with --bundle, findings where it departs from the recipe."""
    from rdmatool.errors import ParseError, RdmatoolError
    from rdmatool.nccl import findings, log

    fmt = chosen("nccl check", fmt, as_json, CHECK_FORMATS)
    site = _config.site(site_values)
    runs = []
    for path in logs:
        text = _read(path)
        try:
            runs.append(log.read(log.parse(text), path))
        except ParseError as exc:
            if exc.message.startswith(log.NO_RECORD):  # a log of a job without NCCL_DEBUG=INFO: the others may have
                typer.echo(f"rdmatool: note: {path}: {log.NO_RECORD}", err=True)
                continue
            die(f"rdmatool nccl check: {exc.located(path)}", EXIT_USAGE)
    processes = [p for run in runs for p in run]
    if not processes:
        die(f"rdmatool nccl check: {', '.join(logs)}: no NCCL INFO line (run the job with NCCL_DEBUG=INFO)",
            EXIT_INCONCLUSIVE)
    try:
        if bundle:
            from rdmatool.nccl import recipe
            from rdmatool.table.analysis import analyse_path

            analysis = analyse_path(bundle)
            built = recipe.build(analysis.facts, analysis.targets, analysis.links, site=site)
        else:
            analysis, built = None, None
        problems = log.check(processes, built, site)
        found = findings.judged(analysis, problems, "nccl_log_verdict", site=site)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    if fmt == "json":
        print_json(log.as_json(processes, found, bundle))
    else:
        from rdmatool.cli._output import print_wrapped

        console = data_console()
        for line in log.table(processes, found, bundle):
            print_wrapped(console, line, hanging=4)
    raise typer.Exit(EXIT_FAIL if any(f.severity.value in FAILING for f in found) else 0)


def _read(path: str) -> str:
    """A log's text, at most the output cap (rdmatool.files): a job's log is megabytes, a wrong file is refused."""
    from rdmatool import files
    from rdmatool.errors import RdmatoolError

    try:
        limit = files.max_output_bytes()
        data = files.read_regular_bytes(path, limit)
    except FileNotFoundError:
        die(f"rdmatool nccl check: {path}: no such file", EXIT_USAGE)
    except (files.UnsafeFileError, RdmatoolError, OSError) as exc:
        die(f"rdmatool nccl check: {path}: {getattr(exc, 'strerror', None) or exc}", EXIT_USAGE)
    if len(data) > limit:
        die(f"rdmatool nccl check: {path}: larger than {limit} bytes ({files.ENV_MAX_BYTES})", EXIT_USAGE)
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
