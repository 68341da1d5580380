"""Topology-aware schedules: every leaf pair crossed, rail-aligned pairs on every rail, no node twice in a round,
and a confirmation that keeps a suspect off the path already seen slow."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from rdmatool.perf import schedule
from rdmatool.topology import Link, placement
from tests.perf import fabric_model


def leaves(hosts: int, n_leaves: int) -> dict[str, str]:
    return schedule.host_leaf(placement(fabric_model.links(hosts, n_leaves)))


def assert_disjoint(rounds) -> None:
    for pairs in rounds:
        ends = [n for pair in pairs for n in pair]
        assert len(ends) == len(set(ends)), pairs
        assert all(a != b for a, b in pairs)


@pytest.mark.parametrize(("hosts", "n_leaves"), [(64, 4), (64, 16), (12, 3), (9, 3), (10, 5), (7, 2), (5, 5)])
def test_every_leaf_pair_is_crossed_twice_and_the_first_round_stays_within_leaves(hosts: int, n_leaves: int) -> None:
    leaf_of = leaves(hosts, n_leaves)
    rounds = schedule.topology_rounds(leaf_of, rounds=3, seed=7)
    assert len(rounds) >= 3
    assert_disjoint(rounds)
    crossed = Counter(schedule.leaf_pair(leaf_of, a, b) for pairs in rounds for a, b in pairs)
    wanted = schedule.leaf_pairs(leaf_of)
    assert len(wanted) == n_leaves * (n_leaves - 1) // 2
    assert all(crossed[lp] >= 2 for lp in wanted), {tuple(sorted(lp)): crossed[lp] for lp in wanted}
    first = rounds[0]
    by_leaf = Counter(leaf_of.values())
    within = sum(1 for a, b in first if leaf_of[a] == leaf_of[b])
    assert within == sum(count // 2 for count in by_leaf.values())
    for pairs in rounds:  # every round is as full as the node count allows
        assert len(pairs) == hosts // 2


def test_64_nodes_on_4_leaves_cross_every_leaf_pair_in_three_rounds_with_fresh_partners() -> None:
    leaf_of = leaves(64, 4)
    rounds = schedule.topology_rounds(leaf_of, rounds=3, seed=0)
    assert len(rounds) == 3
    pairs = [frozenset(p) for r in rounds for p in r]
    assert len(pairs) == len(set(pairs)) == 96  # never the same pair twice
    for pairs_of_round in rounds[1:]:  # each cross round alone crosses all six leaf pairs, 5 or 6 pairs each
        crossed = Counter(schedule.leaf_pair(leaf_of, a, b) for a, b in pairs_of_round)
        assert None not in crossed and sorted(crossed.values()) == [5, 5, 5, 5, 6, 6]
    assert schedule.topology_rounds(leaf_of, rounds=3, seed=0) == rounds  # deterministic per seed
    assert schedule.topology_rounds(leaf_of, rounds=3, seed=1) != rounds


def test_more_rounds_than_asked_when_the_leaf_pairs_need_them_and_max_rounds_caps_it() -> None:
    leaf_of = leaves(64, 16)  # 120 leaf pairs, 32 pairs per round: 240 crossings need 8 cross rounds at least
    rounds = schedule.topology_rounds(leaf_of, rounds=3)
    assert 9 <= len(rounds) <= 11
    assert len(schedule.topology_rounds(leaf_of, rounds=3, max_rounds=4)) == 4


def test_nodes_without_known_cabling_still_get_partners() -> None:
    leaf_of = {**leaves(8, 2), "x1": schedule.UNKNOWN_LEAF, "x2": schedule.UNKNOWN_LEAF}
    rounds = schedule.topology_rounds(leaf_of, rounds=3)
    assert_disjoint(rounds)
    assert all(any("x1" in p for p in pairs) for pairs in rounds)
    assert schedule.leaf_pair(leaf_of, "x1", "h00") is None


def test_rail_plan_pairs_nic_k_with_nic_k_on_every_rail_and_rail_kinds_are_covered() -> None:
    cabling = fabric_model.links(16, 4, rails=2) + [Link("solo", "mlx5_9", "leaf01")]  # a NIC no other host has
    pl = placement(cabling)
    rails = schedule.rails(pl)
    assert sorted(rails) == ["mlx5_0", "mlx5_1"]
    plan = schedule.rail_plan(pl, rounds=3)
    assert sorted(plan) == ["mlx5_0", "mlx5_1"]
    for rail, rounds in plan.items():
        assert_disjoint(rounds)
        hosts = {n for pairs in rounds for p in pairs for n in p}
        assert hosts == set(rails[rail])  # every host with that NIC, nobody else
        kinds = {frozenset((rails[rail][a], rails[rail][b])) for pairs in rounds for a, b in pairs}
        all_kinds = {frozenset(x) for x in itertools.combinations_with_replacement(sorted(set(rails[rail].values())), 2)}
        assert kinds == all_kinds  # every (switch of NIC k, switch of NIC k) combination is tested
    assert plan["mlx5_0"] != plan["mlx5_1"]  # each rail its own partners


def test_host_leaf_prefers_the_device_then_the_shared_switch_then_the_first_nic() -> None:
    pl = {"a": {"mlx5_0": "r0", "mlx5_1": "r1"}, "b": {"mlx5_0": "l1", "mlx5_1": "l1"}, "c": {}}
    assert schedule.host_leaf(pl) == {"a": "r0", "b": "l1"}
    assert schedule.host_leaf(pl, device="mlx5_1") == {"a": "r1", "b": "l1"}


def test_topology_confirmation_stays_within_the_leaf_then_off_the_slow_path() -> None:
    leaf_of = {"a1": "A", "a2": "A", "b1": "B", "b2": "B", "c1": "C"}
    low = [frozenset(("a1", "b1"))]
    pairs = schedule.topology_confirmation(["a1", "b1"], ["a2", "b2", "c1"], leaf_of, low)
    assert pairs == [("a2", "a1"), ("b2", "b1")]
    # no good node on its own leaf: one on a leaf its leaf had no low pair with, never across the slow path
    pairs = schedule.topology_confirmation(["a1"], ["b2", "c1"], leaf_of, low)
    assert pairs == [("c1", "a1")]
    # only the far side of the slow path is left: still confirmed (the attribution decides)
    assert schedule.topology_confirmation(["a1"], ["b2"], leaf_of, low) == [("b2", "a1")]
    assert schedule.topology_confirmation(["a1"], [], leaf_of, low) == []


def test_confirmation_for_picks_suspects_and_good_from_statuses() -> None:
    statuses = {frozenset(("a1", "b1")): "low", frozenset(("a2", "b2")): "ok", frozenset(("c1", "x")): "error"}
    nodes = ["a1", "a2", "b1", "b2", "c1", "x", "idle"]
    assert schedule.suspects_and_good(statuses, nodes) == (["a1", "b1", "c1", "x"], ["a2", "b2"])
    leaf_of = {"a1": "A", "a2": "A", "b1": "B", "b2": "B", "c1": "C", "x": "C"}
    confirm = schedule.confirmation_for(statuses, nodes, leaf_of)
    assert [c for _, c in confirm] == ["a1", "b1", "c1", "x"]
    assert dict((c, s) for s, c in confirm)["a1"] == "a2"
    assert all(s in ("a2", "b2") for s, _ in confirm)
    random_confirm = schedule.confirmation_for(statuses, nodes)  # without cabling: the engine's old behaviour
    assert random_confirm == schedule.confirmation_pairs(["a1", "b1", "c1", "x"], ["a2", "b2"], set(statuses))
