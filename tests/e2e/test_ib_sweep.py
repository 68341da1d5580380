"""End to end: the InfiniBand fabric swept from one host, through the real collector and sshd.

A small fat tree (2 spines, 2 leaves, 4 hosts with one InfiniBand port each), whose switches answer only through the
subnet. In every snapshot one host per subnet runs the four sweep tools (sminfo, ibnetdiscover -p, iblinkinfo,
ibqueryerrors); the bundle's manifest names it (`subnet_sweeps`). Faults of the subnet show in the outputs; a host
whose tools fail hands the subnet to another; a slow subnet gives a partial sweep, named as such.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool import bundle as bundle_io
from rdmatool import commands, parsers
from rdmatool.bundle.manifest import read_manifest, subnet_sweeps
from tests.e2e.helpers import collect
from tests.fabric import scenario as scenario_mod
from tests.fabric.fixtures import sim_fabric

pytestmark = pytest.mark.e2e

IB = {"link_layer": "InfiniBand", "rate_gbps": 400, "width": "4X", "mtu": 4096, "firmware": "28.39.1002",
      "board_id": "MT_0000000838", "hca_type": "MT4129"}
LEAF1, LEAF2 = "MF0;ib-leaf01:MQM9790/U1", "MF0;ib-leaf02:MQM9790/U1"
SPINE2 = "MF0;ib-spine02:MQM9790/U1"
# leaf port 3 goes up to spine01, port 4 to spine02; the leaves are spine ports 1 and 2
FAULTS = [{"kind": "ib_port_errors", "target": "ib-leaf01", "port": 3},
          {"kind": "ib_link_degraded", "target": "ib-leaf02", "port": 4, "value": "1X"},
          {"kind": "ib_uplink_congested", "target": "ib-leaf01", "port": 4},
          {"kind": "ib_cable_gone", "target": "ib-leaf02", "port": 3}]


def fat_tree() -> scenario_mod.Scenario:
    return scenario_mod.from_dict({
        "name": "ib-fat-tree",
        "hosts": [{"name": "gpu[01-04]", "address": "127.0.1.[1-4]",
                   "nics": [{"device": "mlx5_0", "netdev": "ibp24s0", **IB}]}],
        "ib_switches": [{"name": "ib-leaf01", "ports": 4}, {"name": "ib-leaf02", "ports": 4},
                        {"name": "ib-spine01", "ports": 2}, {"name": "ib-spine02", "ports": 2}],
        "links": [{"host": f"gpu0{i}", "nic": "mlx5_0", "switch": "ib-leaf01" if i <= 2 else "ib-leaf02",
                   "switch_port": str(2 - i % 2)} for i in range(1, 5)],
        "ib_links": [{"switch": f"ib-leaf0{leaf}", "port": 2 + spine, "peer": f"ib-spine0{spine}", "peer_port": leaf}
                     for leaf in (1, 2) for spine in (1, 2)],
        "faults": FAULTS,
    })


@pytest.fixture(scope="module")
def fabric():
    with sim_fabric(fat_tree()) as fab:
        yield fab


@pytest.fixture(autouse=True)
def _reset(fabric):
    yield
    fabric.reset()


def sweep_outputs(bundle: Path) -> dict[tuple[int, str], list]:
    """(snapshot, parser) → the entries of the sweep's outputs."""
    out: dict[tuple[int, str], list] = {}
    for e in bundle_io.read(bundle).entries:
        if e.result.parser in commands.SUBNET_SWEEP:
            out.setdefault((e.snapshot, e.result.parser), []).append(e)
    return out


def readings(entry) -> dict[tuple[str, str], object]:
    return {(s.entity, s.metric): s.value if s.text is None else s.text
            for s in parsers.parse(entry.result.parser, entry.result.stdout)}


def test_every_snapshot_sweeps_the_subnet_from_one_host_with_its_faults(fabric, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    done = collect(fabric, bundle, "--interval", "1")
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    found = sweep_outputs(bundle)
    assert set(found) == {(i, t) for i in (0, 1) for t in commands.SUBNET_SWEEP}
    assert all(len(entries) == 1 and entries[0].result.error is None for entries in found.values()), found
    assert found[(0, "ibqueryerrors")][0].result.exit_code == 1  # it found errors, as the real tool says so
    hosts = {entries[0].target for entries in found.values()}
    assert len(hosts) == 1 and hosts <= {"gpu01", "gpu02", "gpu03", "gpu04"}  # one vantage point for the subnet
    (host,) = hosts
    assert {entries[0].result.qualifier for entries in found.values()} == {"mlx5_0.1"}
    record = subnet_sweeps(read_manifest(bundle))
    assert [(r["sm_lid"], r["snapshot"], r["host"], r["complete"], r["tried"]) for r in record] == [
        (1, 0, host, True, []), (1, 1, host, True, [])]
    # the faults, each where it shows; the symbol errors grow between the two snapshots (a rate for a switch port)
    errors = [readings(found[(i, "ibqueryerrors")][0]) for i in (0, 1)]
    assert errors[1][(f"{LEAF1}/3", "symbol_errors")] > errors[0][(f"{LEAF1}/3", "symbol_errors")] > 0
    assert errors[0][(f"{LEAF1}/3", "link_downed")] > 0 and errors[0][(f"{LEAF1}/4", "port_xmit_wait")] > 0
    links = [readings(found[(i, "ibnetdiscover")][0]) for i in (0, 1)]
    assert links[0][(f"{LEAF2}/4", "ib_link_width")] == "1X" and links[0][(f"{SPINE2}/2", "ib_link_width")] == "1X"
    assert (f"{LEAF2}/3", "ib_link_neighbor") in links[0] and (f"{LEAF2}/3", "ib_link_neighbor") not in links[1]
    assert readings(found[(0, "sminfo")][0])[("lid1", "sm_state")] == "master"
    linkinfo = readings(found[(1, "iblinkinfo")][0])
    assert linkinfo[(f"{LEAF2}/4", "ib_link_rate_gbps")] == 100.0


def test_a_host_without_the_tools_hands_the_subnet_on_and_a_cut_sweep_is_named_partial(fabric, tmp_path) -> None:
    """gpu01 (asked first: one host after the other) has no sweep tool: gpu02 takes the subnet over, with what is
    left of the snapshot's budget (8 s: gpu01's refusal takes seconds of it on a loaded machine), and the subnet's
    slow agents (5 s for each tool that walks it) let that budget cut it before the sweep is whole."""
    for tool in commands.SUBNET_SWEEP:
        fabric.set_fault("missing_tool", "gpu01", tool=tool)
    fabric.set_fault("ib_slow_sweep", "ib-leaf01", value=5.0)
    config = tmp_path / "rdmatool.yaml"
    config.write_text("limits:\n  subnet_sweep_s: 8\n")
    bundle = tmp_path / "bundle"
    done = collect(fabric, bundle, "--interval", "0", "--forks", "1", "--limit", "gpu[01-02]",
                   env={"RDMATOOL_CONFIG": str(config)})
    assert "Traceback" not in done.stderr, done.stderr
    manifest = read_manifest(bundle)
    (record,) = subnet_sweeps(manifest)
    assert record["host"] == "gpu02" and record["tried"] == [
        {"host": "gpu01", "error": "no subnet sweep tool installed on gpu01"}], record
    assert not record["complete"] and record["partial"].startswith("partial subnet sweep of SM lid 1 from gpu02")
    assert record["tools"][0] == "sminfo" and len(record["tools"]) < len(commands.SUBNET_SWEEP)
    good = {(parser, e.target) for (_, parser), entries in sweep_outputs(bundle).items() for e in entries
            if e.result.error is None and e.result.exit_code in (0, 1)}
    assert good == {(tool, "gpu02") for tool in record["tools"]}  # one host's outputs, what it read in full
    named = [f for f in manifest["failures"] if "partial subnet sweep" in (f.get("error") or "")]
    assert {f["parser"] for f in named} == set(commands.SUBNET_SWEEP) - set(record["tools"])
    assert {f["target"] for f in named} == {"gpu02"}  # the failures `bundle show` and `diagnose` list
    assert all(f["error"].startswith("partial subnet sweep of SM lid 1 from gpu02: the budget of 8 s") for f in named)
