"""Storage reads (rdmatool.perf.storage): each storage node driven by a stated number of clients at once, no client
serving two nodes in one round, the clients rotating between rounds; per node its delivery against its line rate,
a node far below the fleet's median named slow, the fleet's efficiency beside the reference's."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rdmatool.perf import storage
from rdmatool.perf.model import PairResult, PerfOptions

CLIENTS = [f"gpu{i:02d}" for i in range(1, 7)]
NODES = ["stor01", "stor02", "stor03", "stor04"]


def test_each_node_gets_its_clients_at_once_and_no_client_serves_two_in_a_round() -> None:
    rounds = storage.plan(NODES, CLIENTS, 3)
    assert [[g.receiver for g in r] for r in rounds] == [["stor01", "stor02"], ["stor03", "stor04"]]
    for groups in rounds:
        used = [c for g in groups for c in g.senders]
        assert len(used) == len(set(used)) and all(len(g.senders) == 3 for g in groups)
    # the second round starts three clients on: stor03 is not read by the clients that read stor01
    assert rounds[0][0].senders == ("gpu01", "gpu02", "gpu03") and rounds[1][0].senders == ("gpu04", "gpu05", "gpu06")


def test_fewer_clients_than_asked_and_bad_plans() -> None:
    [[only]] = storage.plan(["stor01"], ["gpu01", "gpu02"], 8)
    assert only.senders == ("gpu01", "gpu02")
    with pytest.raises(ValueError, match="at least 1"):
        storage.plan(NODES, CLIENTS, 0)
    with pytest.raises(ValueError, match="0 clients"):
        storage.plan(NODES, ["stor01"], 2)  # a storage node is never its own client


def result(node: str, client: str, gbps: float | None, error: str | None = None) -> PairResult:
    return PairResult(node, client, "ib_read_bw", 65536, gbps, gbps, None, error, 0, "", "", 10.0)


def test_a_slow_node_is_named_and_the_fleet_is_judged_against_the_reference() -> None:
    rounds = storage.plan(NODES, CLIENTS, 3)
    delivered = {"stor01": 110.0, "stor02": 108.0, "stor03": 60.0, "stor04": 111.0}  # per client; 400 Gb/s nodes
    results = [result(g.receiver, c, delivered[g.receiver]) for r in rounds for g in r for c in g.senders]
    out = storage.figures(rounds, results, dict.fromkeys(NODES, 400.0), reference_efficiency=0.806)
    by_node = {n["node"]: n for n in out["nodes"]}
    assert by_node["stor03"]["slow"] and not any(by_node[n]["slow"] for n in ("stor01", "stor02", "stor04"))
    assert by_node["stor01"]["delivered_gbps"] == 330 and by_node["stor01"]["share"] == pytest.approx(0.825)
    fleet = out["fleet"]
    assert fleet["aggregate_gbps"] == pytest.approx(3 * (110 + 108 + 60 + 111))
    assert fleet["efficiency"] == pytest.approx(1167 / 1600) and fleet["below_reference"] is True


def test_a_node_with_a_client_that_failed_is_not_counted_nor_called_slow() -> None:
    rounds = storage.plan(["stor01", "stor02"], CLIENTS, 3)
    results = [result(g.receiver, c, 130.0) for r in rounds for g in r for c in g.senders]
    results[0] = result("stor01", "gpu01", None, "client gpu01: connection refused")
    out = storage.figures(rounds, results, {"stor01": 400.0, "stor02": 400.0})
    first = out["nodes"][0]
    assert not first["complete"] and not first["slow"] and first["errors"] == {"gpu01": "client gpu01: connection refused"}
    assert out["fleet"]["nodes_measured"] == 1 and out["fleet"]["below_reference"] is None


def test_run_takes_the_rounds_in_turn_and_skips_what_the_deadline_leaves_no_time_for(monkeypatch) -> None:
    rounds = storage.plan(NODES, CLIENTS, 3)
    ran = []
    monkeypatch.setattr(storage.incast, "run", lambda session, groups, deadline: ran.append(groups) or [
        result(g.receiver, c, 100.0) for g in groups for c in g.senders])
    session = SimpleNamespace(options=PerfOptions(test="ib_read_bw"))
    assert len(storage.run(session, rounds)) == 12 and ran == rounds
    late = storage.run(session, rounds, deadline=0.0)
    assert len(late) == 12 and all(r.error and "deadline" in r.error for r in late)
