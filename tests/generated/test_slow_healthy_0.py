"""Shard 1 of 4 of the slow suite's generated healthy fabrics (one file each, so the workers share them)."""

from __future__ import annotations

import pytest

from tests.generated.cases import assert_healthy, shard


@pytest.mark.slow
@pytest.mark.parametrize("seed", shard(0, 4))
def test_a_generated_healthy_fabric_gives_no_warning(seed, tmp_path):
    assert_healthy(seed, tmp_path)
