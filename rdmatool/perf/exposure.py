"""What a pair schedule can find: for each possible single fault, is it exposed, and with what probability.

The fabric, as a schedule sees it: per rail (a NIC name; one rail when each host tests one NIC) host -> leaf
switch. The plan: per rail, its rounds of (server, client) pairs, every round followed by the engine's confirmation
round (`schedule.confirmation_for`, topology-aware: a suspect is confirmed against a known-good node of its own leaf
first, then of a leaf its leaf had no low pair with). Three kinds of single fault, each slowing exactly these pairs:

- a bad node: every pair it is in, on every rail;
- a bad inter-leaf link (leaf pair {A, B}; the path between two leaves is one element unless the cabling gives
  spine uplinks, which this model does not read): every pair on any rail whose ends sit on A and on B;
- a bad rail NIC (host h, rail k; only for hosts on at least two rails): every rail-k pair h is in.

**Exposed** means: with every other pair at speed, the plan's rounds and the confirmation they trigger make the
attribution name this fault, and name it as what it is: `attribution.attribute` over the rail's results calls the
node bad (it passed with nobody, met at least two distinct partners, one of them known-good), and then
`localise.localise` calls it a bad node (bad on some rail, passing on none), a bad NIC (bad on rail k, passing on
another rail) or a bad inter-leaf link (at least two crossing pairs named bad links, that is low with both ends
known-good elsewhere, and no crossing pair passing). A pair that crosses the fault is necessary, never sufficient.

The probability of a kind is the share of its possible faults the plan exposes: the chance that one fault, equally
likely anywhere, is found. It is computed from the plan's pairs alone, without running the attribution; the tests
check it against running the attribution on every single fault of small fabrics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rdmatool.perf.schedule import UNKNOWN_LEAF, Pair

Fabric = Mapping[str, Mapping[str, str]]  # rail -> host -> leaf switch
Plan = Mapping[str, list[list[Pair]]]  # rail -> rounds
KINDS = ("bad_node", "bad_inter_leaf_link", "bad_rail_nic")


@dataclass
class _Rail:
    """One rail's plan, indexed: who met whom."""

    leaf_of: Mapping[str, str]
    pairs: list[frozenset]
    partners: dict[str, set[str]]

    @classmethod
    def of(cls, leaf_of: Mapping[str, str], rounds: Iterable[list[Pair]]) -> _Rail:
        pairs = list(dict.fromkeys(frozenset(p) for r in rounds for p in r if p[0] != p[1]))
        partners: dict[str, set[str]] = {}
        for pair in pairs:
            a, b = sorted(pair)
            partners.setdefault(a, set()).add(b)
            partners.setdefault(b, set()).add(a)
        return cls(leaf_of, pairs, partners)

    def leaf(self, node: str) -> str:
        return self.leaf_of.get(node, UNKNOWN_LEAF)

    def crossing(self, leaves: frozenset) -> list[frozenset]:
        return [p for p in self.pairs if frozenset(self.leaf(n) for n in p) == leaves]

    def confirms_bad(self, node: str) -> bool:
        """The node, slow with everyone on this rail, is named bad here: it has a pair, and either some node has
        pairs none of which is with it (known-good, the confirmation gives it to this one as a fresh second
        partner), or the plan alone gave it two partners of which one passed with somebody else."""
        mine = self.partners.get(node)
        if not mine:
            return False
        if any(other != node and other not in mine for other in self.partners):
            return True
        return len(mine) >= 2 and any(self.partners[p] - {node} for p in mine)


def _rails(plan: Plan, fabric: Fabric) -> dict[str, _Rail]:
    return {rail: _Rail.of(fabric.get(rail, {}), rounds) for rail, rounds in plan.items()}


def node_exposed(host: str, plan: Plan, fabric: Fabric) -> bool:
    return any(r.confirms_bad(host) for r in _rails(plan, fabric).values())


def nic_exposed(host: str, rail: str, plan: Plan, fabric: Fabric) -> bool:
    rails = _rails(plan, fabric)
    return rail in rails and rails[rail].confirms_bad(host) and \
        any(name != rail and host in r.partners for name, r in rails.items())


def link_exposed(leaves: frozenset, plan: Plan, fabric: Fabric) -> bool:
    return _link_exposed(leaves, _rails(plan, fabric))


def _link_exposed(leaves: frozenset, rails: Mapping[str, _Rail]) -> bool:
    named = 0
    for r in rails.values():
        slow = set(r.crossing(leaves))
        if not slow:
            continue
        ends = {n for p in slow for n in p}
        steady = [n for n in r.partners if n not in ends]  # pairs, none of them slow: the confirmation's peers

        def good(node: str, r: _Rail = r, slow: set = slow, steady: list = steady) -> bool:
            if any(frozenset((node, p)) not in slow for p in r.partners[node]):
                return True  # a pair of its own that does not cross the bad path
            other = next(iter(leaves - {r.leaf(node)}))
            return any(r.leaf(g) != other for g in steady)  # a confirmation peer off the bad path

        named += sum(all(good(n) for n in p) for p in slow)
    return named >= 2


def candidates(fabric: Fabric) -> dict[str, list]:
    """Every possible single fault of each kind: hosts, leaf pairs (frozensets), (host, rail) of multi-rail hosts."""
    hosts = sorted({h for leaf_of in fabric.values() for h in leaf_of})
    leaves: set[frozenset] = set()
    for leaf_of in fabric.values():
        known = sorted({leaf for leaf in leaf_of.values() if leaf != UNKNOWN_LEAF})
        leaves |= {frozenset((a, b)) for i, a in enumerate(known) for b in known[i + 1:]}
    rails_of: dict[str, list[str]] = {}
    for rail, leaf_of in sorted(fabric.items()):
        for host in leaf_of:
            rails_of.setdefault(host, []).append(rail)
    nics = [(h, rail) for h in hosts for rail in rails_of.get(h, []) if len(rails_of[h]) >= 2]
    return {"bad_node": hosts, "bad_inter_leaf_link": sorted(leaves, key=sorted), "bad_rail_nic": nics}


def exposed(kind: str, fault, plan: Plan, fabric: Fabric) -> bool:
    if kind == "bad_node":
        return node_exposed(fault, plan, fabric)
    if kind == "bad_inter_leaf_link":
        return link_exposed(fault, plan, fabric)
    if kind == "bad_rail_nic":
        return nic_exposed(fault[0], fault[1], plan, fabric)
    raise ValueError(f"unknown fault kind {kind!r} (known: {', '.join(KINDS)})")


def name_of(kind: str, fault) -> str:
    """A fault as text: `gpu05`, `leaf01<->leaf02`, `gpu05/mlx5_1`."""
    if kind == "bad_inter_leaf_link":
        return "<->".join(sorted(fault))
    if kind == "bad_rail_nic":
        return f"{fault[0]}/{fault[1]}"
    return str(fault)


def exposure(plan: Plan, fabric: Fabric, listed: int = 20) -> dict:
    """Per kind: `faults` (how many single faults of the kind the fabric can have), `exposed`, `probability`
    (exposed / faults; None when the fabric cannot have that fault: no leaves known, single-rail hosts) and up to
    `listed` of the faults the plan does not expose (`not_exposed`). Plus the plan's `rounds` (the longest rail,
    rails running side by side) and `pair_runs`, the confirmation round not counted (it depends on the results)."""
    rails = _rails(plan, fabric)
    out: dict = {"rounds": max((len(r) for r in plan.values()), default=0),
                 "pair_runs": sum(len(pairs) for rounds in plan.values() for pairs in rounds)}
    for kind, faults in candidates(fabric).items():
        if kind == "bad_inter_leaf_link":
            hits = [_link_exposed(f, rails) for f in faults]
        else:
            hits = [exposed(kind, f, plan, fabric) for f in faults]
        missed = [name_of(kind, f) for f, hit in zip(faults, hits, strict=True) if not hit]
        out[kind] = {"faults": len(faults), "exposed": sum(hits),
                     "probability": round(sum(hits) / len(faults), 4) if faults else None,
                     "not_exposed": missed[:listed]}
    return out
