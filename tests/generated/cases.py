"""The seeds the suite runs, and the one assertion of each kind, shared by the fast and the slow files.

A failure prints the fabric (tests/generated/model.Fabric.describe) with its seed; replay it with
`python -m tests.generated SEED` (healthy) or `python -m tests.generated SEED FAULT`."""

from __future__ import annotations

import pytest

from tests.generated.generate import generate
from tests.generated.judge import FAULTS, diagnose, fault_problems, faulted, healthy_problems

SLOW_HEALTHY = 120  # generated healthy fabrics in the slow suite, over its shard files (CI time: 20 minutes)
SLOW_FAULT_SEEDS = (11, 12)  # each fault of the catalogue on these seeds' fabrics


def assert_healthy(seed: int, where) -> None:
    fabric = generate(seed)
    problems = healthy_problems(diagnose(fabric, where))
    assert problems is None, f"{fabric.describe()} (replay: python -m tests.generated {seed})\n{problems}"


def assert_fault_named(name: str, seed: int, where) -> None:
    got = faulted(FAULTS[name], seed)
    if got is None:
        pytest.skip(f"{name} fits no fabric of seed {seed}")
    fabric, injected = got
    problems = fault_problems(diagnose(fabric, where), injected)
    assert problems is None, (f"{name} on {injected[0]} in {fabric.describe()} "
                              f"(replay: python -m tests.generated {seed} {name})\n{problems}")


def shard(index: int, of: int) -> list[int]:
    return [seed for seed in range(1000, 1000 + SLOW_HEALTHY) if seed % of == index]
