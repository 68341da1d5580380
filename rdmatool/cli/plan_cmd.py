"""`rdmatool plan bandwidth|checkpoint|storage`: the capacity planners of docs/tuning.md §10 and the storage read
plan (rdmatool.plan.storage)."""

from __future__ import annotations

from typing import Annotated

import typer

from rdmatool.cli import _config
from rdmatool.cli._format import JSON, TABLE, chosen, format_param, json_param
from rdmatool.cli._output import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_USAGE, die, print_json
from rdmatool.cli.exit_codes import epilog
from rdmatool.errors import RdmatoolError

plan_app = typer.Typer(help="Capacity planning: what a training job asks of the fabric, nominal and measured.",
                       no_args_is_help=True)


FORMATS = ("table", "json")


def register(app: typer.Typer) -> None:
    app.add_typer(plan_app, name="plan")


def _bytes(value: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:,.4g} {unit}"
    return f"{value:,.0f} B"


def _gbps(value: float | None) -> str:
    return "—" if value is None else f"{value:,.4g} Gb/s" if value < 1000 else f"{value:,.0f} Gb/s"


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.3g} h"
    if seconds >= 60:
        return f"{seconds / 60:.3g} min"
    return f"{seconds:.3g} s"


def _effective_line(label: str, e: dict, ring: bool) -> str:
    line = f"{label}: {e['efficiency']:.1%} of line rate; line rate needed {_gbps(e['line_gbps_needed'])}" + (
        " per node" if ring else "")
    if "effective_gbps" in e:
        line += f"; {_gbps(e['effective_gbps'])} effective per link"
        if e.get("allreduce_s_per_iteration") is not None:
            line += (f", the all-reduce takes {e['allreduce_s_per_iteration']:.3g} s per iteration "
                     f"({e['iteration_share']:.0%} of an iteration)")
        elif e.get("links_needed") is not None:
            line += f", {e['links_needed']:.3g} such links"
    return line


def _print_bandwidth(plan: dict) -> None:
    i = plan["inputs"]
    typer.echo(plan["formula"])
    typer.echo(f"  = {i['params']:.4g} × {i['bytes_per_value']:g} × 2 × {i['iterations_per_s']:g}/s × "
               f"{i['parallelism']:g} = {_bytes(plan['per_iteration_bytes'])} per iteration × "
               f"{i['iterations_per_s']:g}/s = {_bytes(plan['required_bytes_per_s'])}/s = "
               f"{_gbps(plan['required_gbps'])}")
    ring = plan["ring"]
    if ring:
        typer.echo(ring["formula"])
        typer.echo(f"  N = {ring['nodes']}: {ring['factor']:.4g} × {_bytes(plan['model_bytes'])} = "
                   f"{_bytes(ring['per_node_bytes_per_iteration'])} per node per iteration, "
                   f"{_bytes(ring['per_node_bytes_per_s'])}/s = {_gbps(ring['per_node_gbps'])} per node")
    typer.echo(_effective_line("planning (about 70 % of line rate)", plan["planning"], bool(ring)))
    measured = plan["measured"]
    if measured is None:
        return
    where = f"{measured['source']} {measured['path']}".strip()
    if measured.get("efficiency") is None:
        typer.echo(f"measured ({where}): none: {measured['reason']}")
        return
    perftest = measured.get("perftest")
    parts = [f"perftest median {perftest['median']:.1%} of line rate over {perftest['n']} results" if perftest
             else "no perftest result"]
    rail = measured.get("rail")
    if rail:
        parts.append(f"compute rail {rail['port']} usually {_gbps(rail['nominal_gbps'])}, slowest active "
                     f"{rail['slowest']['target']} at {_gbps(rail['slowest']['gbps'])} ({rail['share']:.0%})")
        if rail["not_active"]:
            parts.append(f"not active: {', '.join(rail['not_active'])}")
    typer.echo(f"measured ({where}): " + "; ".join(parts) + f"; basis: {measured['basis']}")
    typer.echo(_effective_line("measured", measured, bool(ring)))


def _verdict_line(plan: dict) -> str | None:
    """`verdict: NOT FEASIBLE: ...`: whether the plan can be met, said last. None for the estimate alone (no line
    rate, nothing measured asked for): its figures are the answer, there is nothing to judge them against."""
    verdict = plan["verdict"]
    if verdict["feasible"] is None and plan["inputs"]["line_gbps"] is None and plan["measured"] is None:
        return None
    said = {True: "feasible", False: "NOT FEASIBLE", None: "not judged"}[verdict["feasible"]]
    return f"verdict: {said}: {verdict['reason']}"


def _exit_code(plan: dict) -> int:
    """1 for a plan that cannot be met; 3 when --bundle or --baseline held nothing to judge it on; else 0."""
    if plan["verdict"]["feasible"] is False:
        return EXIT_FAIL
    if plan.get("measured") is not None and plan["measured"].get("efficiency") is None:
        return EXIT_INCONCLUSIVE
    return 0


@plan_app.command("bandwidth", epilog=epilog("plan bandwidth"))
def bandwidth_command(
    *,  # keyword-only, as typer passes them: lets a required option follow one with a default
    params: Annotated[str, typer.Option("--params", metavar="COUNT",
                                        help="Model parameters: 7B, 350M, 1.5T, 7e9 ...")],
    bytes_per_value: Annotated[float, typer.Option("--bytes-per-value",
                                                   help="Bytes per parameter (2: FP16/BF16).")] = 2.0,
    iterations_per_s: Annotated[float, typer.Option("--iterations-per-s",
                                                    help="Synchronisations per second.")],
    parallelism: Annotated[float, typer.Option("--parallelism",
                                               help="Parallelism factor of the estimate.")] = 1.0,
    nodes: Annotated[int, typer.Option("--nodes",
                                       help="Nodes of a ring all-reduce: the per-node volume.")] = None,
    link_gbps: Annotated[float, typer.Option(
        "--link-gbps", help="Line rate per node, Gb/s (default: the bundle's).")] = None,
    bundle: Annotated[str, typer.Option(
        "--bundle", help="A bundle whose perftest results and link rates are used.")] = None,
    baseline: Annotated[str, typer.Option(
        "--baseline", help="Baseline NAME in the store, or a baseline file PATH.")] = None,
    store: Annotated[str, typer.Option("--store", help=_config.STORE_HELP)] = None,
    fmt: Annotated[str, format_param(FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
) -> None:
    """Bandwidth a data-parallel job needs: the estimate, the ring per node, and the effective rate at 70 % of line
    rate and at what the fleet measured (--bundle or --baseline); with --nodes and a line rate, whether the fabric
    can carry it (the verdict line; exit 1 when it cannot)."""
    from rdmatool.plan import measured as fleet
    from rdmatool.plan.bandwidth import bandwidth_plan
    from rdmatool.plan.units import parse_count

    as_json, store = chosen("plan bandwidth", fmt, as_json, FORMATS) == JSON, _config.store(store)
    if bundle and baseline:
        die("rdmatool plan bandwidth: give --bundle or --baseline, not both", EXIT_USAGE)
    try:
        measured = None
        if bundle:
            measured = fleet.from_bundle(bundle)
        elif baseline:
            from rdmatool import baseline as baselines

            path = baselines.resolve(baseline, store)
            measured = fleet.from_baseline_stats(baselines.stats_for_rules(path), str(path))
        plan = bandwidth_plan(parse_count(params, "--params"), bytes_per_value, iterations_per_s, parallelism, nodes,
                              link_gbps, measured=measured)
    except ValueError as exc:
        die(f"rdmatool plan bandwidth: {exc}", EXIT_USAGE)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    if as_json:
        print_json(plan)
    else:
        _print_bandwidth(plan)
        line = _verdict_line(plan)
        if line:
            typer.echo(line)
    raise typer.Exit(_exit_code(plan))


@plan_app.command("checkpoint", epilog=epilog("plan checkpoint"))
def checkpoint_command(
    size: Annotated[str, typer.Option("--size", metavar="SIZE", help="Checkpoint size: 100GB, 1.5TiB ...")],
    interval: Annotated[str, typer.Option("--interval", metavar="DURATION",
                                          help="Time between checkpoints: 1h, 30min, 900s ...")],
    write_gbps: Annotated[float, typer.Option("--write-gbps", help="Write rate to storage, Gb/s.")] = None,
    stall: Annotated[str, typer.Option("--stall", metavar="DURATION",
                                       help="Or the stall itself, when known: 5min ...")] = None,
    fmt: Annotated[str, format_param(FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
) -> None:
    """Stall per checkpoint and the share of compute lost to it; a stall not shorter than the interval cannot be
    met (exit 1)."""
    from rdmatool.plan.checkpoint import checkpoint_plan
    from rdmatool.plan.units import parse_duration, parse_size

    as_json = chosen("plan checkpoint", fmt, as_json, FORMATS) == JSON
    try:
        plan = checkpoint_plan(parse_size(size), parse_duration(interval), write_gbps,
                               parse_duration(stall) if stall else None)
    except ValueError as exc:
        die(f"rdmatool plan checkpoint: {exc}", EXIT_USAGE)
    code = 0 if plan["verdict"]["feasible"] else EXIT_FAIL
    if as_json:
        print_json(plan)
        raise typer.Exit(code)
    typer.echo(plan["formula"])
    typer.echo(f"  {_bytes(plan['size_bytes'])} at {_gbps(plan['write_gbps'])}: a stall of "
               f"{_duration(plan['stall_s'])} every {_duration(plan['interval_s'])}")
    typer.echo(f"  {plan['checkpoints_per_day']:.3g} checkpoints a day lose {_duration(plan['lost_s_per_day'])} a "
               f"day: {plan['lost_share']:.1%} of the compute")
    if not plan["verdict"]["feasible"]:
        typer.echo(f"verdict: NOT FEASIBLE: {plan['verdict']['reason']}")
    raise typer.Exit(code)


def _print_storage(plan: dict) -> None:
    from rdmatool.plan.storage import fmt_tb, fmt_tib

    i, line, agg, ref = plan["inputs"], plan["line_rate"], plan["aggregate"], plan["reference"]
    typer.echo(plan["formula"])
    typer.echo(f"  line rate: {i['nodes']} nodes × {i['nics_per_node']} × {i['nic_gbps']:g} Gb/s = "
               f"{line['gbps'] / 1000:,.4g} Tb/s = {fmt_tb(line['bytes_per_s'])} = {fmt_tib(line['bytes_per_s'])}")
    measured = plan["measured"]
    if measured is not None:
        said = (f"{measured['efficiency']:.1%} ({measured['basis']}, {measured['n']} results)"
                if measured["efficiency"] is not None else f"none: {measured['reason']}")
        typer.echo(f"  measured ({measured['path']}): {said}")
    typer.echo(f"  aggregate at {agg['efficiency']:.1%} of line rate ({agg['basis']}): {fmt_tb(agg['bytes_per_s'])} "
               f"= {fmt_tib(agg['bytes_per_s'])}")
    typer.echo(f"  {ref['name']} reference: {ref['nodes']} nodes × {ref['nics_per_node']} × {ref['nic_gbps']:g} Gb/s "
               f"read {fmt_tib(ref['read']['bytes_per_s'])} = {fmt_tb(ref['read']['bytes_per_s'])} of "
               f"{fmt_tib(ref['line_rate']['bytes_per_s'])} = {fmt_tb(ref['line_rate']['bytes_per_s'])}: "
               f"{ref['efficiency']:.1%} of line rate (TiB/s over TB/s would say {ref['tib_over_tb_slip']:.0%})")
    if plan["verdict"]["feasible"] is not None or (measured is not None and measured["efficiency"] is None):
        said = {True: "feasible", False: "NOT FEASIBLE", None: "not judged"}[plan["verdict"]["feasible"]]
        typer.echo(f"verdict: {said}: {plan['verdict']['reason']}")


@plan_app.command("storage", epilog=epilog("plan storage"))
def storage_command(
    nodes: Annotated[int, typer.Option("--nodes", help="Storage nodes.")],
    nics: Annotated[str, typer.Option("--nics", metavar="COUNTxRATE",
                                      help="NICs per node and Gb/s each: 2x200G.")],
    efficiency: Annotated[str, typer.Option(
        "--efficiency", metavar="SHARE",
        help="Share of line rate delivered: 0.8 or 80% (default: the 3FS reference's).")] = None,
    need: Annotated[str, typer.Option(
        "--need", metavar="RATE",
        help="Read rate wanted, unit named: 6TiB/s, 7TB/s, 500GB/s (gives a verdict).")] = None,
    bundle: Annotated[str, typer.Option(
        "--bundle", help="A bundle whose perftest results give the fleet's efficiency.")] = None,
    fmt: Annotated[str, format_param(FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
) -> None:
    """Read rate of the storage nodes: line rate in Tb/s, TB/s and TiB/s, the aggregate at an efficiency (given, the
    fleet's measured with --bundle, else the 3FS reference's) and the 3FS reference beside it; with --need, whether
    the aggregate reaches it (exit 1 when not)."""
    from rdmatool.plan import storage

    as_json = chosen("plan storage", fmt, as_json, FORMATS) == JSON
    try:
        count, gbps = storage.parse_nics(nics)
        share = storage.parse_efficiency(efficiency) if efficiency is not None else None
        wanted = storage.parse_rate(need) if need is not None else None
        measured = None
        if bundle:
            from rdmatool.table.analysis import analyse_path

            measured = storage.measured_efficiency(analyse_path(bundle), bundle)
        plan = storage.storage_plan(nodes, count, gbps, share, measured, wanted)
    except ValueError as exc:
        die(f"rdmatool plan storage: {exc}", EXIT_USAGE)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    if as_json:
        print_json(plan)
    else:
        _print_storage(plan)
    if plan["verdict"]["feasible"] is False:
        raise typer.Exit(EXIT_FAIL)
    unmeasured = plan["measured"] is not None and plan["measured"]["efficiency"] is None and share is None
    raise typer.Exit(EXIT_INCONCLUSIVE if unmeasured else 0)
