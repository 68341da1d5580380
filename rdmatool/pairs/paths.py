"""Slow inter-leaf paths as one finding each: a perftest matrix's slow pairs grouped by the leaves of their ends.

Five host pairs crossing one slow uplink are one fault, not five bad links. The localisation the gate and
`rdmatool perf` run (rdmatool.pairs.localise) names a leaf pair when none of the measured pairs crossing it passed
and at least two are bad links of the attribution (both ends at speed with other partners). `fold` takes those
pairs out of the attribution's bad links and unexplained pairs (the path explains them; no node is drained for it)
and states each path as facts of the fabric for `perf_slow_inter_leaf` (playbooks/40-perftest.yaml): the two
leaves, the pairs that cross, their median against the expected bandwidth, the rail, and the leaves' uplink ports
when the switches' LLDP names them (`uplink_ports`).

Leaves: `leaf_of` is rail -> host -> leaf (rail None: each host's one tested NIC), from whatever cabling the caller
knows (the gate's schedule; a bundle's LLDP, iblinkinfo or topology file through rdmatool.topology).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, replace

from rdmatool.pairs.attribution import LOW, classify, fact_row
from rdmatool.pairs.localise import RailRun, localise
from rdmatool.pairs.model import Attribution, PairResult, leaf_pair
from rdmatool.platforms.port_names import system_name
from rdmatool.table.facts import FactQuery

NO_UPLINKS = "not known (no switch-to-switch LLDP in the data)"


@dataclass(frozen=True)
class SlowPath:
    """One inter-leaf path every measured pair across which is slow."""

    leaves: tuple[str, str]
    rail: str | None
    pairs: tuple[tuple[str, str], ...]  # the host pairs across it, each sorted, in order
    measured: dict[str, list[float]]  # `a<->b` -> its measurements (Gb/s)
    expected_gbps: float | None

    @property
    def key(self) -> str:
        return f"{self.leaves[0]}<->{self.leaves[1]}"

    @property
    def median_gbps(self) -> float | None:
        values = [v for found in self.measured.values() for v in found]
        return round(statistics.median(values), 3) if values else None


def slow_paths(results: list[PairResult], leaf_of: Mapping[str | None, Mapping[str, str]],
               expected: Mapping[str | None, dict[str, float] | float | None], threshold: float) -> list[SlowPath]:
    """The inter-leaf paths `localise` names, rail by rail, with the low pairs across each (a pair with an end the
    attribution calls bad is that node's, not the path's)."""
    out = []
    for rail in dict.fromkeys(r.rail for r in results):
        leaves = leaf_of.get(rail, leaf_of.get(None)) or {}
        if len(set(leaves.values())) < 2:
            continue
        mine = [r for r in results if r.rail == rail]
        run = RailRun.of(mine, expected.get(rail, expected.get(None)), threshold)
        named = localise({rail: run}, {rail: leaves}).bad_inter_leaf_links
        if not named:
            continue
        verdicts = classify(mine, expected.get(rail, expected.get(None)), threshold)
        bad = set(run.attribution.bad_nodes)
        for a_leaf, b_leaf in named:
            across = sorted(tuple(sorted(pair)) for pair, v in verdicts.items()
                            if v.status == LOW and not bad & pair and leaf_pair(leaves, *pair) == {a_leaf, b_leaf})
            verdict = [verdicts[frozenset(p)] for p in across]
            expected_gbps = [v.expected for v in verdict if v.expected]
            out.append(SlowPath((a_leaf, b_leaf), rail, tuple(across),
                                {f"{a}<->{b}": list(v.values) for (a, b), v in zip(across, verdict)},
                                min(expected_gbps) if expected_gbps else None))
    return out


def without_paths(attribution: Attribution, paths: list[SlowPath]) -> Attribution:
    """The attribution without the bad links and unexplained pairs the slow paths explain."""
    explained = {pair for path in paths for pair in path.pairs}
    if not explained:
        return attribution
    evidence = dict(attribution.evidence)
    unexplained = evidence.get("_unexplained")
    if isinstance(unexplained, list):
        evidence["_unexplained"] = [k for k in unexplained
                                    if not (isinstance(k, str) and tuple(sorted(k.split("<->", 1))) in explained)]
    links = tuple(link for link in attribution.bad_links if tuple(sorted(link)) not in explained)
    return replace(attribution, bad_links=links, evidence=evidence)


def path_facts(paths: list[SlowPath], threshold: float, uplinks: Mapping[str, list[str]] | None = None) -> list[dict]:
    """Each slow path as facts of the fabric (entity `<leaf>-><leaf>`), what `perf_slow_inter_leaf` reads."""
    rows = []
    for path in paths:
        ports = [f"{leaf} {port}" for leaf in path.leaves for port in (uplinks or {}).get(leaf, [])]
        record = {"leaves": list(path.leaves), "rail": path.rail, "pairs": [f"{a}<->{b}" for a, b in path.pairs],
                  "measured": path.measured, "median_gbps": path.median_gbps, "expected_gbps": path.expected_gbps,
                  "uplinks": ports}

        def row(metric: str, value: float | None = None, text: str | None = None, raw_key: str | None = None,
                key: str = path.key) -> None:
            rows.append(fact_row("fabric", "fabric", key, metric, value=value, text=text, raw_key=raw_key))

        row("perf_path_verdict", text="slow")
        row("perf_path_a", text=path.leaves[0])
        row("perf_path_b", text=path.leaves[1])
        row("perf_path_pairs", text=", ".join(record["pairs"]))
        row("perf_path_uplinks", text=", ".join(ports) or NO_UPLINKS)
        row("perf_path_rail", text=path.rail or "the tested NIC")
        row("perf_record", text=json.dumps(record, default=str))
        if path.median_gbps is not None:
            row("bw_avg_gbps", value=path.median_gbps, raw_key="median_gbps")
        if path.expected_gbps:
            row("perf_pass_gbps", value=path.expected_gbps * threshold, raw_key="expected_gbps")
    return rows


def fold(results: list[PairResult], attribution: Attribution, leaf_of: Mapping[str | None, Mapping[str, str]],
         expected: Mapping[str | None, dict[str, float] | float | None], threshold: float,
         uplinks: Mapping[str, list[str]] | None = None) -> tuple[Attribution, list[dict]]:
    """(the attribution without what the slow inter-leaf paths explain, the paths' facts)."""
    paths = slow_paths(results, leaf_of, expected, threshold)
    return without_paths(attribution, paths), path_facts(paths, threshold, uplinks)


def uplink_ports(analysis) -> dict[str, list[str]]:
    """leaf -> its ports cabled to another switch of the data, as its LLDP names them (`Ethernet48 to spine01
    Ethernet0`): the uplinks a slow inter-leaf path runs over."""
    query = FactQuery.of(analysis)
    switches = query.targets_where({"kind": "switch"})
    lldp = query.of_metric("lldp_neighbor")
    out: dict[str, list[str]] = {}
    for target, kind, entity, text in zip(lldp["target"], lldp["kind"], lldp["entity"], lldp["text"]):
        if kind != "switch" or not isinstance(text, str) or "|" not in text or not isinstance(entity, str):
            continue
        remote, _, remote_port = text.partition("|")
        remote = system_name(remote, switches)  # a peer's FQDN or capitals, the bundle's name
        if remote in switches and remote != target:
            out.setdefault(target, []).append(f"{entity} to {remote} {remote_port}".rstrip())
    return {leaf: sorted(set(ports)) for leaf, ports in out.items()}
