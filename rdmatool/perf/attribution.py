"""Attribution: from pair results to bad nodes and bad links, with the evidence.

A pair runs at most as fast as its slower end, so a node that reaches the expected bandwidth with ANY partner is
known-good. A node is bad when none of its pairs pass, it met at least two distinct partners and at least one of
them is known-good (the confirmation); with less evidence it is a suspect. A low pair whose two ends are both
known-good elsewhere (and not bad) is a bad link (or path). An errored pair is reported as such; a node that
errors (or is low) with everyone is bad like a slow one. Unreachable hosts are `missing`, never bad.

Bandwidth: a pair is low when bw_avg < threshold x expected, expected = the smaller of the two nodes' expected
Gb/s (their line rate by default). Latency tests: a pair is high when its typical latency exceeds LAT_FACTOR x
the median of all pairs (tuning.md §6.2: no absolute figure; alarm on deviation).

Evidence: one entry per node that had a low/errored pair (verdict bad|suspect|ok, expected_gbps, partners_ok /
_low / _error, measured per partner, median_gbps) and per bad or unexplained link `a<->b` (measured, expected,
median_gbps, the partners each end is fine with); run-wide facts under `_threshold`, `_expected_gbps`,
`_pairs_measured`, `_pairs_low`, `_pairs_error`, `_unexplained`.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from rdmatool.perf.model import NOT_RUN, UNREACHABLE, Attribution, PairResult

OK, LOW, ERROR = "ok", "low", "error"
LAT_FACTOR = 1.5


@dataclass
class PairVerdict:
    a: str
    b: str
    statuses: list[str] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    expected: float | None = None

    @property
    def status(self) -> str:
        return OK if OK in self.statuses else LOW if LOW in self.statuses else ERROR

    def as_dict(self) -> dict:
        return {"status": self.status, "measured": self.values, "errors": self.errors, "expected": self.expected}


def missing_node(result: PairResult) -> str | None:
    if result.error and result.error.startswith(UNREACHABLE):
        rest = result.error[len(UNREACHABLE):].split()
        return rest[0].rstrip(":") if rest else None
    return None


def _counts(result: PairResult) -> bool:
    return not (result.error and (result.error.startswith(UNREACHABLE) or result.error.startswith(NOT_RUN)))


def _lat_value(result: PairResult) -> float | None:
    lat = result.lat or {}
    for key in ("lat_typical_us", "lat_avg_us", "lat_min_us"):
        if lat.get(key) is not None:
            return float(lat[key])
    return None


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def expected_of(expected_gbps: dict[str, float] | float | None, node: str) -> float | None:
    if isinstance(expected_gbps, dict):
        value = expected_gbps.get(node)
        return None if value is None else float(value)
    return None if expected_gbps is None else float(expected_gbps)


def classify(results: list[PairResult], expected_gbps: dict[str, float] | float | None,
             threshold: float = 0.9) -> dict[frozenset, PairVerdict]:
    """Per unordered pair: ok if any measurement passed, else low if any was low, else error."""
    counted = [r for r in results if _counts(r)]
    bw_values = [r.bw_avg_gbps for r in counted if r.error is None and r.bw_avg_gbps is not None]
    lat_values = [v for r in counted if r.error is None and (v := _lat_value(r)) is not None]
    bw_median = statistics.median(bw_values) if bw_values else None
    lat_median = statistics.median(lat_values) if lat_values else None
    verdicts: dict[frozenset, PairVerdict] = {}
    for r in counted:
        key = frozenset((r.server, r.client))
        v = verdicts.setdefault(key, PairVerdict(r.server, r.client))
        if r.error is not None:
            v.errors.append(r.error)
            status = ERROR
        elif r.bw_avg_gbps is not None:
            ends = [e for e in (expected_of(expected_gbps, r.server), expected_of(expected_gbps, r.client)) if e]
            v.expected = min(ends) if ends else bw_median
            v.values.append(r.bw_avg_gbps)
            status = LOW if v.expected and r.bw_avg_gbps < threshold * v.expected else OK
        elif (lat := _lat_value(r)) is not None:
            v.expected = lat_median
            v.values.append(lat)
            status = LOW if lat_median and lat > LAT_FACTOR * lat_median else OK
        else:
            v.errors.append("no result in the perftest output")
            status = ERROR
        v.statuses.append(status)
    return verdicts


def attribute(results: list[PairResult], expected_gbps: dict[str, float] | float | None,
              threshold: float = 0.9) -> Attribution:
    verdicts = classify(results, expected_gbps, threshold)
    missing = sorted({m for r in results if (m := missing_node(r))})
    per_node: dict[str, dict[str, PairVerdict]] = {}
    for v in verdicts.values():
        per_node.setdefault(v.a, {})[v.b] = v
        per_node.setdefault(v.b, {})[v.a] = v
    good = {n for n, partners in per_node.items() if any(v.status == OK for v in partners.values())}
    bad_nodes: list[str] = []
    suspects: list[str] = []
    for node in sorted(per_node):
        partners = per_node[node]
        if node in good:
            continue
        if len(partners) >= 2 and good & set(partners):
            bad_nodes.append(node)
        else:
            suspects.append(node)
    bad = set(bad_nodes)
    bad_links: list[tuple[str, str]] = []
    unexplained: list[str] = []
    for v in sorted(verdicts.values(), key=lambda v: tuple(sorted((v.a, v.b)))):
        if v.status == OK or v.a in bad or v.b in bad:
            continue
        a, b = sorted((v.a, v.b))
        if v.status == LOW and a in good and b in good:
            bad_links.append((a, b))
        elif v.status == LOW or not (a in good and b in good):
            unexplained.append(f"{a}|{b}")
    nodes_ev: dict[str, dict] = {}
    for node in sorted(per_node):
        partners = per_node[node]
        if all(v.status == OK for v in partners.values()):
            continue
        nodes_ev[node] = {
            "verdict": "bad" if node in bad else "suspect" if node in suspects else "ok",
            "expected_gbps": expected_of(expected_gbps, node),
            "partners_ok": sorted(p for p, v in partners.items() if v.status == OK),
            "partners_low": sorted(p for p, v in partners.items() if v.status == LOW),
            "partners_error": sorted(p for p, v in partners.items() if v.status == ERROR),
            "measured": {p: v.as_dict() for p, v in sorted(partners.items())},
            "median_gbps": _median([x for v in partners.values() for x in v.values]),
        }
    links_ev: dict[str, dict] = {}
    for a, b in bad_links + [tuple(x.split("|")) for x in unexplained]:
        v = verdicts[frozenset((a, b))]
        links_ev[f"{a}<->{b}"] = {
            **v.as_dict(),
            "median_gbps": _median(v.values),
            "verdict": "bad" if (a, b) in bad_links else "unexplained",
            f"{a}_ok_with": sorted(p for p, w in per_node[a].items() if w.status == OK),
            f"{b}_ok_with": sorted(p for p, w in per_node[b].items() if w.status == OK),
        }
    nodes_all = sorted(set(per_node) | {n for r in results for n in (r.server, r.client)})
    # Per node and per link `a<->b` at the top (the gate looks them up by name); run-wide facts under `_` keys,
    # which no inventory name can take (names start with a letter or digit).
    evidence: dict = {**nodes_ev, **links_ev}
    evidence.update({
        "_threshold": threshold,
        "_expected_gbps": {n: expected_of(expected_gbps, n) for n in nodes_all},
        "_pairs_measured": len(verdicts),
        "_pairs_low": sum(v.status == LOW for v in verdicts.values()),
        "_pairs_error": sum(v.status == ERROR for v in verdicts.values()),
        "_unexplained": [k.replace("|", "<->") for k in unexplained],
    })
    errors = tuple((r.server, r.client, r.error) for r in results if r.error and _counts(r))
    return Attribution(tuple(bad_nodes), tuple(bad_links), evidence, tuple(missing), tuple(suspects), errors)
