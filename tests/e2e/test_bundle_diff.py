"""End to end: `rdmatool bundle diff` on two collections of the simulated fabric over real SSH, with a configuration
change between them (an MTU fault and a PFC fault injected after the first), and a bundle against itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rdmatool import schemas
from tests.e2e.helpers import collect, rdmatool
from tests.fabric.fixtures import fabric_fixture

pytestmark = pytest.mark.e2e

fabric = fabric_fixture("healthy", scope="module")
NODES = "gpu[01-04]"


@pytest.fixture(scope="module")
def nights(fabric, tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("nights")
    first = collect(fabric, tmp / "a", "--interval", "1", "--limit", NODES)
    assert first.returncode == 0, first.stderr
    fabric.set_fault("mtu_1024", "gpu02", nic="mlx5_1")
    fabric.set_fault("pfc_mismatch", "gpu03", nic="mlx5_1", value=4)
    try:
        second = collect(fabric, tmp / "b", "--interval", "1", "--limit", NODES)
    finally:
        fabric.reset()
    assert second.returncode == 0, second.stderr
    return tmp / "a", tmp / "b"


def test_the_injected_changes_are_named_and_exit_1(nights) -> None:
    a, b = nights
    result = rdmatool("bundle", "diff", str(a), str(b), "--format", "json")
    assert result.returncode == 1, result.stderr
    payload = json.loads(result.stdout)
    assert payload["schema"] == "rdmatool-bundle-diff/1" and schemas.errors("bundle-diff", payload) == []
    config = {(c["target"], c["setting"], c["before"], c["after"]) for c in payload["config"]}
    assert ("gpu02", "active_mtu", 4096, 1024) in config
    assert ("gpu03", "pfc_priorities", "3", "4") in config
    # nothing else about the configuration changed between the two nights
    assert {(t, s) for t, s, _, _ in config} <= {("gpu02", "active_mtu"), ("gpu03", "pfc_priorities")}
    assert payload["targets"]["added"] == payload["targets"]["removed"] == payload["targets"]["unreachable"] == []
    assert payload["cabling"] == []
    text = rdmatool("bundle", "diff", str(a), str(b))
    assert text.returncode == 1 and "active_mtu" in text.stdout and "pfc_priorities" in text.stdout


def test_a_bundle_against_itself_has_no_change(nights) -> None:
    a, _ = nights
    result = rdmatool("bundle", "diff", str(a), str(a), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["changes"] == 0
