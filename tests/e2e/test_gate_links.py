"""End to end: the gate's judgement of links on the simulated fabric over the real sshd. A rail disabled on one
node while its peers' is up fails the state stage and drains that node alone; a flapping cable whose switch port
counts errors too is one finding naming both ends of the cable, behind a leaf of each switch OS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.helpers import rdmatool
from tests.fabric.fixtures import fabric_fixture

pytestmark = pytest.mark.e2e

fabric = fabric_fixture("healthy", scope="module")
PROFILE = "counters_window_s: 2\nbandwidth: {enabled: false}\n"


@pytest.fixture
def clean(fabric):
    fabric.clear_faults()
    yield fabric
    fabric.reset()


def gate(fab, tmp_path: Path):
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE)
    drain = tmp_path / "drain.txt"
    result = rdmatool("gate", "-i", str(fab.inventory_path), "--known-hosts", str(fab.known_hosts), "--profile",
                      str(profile), "--json", "--drain-file", str(drain), timeout=400)
    assert "Traceback" not in result.stderr, result.stderr
    return result, json.loads(result.stdout), drain.read_text().split()


def test_a_disabled_rail_fails_the_state_stage_and_drains_its_node(clean, tmp_path: Path) -> None:
    clean.set_fault("port_disabled", "gpu03", nic="mlx5_1")
    result, payload, drained = gate(clean, tmp_path)
    assert result.returncode == 1, payload["stages"]
    assert drained == ["gpu03"] and payload["drain"] == ["gpu03"]
    assert [(r["node"], r["stage"], r["rule"], r["entity"]) for r in payload["drain_reasons"]] == [
        ("gpu03", "state", "port_disabled_while_peers_active", "mlx5_1/1")]
    assert {s["name"]: s["status"] for s in payload["stages"]}["state"] == "failed"
    (finding,) = [f for f in payload["findings"] if f["rule"] == "port_disabled_while_peers_active"]
    assert finding["check"].startswith("ibstat mlx5_1 1 (State, Physical state); mlxlink -d mlx5_1 -p 1;")


@pytest.mark.parametrize("platform", ["sonic", "cumulus", "onyx", "eos", "nxos"])
def test_a_bad_cable_counted_at_both_ends_is_one_finding(clean, tmp_path: Path, platform: str) -> None:
    platforms = {s.name: s.platform for s in clean.scenario.switches}
    link = next(k for k in clean.scenario.links  # a RoCE cable to a leaf of that NOS (each reports receive errors)
                if platforms[k.switch] == platform and k.host.startswith("gpu") and k.nic == "mlx5_1")
    clean.set_fault("flapping_cable", link.host, nic="mlx5_1")
    result, payload, drained = gate(clean, tmp_path)
    assert result.returncode == 1 and drained == [link.host]
    physical = [(f["rule"], f["target"], f["entity"]) for f in payload["findings"]
                if f["rule"] in ("cable_errors_both_ends", "cable_errors_host_end", "switch_port_errors_growing",
                                 "eth_crc_errors_growing", "fec_uncorrectable_growing", "ib_symbol_errors_growing")]
    assert physical == [("cable_errors_both_ends", link.host, "mlx5_1/1")]
    (finding,) = [f for f in payload["findings"] if f["rule"] == "cable_errors_both_ends"]
    assert f"{link.host} mlx5_1/1" in finding["symptom"] and f"{link.switch} {link.switch_port}" in finding["symptom"]
