"""A model of a fabric for pair schedules, without SSH: which pairs a single fault slows, the measured bandwidth of
each pair (optionally with noise), the plan run round by round with the confirmation round the engine would add,
and the attribution + localisation of the outcome. The brute-force side of the exposure tests, and the model the
gate benchmark runs its seeded trials on.

Layout: `fabric(hosts, leaves, rails)`: hosts h00.. spread evenly over leaf01.., every host with NICs mlx5_0..
(rail k of every host cabled to the host's leaf), as rdmatool.topology.Link values.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from rdmatool.perf.localise import Localisation, RailRun, localise
from rdmatool.perf.model import PairResult
from rdmatool.perf.schedule import Pair, confirmation_for, leaf_pair
from rdmatool.topology import Link

LINE_GBPS = 400.0
HEALTHY = 0.965  # of line rate, what perftest measures on a healthy pair
SLOW = 0.4


def links(hosts: int, leaves: int, rails: int = 1) -> list[Link]:
    per_leaf = -(-hosts // leaves)
    return [Link(f"h{i:02d}", f"mlx5_{k}", f"leaf{i // per_leaf + 1:02d}", f"p{i}", "model")
            for i in range(hosts) for k in range(rails)]


def slowed(kind: str, fault, rail: str, leaf_of: Mapping[str, str], a: str, b: str) -> bool:
    """Does this pair, run on `rail`, cross the fault?"""
    if kind == "bad_node":
        return fault in (a, b)
    if kind == "bad_rail_nic":
        return fault[1] == rail and fault[0] in (a, b)
    if kind == "bad_inter_leaf_link":
        return leaf_pair(leaf_of, a, b) == fault
    if kind == "none":
        return False
    raise ValueError(kind)


def measure(kind: str, fault, rail: str, leaf_of: Mapping[str, str], pairs: list[Pair], round_no: int,
            rng: random.Random | None) -> list[PairResult]:
    out = []
    for s, c in pairs:
        share = SLOW if slowed(kind, fault, rail, leaf_of, s, c) else HEALTHY
        if rng is not None:  # measurement noise: +-2 % of line rate, far from the 90 % pass line either way
            share += rng.uniform(-0.02, 0.02)
        out.append(PairResult(s, c, "ib_write_bw", 1048576, LINE_GBPS * share, None, None, None, round_no, "", "",
                              0.0))
    return out


def run_plan(plan: Mapping[str, list[list[Pair]]], fabric: Mapping[str, Mapping[str, str]], kind: str, fault,
             rng: random.Random | None = None, threshold: float = 0.9) -> tuple[dict[str, RailRun], int]:
    """Every rail's rounds, then its confirmation round (topology-aware: the cabling is known), attributed per rail.
    Returns the rail outcomes and the pair runs of the confirmation rounds."""
    runs: dict[str, RailRun] = {}
    confirmed = 0
    for rail, rounds in plan.items():
        leaf_of = fabric[rail]
        results: list[PairResult] = []
        for index, pairs in enumerate(rounds):
            results += measure(kind, fault, rail, leaf_of, pairs, index, rng)
        first = RailRun.of(results, LINE_GBPS, threshold)
        confirm = confirmation_for(first.statuses, list(leaf_of), leaf_of)
        confirmed += len(confirm)
        results += measure(kind, fault, rail, leaf_of, confirm, len(rounds), rng)
        runs[rail] = RailRun.of(results, LINE_GBPS, threshold)
    return runs, confirmed


def named(kind: str, fault, found: Localisation) -> bool:
    """Did the localisation name this fault as what it is?"""
    if kind == "bad_node":
        return fault in found.bad_nodes
    if kind == "bad_rail_nic":
        return tuple(fault) in found.bad_nics
    if kind == "bad_inter_leaf_link":
        return tuple(sorted(fault)) in found.bad_inter_leaf_links
    raise ValueError(kind)


def detects(plan, fabric, kind: str, fault, rng: random.Random | None = None) -> bool:
    runs, _ = run_plan(plan, fabric, kind, fault, rng)
    return named(kind, fault, localise(runs, fabric))
