"""End to end: exit codes that never lie, and the gate's whole drain list in one run, on the simulated fabric.

No data (nothing reachable, an empty selection, a bundle without outputs) is exit 3 with one line on stderr for
every command that judges; the gate exits 1 only with nodes to drain or a named fabric failure, and a stage that
breaks on bad input is inconclusive, never 1.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.e2e.helpers import collect, rdmatool, rewrite_inventory
from tests.fabric.fixtures import fabric_fixture
from tests.fabric.server import free_port

pytestmark = pytest.mark.e2e

fabric = fabric_fixture("healthy", scope="module")
PROFILE = "counters_window_s: 1\nbandwidth: {enabled: true, rounds: 3, duration_s: 1}\n"


def one_line(result) -> str:
    """The run's stderr, asserted to be exactly one line and no traceback (besides `rdmatool: note:` lines, which
    say what the selection assumed, e.g. a hosts-only --limit without cabling)."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("rdmatool: note: ")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def closed_ports(fab, path: Path) -> Path:
    """The fabric's inventory with every target on a port nobody listens on: all connections refused."""
    port = free_port()

    def close_all(data: dict) -> None:
        data.setdefault("defaults", {})["port"] = port
        for target in data["targets"]:
            target["port"] = port

    return rewrite_inventory(fab, path, close_all)


def gate(fab, tmp_path: Path, *extra: str, profile: str = PROFILE, inventory: Path | None = None):
    profile_file = tmp_path / "profile.yaml"
    profile_file.write_text(profile)
    return rdmatool("gate", "-i", str(inventory or fab.inventory_path), "--known-hosts", str(fab.known_hosts),
                    "--profile", str(profile_file), *extra, timeout=400)


def test_nothing_reachable_is_inconclusive_in_one_line(fabric, tmp_path: Path) -> None:
    inventory = closed_ports(fabric, tmp_path / "closed.yaml")
    known = ("--known-hosts", str(fabric.known_hosts))
    drain = tmp_path / "drain.txt"
    drain.write_text("gpu01\n")  # what an earlier run left: never to be acted on again
    # even with every target tolerated as missing: zero read is no data, not a pass
    gated = gate(fabric, tmp_path, "--json", "--drain-file", str(drain), "--allow-missing", "100", inventory=inventory)
    diagnosed = rdmatool("diagnose", "-i", str(inventory), *known, "--interval", "0")
    collected = collect(fabric, tmp_path / "bundle", "--interval", "0", inventory=inventory)
    saved = rdmatool("baseline", "save", str(tmp_path / "bundle"), "--store", str(tmp_path / "store"))
    for result in (gated, diagnosed, collected, saved):
        assert result.returncode == 3, (result.args, result.stderr)
        line = one_line(result)
        assert "no data" in line and str(inventory if result is not saved else tmp_path / "bundle") in line, line
        assert result.stdout == ""
    assert "connection refused" in one_line(gated)  # the first failure is quoted: the usual cause
    assert drain.read_text() == ""
    assert (tmp_path / "bundle" / "manifest.json").is_file()  # the failed night is still on record
    assert not (tmp_path / "store").exists() or not list((tmp_path / "store").iterdir())


def test_hosts_that_answer_nothing_through_sshd_are_inconclusive(fabric, tmp_path: Path) -> None:
    for target in fabric.targets:  # sshd accepts, the host prints nothing, the switch CLI never prompts
        fabric.set_fault("unreachable", target["name"])
    try:
        result = gate(fabric, tmp_path, "--limit", "gpu0[1-4]", profile="counters_window_s: 1\n")
    finally:
        fabric.clear_faults()
    assert result.returncode == 3, result.stderr
    assert "no data: none of the" in one_line(result)


def test_an_empty_selection_is_inconclusive(fabric, tmp_path: Path) -> None:
    emptied = [
        gate(fabric, tmp_path, "--limit", "gpu01", "--exclude", "gpu01"),
        rdmatool("diagnose", "-i", str(fabric.inventory_path), "--limit", "gpu01", "--exclude", "gpu01"),
        collect(fabric, tmp_path / "b", "--shard", f"{len(fabric.targets) + 1}/{len(fabric.targets) + 1}"),
    ]
    for result in emptied:
        assert result.returncode == 3, (result.args, result.stderr)
        assert "nothing to check" in one_line(result)
    assert not (tmp_path / "b").exists()


def test_a_bundle_without_outputs_is_inconclusive(fabric, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    first = collect(fabric, bundle, "--interval", "0", "--limit", "gpu0[1-2]")
    assert first.returncode == 0, first.stderr
    diagnosed = rdmatool("diagnose", str(bundle), "--format", "json")
    assert diagnosed.returncode == 0 and json.loads(diagnosed.stdout)["verdict"] == "pass"  # the real thing first
    for output in (bundle / "snapshots").rglob("*"):
        if output.is_file():
            output.unlink()
    (bundle / "samples.npz").unlink(missing_ok=True)
    for result in (rdmatool("diagnose", str(bundle), "--format", "json"),
                   rdmatool("baseline", "save", str(bundle), "--store", str(tmp_path / "store")),
                   rdmatool("gate", "--replay", str(bundle), "--json")):
        assert result.returncode == 3, (result.args, result.stderr)
        assert "no data" in one_line(result) and result.stdout == ""


@pytest.fixture(scope="module")
def two_bad_nodes(fabric, tmp_path_factory):
    """One gate run on a fabric with a port down on gpu03 (stage 1) and a slow gpu05 (the perftest stage)."""
    tmp = tmp_path_factory.mktemp("drain")
    fabric.clear_faults()
    fabric.set_fault("port_down", "gpu03", nic="mlx5_0")
    fabric.set_fault("slow_node", "gpu05", value=0.4)
    try:
        result = gate(fabric, tmp, "--json", "--drain-file", str(tmp / "drain.txt"), "--junit", str(tmp / "j.xml"),
                      "--save", str(tmp / "saved"))
    finally:
        fabric.clear_faults()
    assert "Traceback" not in result.stderr, result.stderr
    return result, json.loads(result.stdout), tmp


def test_one_run_drains_every_bad_node_with_its_stage_and_finding(two_bad_nodes) -> None:
    result, payload, tmp = two_bad_nodes
    assert result.returncode == 1, payload["stages"]
    assert payload["drain"] == ["gpu03", "gpu05"]
    assert (tmp / "drain.txt").read_text().split() == ["gpu03", "gpu05"]
    reasons = {(r["node"], r["stage"]): r for r in payload["drain_reasons"]}
    assert set(reasons) == {("gpu03", "state"), ("gpu05", "bandwidth")}
    findings = {(f["target"], f["rule"]) for f in payload["findings"] if f["severity"] in ("error", "critical")}
    assert ("gpu03", reasons["gpu03", "state"]["rule"]) in findings
    assert reasons["gpu05", "bandwidth"]["rule"] == "perf_bad_node"
    stages = {s["name"]: s for s in payload["stages"]}
    assert stages["state"]["status"] == "failed"
    # the bandwidth stage still ran, on everyone but the node stage 1 condemned
    assert stages["bandwidth"]["status"] == "failed" and stages["bandwidth"]["excluded"] == ["gpu03"]
    suites = {s.get("name"): s for s in ET.parse(tmp / "j.xml").getroot().findall("testsuite")}
    cases = {c.get("name"): c for c in suites["bandwidth"].findall("testcase")}
    assert cases["gpu03"].find("skipped") is not None and cases["gpu05"].find("failure") is not None


def test_the_saved_run_replays_to_the_same_drain_list(two_bad_nodes) -> None:
    _, payload, tmp = two_bad_nodes
    replayed = rdmatool("gate", "--replay", str(tmp / "saved"), "--json")
    assert replayed.returncode == 1, replayed.stderr
    again = json.loads(replayed.stdout)
    assert again["drain"] == payload["drain"] and again["drain_reasons"] == payload["drain_reasons"]


def test_bad_input_never_breaks_a_stage_into_a_failure(fabric, tmp_path: Path, two_bad_nodes) -> None:
    # live: a profile value of the wrong type is refused at load, before anything is collected (it once broke the
    # bandwidth stage mid-run)
    fabric.clear_faults()
    live = gate(fabric, tmp_path, "--json", "--limit", "gpu0[1-4]",
                profile="counters_window_s: 1\nbandwidth: {enabled: true, rounds: three, duration_s: 1}\n")
    assert "Traceback" not in live.stderr, live.stderr
    assert live.returncode == 2 and live.stdout == "", live.stdout
    assert live.stderr.strip().endswith("bandwidth.rounds takes a whole number above 0, not 'three'")
    # replayed: perftest records of the wrong shape in a saved bundle; the drain of stage 1 still stands
    _, _, saved = two_bad_nodes
    bundle = tmp_path / "tampered"
    shutil.copytree(saved / "saved", bundle)
    (bundle / "perf" / "results.json").write_text(json.dumps([{"client": "gpu01", "bw_avg_gbps": "fast"}]))
    replayed = rdmatool("gate", "--replay", str(bundle), "--json")
    assert "Traceback" not in replayed.stderr, replayed.stderr
    payload = json.loads(replayed.stdout)
    assert {s["name"]: s["status"] for s in payload["stages"]}["bandwidth"] == "error"
    assert replayed.returncode == 1 and payload["drain"] == ["gpu03"]  # a real, named failure from stage 1
