"""From the attribution of each rail to what is broken in the fabric: bad nodes, bad rail NICs, bad inter-leaf links.

The attribution (rdmatool.pairs.attribution) works on one rail's pairs and names nodes and node pairs. With the
cabling known this module names the fabric's elements:

- a **bad node**: bad in some rail's attribution and passing with nobody on any rail (slow whatever NIC it uses);
- a **bad rail NIC** (host, rail): bad in that rail's attribution while passing on another rail;
- a **bad inter-leaf link** {A, B}: among the measured pairs whose ends sit on leaves A and B (a pair with an end
  named bad node left out), none passed and at least two are bad links of their rail's attribution (low, both ends
  known-good elsewhere). One slow pair is a bad pair; two independent ones behind the same path name the path.

The inter-leaf path is the leaf pair: cabling with spine uplinks is not modelled (ECMP picks the spine).
`rdmatool perf`, the gate and the diagnosis of a bundle's per-peer results share it (rdmatool.pairs.paths).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rdmatool.pairs.attribution import LOW, OK, attribute, bad_nodes_and_nics, classify
from rdmatool.pairs.model import Attribution, PairResult, leaf_pair


@dataclass(frozen=True)
class RailRun:
    """One rail's outcome: each measured pair's status (ok | low | error) and its attribution."""

    statuses: Mapping[frozenset, str]
    attribution: Attribution

    @classmethod
    def of(cls, results: list[PairResult], expected_gbps: dict[str, float] | float | None,
           threshold: float = 0.9) -> RailRun:
        statuses = {pair: v.status for pair, v in classify(results, expected_gbps, threshold).items()}
        return cls(statuses, attribute(results, expected_gbps, threshold))


@dataclass(frozen=True)
class Localisation:
    bad_nodes: tuple[str, ...] = ()
    bad_nics: tuple[tuple[str, str], ...] = ()  # (host, rail)
    bad_inter_leaf_links: tuple[tuple[str, str], ...] = ()  # (leaf, leaf), sorted

    def as_dict(self) -> dict:
        return {"bad_nodes": list(self.bad_nodes), "bad_nics": [list(x) for x in self.bad_nics],
                "bad_inter_leaf_links": [list(x) for x in self.bad_inter_leaf_links]}


def localise(runs: Mapping[str, RailRun], fabric: Mapping[str, Mapping[str, str]]) -> Localisation:
    """`runs`: rail -> its outcome; `fabric`: rail -> host -> leaf (as for rdmatool.perf.exposure)."""
    bad_nodes, bad_nics = bad_nodes_and_nics({rail: run.statuses for rail, run in runs.items()},
                                             {rail: run.attribution.bad_nodes for rail, run in runs.items()})
    crossing: dict[frozenset, list[bool]] = {}  # leaf pair -> per measured crossing pair: is it a bad link
    passed: set[frozenset] = set()
    for rail, run in runs.items():
        leaf_of = fabric.get(rail, {})
        bad = set(run.attribution.bad_nodes)
        links = {frozenset(link) for link in run.attribution.bad_links}
        for pair, status in run.statuses.items():
            a, b = sorted(pair)
            leaves = leaf_pair(leaf_of, a, b)
            if leaves is None or status not in (OK, LOW) or bad & pair:
                continue
            if status == OK:
                passed.add(leaves)
            crossing.setdefault(leaves, []).append(pair in links)
    paths = sorted(tuple(sorted(lp)) for lp, named in crossing.items() if lp not in passed and sum(named) >= 2)
    return Localisation(tuple(bad_nodes), tuple(bad_nics), tuple(paths))
