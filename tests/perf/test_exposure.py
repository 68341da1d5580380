"""Exposure computed from a schedule against a brute-force count: every possible single fault of small fabrics
injected into the fabric model, the plan run with its confirmation round, attributed and localised."""

from __future__ import annotations

import random

import pytest

from rdmatool.perf import exposure, schedule
from rdmatool.perf.localise import localise
from rdmatool.topology import placement
from tests.perf import fabric_model

PLANNERS = {
    "topology": lambda leaf_of, i: schedule.topology_rounds(leaf_of, 3, seed=i),
    "topology-1-round": lambda leaf_of, i: schedule.topology_rounds(leaf_of, 1, seed=i, max_rounds=1),
    "random": lambda leaf_of, i: schedule.gate_rounds(list(leaf_of), 3, seed=i),
    "random-1-round": lambda leaf_of, i: schedule.gate_rounds(list(leaf_of), 1, seed=i + 3),
    "ring-half": lambda leaf_of, i: schedule.ring(sorted(leaf_of))[:1],
    "all-pairs": lambda leaf_of, i: schedule.all_pairs(sorted(leaf_of)),
}


def plan_of(hosts: int, leaves: int, rails: int, planner: str):
    fabric = schedule.rails(placement(fabric_model.links(hosts, leaves, rails)))
    plan = {rail: PLANNERS[planner](leaf_of, i) for i, (rail, leaf_of) in enumerate(fabric.items())}
    return plan, fabric


@pytest.mark.parametrize("planner", sorted(PLANNERS))
@pytest.mark.parametrize(("hosts", "leaves", "rails"), [(8, 2, 1), (9, 3, 1), (12, 3, 2), (10, 5, 2), (7, 7, 1),
                                                        (6, 2, 3)])
def test_computed_exposure_matches_the_attribution_on_every_single_fault(hosts, leaves, rails, planner) -> None:
    plan, fabric = plan_of(hosts, leaves, rails, planner)
    figures = exposure.exposure(plan, fabric)
    for kind, faults in exposure.candidates(fabric).items():
        brute = [fabric_model.detects(plan, fabric, kind, f) for f in faults]
        computed = [exposure.exposed(kind, f, plan, fabric) for f in faults]
        assert computed == brute, (kind, [exposure.name_of(kind, f) for f, b, c in zip(faults, brute, computed,
                                                                                          strict=True) if b != c])
        assert figures[kind]["faults"] == len(faults) and figures[kind]["exposed"] == sum(brute)
        if faults:
            assert figures[kind]["probability"] == round(sum(brute) / len(faults), 4)
        else:
            assert figures[kind]["probability"] is None


def test_the_brute_force_cases_include_partial_exposure() -> None:
    """The comparison above is not between two constant 100 %s: some plans miss some faults."""
    seen = set()
    for planner in PLANNERS:
        for hosts, leaves, rails in [(9, 3, 1), (10, 5, 2)]:
            plan, fabric = plan_of(hosts, leaves, rails, planner)
            figures = exposure.exposure(plan, fabric)
            seen |= {(k, figures[k]["probability"]) for k in exposure.KINDS}
    partial = {k for k, p in seen if p is not None and 0 < p < 1}
    assert {"bad_node", "bad_inter_leaf_link"} <= partial


def test_64_nodes_on_4_leaves_topology_plan_exposes_every_single_fault_in_three_rounds() -> None:
    plan, fabric = plan_of(64, 4, 2, "topology")
    figures = exposure.exposure(plan, fabric)
    assert figures["rounds"] == 3 and figures["pair_runs"] == 2 * 3 * 32
    for kind in exposure.KINDS:
        assert figures[kind]["probability"] == 1.0 and figures[kind]["not_exposed"] == []
    assert figures["bad_node"]["faults"] == 64 and figures["bad_inter_leaf_link"]["faults"] == 6
    assert figures["bad_rail_nic"]["faults"] == 128


def test_a_crossing_pair_is_not_enough_and_unexposed_faults_are_listed() -> None:
    leaf_of = {"a1": "A", "a2": "A", "b1": "B", "b2": "B"}
    fabric = {"r": leaf_of}
    one_cross = {"r": [[("a1", "b1"), ("a2", "b2")]]}  # both pairs cross, nobody is known-good within a leaf
    figures = exposure.exposure(one_cross, fabric)
    assert figures["bad_inter_leaf_link"] == {"faults": 1, "exposed": 0, "probability": 0.0,
                                              "not_exposed": ["A<->B"]}
    assert not fabric_model.detects(one_cross, fabric, "bad_inter_leaf_link", frozenset("AB"))
    with_intra = {"r": [[("a1", "a2"), ("b1", "b2")], *one_cross["r"]]}
    assert exposure.link_exposed(frozenset("AB"), with_intra, fabric)
    assert fabric_model.detects(with_intra, fabric, "bad_inter_leaf_link", frozenset("AB"))
    with pytest.raises(ValueError, match="unknown fault kind"):
        exposure.exposed("bad_cable", "x", with_intra, fabric)


def test_noise_far_from_the_pass_line_changes_nothing() -> None:
    plan, fabric = plan_of(16, 4, 2, "topology")
    rng = random.Random(3)
    runs, confirmed = fabric_model.run_plan(plan, fabric, "bad_rail_nic", ("h05", "mlx5_1"), rng)
    found = localise(runs, fabric)
    assert found.bad_nics == (("h05", "mlx5_1"),) and found.bad_nodes == () and found.bad_inter_leaf_links == ()
    assert confirmed >= 1
    runs, _ = fabric_model.run_plan(plan, fabric, "none", None, rng)
    assert localise(runs, fabric).as_dict() == {"bad_nodes": [], "bad_nics": [], "bad_inter_leaf_links": []}
