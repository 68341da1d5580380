"""A scan's tally → the public `summary` object of `rdmatool pcap --json` (and the figures its facts are made of).

summary keys: packets, duration_s, pfc, global_pause, roce, flows, other_on_roce_class, periodic.
- pfc: [{priority, frames, quanta, pause_time_s, paused_s, paused_fraction, senders}] for each priority seen in a
  PFC frame's enable vector; pause_time_s = quanta x 512 bit times at the link rate (null without one); paused_s the
  time the priority was paused, the union of the intervals the frames ask for (a refreshed XOFF counted once, an
  XON ending one early, the last cut at the capture's end: scan.pause_span), and paused_fraction that time over
  duration_s (null without a link rate or a duration); global_pause: frames, quanta, pause_time_s and senders.
- roce: {packets, bytes (non-CNP RoCEv2), cnp, dscp {"26": n}, ecn {not_ect, ect0, ect1, ce}, flows, other_flows,
  naks, psn_gaps, retransmissions}; dscp and ecn count the same packets as `packets`. `flows` counts the flows kept
  one by one (at most `Options.max_flows`, the run's limits.pcap_flows by default: the memory bound); the packets of any further
  flow are in other_flows {packets, bytes, cnp, ce}, without PSN checks.
- flows: [{src, dst, dest_qp, packets, bytes, dscp (the flow's most common), ce, cnp, psn_gaps, gbps_p50,
  gbps_max}], most bytes first. A CNP travels against the data, so it counts on the flow it is addressed to
  (source: the notification point). Throughput per time bin over the flow's active span (bins without packets
  count as 0); the median comes from a histogram of bins (within 1 %), the maximum is exact.
- other_on_roce_class: {packets, bytes, by_protocol}.
- periodic: {roce, other_on_roce_class, pfc, cnp: {period_s, strength, bursts, coincides_with_pause,
  coincides_with_ce}} plus bin_s (see rdmatool.capture.periodic).
"""

from __future__ import annotations

import ipaddress
import math

import numpy as np

from rdmatool.capture import periodic
from rdmatool.capture.scan import (
    F_BYTES,
    F_CE,
    F_CNP,
    F_DSCP,
    F_FIRSTBIN,
    F_GAPS,
    F_HIST,
    F_LASTBIN,
    F_MAXBIN,
    F_NONEMPTY,
    F_PKTS,
    HIST_STEPS,
    MAX_BINS,
    Tally,
    paused_seconds,
)

CLASSES = ("roce", "other_on_roce_class", "pfc", "cnp")
ECN_NAMES = ("not_ect", "ect0", "ect1", "ce")
_ECN_CODES = (0, 2, 1, 3)  # ECT(0) is 0b10, ECT(1) 0b01


def pause_time_s(quanta: int, link_gbps: float | None) -> float | None:
    """PFC / PAUSE quanta are 512 bit times each."""
    if not link_gbps or link_gbps <= 0:
        return None
    return round(quanta * 512 / (link_gbps * 1e9), 9)


def summarise(t: Tally) -> dict:
    link = t.options.link_gbps
    duration = (t.last_ts - t.first_ts) if t.packets and t.first_ts is not None else 0.0
    pfc = [{"priority": prio, "frames": entry[0], "quanta": entry[1], "pause_time_s": pause_time_s(entry[1], link),
            **_paused(t, prio, duration), "senders": sorted(_mac(m) for m in entry[2])}
           for prio, entry in sorted(t.pfc.items())]
    gp = t.global_pause
    flows = [_flow(key, f, t.bin_s) for key, f in t.flows.items()]
    flows.sort(key=lambda f: (-f["bytes"], -f["cnp"], f["src"], f["dst"], f["dest_qp"] if f["dest_qp"] is not None
                              else -1))
    return {
        "packets": t.packets,
        "duration_s": round(duration, 9),
        "pfc": pfc,
        "global_pause": {"frames": gp[0], "quanta": gp[1], "pause_time_s": pause_time_s(gp[1], link),
                         "senders": sorted(_mac(m) for m in gp[2])},
        "roce": {
            "packets": t.roce_packets,
            "bytes": t.roce_bytes,
            "cnp": t.cnp,
            "dscp": {str(k): v for k, v in sorted(t.dscp.items())},
            "ecn": {name: t.ecn[code] for name, code in zip(ECN_NAMES, _ECN_CODES, strict=True)},
            "flows": len(t.flows),
            # the flows beyond the flow table's cap (Options.max_flows), counted together; none in `flows` below
            "other_flows": {"packets": t.other_flows[F_PKTS], "bytes": t.other_flows[F_BYTES],
                            "cnp": t.other_flows[F_CNP], "ce": t.other_flows[F_CE]},
            "naks": t.naks,
            "psn_gaps": t.psn_gaps,
            "retransmissions": t.retransmissions,
        },
        "flows": flows,
        "other_on_roce_class": {"packets": t.other_packets, "bytes": t.other_bytes,
                                "by_protocol": dict(sorted(t.other_protocols.items()))},
        "periodic": periodicity(t),
    }


def _paused(t: Tally, prio: int, duration: float) -> dict:
    """paused_s and paused_fraction of one priority (null without a link rate; the fraction also without a
    duration)."""
    span = t.paused.get(prio)
    if span is None or t.last_ts is None:
        return {"paused_s": None, "paused_fraction": None}
    seconds = paused_seconds(span, t.last_ts)
    return {"paused_s": round(seconds, 9),
            "paused_fraction": round(min(seconds / duration, 1.0), 6) if duration > 0 else None}


def series_arrays(t: Tally) -> tuple[dict[str, np.ndarray], float]:
    """The classes' binned series as arrays over one common span, and the bin length (longer than asked when the
    span would exceed MAX_BINS bins)."""
    keys = [k for s in t.series.values() for k in s]
    if not keys:
        return {name: np.zeros(0) for name in t.series}, t.bin_s
    low, high = min(keys), max(keys)
    factor = max(1, math.ceil((high - low + 1) / MAX_BINS))
    size = (high - low) // factor + 1
    out = {}
    for name, series in t.series.items():
        arr = np.zeros(size)
        if series:
            idx = (np.fromiter(series.keys(), dtype=np.int64, count=len(series)) - low) // factor
            np.add.at(arr, idx, np.fromiter(series.values(), dtype=float, count=len(series)))
        out[name] = arr
    return out, t.bin_s * factor


def periodicity(t: Tally) -> dict:
    arrays, bin_s = series_arrays(t)
    pause = periodic.peaks(arrays["pfc"])
    ce = periodic.peaks(arrays["ce"])
    out: dict = {"bin_s": bin_s}
    for name in CLASSES:
        x = arrays[name]
        found = periodic.period(x)
        mine = periodic.peaks(x)
        out[name] = {
            "period_s": round(found[0] * bin_s, 9) if found else None,
            "strength": round(found[1], 4) if found else None,
            "bursts": _runs(mine),
            "coincides_with_pause": None if name == "pfc" else _round(periodic.coincidence(mine, pause)),
            "coincides_with_ce": _round(periodic.coincidence(mine, ce)),
        }
    return out


def _runs(mask: np.ndarray) -> int:
    if not len(mask):
        return 0
    return int(mask[0]) + int(np.count_nonzero(mask[1:] & ~mask[:-1]))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _flow(key: tuple, f: list, bin_s: float) -> dict:
    src, dst, qp = key
    dscps = f[F_DSCP]
    return {
        "src": _ip(src), "dst": _ip(dst), "dest_qp": qp if qp >= 0 else None,
        "packets": f[F_PKTS], "bytes": f[F_BYTES],
        "dscp": max(sorted(dscps), key=dscps.get) if dscps else None,
        "ce": f[F_CE], "cnp": f[F_CNP], "psn_gaps": f[F_GAPS],
        "gbps_p50": _gbps(_median_bin(f), bin_s), "gbps_max": _gbps(f[F_MAXBIN], bin_s),
    }


def _median_bin(f: list) -> float:
    """The median of the flow's bin byte counts over its active span, from its histogram (empty bins are 0)."""
    if not f[F_PKTS]:
        return 0.0
    span = f[F_LASTBIN] - f[F_FIRSTBIN] + 1
    nonempty = f[F_NONEMPTY]
    total = max(span, nonempty)
    rank = (total + 1) // 2  # the lower median, 1-based
    zeros = total - nonempty
    if rank <= zeros:
        return 0.0
    seen = zeros
    for bucket in sorted(f[F_HIST]):
        seen += f[F_HIST][bucket]
        if seen >= rank:
            return min(math.exp((bucket + 0.5) / HIST_STEPS), float(f[F_MAXBIN]))
    return float(f[F_MAXBIN])


def _gbps(amount: float, bin_s: float) -> float:
    return round(amount * 8 / bin_s / 1e9, 6)


def _ip(raw: bytes) -> str:
    try:
        return str(ipaddress.ip_address(bytes(raw)))
    except ValueError:
        return raw.hex()


def _mac(raw: bytes) -> str:
    return ":".join(f"{b:02x}" for b in raw) if raw else "unknown"
