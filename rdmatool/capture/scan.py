"""One pass over a capture's records: the headers read with plain byte indexing (no dissection), the figures
accumulated as they go. Memory is bounded by the number of flows (and of time bins), never by the packets.

Per record, with the link type's header (Ethernet, 802.1Q / 802.1ad tags, Linux cooked SLL / SLL2, raw IP):
- MAC control (EtherType 0x8808): opcode 0x0101 is PFC — for every priority whose bit is set in the class-enable
  vector, one frame and that priority's quanta (and, with a link rate, the interval it asks to pause: pause_span);
  opcode 0x0001 is the legacy 802.3x PAUSE (`global_pause`).
- IPv4 / IPv6 (extension headers hop-by-hop, routing, destination options and a first fragment are walked):
  DSCP and ECN from the ToS / traffic class; UDP to port 4791 with a BTH (12 bytes) is RoCEv2. Opcode 0x81 is a
  CNP (counted apart: it is no data). The flow is (source IP, destination IP, destination QP).
- PSN continuity per flow, on the opcodes that take one PSN per packet (requests of RC / UC / UD / XRC): a forward
  jump is a gap, a PSN at or below the highest seen is a retransmission. Responses and acknowledgements answer
  another flow's PSNs and are not followed; after an RDMA READ request (it consumes one PSN per response packet)
  the next forward jump is not a gap. Acknowledgements whose AETH syndrome is 011 are NAKs.
- The packet's priority: its VLAN PCP when tagged, else the RoCE priority for the RoCE DSCP, else DSCP >> 3 (the
  NICs' default DSCP-to-priority map). On the RoCE class = the RoCE DSCP or the RoCE priority in a VLAN tag.

Bytes are wire lengths (the record's original length), so a snap length does not change them. Records too short
for a header are counted as packets and otherwise skipped (a snap length of 128 bytes keeps every header read here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rdmatool import limits
from rdmatool.capture.reader import MAX_RECORD, Capture, CaptureError
from rdmatool.config import SITE_DEFAULTS

ROCE_UDP_PORT = 4791
MAX_BINS = 1 << 20  # time bins kept per series; beyond, bins are merged two by two (twice as long)
HIST_STEPS = 64  # per-flow throughput histogram: buckets of e^(1/64) (±0.8 %)
# Flows kept one by one (the run's limits.pcap_flows); the packets of any further flow are counted together as
# "other flows" (no PSN tracking). A flow's record costs a few kB through the summary: 1M distinct flows once took
# 3.8 GB, 50,000 stay near 150 MB, and a host's real traffic is a few thousand queue pairs.
MAX_FLOWS = limits.DEFAULTS["pcap_flows"]
# Records that hold not one byte of a packet: a real capture has none (tcpdump's snap length is never 0), and a sparse
# file of zeros is nothing but them, 16 bytes each (a 1 GiB one once took minutes to walk through).
MAX_EMPTY_RECORDS = 100_000

# Flow record fields (a list: the per-packet path is attribute-free).
(F_PKTS, F_BYTES, F_CE, F_CNP, F_GAPS, F_RETX, F_MAXPSN, F_AFTER_READ, F_BIN, F_BINBYTES, F_FIRSTBIN, F_LASTBIN,
 F_NONEMPTY, F_MAXBIN, F_HIST, F_DSCP) = range(16)

# BTH opcode → what it is for PSN continuity: 0 a request (one PSN), 1 an RDMA READ request, 2 not followed
# (responses, reserved), 3 a CNP, 4 an acknowledgement (its AETH may be a NAK).
_OPCODE_KIND = bytearray([2]) * 256
for _base in (0x00, 0xA0):  # RC, XRC
    for _op in range(0x00, 0x0C):
        _OPCODE_KIND[_base + _op] = 0
    _OPCODE_KIND[_base + 0x0C] = 1
    _OPCODE_KIND[_base + 0x11] = 4
    for _op in (0x13, 0x14, 0x15, 0x16, 0x17):
        _OPCODE_KIND[_base + _op] = 0
for _op in range(0x20, 0x2C):  # UC
    _OPCODE_KIND[_op] = 0
_OPCODE_KIND[0x64] = _OPCODE_KIND[0x65] = 0  # UD
_OPCODE_KIND[0x81] = 3  # CNP

_IP_PROTOCOLS = {1: "icmp", 2: "igmp", 6: "tcp", 17: "udp", 47: "gre", 50: "esp", 58: "icmpv6", 132: "sctp"}
_V6_EXTENSIONS = (0, 43, 60)


@dataclass(frozen=True)
class Options:
    roce_dscp: int = SITE_DEFAULTS["roce_dscp"]  # the site's RoCE class (rdmatool.config: one place for it)
    roce_priority: int = SITE_DEFAULTS["roce_priority"]
    bin_s: float = 0.01
    link_gbps: float | None = None
    max_flows: int = field(default_factory=lambda: limits.value("pcap_flows"))


@dataclass
class Tally:
    """What one pass found (raw, before rdmatool.capture.summary shapes it)."""

    options: Options
    bin_s: float
    packets: int = 0
    first_ts: float | None = None
    last_ts: float | None = None
    pfc: dict = field(default_factory=dict)  # priority → [frames, quanta, {sender MAC bytes}]
    paused: dict = field(default_factory=dict)  # priority → [start, end, seconds before start]: see pause_span
    global_pause: list = field(default_factory=lambda: [0, 0, set()])
    roce_packets: int = 0
    roce_bytes: int = 0
    cnp: int = 0
    dscp: dict = field(default_factory=dict)
    ecn: list = field(default_factory=lambda: [0, 0, 0, 0])
    naks: int = 0
    psn_gaps: int = 0
    retransmissions: int = 0
    off_dscp: int = 0
    roce_by_priority: list = field(default_factory=lambda: [0] * 8)
    flows: dict = field(default_factory=dict)
    # The flows beyond `Options.max_flows`, together: one flow record (its PSN fields unused), not in `flows`.
    other_flows: list = field(default_factory=lambda: new_flow(0))
    other_packets: int = 0
    other_bytes: int = 0
    other_protocols: dict = field(default_factory=dict)
    series: dict = field(default_factory=dict)  # class → {bin: amount}
    undecoded: int = 0  # records of a link type this reader does not know


def new_flow(b: int) -> list:
    return [0, 0, 0, 0, 0, 0, -1, False, b, 0, b, b, 0, 0, {}, {}]


def pause_span(paused: dict, prio: int, ts: float, duration: float) -> None:
    """A PFC frame at `ts` asks `prio` to stop for `duration` seconds from now (zero quanta: XON, resume now).
    `paused[prio]` is the union of the paused intervals so far: [start, end] of the current one and the seconds of
    those before it. A frame within the current interval moves its end (a refreshed XOFF extends it, an XON ends
    it), so a peer that refreshes XOFF before it expires is not counted twice."""
    span = paused.get(prio)
    if span is None:
        paused[prio] = [ts, ts + duration, 0.0]
    elif ts < span[1]:
        span[1] = max(ts, span[0]) + duration
    else:
        span[2] += span[1] - span[0]
        span[0], span[1] = ts, ts + duration


def paused_seconds(span: list, end: float) -> float:
    """The paused time of one priority's intervals (pause_span), the current one cut at the capture's end."""
    return span[2] + max(0.0, min(span[1], end) - span[0])


def close_bin(flow: list) -> None:
    """The flow's current time bin is complete: into its throughput histogram."""
    amount = flow[F_BINBYTES]
    if amount:
        flow[F_NONEMPTY] += 1
        if amount > flow[F_MAXBIN]:
            flow[F_MAXBIN] = amount
        bucket = int(math.log(amount) * HIST_STEPS)
        hist = flow[F_HIST]
        hist[bucket] = hist.get(bucket, 0) + 1
    flow[F_BINBYTES] = 0


def scan(cap: Capture, options: Options) -> Tally:  # noqa: C901 - one loop on purpose: the per-packet path is hot
    """Read every record of `cap`; CaptureError (with the byte offset) when the file is malformed or cut short.

    One function of some 270 lines on purpose, the one exception to the 80-line limit (tests/test_code_sizes.py):
    its loop runs once per packet, millions of times for one capture, and a function per header would add a
    Python call (the cost of several of the byte reads here) to every packet; for the same reason the tallies and
    settings are bound to locals once, before the loop. Comments inside mark its steps (`# --- link layer` ...),
    in the order of the module's docstring."""
    t = Tally(options=options, bin_s=options.bin_s)
    s_roce: dict = {}
    s_other: dict = {}
    s_pfc: dict = {}
    s_cnp: dict = {}
    s_ce: dict = {}
    t.series = {"roce": s_roce, "other_on_roce_class": s_other, "pfc": s_pfc, "cnp": s_cnp, "ce": s_ce}
    roce_dscp, roce_prio = options.roce_dscp, options.roce_priority
    inv_bin = 1.0 / options.bin_s
    flows = t.flows
    spill = t.other_flows
    max_flows = max(1, options.max_flows)
    dscp_counts = t.dscp
    ecn = t.ecn
    by_prio = t.roce_by_priority
    pfc = t.pfc
    paused = t.paused
    # one pause quantum in seconds: 512 bit times at the link rate (none known: no pause time)
    quantum_s = 512 / (options.link_gbps * 1e9) if options.link_gbps and options.link_gbps > 0 else None
    other_protocols = t.other_protocols
    opcode_kind = _OPCODE_KIND
    ng = cap.format == "pcapng"
    tick = cap.tick
    file_linktype = cap.linktype
    tell = cap.handle.tell
    records_end = 24
    last_start = 24
    last_good = tell()
    n = 0
    t0 = None
    ts = 0.0
    tmin = tmax = None
    roce_pkts = roce_bytes = cnp = naks = gaps = retx = off_dscp = 0
    other_pkts = other_bytes = undecoded = empty = 0
    for data, meta in cap.reader:
        if ng:
            last_good = tell()
            linktype = meta[0]
            if meta[2] is not None:
                ts = ((meta[2] << 32) | meta[3]) / meta[1]
            wl = meta[4]
        else:
            caplen = meta[3]
            last_start = records_end
            if caplen > MAX_RECORD:
                raise CaptureError(cap.path, last_start, f"packet record of {caplen} bytes (not a packet: corrupt "
                                                         "file or lost framing)")
            records_end += 16 + caplen
            linktype = file_linktype
            ts = meta[0] + meta[1] * tick
            wl = meta[2]
        n += 1
        if not data:
            empty += 1
            if empty > MAX_EMPTY_RECORDS:
                raise CaptureError(cap.path, last_good if ng else last_start,
                                   f"more than {MAX_EMPTY_RECORDS} records without a byte of packet (a sparse or "
                                   "corrupt file)")
        if t0 is None:
            t0 = tmin = tmax = ts
        elif ts > tmax:
            tmax = ts
        elif ts < tmin:
            tmin = ts
        b = int((ts - t0) * inv_bin)
        if n & 0xFFFF == 0 and max(len(s_roce), len(s_other), len(s_pfc), len(s_cnp), len(s_ce)) > MAX_BINS:
            _coarsen(t, flows)
            inv_bin = 1.0 / t.bin_s
            b = int((ts - t0) * inv_bin)
        # --- link layer → EtherType `et` at offset `p`; VLAN PCP or -1
        pcp = -1
        if linktype == 1:
            if len(data) < 14:
                continue
            et = (data[12] << 8) | data[13]
            p = 14
            if et == 0x8100 or et == 0x88A8:
                if len(data) < 18:
                    continue
                pcp = data[14] >> 5
                et = (data[16] << 8) | data[17]
                p = 18
                if et == 0x8100:  # the C-tag inside an S-tag: the outer PCP is the one the link acts on
                    if len(data) < 22:
                        continue
                    et = (data[20] << 8) | data[21]
                    p = 22
        elif linktype == 113:  # Linux cooked capture (SLL)
            if len(data) < 16:
                continue
            et = (data[14] << 8) | data[15]
            p = 16
        elif linktype == 276:  # SLL2
            if len(data) < 20:
                continue
            et = (data[0] << 8) | data[1]
            p = 20
        elif linktype in (101, 228, 229, 12, 14):  # raw IP
            if not data:
                continue
            version = data[0] >> 4
            et = 0x0800 if version == 4 else 0x86DD if version == 6 else 0
            p = 0
        else:
            undecoded += 1
            continue
        # --- network layer
        if et == 0x0800:
            if len(data) < p + 20:
                continue
            tos = data[p + 1]
            proto = data[p + 9]
            l4 = p + ((data[p] & 15) << 2)
            if (data[p + 6] & 0x1F) or data[p + 7]:
                proto = -1  # a later fragment: no transport header
            src = data[p + 12:p + 16]
            dst = data[p + 16:p + 20]
        elif et == 0x86DD:
            if len(data) < p + 40:
                continue
            tos = ((data[p] & 15) << 4) | (data[p + 1] >> 4)
            proto = data[p + 6]
            src = data[p + 8:p + 24]
            dst = data[p + 24:p + 40]
            l4 = p + 40
            while proto in _V6_EXTENSIONS or proto == 44:
                if len(data) < l4 + 8:
                    proto = -1
                    break
                if proto == 44:
                    if ((data[l4 + 2] << 8) | data[l4 + 3]) & 0xFFF8:
                        proto = -1
                        break
                    proto = data[l4]
                    l4 += 8
                else:
                    proto, l4 = data[l4], l4 + ((data[l4 + 1] + 1) << 3)
        elif et == 0x8808:
            if len(data) < p + 4:
                continue
            opcode = (data[p] << 8) | data[p + 1]
            if opcode == 0x0101 and len(data) >= p + 20:
                enabled = (data[p + 2] << 8) | data[p + 3]
                sender = data[6:12] if linktype == 1 else b""
                xoff = False
                for prio in range(8):
                    if enabled & (1 << prio):
                        q = (data[p + 4 + 2 * prio] << 8) | data[p + 5 + 2 * prio]
                        entry = pfc.get(prio)
                        if entry is None:
                            entry = pfc[prio] = [0, 0, set()]
                        entry[0] += 1
                        entry[1] += q
                        entry[2].add(sender)
                        if quantum_s is not None:
                            pause_span(paused, prio, ts, q * quantum_s)
                        if q:
                            xoff = True
                if xoff:
                    s_pfc[b] = s_pfc.get(b, 0) + 1
            elif opcode == 0x0001 and len(data) >= p + 4:
                gp = t.global_pause
                gp[0] += 1
                gp[1] += (data[p + 2] << 8) | data[p + 3]
                gp[2].add(data[6:12] if linktype == 1 else b"")
            continue
        else:
            if pcp == roce_prio:  # something else (ARP, LLDP, storage protocols) tagged with the RoCE priority
                other_pkts += 1
                other_bytes += wl
                name = f"ethertype_0x{et:04x}"
                other_protocols[name] = other_protocols.get(name, 0) + 1
                s_other[b] = s_other.get(b, 0) + wl
            continue
        dscp = tos >> 2
        # --- RoCEv2?
        if proto == 17 and len(data) >= l4 + 4 and ((data[l4 + 2] << 8) | data[l4 + 3]) == ROCE_UDP_PORT:
            bth = l4 + 8
            if len(data) >= bth + 12:
                op = data[bth]
                kind = opcode_kind[op]
                qp = (data[bth + 5] << 16) | (data[bth + 6] << 8) | data[bth + 7]
            else:  # the BTH is cut off: a RoCE packet all the same, without opcode or PSN
                op, kind, qp = -1, 2, -1
            key = (src, dst, qp)
            f = flows.get(key)
            if f is None:
                if len(flows) < max_flows:
                    f = flows[key] = new_flow(b)
                else:  # the flow table is full: counted with the other flows, memory stays bounded
                    f = spill
            if kind == 3:
                cnp += 1
                f[F_CNP] += 1
                s_cnp[b] = s_cnp.get(b, 0) + 1
                continue
            roce_pkts += 1
            roce_bytes += wl
            dscp_counts[dscp] = dscp_counts.get(dscp, 0) + 1
            e = tos & 3
            ecn[e] += 1
            prio = pcp if pcp >= 0 else roce_prio if dscp == roce_dscp else dscp >> 3
            by_prio[prio] += 1
            if dscp != roce_dscp:
                off_dscp += 1
            f[F_PKTS] += 1
            f[F_BYTES] += wl
            fd = f[F_DSCP]
            fd[dscp] = fd.get(dscp, 0) + 1
            if e == 3:
                f[F_CE] += 1
                s_ce[b] = s_ce.get(b, 0) + 1
            s_roce[b] = s_roce.get(b, 0) + wl
            if b != f[F_BIN]:
                close_bin(f)
                f[F_BIN] = b
                if b > f[F_LASTBIN]:
                    f[F_LASTBIN] = b
                elif b < f[F_FIRSTBIN]:
                    f[F_FIRSTBIN] = b
            f[F_BINBYTES] += wl
            if kind <= 1 and f is not spill:  # PSNs of different flows together would be gaps that are not
                psn = (data[bth + 9] << 16) | (data[bth + 10] << 8) | data[bth + 11]
                top = f[F_MAXPSN]
                if top < 0:
                    f[F_MAXPSN] = psn
                else:
                    d = (psn - top) & 0xFFFFFF
                    if d == 1:
                        f[F_MAXPSN] = psn
                    elif d == 0 or d >= 0x800000:
                        retx += 1
                        f[F_RETX] += 1
                    else:
                        if not f[F_AFTER_READ]:
                            gaps += 1
                            f[F_GAPS] += 1
                        f[F_MAXPSN] = psn
                f[F_AFTER_READ] = kind == 1
            elif kind == 4 and len(data) > bth + 12 and (data[bth + 12] >> 5) == 3:
                naks += 1
            continue
        # --- other traffic on the RoCE class
        if dscp == roce_dscp or pcp == roce_prio:
            other_pkts += 1
            other_bytes += wl
            name = _IP_PROTOCOLS.get(proto) or ("ip_fragment" if proto < 0 else f"ip_proto_{proto}")
            other_protocols[name] = other_protocols.get(name, 0) + 1
            s_other[b] = s_other.get(b, 0) + wl
    if ng:
        cap.check_end(last_good)
    else:
        cap.check_end(records_end, last_start)
    for f in flows.values():
        close_bin(f)
    t.packets = n
    t.first_ts, t.last_ts = tmin, tmax
    t.roce_packets, t.roce_bytes, t.cnp, t.naks, t.psn_gaps, t.retransmissions = (
        roce_pkts, roce_bytes, cnp, naks, gaps, retx)
    t.off_dscp, t.other_packets, t.other_bytes, t.undecoded = off_dscp, other_pkts, other_bytes, undecoded
    return t


def _coarsen(t: Tally, flows: dict) -> None:
    """Too many time bins (a capture spanning hours, or timestamps far apart): bins twice as long."""
    t.bin_s *= 2
    for series in t.series.values():
        merged: dict = {}
        for k, v in series.items():
            merged[k >> 1] = merged.get(k >> 1, 0) + v
        series.clear()
        series.update(merged)
    for f in flows.values():
        f[F_BIN] >>= 1
        f[F_FIRSTBIN] >>= 1
        f[F_LASTBIN] >>= 1
