"""`rdmatool perf run --mode storage`: compute clients read from each storage node many-to-one
(rdmatool.perf.storage, through every NIC of a node); this module runs the rounds in an open perf session between
two reads of the counters of the storage nodes, their clients and their switches (rdmatool.perf.storage_run: the
reads go to `storage-counters/` beside `storage.json`), prints one line per storage node and the fleet's beside
the 3FS reference (rdmatool.plan.storage), then the findings of the storage rules of the playbooks (the config
file's `playbooks`, else the shipped playbooks/80-storage.yaml): a slow node, the fleet below the reference, the
compute class (the site profile's roce_priority) paused by the reads."""

from __future__ import annotations

from pathlib import Path

import typer

from rdmatool.cli._output import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_USAGE, die


def run(session, hosts, clients_per_node: int, folder: Path,  # noqa: ANN001 - a PerfSession, the Targets
        inventory_file: str | None = None, slow_share: float | None = None) -> int:
    """The exit code: 1 an error finding (a storage node named slow), 3 a node not measured in full (its errors are
    printed), else 0 (a warning, the fleet below the reference, is printed and passes). No storage node (role
    `storage`) or no client among the hosts reached, or playbooks that do not load, is one line and exit 2."""
    from rdmatool.perf import storage, storage_run
    from rdmatool.plan.storage import reference
    from rdmatool.rules.playbook import site_of

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
    ref = reference()["efficiency"]
    folder.mkdir(parents=True, exist_ok=True)
    inventory = _inventory(inventory_file)
    done = storage_run.measure(
        session, rounds, targets=inventory.targets if inventory else hosts,
        links=inventory.links if inventory else (), read_options=_read_options(session) if inventory else None,
        folder=folder / "storage-counters", priority=int(site_of(rules)["roce_priority"]), reference=ref,
        slow_share=slow_share or storage.SLOW_SHARE_OF_MEDIAN, cabling=_cabling(session, inventory), roles=roles)
    figures = done.figures
    done.write(folder / "storage.json")
    for n in figures["nodes"]:
        share = f" ({n['share']:.0%} of {n['line_gbps']:,.0f} Gb/s)" if n["share"] is not None else ""
        got = "-" if n["delivered_gbps"] is None else f"{n['delivered_gbps']:,.1f} Gb/s"
        per_nic = ", ".join(f"{c['device']} {c['share']:.0%}" for c in n.get("nics", []) if c["share"] is not None)
        _say(f"{n['node']}: {got}{share} read by {', '.join(n['clients'])}"
             + (f" (per NIC: {per_nic})" if per_nic else "") + ("  SLOW" if n["slow"] else "")
             + "".join(f"; {c}: {e}" for c, e in n["errors"].items()))
    fleet = figures["fleet"]
    if fleet["efficiency"] is not None:
        _say(f"fleet: {fleet['aggregate_gbps']:,.1f} Gb/s of {fleet['line_gbps']:,.0f} Gb/s over "
             f"{fleet['nodes_measured']} storage nodes: {fleet['efficiency']:.1%} of line rate (3FS reference "
             f"{ref:.1%}: rdmatool plan storage)")
    if done.pauses is not None and done.pauses["ports"]:
        top = done.pauses["ports"][0]
        _say(f"compute class (priority {done.pauses['priority']}): most paused {top['target']} "
             f"{top['entity']}, {100 * top['share']:.1f} % of the reads")
    found = storage.findings(done.rows, rules)
    for f in found:
        _say(f"{f.severity.value.upper()} {f.rule}: {f.symptom}\n  check: {f.check}\n  fix: {f.fix}")
    if any(f.severity.value in ("error", "critical") for f in found):
        return EXIT_FAIL
    return EXIT_INCONCLUSIVE if any(not n["complete"] for n in figures["nodes"]) else 0


def _say(line: str) -> None:
    """A line naming the hosts' devices and their perftest errors (their text): controls shown as characters."""
    from rdmatool.report.shown import terminal

    typer.echo(terminal(line, newlines=True))


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


def _inventory(inventory_file: str | None):  # noqa: ANN202 - an Inventory or None
    """The inventory again, for its switches (read around the load) and its `links:`; None without one."""
    if not inventory_file:
        return None
    from rdmatool import inventory
    from rdmatool.errors import RdmatoolError

    try:
        return inventory.load_inventory(inventory_file)
    except (RdmatoolError, OSError):  # it loaded moments ago; a file changed since reads no counters
        return None


def _read_options(session):  # noqa: ANN001, ANN202 - a PerfSession; CollectOptions
    """One snapshot per target before and after the reads, with the run's host keys, within 30 s each."""
    from rdmatool.collect import CollectOptions
    from rdmatool.perf import load_reads

    return load_reads.options(CollectOptions(known_hosts=session.options.known_hosts,
                                             accept_new_host_keys=session.options.accept_new_host_keys), 30.0)


def _cabling(session, inventory) -> dict[str, tuple[str, str]]:  # noqa: ANN001 - a PerfSession, an Inventory
    """host -> (leaf switch, its port) of the NIC each storage node was read through, from the inventory's
    `links:` list; none when it lists no cabling (the findings then say the switch port is not known)."""
    if inventory is None:
        return {}
    from rdmatool.perf.incast import cabling_of

    infos = {name: state.info for name, state in session.hosts.items() if state.info is not None}
    return cabling_of(inventory.links, infos)
