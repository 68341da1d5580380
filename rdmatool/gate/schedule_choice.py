"""Which pair schedule the gate's bandwidth stage runs, and what that schedule can find.

`bandwidth.schedule` in the profile: `auto` (the default) runs the topology-aware schedule when the cabling is known
(a `topology` file in the profile or `--topology FILE`: rdmatool.topology.expected), the seeded random rounds
otherwise; `topology` insists on the cabling (no file is a profile error); `random` never reads it. The stage
reports, for the schedule it ran, its rounds, pair runs and exposure (rdmatool.perf.exposure: the probability that
one bad node, or one bad inter-leaf link, would have been named) and the inter-leaf links the localisation names.

The live gate tests one NIC per host (the one perftest discovery picks, or the `device` option), so its fabric is
that one rail; the switch of a host is that NIC's (rdmatool.perf.schedule.host_leaf).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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


@dataclass
class Choice:
    kind: str  # topology | random
    why: str
    rounds: int
    leaf_of: dict[str, str] | None = None
    seed: int = 0
    plan: list[list[schedule.Pair]] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)

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

    def engine_args(self) -> dict:
        return {"planner": self.planner, "leaf_of": self.leaf_of}

    def figures(self, results, attribution, threshold: float) -> dict:
        """What the stage reports about its schedule: kind, why, rounds and pair runs, exposure, and the bad
        inter-leaf links named from the results."""
        fabric = {RAIL: self._leaves()}
        out = {"kind": self.kind, "why": self.why, **exposure.exposure({RAIL: self.plan}, fabric)}
        out.pop("bad_rail_nic", None)  # one NIC per host in the live gate: no rail NIC to tell from its host
        out["confirmation_pair_runs"] = sum(1 for r in results if r.round >= len(self.plan))
        if self.leaf_of is not None:
            expected = (attribution.evidence or {}).get("_expected_gbps") or None
            run = RailRun.of(list(results), expected, threshold)
            found = localise({RAIL: run}, fabric)
            out["bad_inter_leaf_links"] = [list(x) for x in found.bad_inter_leaf_links]
        return out


def choose(mode: str, topology_file: str | None, hosts: list[str], rounds: int, device: str | None = None,
           seed: int = 0) -> Choice:
    if mode == "random":
        return Choice("random", "bandwidth.schedule random", rounds, seed=seed)
    if not topology_file:
        return Choice("random", "no cabling known (no topology file)", rounds, seed=seed)
    leaf_of = schedule.host_leaf(placement(links_of(topology_file, hosts)), device)
    if len(leaf_of) < 2:
        if mode == "topology":
            raise ScheduleError(f"{topology_file}: cables fewer than two of the hosts to pair")
        return Choice("random", f"{topology_file} cables fewer than two of the hosts", rounds, seed=seed)
    return Choice("topology", f"cabling of {len(leaf_of)}/{len(hosts)} hosts from {topology_file}", rounds,
                  leaf_of, seed)
