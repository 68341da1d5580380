"""The counters read around a load: one snapshot of the loaded hosts and of the switches they are cabled to before
the load, one after it (the ordinary collection), so that what the load did to the pause, ECN and CNP counters is
the difference of the two. The gate's incast stage reads its groups so, and the storage runs (the gate's storage
stage, `perf run --mode storage`) their storage nodes, clients and switches.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rdmatool.collect import CollectOptions, collect_to_bundle
from rdmatool.model import Target, TargetKind


def options(collect_options: CollectOptions, read_s: float) -> CollectOptions:
    """One snapshot (no window) of each target within `read_s`, with the run's SSH settings: the load's sessions are
    still closing when the second read starts, so a read gets its own deadline rather than the collection's."""
    return CollectOptions(
        interval_s=0.0, forks=collect_options.forks, command_timeout=collect_options.command_timeout,
        connect_timeout=min(collect_options.connect_timeout, read_s), target_deadline=read_s,
        accept_new_host_keys=collect_options.accept_new_host_keys, known_hosts=collect_options.known_hosts)


def members(targets: Iterable[Target], hosts: Iterable[str], links: Iterable) -> list[Target]:
    """The targets to read: `hosts`, and the switches `links` (rdmatool.topology.Link) cable any of them to; every
    switch of `targets` when no link names one of the hosts (the cabling is not known: read them all)."""
    names = set(hosts)
    switches = {link.switch for link in links if link.host in names}
    if not switches:
        switches = {t.name for t in targets if t.kind is TargetKind.SWITCH}
    return [t for t in targets if t.name in names or (t.kind is TargetKind.SWITCH and t.name in switches)]


def read(targets: list[Target], read_options: CollectOptions, folder: Path) -> str:
    """One snapshot of `targets` into `folder` (replaced if there); the bundle's path."""
    _, path = collect_to_bundle(targets, read_options, str(folder), force=True)
    return path
