"""`rdmatool perf run`: perftest between hosts (all-pairs, ring, or the gate's pairs with confirmation)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from rdmatool.cli import _config, _perf_storage
from rdmatool.cli._output import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_USAGE, data_console, die
from rdmatool.cli._targets import exclude_param, ignore_unknown_param, limit_param
from rdmatool.cli.collect_cmd import load_targets
from rdmatool.cli.exit_codes import epilog
from rdmatool.model import TargetKind
from rdmatool.perf.model import BW_TESTS, LAT_TESTS, Attribution, PairResult, PerfOptions
from rdmatool.perf.output import nics_detail, nics_of
from rdmatool.report.hostsets import folded

perf_app = typer.Typer(help="perftest between hosts: bandwidth / latency matrices and bad-node / bad-link "
                            "attribution.", no_args_is_help=True)
MODES = ("pairs", "topology", "ring", "all-pairs", "storage")
MAX_PORT_BASE = 63000
# --link-layer as given -> the link layer sysfs names
LAYERS = {None: None, "roce": "Ethernet", "ethernet": "Ethernet", "ib": "InfiniBand", "infiniband": "InfiniBand"}


def register(app: typer.Typer) -> None:
    app.add_typer(perf_app, name="perf")


@perf_app.command("run", epilog=epilog("perf run"))
def perf_run(
    *,  # keyword-only, as typer passes them: lets a required option follow one with a default
    inventory_file: Annotated[str, typer.Option("-i", "--inventory", help=_config.INVENTORY_HELP)] = None,
    out: Annotated[str, typer.Option("--out", "-o",
                                     help="Folder for the results (a bundle: its perf/ folder).")],
    mode: Annotated[str, typer.Option(
        "--mode", help="pairs (gate rounds + confirmation) | topology (rounds that follow --topology's "
                       "cabling + confirmation) | ring | all-pairs | storage (the compute hosts read each "
                       "storage node many-to-one).")] = "pairs",
    topology: Annotated[str, typer.Option("--topology",
                                          help="topology mode: the expected-topology YAML.")] = None,
    test: Annotated[str, typer.Option("--test", help=f"One of {', '.join(BW_TESTS + LAT_TESTS)} (default "
                                      "ib_write_bw; ib_read_bw in storage mode).")] = None,
    duration: Annotated[int, typer.Option("--duration", min=1, metavar="S",
                                          help="Seconds per bandwidth test (-D).")] = 10,
    size: Annotated[int, typer.Option("--size", min=1, metavar="BYTES",
                                      help="Message size in bytes (default 65536 for bandwidth).")] = None,
    qps: Annotated[int, typer.Option("--qps", min=1, metavar="N",
                                     help="Queue pairs per bandwidth test.")] = 2,
    iterations: Annotated[int, typer.Option("--iterations", min=1, metavar="N",
                                            help="Iterations per latency test (-n).")] = 5000,
    rounds: Annotated[int, typer.Option("--rounds", min=1, metavar="N",
                                        help="pairs mode: rounds with distinct partners.")] = 3,
    clients_per_node: Annotated[int, typer.Option(
        "--clients-per-node", min=1, metavar="N",
        help="storage mode: clients reading each storage node at once.")] = 4,
    slow_share: Annotated[float, typer.Option("--slow-share", min=0.01, max=1.0, metavar="F", help="storage mode: "
                                              "a node below this share of the fleet's median is slow.")] = 0.8,
    seed: Annotated[int, typer.Option("--seed", help="pairs mode: shuffle seed.")] = 0,
    threshold: Annotated[float, typer.Option("--threshold",
                                             help="Pass line: fraction of the expected bandwidth.")] = 0.9,
    expected_gbps: Annotated[float, typer.Option("--expected-gbps",
                                                 help="Expected Gb/s (default: each line rate).")] = None,
    device: Annotated[str, typer.Option("--device",
                                        help="RDMA device on every host (default: discovered).")] = None,
    link_layer: Annotated[str, typer.Option("--link-layer",
                                            help="roce | ib (default: what every host has).")] = None,
    slack: Annotated[float, typer.Option("--slack", min=1.0, metavar="S",
                                         help="Seconds beyond the test a command may take.")] = 15.0,
    # The upper bounds are checked below, not by typer: its help prints a range in the name column's space.
    port_base: Annotated[int, typer.Option(
        "--port-base", min=1024, metavar="PORT",
        help=f"First perftest TCP port (at most {MAX_PORT_BASE}).")] = 18515,
    limit: Annotated[str, limit_param()] = None,
    exclude: Annotated[str, exclude_param()] = None,
    ignore_unknown: Annotated[bool, ignore_unknown_param()] = False,
    accept_new_host_keys: Annotated[bool, typer.Option("--accept-new-host-keys",
                                                       help="Record unknown host keys.")] = False,
    known_hosts: Annotated[str, typer.Option("--known-hosts",
                                             help="Extra known_hosts file (new keys go here).")] = None,
) -> None:
    """Run perftest pairs; write the matrix CSVs, a heatmap, the attribution. Exit 1 bad nodes/links found,
    3 errors or unreachable hosts (inconclusive), 0 all pairs at speed."""
    from rdmatool.perf import modes

    stderr = data_console(stderr=True)  # pair errors are the hosts' own words; made now: COLUMNS as it is now
    inventory_file, test, layer = _checked(inventory_file, mode, topology, test, link_layer, port_base)
    hosts = _hosts(inventory_file, limit, exclude, ignore_unknown)
    folder = Path(out) / "perf" if (Path(out) / "manifest.json").is_file() else Path(out)  # a bundle: its perf/
    options = PerfOptions(
        test=test, duration_s=duration, size_bytes=size, qps=qps, iterations=iterations, port_base=port_base,
        slack_s=slack, device=device, link_layer=layer, known_hosts=known_hosts,
        accept_new_host_keys=accept_new_host_keys,
    )
    progress = _progress(stderr)
    session = _opened(hosts, options)
    with session:
        if mode == "storage":  # many-to-one reads of the storage nodes (rdmatool.cli._perf_storage)
            raise typer.Exit(_perf_storage.run(session, hosts, clients_per_node, folder, inventory_file, slow_share))
        choice = _topology_choice(topology, hosts, rounds, device, seed) if mode == "topology" else None
        results, attribution = modes.measure(session, hosts, options, mode, expected_gbps=expected_gbps,
                                             rounds=rounds, threshold=threshold, seed=seed, progress=progress,
                                             choice=choice)
        discovered = session.discovered
        untested = session.untested(rail_aligned=False)  # one NIC per host; every other one named, with why
    # what a topology schedule could find, and the inter-leaf paths it names
    figures = choice.figures(results, attribution, threshold) if choice is not None else None
    modes.write_run(folder, results, attribution, discovered, untested, figures)
    _conclude(results, attribution, figures, folder, session.missing, untested, stderr)


def _opened(hosts: list, options: PerfOptions):
    """The perftest session over the hosts, open; a known_hosts file this user cannot read or write is one line
    and exit 2."""
    # The perftest engine brings the SSH transport (paramiko): imported here, not when the CLI starts.
    from rdmatool.errors import RdmatoolError
    from rdmatool.perf.engine import PerfSession

    session = PerfSession(hosts, options)
    try:
        session.open()
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    return session


def _progress(stderr):
    """Each step of the run on stderr when it is a terminal (a log gets the summary only)."""
    def progress(message: str) -> None:
        if sys.stderr.isatty():
            stderr.print(message)

    return progress


def _conclude(results: list, attribution, figures: dict | None, folder: Path, missing, untested, stderr) -> None:
    """The schedule's line and the summary, then the exit: 1 a bad node, link, NIC or inter-leaf link, 3 errors
    or hosts not reached (inconclusive), else 0."""
    from rdmatool.perf import modes

    if figures is not None:
        _print_schedule(stderr, figures)
    _summary(results, attribution, folder, missing, untested)
    if attribution.bad_nodes or attribution.bad_links or attribution.bad_nics:
        raise typer.Exit(EXIT_FAIL)
    if figures is not None and figures["bad_inter_leaf_links"]:
        raise typer.Exit(EXIT_FAIL)
    if modes.inconclusive(results, attribution):
        raise typer.Exit(EXIT_INCONCLUSIVE)


def _hosts(inventory_file: str, limit: str | None, exclude: str | None, ignore_unknown: bool) -> list:
    """The inventory's hosts selected; fewer than two is one line and exit 2."""
    selected = load_targets(inventory_file, limit, None, exclude=exclude, ignore_unknown=ignore_unknown)
    hosts = [t for t in selected if t.kind is TargetKind.HOST]
    if len(hosts) < 2:
        die(f"rdmatool: {inventory_file}: perf needs at least two hosts", EXIT_USAGE)
    return hosts


def _print_schedule(stderr, figures: dict) -> None:
    """One line: what the topology schedule could find, and the slow inter-leaf links it named."""
    stderr.print(f"topology schedule: {figures['rounds']} rounds + confirmation; exposure bad node "
                 f"{figures['bad_node']['probability']}, bad inter-leaf link "
                 f"{figures['bad_inter_leaf_link']['probability']}; slow inter-leaf links: "
                 f"{', '.join('<->'.join(x) for x in figures['bad_inter_leaf_links']) or 'none'}",
                 highlight=False)


def _checked(inventory_file: str | None, mode: str, topology: str | None, test: str | None, link_layer: str | None,
             port_base: int) -> tuple[str, str, str | None]:
    """The inventory (-i, else the config file's), the perftest and the link layer the options name; a bad option
    is one line and exit 2."""
    if port_base > MAX_PORT_BASE:
        die(f"rdmatool: --port-base {port_base}: at most {MAX_PORT_BASE}", EXIT_USAGE)
    inventory_file = _config.inventory(inventory_file)
    if not inventory_file:
        die("rdmatool: give -i INVENTORY (or `inventory` in the config file)", EXIT_USAGE)
    if mode not in MODES:
        die(f"rdmatool: --mode {mode!r}: choose one of {', '.join(MODES)}", EXIT_USAGE)
    if (mode == "topology") != bool(topology):
        die("rdmatool: --mode topology and --topology FILE go together", EXIT_USAGE)
    test = test or ("ib_read_bw" if mode == "storage" else "ib_write_bw")
    if test not in (BW_TESTS if mode == "storage" else BW_TESTS + LAT_TESTS):
        die(f"rdmatool: --test {test!r}: choose one of {', '.join(BW_TESTS + LAT_TESTS)}", EXIT_USAGE)
    if (link_layer.lower() if link_layer else None) not in LAYERS:
        die(f"rdmatool: --link-layer {link_layer!r}: roce or ib", EXIT_USAGE)
    return inventory_file, test, LAYERS[link_layer.lower() if link_layer else None]


def _topology_choice(topology: str, hosts, rounds: int, device: str | None, seed: int):
    """The topology-aware rounds for these hosts; a topology file that does not load, or cables fewer than two
    of them, is one line and exit 2."""
    from rdmatool.errors import RdmatoolError
    from rdmatool.gate import schedule_choice

    try:
        return schedule_choice.choose("topology", topology, [h.name for h in hosts], rounds, device, seed)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)


def _summary(results: list[PairResult], attribution: Attribution, folder: Path, missing: dict[str, str],
             untested: dict[str, dict[str, str]] | None = None) -> None:
    from rdmatool.report import tables

    stderr = data_console(stderr=True)
    ok = sum(1 for r in results if r.error is None)
    stderr.print(f"{len(results)} pairs run, {ok} measured, {len(attribution.errors)} errored; results in {folder}")
    tested = nics_detail(nics_of(results), {})
    if tested:
        stderr.print(tested.removeprefix("; "), highlight=False)  # which device/port the pairs ran on
    rows: list[list[str]] = []

    def add(*cells) -> None:
        rows.append(list(cells))

    for node in attribution.bad_nodes:
        ev = attribution.evidence.get(node, {})
        values = [f"{p}={'/'.join(f'{x:.1f}' for x in m['measured']) or 'error'}" for p, m in ev.get("measured", {}).items()]
        add("bad node", node, f"expected {ev.get('expected_gbps')} Gb/s; " + ", ".join(values))
    for a, b in attribution.bad_links:
        ev = attribution.evidence.get(f"{a}<->{b}", {})
        add("bad link", f"{a} <-> {b}",
            f"measured {ev.get('measured')} of {ev.get('expected')} Gb/s; both ends fine with others")
    nics = (attribution.evidence or {}).get("_nics") or {}
    for host, rail in attribution.bad_nics:
        record = nics.get(f"{host}/{rail}") or {}
        down = record.get("verdict") == "down"
        add("rail down" if down else "bad NIC", f"{host} {rail}", record.get("state") if down else
            f"slow on its rail; at speed on {', '.join(record.get('ok_on_rails') or []) or 'another rail'}")
    for node in attribution.suspects:
        add("suspect", node, "low or errored, not enough partners to decide")
    alike: dict[tuple[str, str], list[str]] = {}  # a fleet's hosts not tested alike are one row
    for host, found in (untested or {}).items():
        for device, why in found.items():
            alike.setdefault((device, why), []).append(host)
    for (device, why), hosts in alike.items():
        add("not tested", f"{folded(hosts)} {device}", why)
    for name, error in missing.items():
        add("missing", name, error)
    for server, client, error in attribution.errors[:20]:
        add("error", f"{server} -> {client}", error)
    if rows:
        stderr.print(tables.fitted(stderr, ("verdict", "where", "evidence"), rows, keys=("where",),
                                   title="perf attribution"))
    else:
        stderr.print("all pairs at speed")
