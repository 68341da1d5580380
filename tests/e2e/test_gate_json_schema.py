"""End to end: `rdmatool gate --json` on the simulated fabric conforms to its shipped schema (with a node to drain,
its reason and every stage), and so does `diagnose --format json` of the bundle the gate saved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rdmatool import schemas
from tests.e2e.helpers import rdmatool
from tests.fabric.fixtures import fabric_fixture

pytestmark = pytest.mark.e2e

fabric = fabric_fixture("healthy", scope="module")
PROFILE = "counters_window_s: 1\nbandwidth: {enabled: true, rounds: 2, duration_s: 1}\n"


def test_gate_json_conforms_to_its_schema(fabric, tmp_path: Path) -> None:
    fabric.clear_faults()
    fabric.set_fault("port_down", "gpu03", nic="mlx5_0")
    try:
        profile = tmp_path / "profile.yaml"
        profile.write_text(PROFILE)
        result = rdmatool("gate", "-i", str(fabric.inventory_path), "--known-hosts", str(fabric.known_hosts),
                          "--profile", str(profile), "--json", "--save", str(tmp_path / "saved"), timeout=400)
    finally:
        fabric.clear_faults()
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["schema"] == schemas.tag("gate")
    assert schemas.errors("gate", document) == []
    assert document["drain"] == ["gpu03"] and document["drain_reasons"] and document["stages"]
    diagnosed = rdmatool("diagnose", str(tmp_path / "saved"), "--format", "json")
    assert diagnosed.returncode == 1, diagnosed.stderr
    diagnosis = json.loads(diagnosed.stdout)
    assert schemas.errors("diagnose", diagnosis) == [] and "gpu03" in diagnosis["drain"]
