"""Attribution over synthetic results: a bad node, a bad link, both, errors, unreachable hosts."""

from __future__ import annotations

from rdmatool.perf.attribution import attribute
from rdmatool.perf.model import UNREACHABLE, PairResult
from rdmatool.perf.schedule import all_pairs, gate_rounds

NODES = [f"h{i}" for i in range(1, 9)]


def run(rounds, slow_nodes=(), slow_links=(), errors=(), line=200.0, unreachable=()) -> list[PairResult]:
    out = []
    for index, pairs in enumerate(rounds):
        for s, c in pairs:
            bw = line * 0.965
            if s in slow_nodes or c in slow_nodes:
                bw *= 0.5
            if frozenset((s, c)) in {frozenset(x) for x in slow_links}:
                bw *= 0.3
            error = None
            gone = next((n for n in (s, c) if n in unreachable), None)
            if gone:
                error = f"{UNREACHABLE}{gone} (127.0.0.1:22): connection refused"
            elif s in errors or c in errors:
                error = f"client {c}: Couldn't connect to {s}:18515"
            out.append(PairResult(s, c, "ib_write_bw", 65536, None if error else bw, None, None, error, index,
                                  "", "", 1.0))
    return out


def test_one_bad_node_all_pairs() -> None:
    a = attribute(run(all_pairs(NODES), slow_nodes={"h3"}), 200.0)
    assert a.bad_nodes == ("h3",) and a.bad_links == ()
    ev = a.evidence["h3"]
    assert ev["verdict"] == "bad" and len(ev["partners_low"]) == 7 and ev["expected_gbps"] == 200.0
    assert ev["median_gbps"] == 96.5 and a.evidence["_pairs_low"] == 7


def test_one_bad_link_all_pairs() -> None:
    a = attribute(run(all_pairs(NODES), slow_links=[("h1", "h5")]), {n: 200.0 for n in NODES})
    assert a.bad_nodes == () and a.bad_links == (("h1", "h5"),)
    link = a.evidence["h1<->h5"]
    assert link["verdict"] == "bad" and link["measured"] == [200.0 * 0.965 * 0.3]
    assert len(link["h1_ok_with"]) == 6 and len(link["h5_ok_with"]) == 6


def test_bad_node_and_bad_link_in_gate_rounds() -> None:
    rounds = gate_rounds(NODES, 3, seed=0)
    link = next(p for p in rounds[0] if "h3" not in p)
    a = attribute(run(rounds, slow_nodes={"h3"}, slow_links=[link]), 200.0)
    assert a.bad_nodes == ("h3",)
    assert a.bad_links == (tuple(sorted(link)),)


def test_pair_below_threshold_only_counts_per_node_expectation() -> None:
    # h1 has a 100G NIC: 96.5 Gb/s toward anyone is at speed for that pair (expected = the smaller end)
    results = run(all_pairs(NODES))
    results = [r if "h1" not in (r.server, r.client) else
               PairResult(r.server, r.client, r.test, r.size_bytes, 96.5, None, None, None, r.round, "", "", 1.0)
               for r in results]
    a = attribute(results, {**{n: 200.0 for n in NODES}, "h1": 100.0})
    assert a.bad_nodes == () and a.bad_links == ()


def test_errors_are_reported_and_a_node_failing_with_everyone_is_bad() -> None:
    a = attribute(run(all_pairs(NODES), errors={"h4"}), 200.0)
    assert a.bad_nodes == ("h4",)
    assert len(a.errors) == 7 and all("Couldn't connect" in e for _, _, e in a.errors)
    assert a.evidence["h4"]["partners_error"] == [n for n in NODES if n != "h4"]


def test_a_single_low_partner_is_only_a_suspect() -> None:
    results = run([[("h1", "h2"), ("h3", "h4")]], slow_nodes={"h2"})
    a = attribute(results, 200.0)
    assert a.bad_nodes == () and set(a.suspects) == {"h1", "h2"}


def test_unreachable_hosts_are_missing_not_bad() -> None:
    a = attribute(run(all_pairs(NODES), unreachable={"h6"}), 200.0)
    assert a.missing == ("h6",) and a.bad_nodes == () and a.errors == ()


def test_latency_outlier_pairs() -> None:
    results = []
    for index, pairs in enumerate(all_pairs(NODES)):
        for s, c in pairs:
            typical = 1.7 * (2.0 if "h2" in (s, c) else 1.0)
            results.append(PairResult(s, c, "ib_write_lat", 2, None, None,
                                      {"lat_typical_us": typical, "lat_p99_us": typical * 1.3}, None, index,
                                      "", "", 0.1))
    a = attribute(results, None)
    assert a.bad_nodes == ("h2",)
