"""Which pair schedule the gate's bandwidth stage runs, and what that schedule can find.

`bandwidth.schedule` in the profile: `auto` (the default) runs the topology-aware schedule when the cabling is known,
the seeded random rounds otherwise; `topology` insists on a `topology` file (in the profile or `--topology FILE`:
rdmatool.topology.expected; no file is a profile error); `random` never reads the file. The cabling is, in this
order: the topology file, else what the gate's own stage-1 collection saw (rdmatool.topology.observed: LLDP from
either end, the InfiniBand subnet's iblinkinfo). The stage reports, for the schedule it ran, its rounds, pair runs
and exposure (rdmatool.perf.exposure: the probability that one bad node, or one bad inter-leaf link, would have been
named), the inter-leaf links the localisation names, and which source the cabling came from (`source`:
topology-file, lldp, iblinkinfo).

Rails: when the cabling is known, no `device` is fixed and some host has two or more usable NICs of the fleet's link
layer whose names other hosts share (the engine's discovery, `PerfSession.rails`), the stage is rail-aligned: NIC k
of a host runs against NIC k of another, each rail its own topology rounds (`schedule.rail_plan`, the leaves being
the switches that rail's NICs are cabled to), round i of every rail at once, then each rail's confirmation; the
exposure is the rail plan's, with `bad_rail_nic`, and the localisation names bad NICs (`bad_rail_nics`) besides bad
inter-leaf links. A NIC the cabling does not name has no known leaf on its rail; a host without a usable port is on
no rail (the stage calls it untested).

Otherwise the gate tests one NIC per host (the one perftest discovery picks, or the `device` option), so its fabric
is that one rail; the switch of a host is that NIC's (a host whose tested NIC the cabling does not name has no known
leaf: it is paired like any other, counted in no leaf pair).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from rdmatool import files
from rdmatool.errors import RdmatoolError
from rdmatool.perf import exposure, schedule
from rdmatool.perf.localise import RailRun, localise
from rdmatool.topology import Link, placement

SCHEDULES = ("auto", "topology", "random")
RAIL = "tested-nic"  # the fabric's one rail: whichever NIC each host tests with


class ScheduleError(RdmatoolError):
    pass


def links_of(path: str | Path, hosts: list[str]) -> list[Link]:
    """The cabling an expected-topology file gives for these hosts (its links, else its rails)."""
    from rdmatool.topology import expected

    topology = expected.load(path)
    out = []
    for host in hosts:
        for nic in topology.nics_of(host):
            where = topology.expected(host, nic)
            if where is not None:
                out.append(Link(host, nic, where[0], where[1], expected.SOURCE))
    return out


def check(topology_file: str | None, mode: str) -> None:
    """Refuse, before anything runs, a schedule name the gate does not know, `topology` without a file, and a
    topology file that does not load (one line naming the file and line)."""
    if mode not in SCHEDULES:
        raise ScheduleError(f"bandwidth.schedule {mode!r}: choose one of {', '.join(SCHEDULES)}")
    if mode == "topology" and not topology_file:
        raise ScheduleError("bandwidth.schedule topology needs the cabling: a `topology` file in the profile or "
                            "--topology FILE")
    if topology_file and mode != "random":
        links_of(topology_file, [])


@dataclass(frozen=True)
class Cabling:
    """The cabling the stage follows: its links, which source gave them, and how the reason line names it."""

    links: list[Link]
    source: str | None  # topology-file | lldp | iblinkinfo (joined with `+` when the collection saw both)
    origin: str


NO_CABLING = Cabling([], None, "no cabling known (no topology file, none seen by the collection)")


def cabling(mode: str, topology_file: str | None, hosts: list[str], observed: list[Link] | None = None) -> Cabling:
    """The topology file's links for these hosts (not in `random` mode), else the ones the collection saw."""
    if topology_file and mode != "random":
        return Cabling(links_of(topology_file, hosts), expected_source(), str(topology_file))
    wanted = set(hosts)
    mine = [link for link in observed or [] if link.host in wanted]
    return _observed(mine) if mine else NO_CABLING


def _observed(links: list[Link]) -> Cabling:
    source = "+".join(sorted({link.source for link in links if link.source})) or None
    return Cabling(links, source, f"the stage-1 collection ({source or 'observed'})")


def _tested_only(known: Cabling, leaf_of: dict[str, str]) -> Cabling:
    """The observed cabling named by the sources of the cables the tested NICs use (LLDP for a RoCE test, when the
    collection saw the InfiniBand subnet too)."""
    if known.source == expected_source() or not leaf_of:
        return known
    used = [link for link in known.links if leaf_of.get(link.host) == link.switch]
    return replace(_observed(used), links=known.links) if used else known


def expected_source() -> str:
    from rdmatool.topology import expected

    return expected.SOURCE


def leaves_of(links: list[Link], device: str | None = None, devices: dict[str, str] | None = None) -> dict[str, str]:
    """host -> the switch of the NIC it tests with: `devices` (per host, what perftest discovery chose) first, then
    `device` (the profile's), else rdmatool.perf.schedule.host_leaf's guess. A host whose tested NIC the cabling
    does not name is left out: the switch of another NIC (an InfiniBand port's, for a RoCE test) would be wrong."""
    out: dict[str, str] = {}
    for host, nics in placement(links).items():
        tested = (devices or {}).get(host)
        if tested is not None and tested not in nics:
            continue
        out.update(schedule.host_leaf({host: nics}, tested or device))
    return out


def rail_fabric(links: list[Link], rails: dict[str, list[str]] | None) -> dict[str, dict[str, str]]:
    """rail -> host -> leaf for a rail-aligned schedule, or {} when there is no second rail to test: `rails` is host ->
    its usable NICs (discovery), a rail a NIC name at least two hosts have, at least one host on two rails. A NIC the
    cabling does not name is on its rail with an unknown leaf."""
    where = placement(links)
    fabric: dict[str, dict[str, str]] = {}
    for host, nics in sorted((rails or {}).items()):
        for nic in nics:
            fabric.setdefault(nic, {})[host] = where.get(host, {}).get(nic, schedule.UNKNOWN_LEAF)
    fabric = {nic: hosts for nic, hosts in sorted(fabric.items()) if len(hosts) >= 2}
    on = [sum(host in hosts for hosts in fabric.values()) for host in rails or {}]
    return fabric if len(fabric) >= 2 and max(on, default=0) >= 2 else {}


@dataclass
class Choice:
    kind: str  # topology | random
    why: str
    rounds: int
    leaf_of: dict[str, str] | None = None
    seed: int = 0
    plan: list[list[schedule.Pair]] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    cabling: Cabling = NO_CABLING
    tested_leaf: dict[str, str] = field(default_factory=dict)  # host -> its tested NIC's switch, whatever the kind
    rail_leaves: dict[str, dict[str, str]] = field(default_factory=dict)  # rail -> host -> leaf: rail-aligned
    rail_plan: dict[str, list[list[schedule.Pair]]] = field(default_factory=dict)

    def planner(self, nodes: list[str]) -> list[list[schedule.Pair]]:
        """The rounds over the hosts the engine could reach (it calls this once), kept for the exposure."""
        self.nodes = list(nodes)
        if self.leaf_of is None:
            self.plan = schedule.gate_rounds(self.nodes, rounds=self.rounds, seed=self.seed)
        else:
            self.plan = schedule.topology_rounds(self._leaves(), rounds=self.rounds, seed=self.seed)
        return self.plan

    def _leaves(self) -> dict[str, str]:
        return {n: (self.leaf_of or {}).get(n, schedule.UNKNOWN_LEAF) for n in self.nodes}

    def rail_planner(self, nodes: list[str]) -> dict[str, list[list[schedule.Pair]]]:
        """Each rail's topology rounds over the reachable hosts on it (the engine calls this once)."""
        self.nodes = list(nodes)
        per_host: dict[str, dict[str, str]] = {}
        for rail, hosts in self.tested_rails().items():
            for host, leaf in hosts.items():
                per_host.setdefault(host, {})[rail] = leaf
        self.rail_plan = schedule.rail_plan(per_host, rounds=self.rounds, seed=self.seed)
        return self.rail_plan

    def tested_rails(self) -> dict[str, dict[str, str]]:
        """rail -> host -> leaf over the hosts the engine reached (rail-aligned only)."""
        wanted = set(self.nodes)
        return {rail: {h: leaf for h, leaf in hosts.items() if h in wanted} for rail, hosts in self.rail_leaves.items()}

    def engine_args(self) -> dict:
        if self.rail_leaves:
            return {"rail_planner": self.rail_planner, "rail_leaves": self.rail_leaves}
        return {"planner": self.planner, "leaf_of": self.leaf_of}

    def figures(self, results, attribution, threshold: float) -> dict:
        """What the stage reports about its schedule: kind, why, rounds and pair runs, exposure, and the bad
        inter-leaf links named from the results (rail-aligned: the rails, and the bad rail NICs too)."""
        if self.rail_leaves:
            return self._rail_figures(results, attribution, threshold)
        fabric = {RAIL: self._leaves()}
        out = {"kind": self.kind, "why": self.why, "source": self.cabling.source if self.leaf_of is not None else None,
               **exposure.exposure({RAIL: self.plan}, fabric)}
        out.pop("bad_rail_nic", None)  # one NIC per host in the live gate: no rail NIC to tell from its host
        out["confirmation_pair_runs"] = sum(1 for r in results if r.round >= len(self.plan))
        if self.leaf_of is not None:
            expected = (attribution.evidence or {}).get("_expected_gbps") or None
            run = RailRun.of(list(results), expected, threshold)
            found = localise({RAIL: run}, fabric)
            out["bad_inter_leaf_links"] = [list(x) for x in found.bad_inter_leaf_links]
        return out

    def _rail_figures(self, results, attribution, threshold: float) -> dict:
        fabric = self.tested_rails()
        per_rail = (attribution.evidence or {}).get("_rails") or {}
        out = {"kind": self.kind, "why": self.why, "source": self.cabling.source, "rails": sorted(fabric),
               **exposure.exposure(self.rail_plan, fabric)}
        out["confirmation_pair_runs"] = sum(1 for r in results if r.round >= out["rounds"])
        runs = {rail: RailRun.of([r for r in results if r.rail == rail],
                                 (per_rail.get(rail) or {}).get("expected_gbps") or None, threshold) for rail in fabric}
        found = localise(runs, fabric)
        out["bad_inter_leaf_links"] = [list(x) for x in found.bad_inter_leaf_links]
        out["bad_rail_nics"] = [list(x) for x in found.bad_nics]
        return out


def choose(mode: str, topology_file: str | None, hosts: list[str], rounds: int, device: str | None = None,
           seed: int = 0, observed: list[Link] | None = None, devices: dict[str, str] | None = None,
           rails: dict[str, list[str]] | None = None) -> Choice:
    """The schedule for these hosts. `observed`: the cabling the gate's collection saw
    (rdmatool.topology.observed.links_from_analysis), used when no topology file is given; `devices`: host -> the
    RDMA device its perftest runs on (the engine's discovery), so that each host's leaf is its tested NIC's;
    `rails`: host -> every NIC it can test (the engine's `PerfSession.rails`), for a rail-aligned schedule."""
    known = cabling(mode, topology_file, hosts, observed)
    leaf_of = leaves_of(known.links, device, devices)
    known = _tested_only(known, leaf_of)
    if mode == "random":
        return Choice("random", "bandwidth.schedule random", rounds, seed=seed, cabling=known, tested_leaf=leaf_of)
    if mode == "topology" and len(leaf_of) < 2:
        raise ScheduleError(f"{topology_file}: cables fewer than two of the hosts to pair")
    if not known.links:
        return Choice("random", known.origin, rounds, seed=seed)
    if len(leaf_of) < 2:
        return Choice("random", f"{known.origin} cables fewer than two of the hosts", rounds, seed=seed,
                      cabling=known, tested_leaf=leaf_of)
    why = f"cabling of {len(leaf_of)}/{len(hosts)} hosts from {known.origin}"
    fabric = rail_fabric(known.links, {h: nics for h, nics in (rails or {}).items() if h in set(hosts)}) \
        if device is None else {}
    if fabric:
        why += f"; rail-aligned on {len(fabric)} rails ({', '.join(fabric)})"
    return Choice("topology", why, rounds, leaf_of, seed, cabling=known, tested_leaf=leaf_of, rail_leaves=fabric)


SAVED = "schedule.json"  # in the bundle's perf folder: the figures, and each host's tested-NIC leaf for a replay


def save(choice: Choice, figures: dict, folder: Path) -> None:
    """The schedule's figures and the tested NICs' leaves (rail-aligned: each rail's), beside the perftest results
    they explain."""
    folder.mkdir(parents=True, exist_ok=True)
    record = {**figures, "tested_leaf": dict(sorted(choice.tested_leaf.items()))}
    if choice.rail_leaves:
        record["rail_leaf"] = {rail: dict(sorted(hosts.items())) for rail, hosts in choice.tested_rails().items()}
    files.write_atomic(folder / SAVED, (json.dumps(record, indent=2) + "\n").encode())


def _saved(bundle: str | Path) -> dict:
    try:
        record = json.loads(files.read_regular_text(Path(bundle) / "perf" / SAVED, errors="strict"))
    except (OSError, ValueError, RecursionError, files.UnsafeFileError):
        return {}
    return record if isinstance(record, dict) else {}


def _leaf_map(leaves) -> dict[str, str]:
    if not isinstance(leaves, dict):
        return {}
    return {h: leaf for h, leaf in leaves.items() if isinstance(h, str) and isinstance(leaf, str) and leaf}


def saved_leaves(bundle: str | Path) -> dict[str, str]:
    """host -> tested-NIC leaf as a live gate saved them (empty when absent or not that shape: a bundle is
    untrusted data, and without the leaves the path classes are simply not judged again)."""
    return _leaf_map(_saved(bundle).get("tested_leaf"))


def saved_rail_leaves(bundle: str | Path) -> dict[str, dict[str, str]]:
    """rail -> host -> leaf as a rail-aligned live gate saved them (empty when absent or not that shape)."""
    rails = _saved(bundle).get("rail_leaf")
    if not isinstance(rails, dict):
        return {}
    return {rail: leaves for rail, raw in rails.items() if isinstance(rail, str) and (leaves := _leaf_map(raw))}


def stage_cabling(tested_leaf: dict[str, str], rail_leaves: dict[str, dict[str, str]], analysis=None):
    """What the stage's path classes are judged on: `path_cabling` of the tested NICs, or rail-aligned, rail -> the
    `path_cabling` of that rail's NICs (a pair on rail k takes rail k's path); None without two hosts' leaves."""
    if not rail_leaves:
        return path_cabling(tested_leaf, analysis)
    per_rail = {rail: found for rail, leaves in rail_leaves.items()
                if (found := path_cabling(leaves, analysis)) is not None}
    return per_rail or None


def path_cabling(tested_leaf: dict[str, str], analysis=None) -> tuple[list[Link], dict[str, set[str]]] | None:
    """What the path classes of the stage's pairs are judged on (rdmatool.topology.paths): the cable of each host's
    tested NIC, and each leaf's uplinks as the collection saw them; None without two hosts' leaves."""
    if len(tested_leaf) < 2:
        return None
    from rdmatool.topology.paths import uplinks

    links = [Link(host, RAIL, leaf) for host, leaf in sorted(tested_leaf.items())]
    return links, (uplinks(analysis) if analysis is not None else {})
