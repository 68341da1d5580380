"""`rdmatool perf run --mode storage`: compute clients read from each storage node many-to-one
(rdmatool.perf.storage); this module runs the rounds in an open perf session, writes `storage.json`, prints one
line per storage node and the fleet's beside the 3FS reference (rdmatool.plan.storage), then the findings of the
storage rules of the playbooks (the config file's `playbooks`, else the shipped playbooks/80-storage.yaml)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rdmatool.cli._output import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_USAGE, die


def run(session, hosts, clients_per_node: int, folder: Path,  # noqa: ANN001 - a PerfSession, the Targets
        inventory_file: str | None = None) -> int:
    """The exit code: 1 an error finding (a storage node named slow), 3 a node not measured in full (its errors are
    printed), else 0 (a warning, the fleet below the reference, is printed and passes). No storage node (role
    `storage`) or no client among the hosts reached, or playbooks that do not load, is one line and exit 2."""
    from rdmatool.perf import storage
    from rdmatool.plan.storage import reference

    rules = _rules()

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
    found = storage.findings(storage.facts(figures, session.devices, _cabling(session, inventory_file), roles), rules)
    for f in found:
        typer.echo(f"{f.severity.value.upper()} {f.rule}: {f.symptom}\n  check: {f.check}\n  fix: {f.fix}")
    if any(f.severity.value in ("error", "critical") for f in found):
        return EXIT_FAIL
    return EXIT_INCONCLUSIVE if any(not n["complete"] for n in figures["nodes"]) else 0


def _rules() -> list:
    """The playbooks' rules (the config file's `playbooks`, else the shipped ones) for the site profile, loaded
    before the load runs: a playbook that does not load is one line naming FILE:LINE and exit 2."""
    from rdmatool.cli import _config
    from rdmatool.diagnose.pipeline import default_playbooks
    from rdmatool.errors import PlaybookError
    from rdmatool.rules.playbook import load_dir

    try:
        return load_dir(_config.playbooks(None) or default_playbooks(), site=_config.site())
    except PlaybookError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)


def _cabling(session, inventory_file: str | None) -> dict[str, tuple[str, str]]:  # noqa: ANN001 - a PerfSession
    """host -> (leaf switch, its port) of the NIC each storage node was read through, from the inventory's
    `links:` list; none when it lists no cabling (the findings then say the switch port is not known)."""
    if not inventory_file:
        return {}
    from rdmatool import inventory
    from rdmatool.errors import RdmatoolError
    from rdmatool.perf.incast import cabling_of

    try:
        links = inventory.load_inventory(inventory_file).links
    except (RdmatoolError, OSError):  # it loaded moments ago; a file changed since names no switch port
        return {}
    infos = {name: state.info for name, state in session.hosts.items() if state.info is not None}
    return cabling_of(links, infos)
