"""Target selection, the same on every command that reads an inventory: `--limit`, `-x/--exclude`,
`--ignore-unknown` (and `--shard` where it applies), with one-line errors; the switches a hosts-only selection is
cabled to are brought in where a command checks switches. The commands that read a saved bundle (diagnose, report,
export, bundle show) select its targets the same way (`bundle_selection`: the bundle narrowed to them and to the
switches its own cabling connects them to, rdmatool.bundle.select).

The syntax is ClusterShell's (rdmatool.inventory.selection): `gpu[001-064],!gpu005`, `@gpu&gpu[001-032]`, `leaf*`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from rdmatool.cli._output import EXIT_USAGE, die
from rdmatool.model import Target, TargetKind

if TYPE_CHECKING:
    from rdmatool.bundle.select import Selection

LIMIT_HELP = ("Targets to talk to: names, host ranges (gpu[001-064]), @group, globs; `,` union, `!` or `,!` "
              "difference, `&` intersection (e.g. the job's nodelist).")
BUNDLE_LIMIT_HELP = ("The bundle's targets to judge (with -i: to collect): names, host ranges (gpu[001-064]), @group, "
                     "globs; `,` union, `!` or `,!` difference, `&` intersection (e.g. the job's nodelist). Hosts "
                     "alone bring in the switches cabled to them.")


EXCLUDE_HELP = "Targets to leave out (the syntax of --limit)."
IGNORE_UNKNOWN_HELP = ("Skip names in --limit/--exclude that match no target (named on stderr); without it they are "
                       "an error (exit 2).")


# In a command's signature: `limit: Annotated[str, limit_param()] = None` (no default: --limit is required),
# `exclude: Annotated[str, exclude_param()] = None`, `ignore_unknown: Annotated[bool, ignore_unknown_param()] = False`.
def limit_param(help: str = LIMIT_HELP):
    return typer.Option("--limit", help=help)


def exclude_param():
    return typer.Option("-x", "--exclude", help=EXCLUDE_HELP)


def ignore_unknown_param():
    return typer.Option("--ignore-unknown", help=IGNORE_UNKNOWN_HELP)


def choose_targets(path: str, limit: str | None, shard: str | None = None, *, exclude: str | None = None,
                   ignore_unknown: bool = False, with_switches: bool = False, baseline: str | None = None,
                   store: str | None = None) -> list[Target]:
    """The selected targets; with `with_switches`, a selection of hosts only gains the switches they are cabled to
    (the inventory's `links:`, else the newest bundle of `baseline` that is still on disk)."""
    from rdmatool import inventory
    from rdmatool.errors import InventoryError
    from rdmatool.present import hostlist

    try:
        loaded = inventory.load_inventory(path)
        chosen = inventory.selection(loaded.targets, limit, shard, exclude=exclude, ignore_unknown=ignore_unknown)
    except InventoryError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    for unknown in chosen.unknown:
        typer.echo(f"rdmatool: note: {unknown}: no such target in {path}; skipped (--ignore-unknown)", err=True)
    targets = chosen.targets
    if not with_switches or limit is None:
        return targets
    from rdmatool.topology import switches_for_hosts as cabling

    if not cabling.hosts_only(targets):
        return targets
    links, source = cabling.from_inventory(loaded.links), f"the links of {path}"
    if not links and baseline:
        bundle = _newest_bundle(baseline, store)
        links, source = _bundle_links(bundle) if bundle else ([], "")
    if not links:
        typer.echo("rdmatool: note: --limit names hosts only and no cabling is known (inventory `links:` or "
                   "--baseline): no switch is checked", err=True)
        return targets
    widened = cabling.add_cabled_switches(targets, loaded.targets, links)
    if widened.added:
        typer.echo(f"rdmatool: note: --limit names hosts only: also checking their switches "
                   f"{hostlist.fold(widened.added)} (from {source})", err=True)
    return widened.targets


def _bundle_links(bundle: str):
    from rdmatool.errors import RdmatoolError
    from rdmatool.topology import switches_for_hosts as cabling

    try:
        return cabling.from_bundle(bundle), f"the LLDP of {bundle}"
    except RdmatoolError as exc:  # the cabling is a help, not the run: say why it is missing and go on
        typer.echo(f"rdmatool: note: cannot read the cabling of {bundle}: {exc}", err=True)
        return [], ""


def _newest_bundle(ref: str, store: str | None) -> str | None:
    """The bundle of the newest night of a baseline that is still on disk (a nightly job overwrites its bundle, so
    the newest night is usually there); None when none is."""
    from rdmatool import baseline as baselines
    from rdmatool.errors import BaselineError

    try:
        doc = baselines.load(baselines.resolve(ref, store or baselines.DEFAULT_STORE))
    except BaselineError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    for night in reversed(doc.get("nights") or []):
        bundle = night.get("bundle") if isinstance(night, dict) else None
        if isinstance(bundle, str) and (Path(bundle) / "manifest.json").is_file():
            return bundle
    typer.echo(f"rdmatool: note: no bundle of baseline {ref!r} is still on disk: its cabling is unknown", err=True)
    return None


# --- a saved bundle's targets ------------------------------------------------------------------------------------


@contextmanager
def bundle_selection(command: str, bundle: str, limit: str | None, exclude: str | None,
                     ignore_unknown: bool = False) -> Iterator[tuple[str, Selection | None]]:
    """The bundle a command reads, and what of it was selected: BUNDLE itself without --limit / --exclude; else a
    narrowed copy in a temporary directory (rdmatool.bundle.select), removed when the command is done."""
    if limit is None and exclude is None:
        yield bundle, None
        return
    import tempfile

    from rdmatool.bundle.select import narrowed
    from rdmatool.errors import BundleError

    selection = choose_bundle_targets(command, bundle, limit, exclude, ignore_unknown)
    with tempfile.TemporaryDirectory(prefix="rdmatool-selection-") as workdir:
        try:
            path = narrowed(bundle, selection, Path(workdir) / "bundle")
        except (BundleError, OSError) as exc:
            die(f"rdmatool {command}: {bundle}: cannot narrow to the selection ({exc})", EXIT_USAGE)
        yield str(path), selection


def choose_bundle_targets(command: str, bundle: str, limit: str | None, exclude: str | None,
                          ignore_unknown: bool = False) -> Selection:
    """The targets of a saved bundle that --limit / --exclude name, as they would an inventory's: a name, a pattern or
    a group matching no target is one line and exit 2, and so is a selection of nothing. Hosts alone bring in the
    switches the bundle's cabling (LLDP from either end, iblinkinfo) connects them to, for their ports facing them."""
    from rdmatool import inventory
    from rdmatool.bundle import Bundle, read_manifest
    from rdmatool.bundle.replay import targets as recorded
    from rdmatool.bundle.select import Selection
    from rdmatool.errors import BundleError, InventoryError

    try:
        everything = recorded(Bundle(Path(bundle), read_manifest(Path(bundle))))
        chosen = inventory.selection(everything, limit, None, exclude=exclude, ignore_unknown=ignore_unknown)
    except BundleError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    except InventoryError as exc:  # the bundle's targets are the inventory here
        die(f"rdmatool {command}: {bundle}: {str(exc).replace('in the inventory', 'in the bundle')}", EXIT_USAGE)
    for unknown in chosen.unknown:
        typer.echo(f"rdmatool: note: {unknown}: no such target in {bundle}; skipped (--ignore-unknown)", err=True)
    if not chosen.targets:
        die(f"rdmatool {command}: {bundle}: --limit/--exclude select none of the bundle's {len(everything)} targets",
            EXIT_USAGE)
    names = tuple(t.name for t in chosen.targets)
    selection = Selection(of=bundle, chosen=names, limit=limit, exclude=exclude, total=len(everything))
    if limit is None:
        return selection
    from rdmatool.topology import switches_for_hosts as cabling

    if not cabling.hosts_only(chosen.targets):
        return selection
    links, _ = _bundle_links(bundle)
    if not links:
        typer.echo(f"rdmatool: note: --limit names hosts only and {bundle} shows no cabling: no switch is judged",
                   err=True)
        return selection
    added = cabling.add_cabled_switches(chosen.targets, everything, links).added
    hosts = {t.name for t in everything if t.kind is TargetKind.HOST}
    return Selection(of=bundle, chosen=names, limit=limit, exclude=exclude, total=len(everything), switches=added,
                     left_out_ports=_left_out_ports(added, links, hosts - set(names)))


def _left_out_ports(switches: tuple[str, ...], links, left_out: set[str]) -> dict[str, frozenset[str]]:
    """Each brought-in switch's ports cabled to a host of the bundle that is not selected, as the cabling names them
    (the switch's own names, rdmatool.topology.observed)."""
    from rdmatool.platforms.port_names import system_name

    ports: dict[str, set[str]] = {s: set() for s in switches}
    for link in links:
        switch = system_name(link.switch, set(switches))
        if switch in ports and link.host in left_out and link.switch_port:
            ports[switch].add(link.switch_port)
    return {s: frozenset(p) for s, p in ports.items()}


def with_selection(result, bundle: str, selection: Selection | None):
    """A diagnosis of a narrowed bundle named as the bundle it was narrowed from, the selection in its notes and in
    its JSON (`selection`: the patterns, the targets chosen, the switches brought in and their ports left out)."""
    if selection is None:
        return result
    result.source = f"{bundle} {selection.asked}"  # the verdict is the selection's: said beside it
    result.notes = [*result.notes, selection.note()]
    result.extra["selection"] = selection.as_json()
    return result
