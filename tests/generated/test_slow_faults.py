"""The slow suite's faults: every fault of the catalogue on more generated fabrics."""

from __future__ import annotations

import pytest

from tests.generated.cases import SLOW_FAULT_SEEDS, assert_fault_named
from tests.generated.faults import CATALOGUE


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW_FAULT_SEEDS)
@pytest.mark.parametrize("name", [fault.name for fault in CATALOGUE])
def test_each_fault_is_named_on_its_target_alone(name, seed, tmp_path):
    assert_fault_named(name, seed, tmp_path)
