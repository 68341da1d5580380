"""Real capture files for the tests, written with scapy: RoCEv2 (scapy.contrib.roce BTH / AETH / CNP) over
Ethernet, 802.1Q, IPv4 and IPv6; MAC control frames (PFC, 802.3x PAUSE) as raw bytes; TCP and other traffic."""

from __future__ import annotations

import struct
from pathlib import Path

from scapy.contrib.roce import AETH, BTH, CNPPadding
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw
from scapy.utils import PcapNgWriter, PcapWriter

SRC_MAC, DST_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
SEND_ONLY, READ_REQUEST, ACK, CNP = 0x04, 0x0C, 0x11, 0x81


def roce(src="10.0.0.1", dst="10.0.0.2", qp=0x11, psn=0, opcode=SEND_ONLY, dscp=26, ecn=2, vlan=None, pcp=3,
         payload=1024, ipv6=False, syndrome=None):
    """One RoCEv2 packet; `syndrome` adds an AETH (acknowledgements)."""
    ip = IPv6(src=src, dst=dst, tc=(dscp << 2) | ecn) if ipv6 else IP(src=src, dst=dst, tos=(dscp << 2) | ecn)
    bth = BTH(opcode=opcode, dqpn=qp, psn=psn, pkey=0xFFFF)
    if opcode == CNP:
        body = bth / CNPPadding()
    elif syndrome is not None:
        body = bth / AETH(syndrome=syndrome, msn=1)
    else:
        body = bth / Raw(bytes(payload))
    l2 = Ether(src=SRC_MAC, dst=DST_MAC)
    if vlan is not None:
        l2 = l2 / Dot1Q(vlan=vlan, prio=pcp)
    return l2 / ip / UDP(sport=49152, dport=4791) / body


def cnp(src="10.0.0.2", dst="10.0.0.1", qp=0x22, dscp=48):
    return roce(src=src, dst=dst, qp=qp, opcode=CNP, dscp=dscp, ecn=0)


def tcp(src="10.0.0.1", dst="10.0.0.3", dscp=0, vlan=None, pcp=0, payload=1000):
    l2 = Ether(src=SRC_MAC, dst=DST_MAC)
    if vlan is not None:
        l2 = l2 / Dot1Q(vlan=vlan, prio=pcp)
    return l2 / IP(src=src, dst=dst, tos=dscp << 2) / TCP(sport=40000, dport=5201) / Raw(bytes(payload))


def pfc_frame(quanta: dict[int, int], sender: bytes = b"\x02\x00\x00\x00\x00\x09") -> bytes:
    """An 802.1Qbb PFC frame: MAC control, opcode 0x0101, the class-enable vector and eight quanta (raw bytes)."""
    enabled = sum(1 << prio for prio in quanta)
    times = [quanta.get(prio, 0) for prio in range(8)]
    body = struct.pack("!HH8H", 0x0101, enabled, *times)
    return b"\x01\x80\xc2\x00\x00\x01" + sender + b"\x88\x08" + body + bytes(26)


def pause_frame(quanta: int, sender: bytes = b"\x02\x00\x00\x00\x00\x0a") -> bytes:
    """A legacy 802.3x PAUSE frame (opcode 0x0001)."""
    return b"\x01\x80\xc2\x00\x00\x01" + sender + b"\x88\x08" + struct.pack("!HH", 0x0001, quanta) + bytes(42)


def write(path: Path, packets: list, fmt: str = "pcap", snaplen: int = 65535, start: float = 1_700_000_000.0,
          step: float = 0.0001) -> Path:
    """Write `packets` (scapy packets, raw frames, or (time, packet) pairs) as pcap or pcapng with scapy.
    A snap length below a packet's size truncates it as tcpdump -s would (the original length is kept)."""
    if fmt == "pcapng":
        writer = PcapNgWriter(str(path))
        writer.linktype = 1
    else:
        writer = PcapWriter(str(path), linktype=1, snaplen=snaplen)
    for index, item in enumerate(packets):
        when, pkt = item if isinstance(item, tuple) else (start + index * step, item)
        data = bytes(pkt)
        if not writer.header_present:
            writer.write_header(data)
        if fmt == "pcapng":  # the pcapng writer takes the time as one number of seconds
            writer.write_packet(data[:snaplen], sec=when, wirelen=len(data))
        else:
            sec = int(when)
            writer.write_packet(data[:snaplen], sec=sec, usec=int(round((when - sec) * 1e6)), wirelen=len(data))
    writer.close()
    return path


def pcap_cli(*args: str):
    """`rdmatool pcap ARGS` run in this process through the real command line (typer's test runner): the same
    parsing, output and exit code as a subprocess, without an interpreter start per capture. The end-to-end tests
    run the installed command."""
    from types import SimpleNamespace

    from typer.testing import CliRunner

    from rdmatool.cli import app

    result = CliRunner().invoke(app, ["pcap", *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout, stderr=result.stderr)


def periodic_bursts(pause_at_ms: int | None = None) -> list:
    """One second of steady RoCE with storage-like TCP bursts on DSCP 26 every 100 ms: each burst followed by PFC
    pauses, or, with `pause_at_ms`, pauses at that offset within each period instead (out of step with the bursts).
    (time, packet) pairs in time order."""
    packets = []
    for ms in range(1000):
        t = 10.0 + ms / 1000
        packets.append((t, roce(psn=ms)))
        if ms % 100 < 5:
            packets += [(t + 0.0001 * k, tcp(dscp=26)) for k in range(1, 6)]
            if pause_at_ms is None:
                packets.append((t + 0.0008, pfc_frame({3: 500})))
        if pause_at_ms is not None and ms % 100 == pause_at_ms:
            packets.append((t, pfc_frame({3: 500})))
    return sorted(packets, key=lambda x: x[0])
