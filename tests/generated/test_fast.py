"""Generated fabrics, fixed seeds: healthy ones are silent, each fault of the catalogue is named on its target and
nothing else warns (tests/generated/cases.py). The slow files run the same on 200 more fabrics."""

from __future__ import annotations

import pytest

from tests.generated.cases import assert_fault_named, assert_healthy
from tests.generated.faults import CATALOGUE
from tests.generated.generate import generate


@pytest.mark.parametrize("seed", range(8))
def test_a_healthy_generated_fabric_gives_no_warning(seed, tmp_path):
    assert_healthy(seed, tmp_path)


@pytest.mark.parametrize("nos", ["sonic", "cumulus", "onyx", "eos", "nxos"])
def test_a_healthy_leaf_spine_fabric_of_each_nos_gives_no_warning(nos, tmp_path):
    for seed in range(40):  # the first seed whose fabric has spines cabled to every leaf, in this NOS alone
        fabric = generate(seed, link_layer="Ethernet", nos=nos)
        if sum(s.role == "spine" for s in fabric.switches) >= 2:
            break
    from tests.generated.judge import diagnose, healthy_problems

    problems = healthy_problems(diagnose(fabric, tmp_path))
    assert problems is None, f"{fabric.describe()}\n{problems}"


@pytest.mark.parametrize("name", [fault.name for fault in CATALOGUE if fault.fast])
def test_each_fault_is_named_on_its_target_alone(name, tmp_path):
    assert_fault_named(name, 1, tmp_path)


def test_the_catalogue_holds_at_least_fifteen_faults():
    assert len(CATALOGUE) >= 15
    assert len({fault.name for fault in CATALOGUE}) == len(CATALOGUE)


def test_a_seed_gives_the_same_fabric_every_time():
    from tests.generated.bundle_writer import _targets

    a, b = generate(7), generate(7)
    assert a.describe() == b.describe()
    assert [fn(0.0) for _, fn in _targets(a)] == [fn(0.0) for _, fn in _targets(b)]
