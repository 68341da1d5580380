"""`rdmatool gate`: pass/fail before a training job, with an exit code and the nodes to drain."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer

from rdmatool.cli import _config
from rdmatool.cli._format import JSON, TABLE, chosen, format_param, json_param
from rdmatool.cli._output import EXIT_INCONCLUSIVE, EXIT_INTERNAL, EXIT_USAGE, data_console, die, print_json
from rdmatool.cli._targets import exclude_param, ignore_unknown_param, limit_param
from rdmatool.cli.collect_cmd import local_or_inventory
from rdmatool.cli.exit_codes import epilog
from rdmatool.errors import NoData, RdmatoolError
from rdmatool.model import TargetKind, Verdict
from rdmatool.outcome.verdict import EXIT_CODES
from rdmatool.present import hostlist

DRAIN_FORMATS = ("lines", "nodeset")
FORMATS = ("table", "json")


def register(app: typer.Typer) -> None:
    app.command("gate", epilog=epilog("gate"))(gate_command)


def gate_command(
    inventory_file: Annotated[str, typer.Option(
        "-i", "--inventory",
        help="Inventory of the job's nodes and switches (default: the config file's `inventory`).")] = None,
    replay: Annotated[str, typer.Option(
        "--replay", help="Recompute the verdict offline from a bundle saved with --save.")] = None,
    local: Annotated[bool, typer.Option(
        "--local", help="Gate this machine itself, no SSH (a Slurm prolog or health check, a DaemonSet): the "
                        "state and counter stages; the pair stages need -i.")] = False,
    limit: Annotated[str, limit_param()] = None,
    exclude: Annotated[str, exclude_param()] = None,
    ignore_unknown: Annotated[bool, ignore_unknown_param()] = False,
    baseline: Annotated[str, typer.Option(
        "--baseline", help="Baseline NAME or PATH: when --limit names hosts only and the inventory has no "
        "`links:`, the cabling its newest bundle saw brings in their switches.")] = None,
    store: Annotated[str, typer.Option("--store", help=_config.STORE_HELP)] = None,
    profile_file: Annotated[str, typer.Option("--profile",
                                              help="Gate profile YAML (thresholds, stages, deadlines; "
                                                   "default: the config file's `gate_profile`).")] = None,
    topology: Annotated[str, typer.Option(
        "--topology", help="Expected-topology YAML: the bandwidth pairs follow the cabling, and the JSON "
                           "says what they can find (overrides the profile's).")] = None,
    budget: Annotated[float, typer.Option("--budget", help="Seconds the whole gate may take.")] = 300.0,
    fmt: Annotated[str, format_param(FORMATS, "json: the diagnose JSON shape plus drain and stages")] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
    junit: Annotated[str, typer.Option("--junit",
                                       help="Write JUnit XML (one testcase per node and stage).")] = None,
    drain_file: Annotated[str, typer.Option("--drain-file",
                                            help="Write the nodes to drain, one per line.")] = None,
    drain_format: Annotated[str, typer.Option(
        "--drain-format",
        help="lines (one name per line) | nodeset (one folded set: gpu[01-04,09]).")] = "lines",
    save: Annotated[str, typer.Option("--save",
                                      help="Keep the collected bundle (with perf results) here.")] = None,
    allow_missing: Annotated[int, typer.Option("--allow-missing",
                                               help="Targets unreachable or not read in full (deadline, a "
                                                    "hung command, files missing) tolerated.")] = None,
    forks: Annotated[int, typer.Option("--forks", min=1, metavar="N",
                                       help="Targets collected at once.")] = 64,
    playbooks: Annotated[str, typer.Option("--playbooks", help=_config.PLAYBOOKS_HELP)] = None,
    site_values: Annotated[list[str], _config.site_param()] = None,
    accept_new_host_keys: Annotated[bool, typer.Option("--accept-new-host-keys",
                                                       help="Record unknown host keys.")] = False,
    known_hosts: Annotated[str, typer.Option("--known-hosts",
                                             help="Extra known_hosts file (new keys go here).")] = None,
) -> None:
    """Gate a training job on fabric health: exit 0 pass, 1 fail (drain the listed nodes), 3 inconclusive."""
    from rdmatool.gate.run import run_gate

    _check_drain_format(drain_format)
    as_json = chosen("gate", fmt, as_json, FORMATS) == JSON
    if not (replay or local):
        inventory_file = _config.inventory(inventory_file)
    store, playbooks, profile_file = _config.store(store), _config.playbooks(playbooks), _config.gate_profile(
        profile_file)
    site = _config.site(site_values)  # the RoCE / CNP class the rules and the suggestions read
    _check_sources(inventory_file, replay, local, limit or exclude, (drain_file, junit))
    try:
        profile = _profile(profile_file, allow_missing, topology, local, live=not replay)
        if replay:
            result, targets = _replay(replay, profile, playbooks, site)
        else:
            from rdmatool.collect import CollectOptions

            targets = local_or_inventory(local, inventory_file, limit, None, exclude=exclude,
                                         ignore_unknown=ignore_unknown, with_switches=True, baseline=baseline,
                                         store=store)
            options = CollectOptions(forks=forks, accept_new_host_keys=accept_new_host_keys, known_hosts=known_hosts,
                                     local=local)
            result = run_gate(targets, profile, options, budget, save=save, playbooks_dir=playbooks, site=site)
    except NoData as exc:
        _no_data(drain_file, str(exc))
    except RdmatoolError as exc:
        die(f"rdmatool gate: {exc}", EXIT_USAGE)
    if result.no_data:
        _no_data(drain_file, f"{replay or inventory_file or 'local'}: {result.no_data}")
    _conclude(result, _hand_over(result, targets, drain_file, drain_format, junit), as_json)


def _conclude(result, unwritten: list[str], as_json: bool) -> NoReturn:
    """Print the verdict, then exit: 2 naming a drain or JUnit file that could not be written, 4 when a stage's own
    code broke (unless the gate failed anyway), else the verdict's code."""
    if as_json:
        print_json(result.as_json())
    else:
        _print(result, data_console())
    if unwritten:  # the verdict is still printed; then the run fails as bad input, naming the file
        die(f"rdmatool gate: {unwritten[0]}", EXIT_USAGE)
    broken = [s for s in result.stages if s.status == "error"]
    if broken and result.verdict is not Verdict.FAIL:
        # a stage whose own code broke proved nothing: exit 4 (rdmatool failed), so that a hook set to fail closed
        # holds the job; a FAIL still names its nodes to drain (exit 1), the broken stage in its JSON and table
        die(f"rdmatool gate: internal error: {broken[0].name}: {broken[0].detail}", EXIT_INTERNAL)
    raise typer.Exit(EXIT_CODES[result.verdict])


def _check_drain_format(drain_format: str) -> None:
    if drain_format not in DRAIN_FORMATS:
        die(f"rdmatool gate: --drain-format must be one of {', '.join(DRAIN_FORMATS)}", EXIT_USAGE)


def _check_sources(inventory_file: str | None, replay: str | None, local: bool, selected: str | None,
                   outputs: tuple[str | None, ...]) -> None:
    """One source of targets, no selection of a replayed bundle, and the output files writable: else one line and
    exit 2."""
    if sum(map(bool, (inventory_file, replay, local))) != 1:
        die("rdmatool gate: give one of -i INVENTORY, --replay BUNDLE or --local", EXIT_USAGE)
    if replay and selected:  # judging the whole bundle for a job's node list would drain others' nodes
        die("rdmatool gate: --limit and --exclude select the targets of an inventory (-i); a replayed bundle is "
            "judged whole", EXIT_USAGE)
    for path in outputs:  # found before the budget is spent on a verdict that could not be handed over
        if path and (why := _unwritable(path)):
            die(f"rdmatool gate: {why}", EXIT_USAGE)


def _replay(bundle: str, profile, playbooks: str | None, site: dict | None):
    """The verdict recomputed from a saved bundle, and the targets it recorded."""
    from rdmatool import bundle as bundle_io
    from rdmatool.bundle.replay import targets as recorded_targets
    from rdmatool.gate.run import replay_gate

    return replay_gate(bundle, profile, playbooks_dir=playbooks, site=site), recorded_targets(bundle_io.read(bundle))


def _profile(profile_file: str | None, allow_missing: int | None, topology: str | None, local: bool, live: bool):
    """The gate profile as the options amend it. A live gate checks its topology file and schedule name first: a
    bad one stops the gate before it collects anything (RdmatoolError)."""
    from dataclasses import replace

    from rdmatool.gate import profile as profiles

    profile = profiles.load(profile_file)
    if allow_missing is not None:
        profile = replace(profile, allow_missing=allow_missing)
    if topology:
        profile = replace(profile, topology=topology)
    if local:  # one node: nothing to pair with, and perftest / incast peers are reached over SSH
        profile = replace(profile, bandwidth=replace(profile.bandwidth, enabled=False),
                          latency=replace(profile.latency, enabled=False),
                          incast=replace(profile.incast, enabled=False))
    if live:
        from rdmatool.gate.schedule_choice import check

        check(profile.topology, profile.bandwidth.schedule)
    return profile


def _hand_over(result, targets, drain_file: str | None, drain_format: str, junit: str | None) -> list[str]:
    """The drain list and the JUnit XML written for the scheduler and the CI; what could not be written, one line
    naming each file."""
    unwritten = []
    if drain_file:
        unwritten += _atomic_write(drain_file, _drain_text(result.drain, drain_format))
    if junit:
        from rdmatool.report import junit as junit_report

        hosts = [t.name for t in targets if t.kind is TargetKind.HOST]
        unwritten += _atomic_write(junit, junit_report.render(result.stages, hosts, result.drain))
    return unwritten


def _print(result, console) -> None:
    """The on-call view of the gate (rdmatool.report.text), in the order of a diagnosis: the verdict and its stages,
    the nodes to drain with their reasons, then the causes."""
    from rdmatool.report import text

    text.render_gate(result, console)


def _no_data(drain_file: str | None, line: str) -> NoReturn:
    """Nothing to judge: one line and exit 3. An empty drain file is still written, so that a scheduler never acts
    on the list an earlier run left there."""
    if drain_file:
        _atomic_write(drain_file, "")
    die(f"rdmatool gate: {line}", EXIT_INCONCLUSIVE)


def _drain_text(drain: list[str], fmt: str) -> str:
    """One name per line for scripts (`while read node`), or one folded set for `scontrol update nodename=`."""
    if fmt == "nodeset":
        return hostlist.fold(drain) + "\n" if drain else ""
    return "".join(f"{name}\n" for name in drain)


def _unwritable(path: str) -> str | None:
    """Why a file cannot be written at `path` (its folder made, a file created in it), one line naming it; or None."""
    import tempfile

    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=Path(path).parent).close()
    except OSError as exc:
        why = "Not a directory" if isinstance(exc, FileExistsError) else exc.strerror or exc  # a file on its path
        return f"{path}: cannot write ({why})"
    return None


def _atomic_write(path: str, text: str) -> list[str]:
    """A scheduler may read the drain list while the gate writes it: it sees the old list or the new, never half.
    What went wrong, one line naming the file, when it cannot be written (nothing else raises)."""
    from rdmatool import files

    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        files.write_atomic(target, text.encode("utf-8"), mode=0o600)
    except OSError as exc:
        return [f"{path}: cannot write ({exc.strerror or exc})"]
    return []
