"""`rdmatool perf run --mode storage`: compute clients read from each storage node many-to-one
(rdmatool.perf.storage); this module runs the rounds in an open perf session, writes `storage.json` and prints one
line per storage node and the fleet's beside the 3FS reference (rdmatool.plan.storage)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rdmatool.cli._output import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_USAGE, die


def run(session, hosts, clients_per_node: int, folder: Path) -> int:  # noqa: ANN001 - a PerfSession, the Targets
    """The exit code: 1 a storage node named slow, 3 a node not measured in full (its errors are printed), else 0.
    No storage node (role `storage`) or no client among the hosts reached is one line and exit 2."""
    from rdmatool.perf import storage
    from rdmatool.plan.storage import reference

    reached = set(session.reachable)
    roles = {t.name: t.role for t in hosts}
    nodes = [n for n in sorted(reached) if roles.get(n) == "storage"]
    clients = [n for n in sorted(reached) if roles.get(n) != "storage"]
    try:
        rounds = storage.plan(nodes, clients, clients_per_node)
    except ValueError as exc:
        die(f"rdmatool perf run --mode storage: {exc} (the inventory's role: storage names the storage nodes)",
            EXIT_USAGE)
    results = storage.run(session, rounds)
    ref = reference()["efficiency"]
    figures = storage.figures(rounds, results, session.expected_gbps(), ref)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "storage.json").write_text(json.dumps(
        {"rounds": [[g.as_dict() for g in r] for r in rounds], "figures": figures,
         "results": [r.as_dict() for r in results]}, indent=1, default=str) + "\n")
    for n in figures["nodes"]:
        share = f" ({n['share']:.0%} of {n['line_gbps']:,.0f} Gb/s)" if n["share"] is not None else ""
        got = "-" if n["delivered_gbps"] is None else f"{n['delivered_gbps']:,.1f} Gb/s"
        typer.echo(f"{n['node']}: {got}{share} read by {', '.join(n['clients'])}"
                   + ("  SLOW" if n["slow"] else "")
                   + "".join(f"; {c}: {e}" for c, e in n["errors"].items()))
    fleet = figures["fleet"]
    if fleet["efficiency"] is not None:
        typer.echo(f"fleet: {fleet['aggregate_gbps']:,.1f} Gb/s of {fleet['line_gbps']:,.0f} Gb/s over "
                   f"{fleet['nodes_measured']} storage nodes: {fleet['efficiency']:.1%} of line rate (3FS reference "
                   f"{ref:.1%}: rdmatool plan storage)")
    if any(n["slow"] for n in figures["nodes"]):
        return EXIT_FAIL
    return EXIT_INCONCLUSIVE if any(not n["complete"] for n in figures["nodes"]) else 0
