"""End to end: `rdmatool capture` over the real sshd to a simulated host whose tcpdump shim streams a pcap, then
`rdmatool diagnose` / `rdmatool pcap` on that bundle. Nothing is mocked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.capture.build import pfc_frame, roce, write
from tests.e2e.helpers import collect, rdmatool
from tests.fabric.fixtures import fabric_fixture
from tests.fabric.shims import tcpdump as tcpdump_shim

pytestmark = pytest.mark.e2e

healthy = fabric_fixture("healthy", scope="module")


def capture(fabric, out: Path, *extra: str):
    return rdmatool("capture", "-i", str(fabric.inventory_path), "--known-hosts", str(fabric.known_hosts),
                    "-o", str(out), *extra, timeout=120)


def host_pcap(fabric, host: str, packets: list) -> Path:
    tcpdump_shim.install(fabric, host)
    return write(fabric.state / "captures" / f"{host}.pcap", packets)


def lossy_packets() -> list:
    """RoCE off the RoCE DSCP, CE marks never answered, and pauses on a priority without RoCE: 25 packets."""
    return [roce(psn=i, dscp=0, ecn=3, payload=2000) for i in range(24)] + [pfc_frame({5: 1000})]


def test_capture_into_a_collected_bundle_then_diagnose(healthy, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    assert collect(healthy, bundle, "--limit", "gpu01", "--interval", "0").returncode == 0
    host_pcap(healthy, "gpu01", lossy_packets())
    result = capture(healthy, bundle, "--limit", "gpu01", "--device", "mlx5_1", "--max-packets", "20",
                     "--snaplen", "128", "--duration", "10")
    assert result.returncode == 0, result.stderr
    pcap = bundle / "snapshots" / "0" / "gpu01" / "capture.mlx5_1.pcap"
    side = json.loads((bundle / "snapshots" / "0" / "gpu01" / "capture.mlx5_1.json").read_text())
    assert side["exit_code"] == 0 and "tcpdump" in side["command"] and side["snaplen"] == 128
    assert "20 packets captured" in side["stderr"]
    assert not [p for p in pcap.parent.iterdir() if p.name.startswith(".")]  # no temporary left behind
    # the packet count and snap length were honoured: 20 records of at most 128 bytes, original lengths kept
    out = rdmatool("pcap", str(pcap), "--json")
    summary = json.loads(out.stdout)["summary"]
    assert summary["packets"] == 20 and summary["roce"]["bytes"] == 20 * len(bytes(lossy_packets()[0]))
    assert pcap.stat().st_size == 24 + 20 * (16 + 128)
    diagnosis = rdmatool("diagnose", str(bundle), "--format", "json")
    found = {(f["rule"], f["target"], f["entity"]) for f in json.loads(diagnosis.stdout)["findings"]}
    assert ("capture_roce_off_dscp", "gpu01", "mlx5_1") in found
    assert ("capture_ce_without_cnp", "gpu01", "mlx5_1") in found
    assert diagnosis.returncode == 1


def test_capture_into_a_new_bundle_and_pause_time_from_the_bundle(healthy, tmp_path: Path) -> None:
    bundle = tmp_path / "new"
    host_pcap(healthy, "gpu02", lossy_packets())
    result = capture(healthy, bundle, "--limit", "gpu02", "--netdev", "ens1f0np0")
    assert result.returncode == 0, result.stderr
    pcap = bundle / "snapshots" / "0" / "gpu02" / "capture.ens1f0np0.pcap"
    assert json.loads((bundle / "manifest.json").read_text())["targets"][0]["name"] == "gpu02"
    diagnosis = json.loads(rdmatool("diagnose", str(bundle), "--format", "json").stdout)
    rules = {f["rule"] for f in diagnosis["findings"]}
    assert {"capture_roce_off_dscp", "capture_pfc_on_priority_without_roce"} <= rules
    assert not [r for r in rules if not r.startswith("capture_")]  # no host rule reads a capture-only bundle
    # a collected bundle knows the link rate (200 Gb/s on ens1f0np0): the pause time follows from it
    collected = tmp_path / "collected"
    assert collect(healthy, collected, "--limit", "gpu02", "--interval", "0").returncode == 0
    assert capture(healthy, collected, "--limit", "gpu02", "--netdev", "ens1f0np0").returncode == 0
    out = rdmatool("pcap", str(collected / "snapshots" / "0" / "gpu02" / "capture.ens1f0np0.pcap"), "--json")
    assert out.stdout, out.stderr
    pfc = json.loads(out.stdout)["summary"]["pfc"]
    assert pfc[0]["pause_time_s"] == pytest.approx(1000 * 512 / 200e9)
    assert pcap.exists()


def test_capture_refuses_clearly(healthy, tmp_path: Path) -> None:
    out = tmp_path / "b"
    # no tcpdump on the host (the shim is not installed on gpu03)
    result = capture(healthy, out, "--limit", "gpu03", "--device", "mlx5_1")
    assert result.returncode == 3 and "tcpdump is not installed" in result.stderr and "root" in result.stderr
    assert not out.exists()
    # tcpdump there but not permitted
    tcpdump_shim.install(healthy, "gpu03")
    (healthy.state / "captures" / "gpu03.denied").write_text("")
    try:
        result = capture(healthy, out, "--limit", "gpu03", "--device", "mlx5_1")
    finally:
        (healthy.state / "captures" / "gpu03.denied").unlink()
    assert result.returncode == 3 and "not permitted" in result.stderr and "needs root" in result.stderr
    assert not out.exists()
    # no such interface
    result = capture(healthy, out, "--limit", "gpu03", "--device", "mlx5_9")
    assert result.returncode == 3 and "no interface mlx5_9" in result.stderr
    # names that are not device names never reach the host; nor more than one host
    for bad in ("mlx5_0;id", "-w/tmp/x", "a b"):
        result = capture(healthy, out, "--limit", "gpu03", "--device", bad)
        assert result.returncode == 2 and "refusing interface name" in result.stderr
    result = capture(healthy, out, "--limit", "gpu0[1-2]", "--device", "mlx5_1")
    assert result.returncode == 2 and "exactly one host" in result.stderr
    assert "Traceback" not in result.stderr
