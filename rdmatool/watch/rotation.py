"""Which pairs the latency probes test each interval: rail-aligned, covering, within a budget per host.

The plan is the perf schedule's own (rdmatool.perf.schedule): with the inventory's cabling, `rail_plan` (NIC k of a
host against NIC k of another, each rail's rounds crossing every leaf pair of that rail twice); without it, the
round-robin `all_pairs` on the NIC each host tests with (one rail, `TESTED`). The rounds of every rail, merged
(`rail_rounds`), are a queue of pairs. Each interval takes from its head every pair both of whose hosts still have
budget (`budget_s` per host per interval, a test costing `test_s` on each end: perftest's own run bound for its
iterations) and whose NICs are free; what does not fit waits, in order, for the next interval. An empty queue is a
new rotation: the plan again with the next seed, so the pairs change from one rotation to the next.

The coverage is computed from that selection before anything runs (`Coverage`): within how many intervals every
leaf pair of every rail (an inter-leaf path, schedule.leaf_pairs, as the gate's exposure counts them) and every rail
has been tested, and over one rotation the exposure the gate reports for its plan (rdmatool.perf.exposure: the
probability that one bad node, one bad inter-leaf link, one bad rail NIC would be named).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass

from rdmatool.perf import exposure, schedule

TESTED = "tested-nic"  # the one rail without cabling: whichever NIC each host tests with
Probe = tuple[str, str, str | None]  # (server, client, rail); rail None: each host's tested NIC


@dataclass(frozen=True)
class Coverage:
    hosts: int
    rails: list[str]
    leaf_pairs: int  # (rail, leaf pair) to cover
    within: int | None  # intervals until every one of them and every rail was tested (None: never, or no cabling)
    rotation: int  # intervals of one rotation
    exposure: dict  # rdmatool.perf.exposure.exposure over one rotation

    def line(self) -> str:
        where = "each on the NIC it tests (not rail-aligned: the inventory's links do not place every host)" \
            if self.rails == [TESTED] else f"on {len(self.rails)} rail(s) ({', '.join(self.rails)})"
        said = f"{self.hosts} hosts {where}; a rotation is {self.rotation} intervals"
        if self.within is not None:
            said += f"; every leaf pair of every rail ({self.leaf_pairs}) and every rail covered within {self.within}"
        elif self.leaf_pairs:
            said += f"; {self.leaf_pairs} leaf pairs NOT all covered within a rotation"
        probabilities = ", ".join(f"{kind.replace('_', ' ')} {self.exposure[kind]['probability']}"
                                  for kind in exposure.KINDS if self.exposure.get(kind, {}).get("probability")
                                  is not None)
        return said + (f"; exposure over a rotation: {probabilities}" if probabilities else "")


class Rotation:
    def __init__(self, hosts: list[str], placement: Mapping[str, Mapping[str, str]], test_s: float,
                 budget_s: float) -> None:
        """`placement`: host -> NIC -> switch (the inventory's links); `test_s`: one test's time on each end."""
        self.hosts = list(hosts)
        self.placement = {h: dict(placement.get(h, {})) for h in self.hosts}
        self.fabric = self._fabric()  # rail -> host -> leaf
        self.per_host = max(0, int(budget_s / test_s + 1e-9)) if test_s > 0 else 1  # tests per host per interval
        self.seed = 0
        self.queue: list[Probe] = []

    @property
    def rail_aligned(self) -> bool:
        return TESTED not in self.fabric

    def _fabric(self) -> dict[str, dict[str, str]]:
        rails = schedule.rails(self.placement)
        on_rail = {h for hosts in rails.values() for h in hosts}
        if rails and on_rail == set(self.hosts):
            return rails
        # a host off every rail (no cabling, or a NIC the cabling does not name): each host's tested NIC
        leaf_of = schedule.host_leaf(self.placement)
        return {TESTED: {h: leaf_of.get(h, schedule.UNKNOWN_LEAF) for h in self.hosts}}

    def plan(self, seed: int) -> dict[str, list[list[schedule.Pair]]]:
        if not self.rail_aligned:
            order = sorted(self.hosts)
            shift = seed % max(1, len(order))
            return {TESTED: schedule.all_pairs(order[shift:] + order[:shift])}
        per_host: dict[str, dict[str, str]] = {}
        for rail, hosts in self.fabric.items():
            for host, leaf in hosts.items():
                per_host.setdefault(host, {})[rail] = leaf
        return schedule.rail_plan(per_host, rounds=2, seed=seed)

    def _refill(self) -> None:
        # A rail's first topology round pairs hosts within their leaves (the gate's attribution wants it first); its
        # crossing rounds, which also pair the hosts left over within their leaves, cover more: they go first.
        plan = {rail: rounds[1:] + rounds[:1] if self.rail_aligned else rounds
                for rail, rounds in self.plan(self.seed).items()}
        merged = schedule.rail_rounds(plan)
        self.seed += 1
        self.queue = [(s, c, None if rail == TESTED else rail) for pairs in merged for s, c, rail in pairs]

    def take(self) -> list[Probe]:
        """This interval's pairs (the queue's head as the budget allows); a new rotation when the queue is empty."""
        if self.per_host < 1 or len(self.hosts) < 2:
            return []
        if not self.queue:
            self._refill()
        spent: dict[str, int] = {}
        busy: set[tuple[str, str | None]] = set()
        chosen, left = [], []
        for probe in self.queue:
            s, c, rail = probe
            ends = ((s, rail), (c, rail))
            if spent.get(s, 0) < self.per_host and spent.get(c, 0) < self.per_host and not busy.intersection(ends):
                chosen.append(probe)
                spent[s], spent[c] = spent.get(s, 0) + 1, spent.get(c, 0) + 1
                busy.update(ends)
            else:
                left.append(probe)
        self.queue = left
        return chosen

    def coverage(self, limit: int = 1000) -> Coverage:
        """The selection played ahead on a copy (nothing runs): see the module docstring."""
        ghost = copy.copy(self)  # shares the hosts and fabric, which neither changes; its own queue and seed
        ghost.queue = []
        wanted = {(rail, pair) for rail, leaf_of in self.fabric.items() for pair in schedule.leaf_pairs(leaf_of)}
        rails_wanted = set(self.fabric)
        seen: set = set()
        rails_seen: set = set()
        within = None
        rounds: dict[str, list[list[schedule.Pair]]] = {rail: [] for rail in self.fabric}
        interval = 0
        while interval < limit:
            first = not ghost.queue and interval > 0
            if first:
                break  # one rotation played
            interval += 1
            taken = ghost.take()
            if not taken:
                break
            by_rail: dict[str, list[schedule.Pair]] = {}
            for s, c, rail in taken:
                name = rail or TESTED
                by_rail.setdefault(name, []).append((s, c))
                rails_seen.add(name)
                leaf_of = self.fabric[name]
                seen.add((name, frozenset((leaf_of.get(s), leaf_of.get(c)))))
            for rail in rounds:
                rounds[rail].append(by_rail.get(rail, []))
            if within is None and wanted <= seen and rails_wanted <= rails_seen and wanted:
                within = interval
        return Coverage(len(self.hosts), sorted(self.fabric), len(wanted), within, interval,
                        exposure.exposure(rounds, self.fabric, listed=5))


def placement_of(cabling: Mapping[tuple[str, str], str]) -> dict[str, dict[str, str]]:
    """host -> NIC -> switch from the inventory's links ((host, NIC) -> switch)."""
    out: dict[str, dict[str, str]] = {}
    for (host, nic), switch in sorted(cabling.items()):
        out.setdefault(host, {})[nic] = switch
    return out
