"""The switches a set of hosts is cabled to: a scheduler's node list names hosts only, yet the checks of their
leaf ports (PFC, ECN, watchdog, drops) are half of a gate.

Where the cabling comes from, first found wins: the inventory's `links:` (what the operator wrote), else the
cabling a saved bundle saw (LLDP from either end, InfiniBand's iblinkinfo; `rdmatool.topology.observed`), which
the command line takes from the newest night of a baseline whose bundle is still on disk. A switch brought in
keeps only the ports cabled to the selected hosts when every link names its switch port (a fault on another job's
port must not fail this job's gate); otherwise its ports stay as the inventory has them (listed, or discovered by
LLDP at collection).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from rdmatool.inventory import InventoryLink
from rdmatool.model import Target, TargetKind
from rdmatool.platforms.port_names import port_key, system_name
from rdmatool.topology import Link

INVENTORY = "inventory"


@dataclass(frozen=True)
class WithSwitches:
    targets: list[Target]  # the selection, with the switches it is cabled to (in inventory order)
    added: tuple[str, ...] = ()  # the switches brought in


def from_inventory(links: Iterable[InventoryLink]) -> list[Link]:
    return [Link(link.host, link.nic, link.switch, link.switch_port, INVENTORY) for link in links]


def from_bundle(path: str | Path) -> list[Link]:
    """The cabling a saved bundle saw (its LLDP and iblinkinfo outputs, through the analysis)."""
    from rdmatool.table.analysis import analyse_path
    from rdmatool.topology.observed import links_from_analysis

    return links_from_analysis(analyse_path(path))


def hosts_only(selected: list[Target]) -> bool:
    return bool(selected) and all(t.kind is TargetKind.HOST for t in selected)


def add_cabled_switches(selected: list[Target], everything: list[Target], links: Iterable[Link]) -> WithSwitches:
    """The selection plus the inventory's switches that `links` cable to a selected host. A selection that names a
    switch already is the operator's choice and stays as it is."""
    if not hosts_only(selected):
        return WithSwitches(list(selected))
    hosts = {t.name for t in selected}
    switches = {t.name: t for t in everything if t.kind is TargetKind.SWITCH}
    ports: dict[str, list[str]] = {}
    unnamed: set[str] = set()  # switches with a link that does not say which port
    for link in links:
        switch = _name_in(link.switch, switches)
        if link.host not in hosts or switch is None:
            continue
        ports.setdefault(switch, [])
        if link.switch_port:
            if link.switch_port not in ports[switch]:
                ports[switch].append(link.switch_port)
        else:
            unnamed.add(switch)
    added = [t for t in everything if t.name in ports]
    out = list(selected) + [_with_ports(t, ports[t.name], t.name in unnamed) for t in added]
    return WithSwitches(out, tuple(t.name for t in added))


def _name_in(name: str, switches: dict[str, Target]) -> str | None:
    """A neighbour's name as the inventory has it (`leaf01.dc1` is `leaf01` when only that is a target)."""
    found = system_name(name, switches)
    return found if found in switches else None


def _with_ports(switch: Target, cabled: list[str], some_unnamed: bool) -> Target:
    if some_unnamed or not cabled:
        return switch
    if switch.ports:
        wanted = {port_key(p) for p in cabled}
        kept = tuple(p for p in switch.ports if port_key(p) in wanted)
        return replace(switch, ports=kept) if kept else switch  # names that differ in form: keep the inventory's
    return replace(switch, ports=tuple(cabled))
