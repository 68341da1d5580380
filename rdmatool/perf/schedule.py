"""Test schedules: rounds of (server, client) pairs in which no node appears twice, so a round runs in parallel."""

from __future__ import annotations

import random

Pair = tuple[str, str]


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


def split_conflicts(pairs: list[Pair]) -> list[list[Pair]]:
    """Greedy split of a round into sub-rounds in which no node appears twice (order kept)."""
    out: list[list[Pair]] = []
    busy: list[set[str]] = []
    for a, b in pairs:
        for index, used in enumerate(busy):
            if a not in used and b not in used:
                out[index].append((a, b))
                used.update((a, b))
                break
        else:
            out.append([(a, b)])
            busy.append({a, b})
    return out
