"""`rdmatool pcap` on real pcap and pcapng files written with scapy (the command line run in-process, and as a
process for the exit code of an empty capture and the table view): every summary key, every finding (a capture
that triggers it and a healthy one that stays silent), malformed and truncated files, snap-length truncation."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from tests.capture.build import (
    ACK,
    READ_REQUEST,
    cnp,
    pause_frame,
    pcap_cli,
    periodic_bursts,
    pfc_frame,
    roce,
    tcp,
    write,
)
from tests.e2e.helpers import rdmatool

FORMATS = ["pcap", "pcapng"]


def run(path: Path, *args: str) -> tuple[int, dict]:
    out = pcap_cli(str(path), "--json", *args)
    assert out.stdout, out.stderr
    return out.returncode, json.loads(out.stdout)


def rules(doc: dict) -> set[str]:
    return {f["rule"] for f in doc["findings"]}


def healthy_packets(n: int = 40) -> list:
    """Two RoCE flows in order on DSCP 26 (ECT), acknowledged; what a healthy lossless link shows."""
    out = []
    for i in range(n):
        out.append(roce(qp=0x11, psn=i))
        out.append(roce(src="10.0.0.3", dst="10.0.0.4", qp=0x33, psn=1000 + i, payload=512))
    out.append(roce(src="10.0.0.2", dst="10.0.0.1", qp=0x22, psn=n - 1, opcode=ACK, syndrome=0x00))
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_healthy_capture_is_silent_and_counted(tmp_path: Path, fmt: str) -> None:
    path = write(tmp_path / f"healthy.{fmt}", healthy_packets(), fmt=fmt)
    code, doc = run(path)
    assert code == 0
    assert doc["findings"] == []
    s = doc["summary"]
    assert set(s) == {"packets", "duration_s", "pfc", "global_pause", "roce", "flows", "other_on_roce_class",
                      "periodic"}
    assert s["packets"] == 81
    assert s["duration_s"] == pytest.approx(80 * 0.0001, abs=2e-6)
    roce_sum = s["roce"]
    assert roce_sum["packets"] == 81 and roce_sum["cnp"] == 0
    assert roce_sum["bytes"] == sum(len(bytes(p)) for p in healthy_packets())
    assert roce_sum["dscp"] == {"26": 81}
    assert roce_sum["ecn"] == {"not_ect": 0, "ect0": 81, "ect1": 0, "ce": 0}
    assert roce_sum["flows"] == 3
    assert (roce_sum["naks"], roce_sum["psn_gaps"], roce_sum["retransmissions"]) == (0, 0, 0)
    assert s["pfc"] == [] and s["global_pause"]["frames"] == 0
    assert s["other_on_roce_class"] == {"packets": 0, "bytes": 0, "by_protocol": {}}
    first = s["flows"][0]
    assert (first["src"], first["dst"], first["dest_qp"], first["packets"], first["dscp"]) == (
        "10.0.0.1", "10.0.0.2", 0x11, 40, 26)
    assert set(first) == {"src", "dst", "dest_qp", "packets", "bytes", "dscp", "ce", "cnp", "psn_gaps", "gbps_p50",
                          "gbps_max"}


def test_flow_throughput_over_bins(tmp_path: Path) -> None:
    # 10 packets of 1,066 bytes per 10 ms bin for 5 bins, then one bin with 30: p50 and max in Gb/s
    packets = []
    t = 100.0
    for b in range(6):
        for i in range(30 if b == 5 else 10):
            inside = 0.0 if b == i == 0 else 0.0001  # the first packet starts bin 0; the others stay off the edges
            packets.append((t + b * 0.01 + inside + i * 0.0002, roce(psn=len(packets))))
    path = write(tmp_path / "bins.pcap", packets)
    _, doc = run(path, "--bin-ms", "10")
    flow = doc["summary"]["flows"][0]
    size = len(bytes(roce()))
    assert flow["gbps_max"] == pytest.approx(30 * size * 8 / 0.01 / 1e9, rel=1e-6)
    assert flow["gbps_p50"] == pytest.approx(10 * size * 8 / 0.01 / 1e9, rel=0.01)


def test_vlan_ipv6_and_pcp(tmp_path: Path) -> None:
    packets = [roce(src="fd00::1", dst="fd00::2", qp=7, psn=i, ipv6=True, vlan=100, pcp=3) for i in range(5)]
    packets += [tcp(vlan=100, pcp=3), tcp(vlan=100, pcp=0)]
    path = write(tmp_path / "v6.pcapng", packets, fmt="pcapng")
    _, doc = run(path)
    s = doc["summary"]
    assert s["roce"]["packets"] == 5 and s["flows"][0]["src"] == "fd00::1" and s["flows"][0]["dest_qp"] == 7
    # the TCP packet tagged with priority 3 rides the RoCE class; the one on priority 0 does not
    assert s["other_on_roce_class"]["packets"] == 1
    assert s["other_on_roce_class"]["by_protocol"] == {"tcp": 1}


@pytest.mark.parametrize("fmt", FORMATS)
def test_pfc_per_priority_and_global_pause(tmp_path: Path, fmt: str) -> None:
    packets = [roce(psn=i) for i in range(10)]
    packets += [pfc_frame({3: 0xFFFF}), pfc_frame({3: 100, 5: 200}), pfc_frame({3: 0}, sender=b"\x02" * 6),
                pause_frame(300)]
    path = write(tmp_path / f"pfc.{fmt}", packets, fmt=fmt)
    _, doc = run(path, "--link-gbps", "100")
    pfc = {e["priority"]: e for e in doc["summary"]["pfc"]}
    assert set(pfc) == {3, 5}
    assert (pfc[3]["frames"], pfc[3]["quanta"]) == (3, 0xFFFF + 100)
    assert pfc[3]["pause_time_s"] == pytest.approx((0xFFFF + 100) * 512 / 100e9)
    assert pfc[3]["senders"] == ["02:00:00:00:00:09", "02:02:02:02:02:02"]
    assert (pfc[5]["frames"], pfc[5]["quanta"]) == (1, 200)
    gp = doc["summary"]["global_pause"]
    assert (gp["frames"], gp["quanta"], gp["senders"]) == (1, 300, ["02:00:00:00:00:0a"])
    assert gp["pause_time_s"] == pytest.approx(300 * 512 / 100e9)
    # priority 5 pauses but carries no RoCE; priority 3 carries RoCE
    hits = [f for f in doc["findings"] if f["rule"] == "capture_pfc_on_priority_without_roce"]
    assert [f["evidence"]["priority"] for f in hits] == [5]
    # without a link rate (not from a bundle) the pause time is unknown, not 0
    _, doc = run(path)
    assert all(e["pause_time_s"] is None for e in doc["summary"]["pfc"])


def test_roce_off_dscp_is_an_error(tmp_path: Path) -> None:
    packets = [roce(psn=i) for i in range(10)] + [roce(qp=0x44, psn=i, dscp=0) for i in range(4)]
    code, doc = run(write(tmp_path / "dscp.pcap", packets))
    assert code == 1
    assert doc["summary"]["roce"]["dscp"] == {"0": 4, "26": 10}
    hit = next(f for f in doc["findings"] if f["rule"] == "capture_roce_off_dscp")
    assert hit["evidence"]["observed"] == 4 and hit["severity"] == "error"
    assert hit["check"] and hit["fix"]
    # the same capture judged against another RoCE DSCP: the 10 others are now the strays
    _, doc = run(write(tmp_path / "dscp.pcap", packets), "--roce-dscp", "0")
    assert next(f for f in doc["findings"] if f["rule"] == "capture_roce_off_dscp")["evidence"]["observed"] == 10


def test_other_traffic_on_roce_dscp(tmp_path: Path) -> None:
    packets = [roce(psn=i) for i in range(10)] + [tcp(dscp=26) for _ in range(3)] + [tcp(dscp=0)]
    code, doc = run(write(tmp_path / "other.pcap", packets))
    assert code == 0  # a warning
    other = doc["summary"]["other_on_roce_class"]
    assert other["packets"] == 3 and other["bytes"] == 3 * len(bytes(tcp()))
    assert rules(doc) == {"capture_other_traffic_on_roce_class"}


def test_ce_without_cnp_and_cnp_without_ce(tmp_path: Path) -> None:
    marked = [roce(psn=i, ecn=3 if i % 2 else 2) for i in range(10)]
    code, doc = run(write(tmp_path / "ce.pcap", marked))
    assert code == 1
    assert doc["summary"]["roce"]["ecn"]["ce"] == 5 and doc["summary"]["flows"][0]["ce"] == 5
    assert "capture_ce_without_cnp" in rules(doc)
    # answered by CNPs: silent
    code, doc = run(write(tmp_path / "ce-cnp.pcap", [*marked, cnp(), cnp()]))
    assert "capture_ce_without_cnp" not in rules(doc) and "capture_cnp_without_ce" not in rules(doc)
    assert doc["summary"]["roce"]["cnp"] == 2
    assert next(f for f in doc["summary"]["flows"] if f["dest_qp"] == 0x22)["cnp"] == 2
    # CNPs with no CE in the window: information (the capture may be at the sender)
    code, doc = run(write(tmp_path / "cnp.pcap", [roce(psn=i) for i in range(5)] + [cnp()]))
    assert code == 0
    assert rules(doc) == {"capture_cnp_without_ce"}


def test_psn_gaps_naks_and_retransmissions(tmp_path: Path) -> None:
    psns = [0, 1, 2, 4, 5, 6, 3, 4, 5, 6, 7]  # 3 lost, go-back-N from 3
    packets = [roce(psn=p) for p in psns]
    packets.append(roce(src="10.0.0.2", dst="10.0.0.1", qp=0x22, psn=3, opcode=ACK, syndrome=0x60))  # NAK seq err
    code, doc = run(write(tmp_path / "loss.pcapng", packets, fmt="pcapng"))
    assert code == 1
    r = doc["summary"]["roce"]
    assert (r["psn_gaps"], r["retransmissions"], r["naks"]) == (1, 4, 1)
    assert doc["summary"]["flows"][0]["psn_gaps"] == 1
    assert {"capture_psn_gaps", "capture_naks", "capture_retransmissions"} <= rules(doc)


def test_psn_wraps_and_reads_are_no_gaps(tmp_path: Path) -> None:
    packets = [roce(psn=p) for p in (0xFFFFFE, 0xFFFFFF, 0, 1)]
    # an RDMA READ request takes one PSN per response packet: the next request jumps
    packets += [roce(qp=0x55, psn=10, opcode=READ_REQUEST, payload=16), roce(qp=0x55, psn=14)]
    packets.append(roce(src="10.0.0.2", dst="10.0.0.1", qp=0x22, psn=1, opcode=ACK, syndrome=0x20))  # RNR NAK
    _, doc = run(write(tmp_path / "wrap.pcap", packets))
    r = doc["summary"]["roce"]
    assert (r["psn_gaps"], r["retransmissions"], r["naks"]) == (0, 0, 0)
    assert doc["findings"] == []


def test_snaplen_truncated_packets_keep_their_headers(tmp_path: Path) -> None:
    packets = [roce(psn=i, payload=4000, vlan=10, pcp=3, ipv6=True, src="fd00::1", dst="fd00::2") for i in (0, 1, 3)]
    packets += [pfc_frame({3: 10})]
    path = write(tmp_path / "snap.pcap", packets, snaplen=128)
    _, doc = run(path)
    s = doc["summary"]
    assert s["roce"]["packets"] == 3 and s["roce"]["psn_gaps"] == 1
    assert s["roce"]["bytes"] == 3 * len(bytes(packets[0]))  # wire lengths, not the 128 captured bytes
    assert s["pfc"][0]["quanta"] == 10


@pytest.mark.slow
def test_periodic_interfering_bursts(tmp_path: Path) -> None:
    """Storage-like TCP bursts on DSCP 26 every 100 ms, each followed by PFC pauses; RoCE steady throughout."""
    packets = periodic_bursts()
    code, doc = run(write(tmp_path / "periodic.pcapng", packets, fmt="pcapng"))
    p = doc["summary"]["periodic"]
    assert p["other_on_roce_class"]["period_s"] == pytest.approx(0.1, abs=0.011)
    assert p["other_on_roce_class"]["strength"] > 0.5
    assert p["other_on_roce_class"]["coincides_with_pause"] == 1.0
    assert p["pfc"]["period_s"] == pytest.approx(0.1, abs=0.011)
    assert p["roce"]["period_s"] is None  # steady: no bursts
    hit = next(f for f in doc["findings"] if f["rule"] == "capture_periodic_interference")
    assert hit["evidence"]["observed"] == pytest.approx(0.1, abs=0.011)
    assert "every 100 ms" in hit["symptom"]  # the period in human units (0.1 s exactly in the evidence)


@pytest.mark.slow
def test_periodic_bursts_not_in_step_with_pauses_are_not_flagged(tmp_path: Path) -> None:
    packets = periodic_bursts(pause_at_ms=50)
    _, doc = run(write(tmp_path / "apart.pcap", packets))
    assert doc["summary"]["periodic"]["other_on_roce_class"]["coincides_with_pause"] == 0.0
    assert "capture_periodic_interference" not in rules(doc)


def test_empty_capture_is_inconclusive(tmp_path: Path) -> None:
    path = tmp_path / "empty.pcap"
    path.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    out = rdmatool("pcap", str(path))
    assert out.returncode == 3
    assert "no packets" in out.stderr


@pytest.mark.parametrize(("name", "content", "offset"), [
    ("text.pcap", b"this is not a capture at all\n", 0),
    ("short.pcap", struct.pack("<IHH", 0xA1B2C3D4, 2, 4), 8),
    ("zero.pcap", b"", 0),
])
def test_not_a_capture_is_bad_input_with_offset(tmp_path: Path, name: str, content: bytes, offset: int) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    out = pcap_cli(str(path))
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert str(path) in out.stderr and f"byte offset {offset}" in out.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncated_file_names_the_offset_of_the_cut_record(tmp_path: Path, fmt: str) -> None:
    packets = [roce(psn=i) for i in range(5)]
    whole = write(tmp_path / f"whole.{fmt}", packets, fmt=fmt).read_bytes()
    size = len(bytes(packets[0]))
    record = 16 + size if fmt == "pcap" else 32 + size + (-size % 4)
    last = len(whole) - record
    cut = tmp_path / f"cut.{fmt}"
    cut.write_bytes(whole[:last + 40])
    out = pcap_cli(str(cut))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"{cut}: byte offset {last}:" in out.stderr
    # a cut inside the last record's header
    cut.write_bytes(whole[:last + 6])
    out = pcap_cli(str(cut))
    assert out.returncode == 2 and f"byte offset {last}:" in out.stderr


def test_corrupt_record_length_is_named(tmp_path: Path) -> None:
    data = bytearray(write(tmp_path / "ok.pcap", [roce(psn=i) for i in range(3)]).read_bytes())
    second = 24 + 16 + len(bytes(roce()))
    data[second + 8:second + 12] = struct.pack("<I", 0x7FFFFFFF)  # caplen
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(bytes(data))
    out = pcap_cli(str(bad))
    assert out.returncode == 2 and f"byte offset {second}:" in out.stderr


def test_pcapng_block_with_bad_length(tmp_path: Path) -> None:
    data = bytearray(write(tmp_path / "ok.pcapng", [roce(psn=i) for i in range(3)], fmt="pcapng").read_bytes())
    # the section header's length, then the interface block's: the first packet block follows
    shb = struct.unpack("<I", data[4:8])[0]
    idb = struct.unpack("<I", data[shb + 4:shb + 8])[0]
    first = shb + idb
    data[first + 4:first + 8] = struct.pack("<I", 13)
    bad = tmp_path / "bad.pcapng"
    bad.write_bytes(bytes(data))
    out = pcap_cli(str(bad))
    assert out.returncode == 2 and f"byte offset {first}:" in out.stderr


def test_table_output_names_the_findings(tmp_path: Path) -> None:
    path = write(tmp_path / "t.pcap", [roce(psn=i, dscp=0) for i in range(3)])
    out = rdmatool("pcap", str(path))
    assert out.returncode == 1
    assert "capture_roce_off_dscp" in out.stdout and "RoCEv2" in out.stdout
