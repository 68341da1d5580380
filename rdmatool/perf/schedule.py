"""Test schedules: rounds of (server, client) pairs in which no node appears twice, so a round runs in parallel.

Random schedules (`gate_rounds`) know nothing of the cabling; the topology-aware ones (`topology_rounds`,
`rail_plan`, `topology_confirmation`) read where each NIC is cabled (`rdmatool.topology.placement`) so that a few
rounds cross every leaf pair and test every rail.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping

# The leaf pair a pair of nodes crosses is a value of every matrix (a bundle's too): defined one layer down.
from rdmatool.pairs.model import UNKNOWN_LEAF, leaf_pair  # noqa: F401  (the schedules' names for them)

Pair = tuple[str, str]
RailPair = tuple[str, str, str]  # (server, client, rail): both ends on their NIC of that rail


def _check(nodes: list[str]) -> list[str]:
    nodes = list(nodes)
    if len(set(nodes)) != len(nodes):
        raise ValueError("duplicate node names in a schedule")
    return nodes


def all_pairs(nodes: list[str]) -> list[list[Pair]]:
    """Round-robin 1-factorisation (circle method): every unordered pair exactly once, n-1 rounds for even n, n
    rounds for odd n (one node idles per round). Server and client roles are balanced (`_orient`)."""
    nodes = _check(nodes)
    if len(nodes) < 2:
        return []
    ring: list[str | None] = [*nodes, None] if len(nodes) % 2 else list(nodes)
    m = len(ring)
    position = {node: i for i, node in enumerate(nodes)}
    odd = len(nodes) if len(nodes) % 2 else len(nodes) - 1
    rounds: list[list[Pair]] = []
    for _ in range(m - 1):
        pairs: list[Pair] = []
        for i in range(m // 2):
            a, b = ring[i], ring[m - 1 - i]
            if a is None or b is None:
                continue
            pairs.append(_orient(a, b, position, odd))
        rounds.append(pairs)
        ring = [ring[0], ring[-1], *ring[1:-1]]  # rotate every position but the first
    return rounds


def _orient(a: str, b: str, position: dict[str, int], odd: int) -> Pair:
    """Who serves: a balanced tournament (each of the first `odd` nodes serves (odd-1)/2 of them; the extra node
    of an even count serves every other node), so server and client load spread evenly."""
    x, y = position[a], position[b]
    if x >= odd or y >= odd:  # the extra node of an even count
        other = y if x >= odd else x
        extra = a if x >= odd else b
        return (extra, a if extra == b else b) if other % 2 == 0 else (a if extra == b else b, extra)
    return (a, b) if (y - x) % odd <= (odd - 1) // 2 else (b, a)


def ring(nodes: list[str]) -> list[list[Pair]]:
    """Each node serves its successor (node i -> i+1, the last wrapping to the first): 2 rounds for even n,
    3 for odd n (an odd cycle needs three colours), 1 for n = 2."""
    nodes = _check(nodes)
    n = len(nodes)
    if n < 2:
        return []
    if n == 2:
        return [[(nodes[0], nodes[1])]]
    edges = [(nodes[i], nodes[(i + 1) % n]) for i in range(n)]
    if n % 2 == 0:
        return [edges[0::2], edges[1::2]]
    return [edges[0 : n - 1 : 2], edges[1 : n - 1 : 2], [edges[n - 1]]]


def gate_rounds(nodes: list[str], rounds: int = 3, seed: int = 0) -> list[list[Pair]]:
    """`rounds` rounds of the all-pairs factorisation of a seeded shuffle: every node meets a different partner
    in each round (never the same pair twice), so a node slow with everyone stands apart from a slow pair."""
    nodes = _check(nodes)
    rng = random.Random(seed)
    shuffled = sorted(nodes)
    rng.shuffle(shuffled)
    factor = all_pairs(shuffled)
    if rounds >= len(factor):
        return factor
    chosen = sorted(rng.sample(range(len(factor)), max(0, rounds)))
    return [factor[i] for i in chosen]


def confirmation_pairs(suspects: list[str], good: list[str], previous: set[frozenset] | None = None) -> list[Pair]:
    """Each suspect as client of a known-good server, preferring good peers it has not met yet and spreading the
    suspects over the good nodes. A good node serving two suspects makes the pairs conflict: the engine runs
    conflicting pairs in separate sub-rounds."""
    previous = previous or set()
    good = [g for g in good if g not in set(suspects)]
    if not good:
        return []
    load = dict.fromkeys(good, 0)
    pairs: list[Pair] = []
    for suspect in suspects:
        fresh = [g for g in good if frozenset((g, suspect)) not in previous]
        pool = fresh or good
        peer = min(pool, key=lambda g: (load[g], good.index(g)))
        load[peer] += 1
        pairs.append((peer, suspect))
    return pairs


def confirmation_round(suspects: list[str], good: list[str]) -> list[Pair]:
    """One pair per suspect: (known-good server, suspect client)."""
    return confirmation_pairs(list(dict.fromkeys(suspects)), list(dict.fromkeys(good)))


def busy_units(pair: Pair | RailPair) -> tuple:
    """What a pair occupies while it runs: its two nodes, or on a rail (server, client, rail) the two NICs
    (node, rail), so that the pairs of different rails share a round."""
    if len(pair) == 3:
        return (pair[0], pair[2]), (pair[1], pair[2])
    return pair[0], pair[1]


def split_conflicts(pairs: list) -> list[list]:
    """Greedy split of a round into sub-rounds in which no node (on a rail: no NIC) appears twice (order kept)."""
    out: list[list] = []
    busy: list[set] = []
    for pair in pairs:
        units = busy_units(pair)
        for index, used in enumerate(busy):
            if not used.intersection(units):
                out[index].append(pair)
                used.update(units)
                break
        else:
            out.append([pair])
            busy.append(set(units))
    return out


def rail_rounds(plan: Mapping[str, list[list[Pair]]]) -> list[list[RailPair]]:
    """A rail plan (rail -> rounds) as one list of rounds: round i holds round i of every rail, each pair with its
    rail, so that the rails run side by side (different NICs: no host is busy twice on one rail)."""
    longest = max((len(rounds) for rounds in plan.values()), default=0)
    return [[(s, c, rail) for rail, rounds in plan.items() if i < len(rounds) for s, c in rounds[i]]
            for i in range(longest)]


# ------------------------------------------------------------------------------------------- topology-aware

OK_STATUS = "ok"  # attribution.OK, repeated: the schedules stay free of the attribution


def host_leaf(placement: Mapping[str, Mapping[str, str]], device: str | None = None) -> dict[str, str]:
    """host -> the switch its test NIC is cabled to: `device`'s switch where the host has that NIC, else the one
    switch all its NICs share, else the switch of its first NIC by name (perftest on a multi-rail host without
    `--device` tests one NIC; which one its discovery picks is not known here)."""
    out: dict[str, str] = {}
    for host, nics in placement.items():
        if not nics:
            continue
        if device is not None and device in nics:
            out[host] = nics[device]
        elif len(set(nics.values())) == 1:
            out[host] = next(iter(nics.values()))
        else:
            out[host] = nics[sorted(nics)[0]]
    return out


def rails(placement: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """rail (NIC name) -> host -> switch, for every NIC name at least two hosts have: rail-aligned pairs test NIC
    k of one host against NIC k of another."""
    out: dict[str, dict[str, str]] = {}
    for host, nics in placement.items():
        for nic, switch in nics.items():
            out.setdefault(nic, {})[host] = switch
    return {nic: hosts for nic, hosts in sorted(out.items()) if len(hosts) >= 2}


def leaf_pairs(leaf_of: Mapping[str, str]) -> list[frozenset]:
    """Every inter-leaf path between leaves that have nodes, in sorted order."""
    leaves = sorted({leaf for leaf in leaf_of.values() if leaf != UNKNOWN_LEAF})
    return [frozenset((a, b)) for i, a in enumerate(leaves) for b in leaves[i + 1:]]


def topology_rounds(leaf_of: Mapping[str, str], rounds: int = 3, seed: int = 0,
                    max_rounds: int | None = None) -> list[list[Pair]]:
    """Rounds built from the cabling (`leaf_of`: node -> leaf switch):

    1. the first round pairs nodes within their own leaf (a partner behind no inter-leaf path), so that each end of
       a crossing pair is seen to be fine on its own and a slow crossing pair points at the path, not at a node;
    2. every later round is a matching that spreads its pairs over the leaf pairs crossed least so far (one pair per
       leaf pair in turn, while both leaves have a free node), and pairs what is left within a leaf.

    Rounds are added until there are `rounds` of them AND every leaf pair is crossed by at least two pairs (one
    slow pair is a bad pair; two are needed to name the path), or `max_rounds` is reached. No node twice in a
    round; partners already met are avoided while a fresh one is free. Deterministic per seed."""
    nodes = _check(list(leaf_of))
    rng = random.Random(seed)
    groups: dict[str, list[str]] = {}
    for node in sorted(nodes):
        groups.setdefault(leaf_of[node] or UNKNOWN_LEAF, []).append(node)
    wanted = leaf_pairs(leaf_of)
    crossed: Counter = Counter()
    met: set[frozenset] = set()
    plan: list[list[Pair]] = []
    limit = max_rounds if max_rounds is not None else rounds + 2 * len(wanted)
    while len(nodes) >= 2 and len(plan) < limit:
        if len(plan) >= rounds and all(crossed[lp] >= 2 for lp in wanted):
            break
        free = {leaf: rng.sample(members, len(members)) for leaf, members in groups.items()}
        pairs = _within_leaves(free, met) if not plan else _across_leaves(free, wanted, crossed, met, rng)
        pairs += _leftovers([n for members in free.values() for n in members], met)
        for a, b in pairs:
            met.add(frozenset((a, b)))
            if (lp := leaf_pair(leaf_of, a, b)) is not None:
                crossed[lp] += 1
        plan.append([(a, b) if i % 2 == 0 else (b, a) for i, (a, b) in enumerate(pairs)])
    return plan


def _take_partner(node: str, pool: list[str], met: set[frozenset]) -> str:
    """Remove and return the first node of `pool` that has not met `node`, else the first one."""
    for index, other in enumerate(pool):
        if frozenset((node, other)) not in met:
            return pool.pop(index)
    return pool.pop(0)


def _within_leaves(free: dict[str, list[str]], met: set[frozenset]) -> list[Pair]:
    pairs: list[Pair] = []
    for leaf in sorted(free):
        if leaf == UNKNOWN_LEAF:
            continue
        members = free[leaf]
        while len(members) >= 2:
            a = members.pop(0)
            pairs.append((a, _take_partner(a, members, met)))
    return pairs


def _across_leaves(free: dict[str, list[str]], wanted: list[frozenset], crossed: Counter, met: set[frozenset],
                   rng: random.Random) -> list[Pair]:
    pairs: list[Pair] = []
    tiebreak = {lp: rng.random() for lp in wanted}
    counts = Counter(crossed)  # this round's pairs counted too, without touching the caller's tally
    while True:
        order = sorted((lp for lp in wanted if all(free[leaf] for leaf in lp)),
                       key=lambda lp: (counts[lp], tiebreak[lp]))
        if not order:
            return pairs
        for lp in order:  # one pair per leaf pair per pass, least crossed first
            a_leaf, b_leaf = sorted(lp)
            if free[a_leaf] and free[b_leaf]:
                a = free[a_leaf].pop(0)
                b = _take_partner(a, free[b_leaf], met)
                pairs.append((a, b))
                counts[lp] += 1


def _leftovers(left: list[str], met: set[frozenset]) -> list[Pair]:
    pairs: list[Pair] = []
    left = list(left)
    while len(left) >= 2:
        a = left.pop(0)
        pairs.append((a, _take_partner(a, left, met)))
    left.clear()
    return pairs


def rail_plan(placement: Mapping[str, Mapping[str, str]], rounds: int = 3, seed: int = 0,
              max_rounds: int | None = None) -> dict[str, list[list[Pair]]]:
    """rail -> its topology rounds: on each rail, NIC k of one host against NIC k of another (rail-aligned), the
    leaves being the switches the rail's NICs are cabled to. Rails use different NICs, so round i of every rail
    can run at the same time."""
    return {nic: topology_rounds(hosts, rounds, seed + index, max_rounds)
            for index, (nic, hosts) in enumerate(rails(placement).items())}


def topology_confirmation(suspects: list[str], good: list[str], leaf_of: Mapping[str, str],
                          low_pairs: Iterable[frozenset] = (), previous: set[frozenset] | None = None) -> list[Pair]:
    """Each suspect as client of a known-good server, chosen so that the pair crosses no path already seen slow:
    a good node on the suspect's own leaf first, then one on a leaf with which the suspect's leaf had no low pair,
    then any; among those, one it has not met, then the least loaded. A node slow with a partner behind its own
    leaf is then slow with everyone; a node fine within its leaf was only behind a slow path."""
    previous = previous or set()
    suspects = list(dict.fromkeys(suspects))
    good = [g for g in dict.fromkeys(good) if g not in set(suspects)]
    if not good:
        return []
    slow_toward: dict[str, set[str]] = {}
    for pair in low_pairs:
        if len(pair) != 2:
            continue
        a, b = sorted(pair)
        la, lb = leaf_of.get(a, UNKNOWN_LEAF), leaf_of.get(b, UNKNOWN_LEAF)
        slow_toward.setdefault(la, set()).add(lb)
        slow_toward.setdefault(lb, set()).add(la)
    load = dict.fromkeys(good, 0)
    order = {g: i for i, g in enumerate(good)}
    pairs: list[Pair] = []
    for suspect in suspects:
        mine = leaf_of.get(suspect, UNKNOWN_LEAF)
        avoid = slow_toward.get(mine, set())

        def rank(g: str, mine: str = mine, avoid: set = avoid, suspect: str = suspect) -> tuple:
            leaf = leaf_of.get(g, UNKNOWN_LEAF)
            tier = 0 if leaf == mine and mine != UNKNOWN_LEAF else 1 if leaf not in avoid else 2
            return tier, frozenset((g, suspect)) in previous, load[g], order[g]

        peer = min(good, key=rank)
        load[peer] += 1
        pairs.append((peer, suspect))
    return pairs


def suspects_and_good(statuses: Mapping[frozenset, str], nodes: Iterable[str]) -> tuple[list[str], list[str]]:
    """(nodes with a pair that did not pass, nodes whose every pair passed), in `nodes` order; `statuses` maps an
    unordered pair to its status (ok | low | error)."""
    seen: dict[str, bool] = {}
    for pair, status in statuses.items():
        for node in pair:
            seen[node] = seen.get(node, True) and status == OK_STATUS
    suspects = [n for n in nodes if seen.get(n) is False]
    good = [n for n in nodes if seen.get(n) is True]
    return suspects, good


def confirmation_for(statuses: Mapping[frozenset, str], nodes: Iterable[str],
                     leaf_of: Mapping[str, str] | None = None) -> list[Pair]:
    """The confirmation round after a schedule's rounds: every suspect against a known-good peer (topology-aware
    when `leaf_of` is given)."""
    suspects, good = suspects_and_good(statuses, list(nodes))
    previous = set(statuses)
    if leaf_of is None:
        return confirmation_pairs(suspects, good, previous)
    low = [pair for pair, status in statuses.items() if status != OK_STATUS]
    return topology_confirmation(suspects, good, leaf_of, low, previous)
