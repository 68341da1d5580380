"""Schedules: every node at most once per round; all-pairs covers every unordered pair exactly once."""

from __future__ import annotations

import itertools

import pytest

from rdmatool.perf.schedule import all_pairs, confirmation_round, gate_rounds, ring, split_conflicts


def names(n: int) -> list[str]:
    return [f"n{i:02d}" for i in range(n)]


def assert_disjoint(rounds: list[list[tuple[str, str]]]) -> None:
    for pairs in rounds:
        seen = [x for pair in pairs for x in pair]
        assert len(seen) == len(set(seen)), pairs
        assert all(a != b for a, b in pairs)


@pytest.mark.parametrize("n", range(2, 18))
def test_all_pairs_is_a_one_factorisation(n: int) -> None:
    nodes = names(n)
    rounds = all_pairs(nodes)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    assert_disjoint(rounds)
    covered = [frozenset(p) for pairs in rounds for p in pairs]
    assert len(covered) == len(set(covered)) == n * (n - 1) // 2
    assert set(covered) == {frozenset(p) for p in itertools.combinations(nodes, 2)}
    for pairs in rounds:  # every node in exactly one pair (odd n: exactly one idles)
        busy = {x for p in pairs for x in p}
        assert len(busy) == (n if n % 2 == 0 else n - 1)


def test_all_pairs_balances_server_and_client_roles() -> None:
    servers = [s for pairs in all_pairs(names(8)) for s, _ in pairs]
    counts = {n: servers.count(n) for n in names(8)}
    assert max(counts.values()) - min(counts.values()) <= 1


@pytest.mark.parametrize("n", range(2, 18))
def test_ring_covers_each_neighbour_pair_in_the_fewest_rounds(n: int) -> None:
    nodes = names(n)
    rounds = ring(nodes)
    assert_disjoint(rounds)
    pairs = [p for r in rounds for p in r]
    expected = {(nodes[i], nodes[(i + 1) % n]) for i in range(n)} if n > 2 else {(nodes[0], nodes[1])}
    assert set(pairs) == expected and len(pairs) == len(expected)
    assert len(rounds) == (1 if n == 2 else 2 if n % 2 == 0 else 3)


@pytest.mark.parametrize("n", [2, 3, 4, 7, 8, 16, 17])
def test_gate_rounds_give_distinct_partners(n: int) -> None:
    nodes = names(n)
    rounds = gate_rounds(nodes, rounds=3, seed=1)
    assert len(rounds) == min(3, n - 1 if n % 2 == 0 else n)
    assert_disjoint(rounds)
    pairs = [frozenset(p) for r in rounds for p in r]
    assert len(pairs) == len(set(pairs))  # never the same partner twice
    if n >= 4:
        for node in nodes:
            assert sum(node in p for p in pairs) >= 2
    assert gate_rounds(nodes, 3, seed=1) == rounds  # deterministic per seed


def test_confirmation_round_pairs_suspects_with_good_peers() -> None:
    pairs = confirmation_round(["s1", "s2", "s3"], ["g1", "g2"])
    assert [c for _, c in pairs] == ["s1", "s2", "s3"]
    assert {s for s, _ in pairs} <= {"g1", "g2"}
    assert confirmation_round(["s1"], []) == []
    subrounds = split_conflicts(pairs)
    assert_disjoint(subrounds)
    assert sorted(p for r in subrounds for p in r) == sorted(pairs)


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError):
        all_pairs(["a", "b", "a"])
