"""Captures under heavy congestion are not PASS: a large share of CE-marked RoCE packets (capture_heavy_ce_marking)
or the RoCE priority paused a large share of the capture (capture_roce_priority_paused), through `rdmatool pcap` on
real pcap files written with scapy. The paused time is the union of the intervals the PFC frames ask for (a
refreshed XOFF counted once, an XON ending a pause early), and a healthy capture stays PASS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rdmatool.capture import Options, analyse_file
from tests.capture.build import cnp, pcap_cli, pfc_frame, roce, write

QUANTUM_100G = 512 / 100e9  # seconds


def run(path: Path, *args: str) -> dict:
    out = pcap_cli(str(path), "--json", *args)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def fired(report: dict, rule: str) -> list[dict]:
    return [f for f in report["findings"] if f["rule"] == rule]


def traffic(n: int = 2000, ce_every: int = 0, step: float = 0.0005) -> list[tuple[float, object]]:
    """`n` RoCE packets `step` s apart, every `ce_every`-th marked CE (none with 0), and a CNP per mark."""
    packets: list[tuple[float, object]] = []
    for i in range(n):
        t = 10.0 + i * step
        marked = ce_every and i % ce_every == 0
        packets.append((t, roce(psn=i, ecn=3 if marked else 2)))
        if marked:
            packets.append((t + step / 2, cnp()))
    return packets


def with_pauses(packets: list, every_s: float, quanta: int, priority: int = 3) -> list:
    """`packets` and one PFC frame asking `quanta` on `priority` every `every_s` over their span, in time order."""
    start, end = packets[0][0], packets[-1][0]
    frames, t = [], start + every_s / 3
    while t < end:
        frames.append((t, pfc_frame({priority: quanta})))
        t += every_s
    return sorted(packets + frames, key=lambda x: x[0])


def test_a_high_ce_share_is_not_pass(tmp_path: Path) -> None:
    report = run(write(tmp_path / "ce.pcap", traffic(ce_every=5)))  # 20 % of 2000 packets marked, each answered
    assert report["verdict"] != "pass"
    (finding,) = fired(report, "capture_heavy_ce_marking")
    assert finding["severity"] == "warning"
    assert finding["evidence"]["observed"] == pytest.approx(0.2)
    assert "20 %" in finding["symptom"]
    assert fired(report, "capture_ce_without_cnp") == []  # the marks were answered: congestion, not a broken NP


def test_a_few_marked_packets_are_no_share(tmp_path: Path) -> None:
    """100 packets all marked: too few to say how congested the path is (capture_ce_without_cnp says the rest)."""
    report = run(write(tmp_path / "few.pcap", traffic(n=100, ce_every=1)))
    assert fired(report, "capture_heavy_ce_marking") == []
    assert fired(report, "capture_ce_without_cnp") == []  # each mark has its CNP in this capture


def test_a_high_pause_fraction_on_the_roce_priority_is_not_pass(tmp_path: Path) -> None:
    # 2000 packets over 1 s; 65535 quanta (335.5 us at 100G) every 2 ms: paused ~16.8 % of the time
    path = write(tmp_path / "paused.pcap", with_pauses(traffic(), 0.002, 0xFFFF))
    report = run(path, "--link-gbps", "100")
    assert report["verdict"] != "pass"
    (finding,) = fired(report, "capture_roce_priority_paused")
    assert finding["severity"] == "warning" and finding["evidence"]["priority"] == 3
    (pfc,) = report["summary"]["pfc"]
    assert pfc["paused_fraction"] == pytest.approx(pfc["paused_s"] / report["summary"]["duration_s"], rel=1e-4)
    assert finding["evidence"]["observed"] == pytest.approx(pfc["paused_fraction"])
    assert finding["evidence"]["observed"] == pytest.approx(0xFFFF * QUANTUM_100G / 0.002, rel=0.02)


def test_a_healthy_capture_stays_pass(tmp_path: Path) -> None:
    # 0.5 % marked and answered; a pause of 1000 quanta (5 us at 100G) every 10 ms: paused 0.05 % of the time
    path = write(tmp_path / "healthy.pcap", with_pauses(traffic(ce_every=200), 0.01, 1000))
    report = run(path, "--link-gbps", "100")
    assert report["summary"]["roce"]["ecn"]["ce"] == 10 and report["summary"]["pfc"][0]["frames"] > 50
    assert [f["rule"] for f in report["findings"] if f["severity"] != "info"] == []
    assert report["verdict"] == "pass"


def test_pauses_of_another_priority_are_not_the_roce_priority(tmp_path: Path) -> None:
    path = write(tmp_path / "prio5.pcap", with_pauses(traffic(), 0.002, 0xFFFF, priority=5))
    report = run(path, "--link-gbps", "100")
    assert fired(report, "capture_roce_priority_paused") == []
    assert fired(report, "capture_pfc_on_priority_without_roce")  # the rule of that case


def test_the_roce_priority_is_the_sites(tmp_path: Path) -> None:
    """RoCE on priority 5 (`--roce-priority 5`: the site's class for one capture): its pauses are judged there."""
    path = write(tmp_path / "site.pcap", with_pauses(traffic(), 0.002, 0xFFFF, priority=5))
    report = run(path, "--link-gbps", "100", "--roce-priority", "5")
    (finding,) = fired(report, "capture_roce_priority_paused")
    assert finding["evidence"]["priority"] == 5 and "priority 5" in finding["symptom"]


def test_without_a_link_rate_there_is_no_pause_time(tmp_path: Path) -> None:
    report = run(write(tmp_path / "nolink.pcap", with_pauses(traffic(), 0.002, 0xFFFF)))
    assert report["summary"]["pfc"][0]["paused_fraction"] is None
    assert fired(report, "capture_roce_priority_paused") == []


def paused_s(tmp_path: Path, frames: list[tuple[float, int]], end: float) -> float:
    """The paused seconds of priority 3 in a capture of PFC frames (time, quanta) and one RoCE packet at `end`."""
    packets = [(t, pfc_frame({3: q})) for t, q in frames] + [(end, roce(psn=0))]
    path = write(tmp_path / "spans.pcap", sorted(packets, key=lambda x: x[0]))
    summary, _ = analyse_file(str(path), Options(link_gbps=100.0))
    return summary["pfc"][0]["paused_s"]


def test_a_refreshed_xoff_is_counted_once(tmp_path: Path) -> None:
    full = 0xFFFF * QUANTUM_100G  # 335.5 us
    # ten frames 100 us apart, each asking 335.5 us: one pause from the first to 335.5 us after the last
    frames = [(10.0 + k * 100e-6, 0xFFFF) for k in range(10)]
    assert paused_s(tmp_path, frames, end=11.0) == pytest.approx(9 * 100e-6 + full, rel=1e-3)


def test_an_xon_ends_the_pause(tmp_path: Path) -> None:
    # XOFF, then XON 10 us later; a second XOFF 1 ms later ends with the capture 50 us after it
    frames = [(10.0, 0xFFFF), (10.0 + 10e-6, 0), (10.001, 0xFFFF)]
    assert paused_s(tmp_path, frames, end=10.001 + 50e-6) == pytest.approx(10e-6 + 50e-6, rel=1e-2)


def test_a_bundle_with_a_congested_capture_is_not_pass(tmp_path: Path) -> None:
    """The capture beside a host's outputs in a bundle: its pause time at the port's own rate (200G from the
    bundle), judged with the rest of the diagnosis."""
    from rdmatool.diagnose.pipeline import diagnose_bundle
    from rdmatool.model import Verdict
    from tests.pods import bundle as pods

    root = pods.write(pods.healthy_pod(), tmp_path / "bundle")
    assert diagnose_bundle(root).verdict is Verdict.PASS
    # 65535 quanta every 2 ms: 167.8 us at 200G, paused ~8.4 % of the time
    folder = root / "snapshots" / "1" / "gpu01"  # where `rdmatool capture` puts it (docs/bundle-format.md)
    folder.mkdir(exist_ok=True)
    write(folder / "capture.ens1f0np0.pcap", with_pauses(traffic(), 0.002, 0xFFFF))
    result = diagnose_bundle(root)
    (finding,) = [f for f in result.findings if f.rule == "capture_roce_priority_paused"]
    assert (finding.target, finding.entity, finding.evidence["priority"]) == ("gpu01", "ens1f0np0", 3)
    assert finding.evidence["observed"] == pytest.approx(0xFFFF * 512 / 200e9 / 0.002, rel=0.03)
    assert result.verdict is Verdict.WARN
