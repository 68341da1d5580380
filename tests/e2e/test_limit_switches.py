"""End to end: a scheduler's hosts-only `--limit` on the simulated fabric still checks the switches those hosts are
cabled to (from the inventory's `links:`, or from the LLDP of a baseline's newest bundle), and the gate's drain
file can be one folded node set.

The healthy fabric cables each Ethernet NIC round-robin to five leaves: gpu01 to leaf01, gpu02 to leaf02.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bundle_sides import outputs_of
from tests.e2e.helpers import collect, manifest, rdmatool, rewrite_inventory
from tests.fabric.fixtures import fabric_fixture

pytestmark = pytest.mark.e2e

fabric = fabric_fixture("healthy", scope="module")
PROFILE = "counters_window_s: 1\nbandwidth: {enabled: false}\n"


@pytest.fixture
def clean(fabric):
    fabric.clear_faults()
    yield fabric
    fabric.clear_faults()


def with_links(fab, path: Path) -> Path:
    def add(data: dict) -> None:
        data["links"] = [{"host": x.host, "nic": x.nic, "switch": x.switch, "switch_port": x.switch_port}
                         for x in fab.scenario.links]
    return rewrite_inventory(fab, path, add)


def gate(fab, tmp_path: Path, inventory: Path, *extra: str):
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE)
    saved = tmp_path / "saved"
    result = rdmatool("gate", "-i", str(inventory), "--known-hosts", str(fab.known_hosts), "--profile", str(profile),
                      "--json", "--save", str(saved), *extra, timeout=300)
    assert "Traceback" not in result.stderr, result.stderr
    return result, json.loads(result.stdout) if result.stdout.strip() else {}, saved


def cabled_port(fab, host: str) -> tuple[str, str]:
    link = next(x for x in fab.scenario.links if x.host == host)
    return link.switch, link.switch_port


def assert_only_the_cabled_port(fab, bundle: Path, host: str) -> None:
    """The switch of `host` (one whose counters are read per port, `<parser>.<port>.txt`) was read on the port
    cabled to it and on none of its other ports."""
    switch, port = cabled_port(fab, host)
    read = {stem.partition(".")[2] for stem in outputs_of(bundle, 0, switch) if "." in stem}
    every_port = next(t["ports"] for t in fab.targets if t["name"] == switch)
    assert len(every_port) > 1 and port in every_port
    assert read == {port}, read


def test_inventory_links_bring_in_the_cabled_switches_and_drain_folds(clean, tmp_path: Path) -> None:
    inventory = with_links(clean, tmp_path / "inv.yaml")
    for host in ("gpu01", "gpu02"):
        clean.set_fault("port_down", host, nic="mlx5_1")
    drain = tmp_path / "drain.txt"
    result, payload, saved = gate(clean, tmp_path, inventory, "--limit", "gpu[01-02]", "--drain-file", str(drain),
                                  "--drain-format", "nodeset")
    assert result.returncode == 1, (result.stderr, payload.get("stages"))
    assert drain.read_text() == "gpu[01-02]\n"
    assert payload["drain"] == ["gpu01", "gpu02"]
    assert "leaf[01-02]" in result.stderr
    assert {t["name"] for t in manifest(saved)["targets"]} == {"gpu01", "gpu02", "leaf01", "leaf02"}
    # leaf02 (Cumulus) reads its counters per port: only the port cabled to gpu02, of all its ports
    assert_only_the_cabled_port(clean, saved, "gpu02")
    # the down ports are seen from the switch side too: the switches were judged, not only collected
    assert {f["target"] for f in payload["findings"]} & {"leaf01", "leaf02"}, payload["findings"]


def test_without_cabling_a_hosts_only_limit_checks_hosts_only_and_says_so(clean, tmp_path: Path) -> None:
    result, payload, saved = gate(clean, tmp_path, Path(clean.inventory_path), "--limit", "gpu01,gpu02")
    assert result.returncode == 0, (result.stderr, payload.get("stages"))
    assert {t["name"] for t in manifest(saved)["targets"]} == {"gpu01", "gpu02"}
    assert "no cabling is known" in result.stderr


def test_the_baseline_lldp_brings_in_the_cabled_switches(clean, tmp_path: Path) -> None:
    nightly = tmp_path / "nightly"
    collected = collect(clean, nightly, "--interval", "0")
    assert collected.returncode == 0, collected.stderr
    store = tmp_path / "store"
    saved_night = rdmatool("baseline", "save", str(nightly), "--store", str(store))
    assert saved_night.returncode == 0, saved_night.stderr
    result, payload, saved = gate(clean, tmp_path, Path(clean.inventory_path), "--limit", "gpu01,gpu02",
                                  "--baseline", "default", "--store", str(store))
    assert result.returncode == 0, (result.stderr, payload.get("stages"))
    assert {t["name"] for t in manifest(saved)["targets"]} == {"gpu01", "gpu02", "leaf01", "leaf02"}
    assert f"the LLDP of {nightly.resolve()}" in result.stderr.replace("\n", "")
    assert_only_the_cabled_port(clean, saved, "gpu02")


def test_an_unknown_name_in_a_gate_limit_is_exit_2(clean, tmp_path: Path) -> None:
    result, payload, _ = gate(clean, tmp_path, Path(clean.inventory_path), "--limit", "gpu[01-02,99]")
    assert result.returncode == 2 and payload == {}
    assert result.stderr.strip() == ("rdmatool: --limit: gpu99: no such target or group in the inventory "
                                     "(--ignore-unknown skips unknown names)")
