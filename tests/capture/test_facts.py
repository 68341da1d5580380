"""A capture's figures as facts: every name in the glossary; `diagnose` on a bundle holding a capture reports the
capture's findings with the others, and stays as it was on a bundle without one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rdmatool import metrics
from rdmatool.capture import Options, analyse_file
from rdmatool.capture.facts import samples_of
from tests.capture.build import cnp, pfc_frame, roce, tcp, write
from tests.e2e.helpers import REPO, rdmatool

DEMO = REPO / "examples" / "demo-bundle"


def rich_capture(path: Path) -> Path:
    packets = []
    for ms in range(400):
        t = 5.0 + ms / 1000
        packets.append((t, roce(psn=ms if ms != 200 else 999, ecn=3 if ms % 50 == 0 else 2)))
        if ms % 40 < 3:
            packets += [(t + 0.0002, tcp(dscp=26)), (t + 0.0004, pfc_frame({3: 1000, 4: 10})), (t + 0.0005, cnp())]
    packets.sort(key=lambda x: x[0])
    return write(path, packets)


def test_every_emitted_metric_is_in_the_glossary(tmp_path: Path) -> None:
    summary, tally = analyse_file(rich_capture(tmp_path / "c.pcap"), Options(link_gbps=200))
    samples = samples_of(summary, tally, "mlx5_0")
    names = {s.metric for s in samples}
    # the capture exercised the per-priority, pause-time and burst figures too
    assert {"capture_pfc_pause_time_s", "capture_burst_period_s", "capture_roce_priority_packets"} <= names
    assert [n for n in names if not metrics.is_known(n)] == []


def diagnose(bundle: Path) -> tuple[int, dict, str]:
    out = rdmatool("diagnose", str(bundle), "--format", "json", timeout=180)
    return out.returncode, json.loads(out.stdout), out.stderr


@pytest.mark.slow  # the whole demo bundle diagnosed as a process
def test_diagnose_reports_the_capture_of_a_bundle(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(DEMO, bundle)
    _, before, _ = diagnose(bundle)
    assert not [f for f in before["findings"] if f["rule"].startswith("capture_")]
    host = bundle / "snapshots" / "1" / "gpu01"
    write(host / "capture.mlx5_0.pcap", [roce(psn=i, dscp=0, ecn=3) for i in range(20)] + [pfc_frame({5: 100})])
    code, after, _ = diagnose(bundle)
    assert code == 1
    found = {(f["rule"], f["target"], f["entity"]) for f in after["findings"] if f["rule"].startswith("capture_")}
    assert ("capture_roce_off_dscp", "gpu01", "mlx5_0") in found
    assert ("capture_ce_without_cnp", "gpu01", "mlx5_0") in found
    assert ("capture_pfc_on_priority_without_roce", "gpu01", "mlx5_0") in found
    # the rest of the diagnosis is unchanged
    others = [f for f in after["findings"] if not f["rule"].startswith("capture_")]
    assert others == before["findings"]


@pytest.mark.slow  # the whole demo bundle diagnosed as a process
def test_a_broken_capture_in_a_bundle_is_skipped_with_a_warning(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(DEMO, bundle)
    _, before, _ = diagnose(bundle)
    (bundle / "snapshots" / "1" / "gpu02" / "capture.mlx5_0.pcap").write_bytes(b"garbage, not a pcap")
    target = bundle / "snapshots" / "1" / "gpu03" / "capture.mlx5_1.pcap"
    target.symlink_to(rich_capture(tmp_path / "elsewhere.pcap"))
    _, after, stderr = diagnose(bundle)
    assert after["findings"] == before["findings"]
    assert "capture.mlx5_0.pcap: not a pcap or pcapng file" in stderr and "byte offset 0" in stderr
