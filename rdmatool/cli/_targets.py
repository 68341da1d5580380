"""Target selection, the same on every command that reads an inventory: `--limit`, `-x/--exclude`,
`--ignore-unknown` (and `--shard` where it applies), with one-line errors; the switches a hosts-only selection is
cabled to are brought in where a command checks switches.

The syntax is ClusterShell's (rdmatool.inventory.selection): `gpu[001-064],!gpu005`, `@gpu&gpu[001-032]`, `leaf*`.
"""

from __future__ import annotations

from pathlib import Path

import typer

from rdmatool.cli._output import EXIT_USAGE, die
from rdmatool.model import Target

LIMIT_HELP = ("Targets to talk to: names, host ranges (gpu[001-064]), @group, globs; `,` union, `!` or `,!` "
              "difference, `&` intersection (e.g. the job's nodelist).")


def limit_option(help: str = LIMIT_HELP, required: bool = False):
    return typer.Option(... if required else None, "--limit", help=help)


def exclude_option():
    return typer.Option(None, "-x", "--exclude", help="Targets to leave out (the syntax of --limit).")


def ignore_unknown_option():
    return typer.Option(False, "--ignore-unknown",
                        help="Skip names in --limit/--exclude that match no target (named on stderr); "
                             "without it they are an error (exit 2).")


def choose_targets(path: str, limit: str | None, shard: str | None = None, *, exclude: str | None = None,
                   ignore_unknown: bool = False, with_switches: bool = False, baseline: str | None = None,
                   store: str | None = None) -> list[Target]:
    """The selected targets; with `with_switches`, a selection of hosts only gains the switches they are cabled to
    (the inventory's `links:`, else the newest bundle of `baseline` that is still on disk)."""
    from rdmatool import hostlist, inventory
    from rdmatool.errors import InventoryError

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
