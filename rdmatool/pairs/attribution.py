"""Attribution: from pair results to bad nodes and bad links, with the evidence.

A pair runs at most as fast as its slower end, so a node that reaches the expected bandwidth with ANY partner is
known-good. A node is bad when none of its pairs pass, it met at least two distinct partners and at least one of
them is known-good (the confirmation); with less evidence it is a suspect. A low pair whose two ends are both
known-good elsewhere (and not bad) is a bad link (or path). An errored pair is reported as such; a node that
errors (or is low) with everyone is bad like a slow one. Unreachable hosts are `missing`, never bad.

Bandwidth: a pair is low when bw_avg < threshold x expected, expected = the smaller of the two nodes' expected
Gb/s (their line rate by default). Latency tests: a pair is high when its typical latency exceeds LAT_FACTOR x
the median of all pairs (docs/tuning.md §6.2: no absolute figure; alarm on deviation).

Evidence: one entry per node that had a low/errored pair (verdict bad|suspect|ok, expected_gbps, partners_ok /
_low / _error, measured per partner, median_gbps) and per bad or unexplained link `a<->b` (measured, expected,
median_gbps, the partners each end is fine with); run-wide facts under `_threshold`, `_expected_gbps`,
`_pairs_measured`, `_pairs_low`, `_pairs_error`, `_unexplained`.

Rails: a rail-aligned run (NIC k of one host against NIC k of another, each result's `rail`) is attributed per
rail (`attribute_rails`): a node bad on some rail and passing on none is a bad node; bad on rail k while passing on
another rail, its NIC k is a bad NIC (`Attribution.bad_nics`), the host itself fine.

Facts: `facts()` states an attribution as rows of the analysis facts format (rdmatool.table.analysis.FACT_COLUMNS), so
that its verdicts are judged by playbook rules (playbooks/40-perftest.yaml) like any other fact.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from rdmatool.pairs.model import LAT_TESTS, NOT_RUN, UNREACHABLE, Attribution, PairResult

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


def bad_nodes_and_nics(statuses: Mapping[str, Mapping[frozenset, str]],
                       bad: Mapping[str, Iterable[str]]) -> tuple[list[str], list[tuple[str, str]]]:
    """Per rail each pair's status (ok | low | error) and the nodes that rail's attribution named bad → (bad nodes,
    bad NICs): a node bad on some rail and passing on none is a bad node (slow whatever NIC it uses); a node bad on
    rail k while passing on another rail is a bad NIC (host, k)."""
    passing_on: dict[str, set[str]] = {}
    for rail, pairs in statuses.items():
        for pair, status in pairs.items():
            if status == OK:
                for n in pair:
                    passing_on.setdefault(n, set()).add(rail)
    nodes = sorted({n for named in bad.values() for n in named if n not in passing_on})
    nics = sorted((n, rail) for rail, named in bad.items() for n in named if passing_on.get(n, set()) - {rail})
    return nodes, nics


def with_down_nics(attribution: Attribution, down: Mapping[tuple[str, str], str]) -> Attribution:
    """The attribution with each NIC perftest could not run on while the NIC of the same name runs on other hosts
    (`(host, device) -> why`: `Ethernet port 1 DOWN`) as a bad NIC: a rail down on that host. Its record under
    `_nics` has verdict `down` and `state`, the reason."""
    if not down:
        return attribution
    evidence = dict(attribution.evidence)
    nics = dict(evidence.get("_nics") or {})
    for (host, rail), why in sorted(down.items()):
        nics[f"{host}/{rail}"] = {"rail": rail, "verdict": "down", "state": why, "ok_on_rails": []}
    evidence["_nics"] = nics
    return replace(attribution, bad_nics=tuple(sorted(set(attribution.bad_nics) | set(down))), evidence=evidence)


def attribute_rails(results: list[PairResult], expected_gbps: Mapping[str | None, dict[str, float] | float | None],
                    threshold: float = 0.9) -> Attribution:
    """The attribution of a rail-aligned run (each result's `rail` the NIC both ends used): `attribute` per rail,
    since a pair on rail k says nothing of rail j, then its nodes split into bad nodes and bad NICs
    (`bad_nodes_and_nics`). `expected_gbps`: per rail, what `attribute` takes (each rail's NICs have their own line
    rate). One rail (or none named) is plain `attribute`.

    Evidence: each node's record from the rail that named it bad (else its first), with `rail` and its verdict over
    every rail; each bad or unexplained link's record with its `rail`; per bad NIC `host/rail` under `_nics` its
    rail's record with `ok_on_rails`, the rails it passed on; per rail under `_rails` its expected rates and pairs
    measured; the run-wide figures summed over the rails."""
    rails = list(dict.fromkeys(r.rail for r in results))
    if len(rails) <= 1:
        return attribute(results, expected_gbps.get(rails[0]) if rails else None, threshold)
    mine = {rail: [r for r in results if r.rail == rail] for rail in rails}
    per = {rail: attribute(mine[rail], expected_gbps.get(rail), threshold) for rail in rails}
    statuses = {rail: {pair: v.status for pair, v in classify(mine[rail], expected_gbps.get(rail),
                                                              threshold).items()} for rail in rails}
    bad_nodes, bad_nics = bad_nodes_and_nics(statuses, {rail: a.bad_nodes for rail, a in per.items()})
    nic_hosts = {h for h, _ in bad_nics}
    suspects = sorted({n for a in per.values() for n in a.suspects} - set(bad_nodes) - nic_hosts)
    bad_links = sorted({tuple(link) for a in per.values() for link in a.bad_links})
    evidence: dict = {}
    for rail, a in per.items():
        for key, record in a.evidence.items():
            if key.startswith("_") or not isinstance(record, dict):
                continue
            first = key not in evidence
            if first or (record.get("verdict") == "bad" and evidence[key].get("rail_verdict") != "bad"):
                evidence[key] = {**record, "rail": rail, "rail_verdict": record.get("verdict")}
    for key, record in evidence.items():
        if "<->" not in key:  # a node: its verdict over every rail
            record["verdict"] = "bad" if key in bad_nodes else "suspect" if key in suspects else "ok"
    ok_on = {}
    for rail, pairs in statuses.items():
        for pair, status in pairs.items():
            for n in pair:
                if status == OK:
                    ok_on.setdefault(n, set()).add(rail)
    evidence["_nics"] = {f"{h}/{rail}": {**per[rail].evidence.get(h, {}), "rail": rail,
                                          "ok_on_rails": sorted(ok_on.get(h, set()) - {rail})}
                         for h, rail in bad_nics}
    expected_all: dict = {}
    for a in per.values():
        for node, value in (a.evidence.get("_expected_gbps") or {}).items():
            expected_all.setdefault(node, value)
    evidence.update({
        "_threshold": threshold,
        "_expected_gbps": expected_all,
        "_pairs_measured": sum(a.evidence.get("_pairs_measured", 0) for a in per.values()),
        "_pairs_low": sum(a.evidence.get("_pairs_low", 0) for a in per.values()),
        "_pairs_error": sum(a.evidence.get("_pairs_error", 0) for a in per.values()),
        "_unexplained": sorted({k for a in per.values() for k in a.evidence.get("_unexplained", [])}),
        "_rails": {rail: {"expected_gbps": a.evidence.get("_expected_gbps") or {},
                          "pairs_measured": a.evidence.get("_pairs_measured", 0)} for rail, a in per.items()},
    })
    missing = sorted({m for a in per.values() for m in a.missing})
    errors = tuple((r.server, r.client, r.error) for r in results if r.error and _counts(r))
    return Attribution(tuple(bad_nodes), tuple(bad_links), evidence, tuple(missing), tuple(suspects), errors,
                       tuple(bad_nics))


def facts(results: list[PairResult], attribution: Attribution, threshold: float = 0.9) -> list[dict]:
    """The attribution as fact rows (every column of the analysis facts format), subject by subject:

    - each node (target: the node): `perf_node_verdict` bad | suspect | ok (raw_key `bandwidth` or `latency`: the
      kind of matrix), the `perf_test` it ran and, where the
      evidence has a record of it, `perf_record` (the record as JSON), its median `bw_avg_gbps` over its pairs and
      its `perf_pass_gbps` (`threshold` x its expected rate);
    - each bad NIC of a multi-rail run (target: its host, entity: the NIC, its rail): `perf_nic_verdict` bad
      (raw_key the matrix), `perf_nic_ok_on` the rails the host passed on, `perf_record` (its rail's record), its
      median `bw_avg_gbps` and `perf_pass_gbps`;
    - each bad or unexplained link (target `fabric`, entity `a<->b`): `perf_link_verdict`, its ends `perf_link_a`
      and `perf_link_b`, `perf_record` and its median `bw_avg_gbps`;
    - each failed pair run (target: the client, entity `client->server`): the `tool_error` message, and once per
      pair its `perf_pair_verdict` (bad_end when either end is a bad node, else failed), `perf_server` and `perf_test`.

    A bad node or link without a record in the evidence still has one, empty. Medians are stated for bandwidth
    tests only (a latency run's record holds latencies). Subjects come in the attribution's order: its bad nodes and
    bad links first, as it listed them."""
    evidence = attribution.evidence or {}
    bandwidth = not any(r.test in LAT_TESTS for r in results)
    # raw_key of a verdict says which matrix judged the subject, so that a bandwidth verdict is never read as a
    # latency one where both are among the facts (a diagnosis of a bundle with both kinds of per-peer results)
    matrix = "bandwidth" if bandwidth else "latency"
    return [*_node_facts(results, attribution, evidence, matrix, threshold),
            *_nic_facts(attribution, evidence, matrix, threshold),
            *_link_facts(attribution, evidence, bandwidth),
            *_failed_pair_facts(results, set(attribution.bad_nodes))]


def _node_facts(results: list[PairResult], attribution: Attribution, evidence: dict, matrix: str,
                threshold: float) -> list[dict]:
    """Each node's verdict, test and record: the bad nodes and suspects first, then every other node that ran or
    has a record, by name."""
    bad = set(attribution.bad_nodes)
    tests: dict[str, str] = {}
    for r in results:
        tests.setdefault(r.server, r.test)
        tests.setdefault(r.client, r.test)
    recorded = [k for k, v in evidence.items() if isinstance(v, dict) and not k.startswith("_") and "<->" not in k]
    rows: list[dict] = []
    for node in dict.fromkeys([*attribution.bad_nodes, *attribution.suspects, *sorted({*tests, *recorded})]):
        verdict = "bad" if node in bad else "suspect" if node in attribution.suspects else "ok"
        rows.append(fact_row(node, "host", None, "perf_node_verdict", text=verdict, raw_key=matrix))
        if node in tests:
            rows.append(fact_row(node, "host", None, "perf_test", text=tests[node]))
        record = _record(evidence, node, node in bad)
        if record is not None:
            rows += _recorded(node, "host", None, record, matrix == "bandwidth")
            rows += _pass_gbps(node, None, record, threshold)
    return rows


def _nic_facts(attribution: Attribution, evidence: dict, matrix: str, threshold: float) -> list[dict]:
    """Each bad NIC of a multi-rail run (subject: the host, entity: its NIC, the rail): down (its state the
    evidence: no pair ran on it), or bad with the rails the host passed on and its rail's record."""
    nics = evidence.get("_nics") if isinstance(evidence.get("_nics"), dict) else {}
    rows: list[dict] = []
    for host, rail in attribution.bad_nics:
        record = nics.get(f"{host}/{rail}")
        record = record if isinstance(record, dict) else {}
        if record.get("verdict") == "down":
            rows += [fact_row(host, "host", rail, "perf_nic_verdict", text="down", raw_key=matrix),
                     fact_row(host, "host", rail, "perf_nic_state", text=str(record.get("state") or "not usable"))]
            continue
        rows.append(fact_row(host, "host", rail, "perf_nic_verdict", text="bad", raw_key=matrix))
        ok_on = [x for x in record.get("ok_on_rails") or [] if isinstance(x, str)]
        rows.append(fact_row(host, "host", rail, "perf_nic_ok_on", text=", ".join(ok_on) or "another rail"))
        rows += _recorded(host, "host", rail, record, matrix == "bandwidth")
        rows += _pass_gbps(host, rail, record, threshold)
    return rows


def _link_facts(attribution: Attribution, evidence: dict, bandwidth: bool) -> list[dict]:
    """Each bad link, then each unexplained one (subject `fabric`, entity `a<->b`): its verdict, its ends and its
    record."""
    unexplained = [k for k in evidence.get("_unexplained") or [] if isinstance(k, str) and "<->" in k]
    links = dict.fromkeys([*(tuple(link) for link in attribution.bad_links),
                           *(tuple(k.split("<->", 1)) for k in unexplained)])
    bad_links = {tuple(link) for link in attribution.bad_links}
    rows: list[dict] = []
    for a, b in links:
        key = f"{a}<->{b}"
        rows += [fact_row("fabric", "fabric", key, "perf_link_verdict", text="bad" if (a, b) in bad_links else
                          "unexplained"),
                 fact_row("fabric", "fabric", key, "perf_link_a", text=a),
                 fact_row("fabric", "fabric", key, "perf_link_b", text=b)]
        record = _record(evidence, key, (a, b) in bad_links)
        if record is not None:
            rows += _recorded("fabric", "fabric", key, record, bandwidth)
    return rows


def _failed_pair_facts(results: list[PairResult], bad: set[str]) -> list[dict]:
    """Each failed run's message (subject: the client, entity `client->server`), and once per pair its verdict
    (bad_end when either end is a bad node, else failed), server and test."""
    rows: list[dict] = []
    pairs: set[str] = set()
    for r in results:
        if not r.error:
            continue
        pair = f"{r.client}->{r.server}"
        rows.append(fact_row(r.client, "host", pair, "tool_error", text=r.error))
        if pair not in pairs:
            pairs.add(pair)
            verdict = "bad_end" if r.server in bad or r.client in bad else "failed"
            rows += [fact_row(r.client, "host", pair, "perf_pair_verdict", text=verdict),
                     fact_row(r.client, "host", pair, "perf_server", text=r.server),
                     fact_row(r.client, "host", pair, "perf_test", text=r.test)]
    return rows


def _pass_gbps(target: str, entity: str | None, record: dict, threshold: float) -> list[dict]:
    """The rate a pair of the subject had to reach (`threshold` x its expected rate), when the record has one."""
    if _is_number(record.get("expected_gbps")) and record["expected_gbps"]:
        return [fact_row(target, "host", entity, "perf_pass_gbps", value=record["expected_gbps"] * threshold,
                         raw_key="expected_gbps")]
    return []


def _record(evidence: dict, key: str, judged_bad: bool) -> dict | None:
    record = evidence.get(key)
    if isinstance(record, dict):
        return record
    return {} if judged_bad else None


def _recorded(target: str, kind: str, entity: str | None, record: dict, bandwidth: bool) -> list[dict]:
    """The record itself, and the median it gives (records written before `median_gbps` name it `bw_avg_gbps`)."""
    out = [fact_row(target, kind, entity, "perf_record", text=json.dumps(record, default=str))]
    median = record.get("median_gbps", record.get("bw_avg_gbps"))
    if bandwidth and _is_number(median):
        out.append(fact_row(target, kind, entity, "bw_avg_gbps", value=median, raw_key="median_gbps"))
    return out


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def fact_row(target: str, kind: str, entity: str | None, metric: str, value: float | None = None,
             text: str | None = None, raw_key: str | None = None) -> dict:
    return {"target": target, "kind": kind, "platform": None, "role": None, "entity": entity, "metric": metric,
            "priority": None, "size_bytes": None, "value": None if value is None else float(value), "text": text,
            "raw_key": raw_key, "window_s": None, "delta": None, "flag": ""}
