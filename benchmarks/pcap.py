"""`rdmatool pcap --json` against scapy's full dissection and tshark on one large capture.

Generates once (raw bytes, not scapy objects) a pcap of PACKETS records: 64 RoCEv2 flows (DSCP 26, ECT(0), 1 % CE,
1 in 50 flows off-DSCP), CNPs, PFC frames on priority 3, and TCP traffic (some of it on DSCP 26). Then, in one run:
- rdmatool: `python -m rdmatool pcap FILE --json`, wall time and the peak RSS of the process (wait4);
- scapy: PcapReader + layer access computing the same per-DSCP / per-ECN / CNP / PFC counts, on the first SAMPLE
  packets (full dissection of millions of packets takes many minutes), extrapolated linearly to the whole file;
- tshark: `tshark -r FILE -T fields -e ip.dsfield.dscp -e ip.dsfield.ecn -Y udp.dstport==4791`, the per-DSCP and
  per-ECN counts of the RoCE packets, the whole file (skipped when tshark is not installed).
The counts of the three are compared (scapy's on its sample against rdmatool on the same sample).

    python benchmarks/pcap.py [--packets 2000000] [--sample 50000] [--keep FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _common import REPO, machine  # noqa: I001 - benchmarks/ is on the path when run as a script

ETH = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01"


def _ipv4(src: int, dst: int, tos: int, proto: int, length: int) -> bytes:
    return struct.pack("!BBHHHBBH4s4s", 0x45, tos, length, 0, 0x4000, 64, proto, 0, src.to_bytes(4, "big"),
                       dst.to_bytes(4, "big"))


def generate(path: Path, packets: int) -> dict:
    """Write the capture; returns what it holds (for the comparison)."""
    flows = []
    for i in range(64):
        dscp = 0 if i % 50 == 49 else 26
        payload = 1024 if i % 2 else 4096
        udp_len = 8 + 12 + payload + 4
        head = ETH + b"\x08\x00" + _ipv4(0x0A000001 + i, 0x0A000101 + i, dscp << 2 | 2, 17, 20 + udp_len)
        head += struct.pack("!HHHH", 49152 + i, 4791, udp_len, 0)
        ce = bytearray(head)
        ce[15] = dscp << 2 | 3
        flows.append((head, bytes(ce), 0x100 + i, payload))
    cnp_head = ETH + b"\x08\x00" + _ipv4(0x0A000101, 0x0A000001, 48 << 2, 17, 20 + 8 + 12 + 16 + 4)
    cnp_head += struct.pack("!HHHH", 49152, 4791, 8 + 12 + 16 + 4, 0)
    tcp_head = {d: ETH + b"\x08\x00" + _ipv4(0x0A000001, 0x0A0000FE, d << 2, 6, 20 + 20 + 1000) for d in (0, 26)}
    pfc = b"\x01\x80\xc2\x00\x00\x01\x02\x00\x00\x00\x00\x09\x88\x08" + struct.pack("!HH8H", 0x0101, 8,
                                                                                     0, 0, 0, 500, 0, 0, 0, 0)
    pfc += bytes(26)
    psn = [0] * 64
    snap = 128
    out = open(path, "wb", buffering=1 << 22)  # noqa: SIM115 - closed below
    out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snap, 1))
    t_us = 0
    records = []
    expect = Counter()
    for n in range(packets):
        t_us += 2
        k = n % 100
        if k < 90:  # RoCE
            f = n % 64
            head, ce_head, qp, payload = flows[f]
            marked = n % 97 == 0
            bth = struct.pack("!BBHII", 0x04, 0, 0xFFFF, qp, psn[f] & 0xFFFFFF)
            psn[f] += 1
            frame = (ce_head if marked else head) + bth
            wire = len(head) + 12 + payload + 4
            expect["roce"] += 1
            expect[f"dscp{frame[15] >> 2}"] += 1
            expect[f"ecn{frame[15] & 3}"] += 1
        elif k < 93:  # CNP
            frame = cnp_head + struct.pack("!BBHII", 0x81, 0, 0xFFFF, 0x200 + n % 64, 0) + bytes(16)
            wire = len(frame) + 4
            expect["cnp"] += 1
        elif k < 95:  # PFC on priority 3
            frame = pfc
            wire = len(frame)
            expect["pfc"] += 1
        else:  # TCP, a fifth of it on DSCP 26
            frame = tcp_head[26 if k == 99 else 0] + bytes(20)
            wire = len(frame) + 1000
            expect["tcp"] += 1
        body = frame[:snap]
        records.append(struct.pack("<IIII", t_us // 1_000_000, t_us % 1_000_000, len(body), wire) + body)
        if len(records) >= 65536:
            out.write(b"".join(records))
            records.clear()
    out.write(b"".join(records))
    out.close()
    return dict(expect)


def timed(cmd: list[str], stdout=subprocess.PIPE) -> tuple[float, int, bytes]:
    """Wall seconds, peak RSS (MiB) and stdout of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.DEVNULL, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    data = proc.stdout.read() if stdout is subprocess.PIPE else b""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, usage.ru_maxrss // 1024, data


def scapy_counts(path: Path, limit: int) -> tuple[float, Counter]:
    """Full scapy dissection of the first `limit` packets, the same counts by layer access."""
    from scapy.contrib.roce import BTH
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.l2 import Ether
    from scapy.utils import PcapReader

    counts = Counter()
    t0 = time.perf_counter()
    with PcapReader(str(path)) as reader:
        for i, pkt in enumerate(reader):
            if i >= limit:
                break
            if pkt.haslayer(UDP) and pkt[UDP].dport == 4791:
                # a BTH cut by the snap length stays undissected (its ICRC is missing): read its opcode from the payload
                opcode = pkt[BTH].opcode if pkt.haslayer(BTH) else bytes(pkt[UDP].payload)[0]
                if opcode == 0x81:
                    counts["cnp"] += 1
                    continue
                tos = pkt[IP].tos
                counts["roce"] += 1
                counts[f"dscp{tos >> 2}"] += 1
                counts[f"ecn{tos & 3}"] += 1
            elif pkt.haslayer(TCP):
                counts["tcp"] += 1
            elif pkt.haslayer(Ether) and pkt[Ether].type == 0x8808:
                counts["pfc"] += 1
    return time.perf_counter() - t0, counts


def tshark_counts(path: Path) -> tuple[float, int, Counter] | None:
    tshark = shutil.which("tshark")
    if tshark is None:
        return None
    t0 = time.perf_counter()
    proc = subprocess.Popen([tshark, "-n", "-r", str(path), "-Y", "udp.dstport == 4791 && !(infiniband.bth.opcode == 129)",
                             "-T", "fields", "-e", "ip.dsfield.dscp", "-e", "ip.dsfield.ecn"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    counts = Counter()
    for line in proc.stdout:
        dscp, _, ecn = line.decode().strip().partition("\t")
        counts["roce"] += 1
        counts[f"dscp{dscp}"] += 1
        counts[f"ecn{ecn}"] += 1
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - t0, usage.ru_maxrss // 1024, counts


def rdmatool_counts(summary: dict) -> Counter:
    r = summary["roce"]
    out = Counter({"roce": r["packets"], "cnp": r["cnp"], "pfc": sum(e["frames"] for e in summary["pfc"])})
    for dscp, n in r["dscp"].items():
        out[f"dscp{dscp}"] = n
    for name, code in (("not_ect", 0), ("ect1", 1), ("ect0", 2), ("ce", 3)):
        if r["ecn"][name]:
            out[f"ecn{code}"] = r["ecn"][name]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--packets", type=int, default=2_000_000)
    ap.add_argument("--sample", type=int, default=50_000)
    ap.add_argument("--keep", help="Keep (or reuse) the generated capture at this path.")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pcap-bench-"))
    path = Path(args.keep) if args.keep else work / "bench.pcap"
    t0 = time.perf_counter()
    if not path.exists():
        expect = generate(path, args.packets)
        print(f"generated {args.packets} packets ({path.stat().st_size / 2**20:.0f} MiB) in "
              f"{time.perf_counter() - t0:.1f} s: {expect}", file=sys.stderr)
    results: dict = {"machine": machine(("rdmatool", "scapy", "numpy", "pandas")), "packets": args.packets,
                     "file_mib": round(path.stat().st_size / 2**20, 1)}
    wall, rss, out = timed([sys.executable, "-m", "rdmatool", "pcap", str(path), "--json"])
    summary = json.loads(out)["summary"]
    ours = rdmatool_counts(summary)
    results["rdmatool"] = {"wall_s": round(wall, 2), "peak_rss_mib": rss, "packets": summary["packets"],
                           "flows": summary["roce"]["flows"], "counts": dict(ours)}
    # the same figures on the scapy sample, for the comparison of counts
    sample = work / "sample.pcap"
    with open(path, "rb") as src, open(sample, "wb") as dst:
        dst.write(src.read(24))
        for _ in range(args.sample):
            head = src.read(16)
            dst.write(head + src.read(struct.unpack("<IIII", head)[2]))
    scapy_s, scapy_c = scapy_counts(path, args.sample)
    _, _, sample_out = timed([sys.executable, "-m", "rdmatool", "pcap", str(sample), "--json"])
    sample_ours = rdmatool_counts(json.loads(sample_out)["summary"])
    per_packet = scapy_s / args.sample
    results["scapy"] = {"sample_packets": args.sample, "sample_s": round(scapy_s, 2), "counts": dict(scapy_c),
                        "extrapolated_s": round(per_packet * summary["packets"], 1),
                        "same_counts_as_rdmatool_on_sample": all(scapy_c[k] == sample_ours[k] for k in sample_ours)}
    shark = tshark_counts(path)
    if shark is not None:
        shark_s, shark_rss, shark_c = shark
        same = all(shark_c[k] == ours[k] for k in shark_c if k.startswith(("dscp", "ecn", "roce")))
        results["tshark"] = {"wall_s": round(shark_s, 2), "peak_rss_mib": shark_rss, "same_dscp_ecn_counts": same,
                             "counts": dict(shark_c)}
    results["speedup_vs_scapy"] = round(results["scapy"]["extrapolated_s"] / wall, 1)
    if shark is not None:
        results["speedup_vs_tshark"] = round(results["tshark"]["wall_s"] / wall, 2)
    print(json.dumps(results, indent=2))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
