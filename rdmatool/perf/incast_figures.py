"""What an incast did (rdmatool.perf.incast): figures per group from the goodput of its senders and from the
counters read before and after the load, and the facts the rules of playbooks/45-incast.yaml read. Pure.

Per group (the leaf's port toward the receiver is the congestion point):
- goodput of each sender, its share of the group's total, the total over the receiver's line rate, and Jain's
  fairness index (Σx)² / (n·Σx²) over the senders (1: fair; 1/n: one sender takes everything);
- pause fraction: pause time / the load's duration, for each sender's NIC (received pauses on its lossless
  priority) and each leaf port of the group (pauses it sent or received); the group's is the largest of them;
- ECN mark ratio: marked / packets toward the receiver, at the leaf's egress queue when the switch reports both,
  else at the receiver's NIC;
- CNPs the receiver sent (and per marked packet it received), and those each sender handled or ignored.

A counter that went backwards between the two reads (reset, reboot) gives no figure rather than a wrong one; a
figure the fabric has no counter for is absent, never 0. The load's duration is the requested -D: a real fabric
runs it for that long, and the counter reads bracket it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import pandas as pd

from rdmatool.perf.incast import Group
from rdmatool.perf.model import HostInfo, PairResult
from rdmatool.table.analysis import FACT_COLUMNS

_COUNTERS = ["ecn_marked_packets", "rx_packets", "tx_packets", "cnp_sent", "cnp_handled", "cnp_ignored",
             "rx_pause_duration_us", "tx_pause_duration_us"]
DEFAULT_PRIORITY = 3  # the lossless RoCE priority of docs/tuning.md §1.1, when the host states none


class Deltas:
    """The change of each counter between two analyses, by (target, entity, metric, priority)."""

    def __init__(self, before, after) -> None:
        self.values: dict[tuple, float] = {}
        first = _counter_values(before)
        for key, value in _counter_values(after).items():
            if key in first and value >= first[key]:
                short = key[:4]
                self.values[short] = max(self.values.get(short, 0.0), value - first[key])

    def get(self, target: str, entity: str | None, metric: str, priority: int | None = None) -> float | None:
        """The change on `priority`, else the port total (no priority); None when neither was read twice."""
        if entity is None:
            return None
        if priority is not None and (target, entity, metric, priority) in self.values:
            return self.values[(target, entity, metric, priority)]
        return self.values.get((target, entity, metric, None))


def _counter_values(analysis) -> dict[tuple, float]:
    rows = analysis.query.of_metric(_COUNTERS)
    out: dict[tuple, float] = {}
    for target, entity, metric, priority, raw_key, value in zip(
            rows["target"], rows["entity"], rows["metric"], rows["priority"], rows["raw_key"], rows["value"]):
        if value is None or (isinstance(value, float) and math.isnan(value)) or not isinstance(entity, str):
            continue
        prio = None if pd.isna(priority) else int(priority)
        out[(target, entity, metric, prio, raw_key)] = float(value)
    return out


def lossless_priority(analysis, host: str, netdev: str | None) -> int:
    """The priority the host made lossless on the netdev it tests with (3 when several or none say otherwise)."""
    rows = analysis.query.rows(target=host, entity=netdev, metric="pfc_enabled") if netdev else None
    prios = sorted(int(p) for p, v in zip(rows["priority"], rows["value"], strict=True) if v == 1 and not pd.isna(p)) \
        if rows is not None and not rows.empty else []
    return DEFAULT_PRIORITY if not prios or DEFAULT_PRIORITY in prios else prios[0]


def jain(values: list[float]) -> float | None:
    """Jain's fairness index; None with fewer than two values or nothing sent."""
    if len(values) < 2 or sum(values) <= 0:
        return None
    return sum(values) ** 2 / (len(values) * sum(v * v for v in values))


def _ratio(numerator, denominator) -> float | None:
    return numerator / denominator if numerator is not None and denominator else None


def _fraction(pause_us, seconds: float) -> float | None:
    return min(1.0, pause_us / (seconds * 1e6)) if pause_us is not None else None


def _rdma_port(info: HostInfo | None) -> str | None:
    """The entity of a port's hw_counters facts (`mlx5_1/1`)."""
    return f"{info.device}/{info.ib_port}" if info else None


def group_figures(group: Group, results: list[PairResult], infos: Mapping[str, HostInfo], before, after,
                  seconds: float) -> dict:
    """The figures of one group (a JSON-ready dict): the group's, the receiver's and each sender's."""
    d = Deltas(before, after)
    by_sender = {r.client: r for r in results if r.server == group.receiver}
    rinfo = infos.get(group.receiver)
    rprio = lossless_priority(after, group.receiver, rinfo.netdev if rinfo else None)
    receiver = {"host": group.receiver, "netdev": rinfo.netdev if rinfo else None}
    marks = d.get(group.receiver, _rdma_port(rinfo), "ecn_marked_packets")
    if marks is None and rinfo:
        marks = d.get(group.receiver, rinfo.netdev, "ecn_marked_packets", rprio)
    packets = d.get(group.receiver, rinfo.netdev, "rx_packets", rprio) if rinfo else None
    receiver["ecn_mark_ratio"] = _ratio(marks, packets)
    receiver["cnp_sent"] = d.get(group.receiver, _rdma_port(rinfo), "cnp_sent")
    receiver["cnp_per_mark"] = _ratio(receiver["cnp_sent"], marks)
    senders = []
    for sender in group.senders:
        info, r = infos.get(sender), by_sender.get(sender)
        prio = lossless_priority(after, sender, info.netdev if info else None)
        senders.append({
            "host": sender, "netdev": info.netdev if info else None,
            "goodput_gbps": r.bw_avg_gbps if r is not None and r.ok else None,
            "error": r.error if r is not None else "not run",
            "pause_fraction": _fraction(d.get(sender, info.netdev, "rx_pause_duration_us", prio) if info else None,
                                        seconds),
            "cnp_handled": d.get(sender, _rdma_port(info), "cnp_handled"),
            "cnp_ignored": d.get(sender, _rdma_port(info), "cnp_ignored"),
        })
    measured = [s["goodput_gbps"] for s in senders if s["goodput_gbps"] is not None]
    total = sum(measured) if measured else None
    for s in senders:
        s["goodput_share"] = _ratio(s["goodput_gbps"], total)
    pauses = [s["pause_fraction"] for s in senders if s["pause_fraction"] is not None]
    switch_ratio = None
    if group.switch:
        for port in (group.port, *(p for _, p in group.sender_ports)):
            for metric in ("tx_pause_duration_us", "rx_pause_duration_us"):
                got = _fraction(d.get(group.switch, port, metric, rprio), seconds)
                if got is not None:
                    pauses.append(got)
        switch_ratio = _ratio(d.get(group.switch, group.port, "ecn_marked_packets", rprio),
                              d.get(group.switch, group.port, "tx_packets", rprio))
    handled = [s["cnp_handled"] for s in senders if s["cnp_handled"] is not None]
    ignored = [s["cnp_ignored"] for s in senders if s["cnp_ignored"] is not None]
    return {
        **group.as_dict(), "duration_s": seconds, "fan_in": len(group.senders),
        "goodput_gbps": total,
        "goodput_efficiency": _ratio(total, rinfo.rate_gbps if rinfo else None) if len(measured) == len(senders)
        else None,
        "fairness": jain(measured) if len(measured) == len(senders) else None,
        "pause_fraction": max(pauses) if pauses else None,
        "ecn_mark_ratio": switch_ratio if switch_ratio is not None else receiver["ecn_mark_ratio"],
        "ecn_mark_ratio_at": "switch" if switch_ratio is not None else "receiver",
        "cnp_sent": receiver["cnp_sent"], "cnp_handled": sum(handled) if handled else None,
        "cnp_ignored": sum(ignored) if ignored else None,
        "receiver_figures": receiver, "sender_figures": senders,
    }


def facts(figures: list[dict], meta: Mapping[str, tuple]) -> list[dict]:
    """The figures as fact rows (rdmatool.table.analysis.FACT_COLUMNS) for the rules: a group's on its leaf and the
    leaf's port toward the receiver (`fabric` and the receiver's name when the cabling is not known), the
    receiver's and each sender's on the host and its netdev. `meta`: target -> (kind, platform, role)."""
    rows: list[dict] = []

    def row(target, entity, metric, value=None, text=None, window=None) -> None:
        if value is None and text is None:
            return  # a figure the fabric had no counter for stays absent
        kind, platform, role = meta.get(target, ("fabric", None, None))
        rows.append({**dict.fromkeys(FACT_COLUMNS), "target": target, "kind": kind, "platform": platform,
                     "role": role, "entity": entity, "metric": metric, "value": value, "text": text, "flag": "",
                     "raw_key": "incast", "window_s": window})

    for g in figures:
        put = functools.partial(row, window=float(g["duration_s"]))
        target, entity = (g["switch"], g["port"]) if g["switch"] else ("fabric", g["receiver"])
        put(target, entity, "incast_receiver", text=g["receiver"])
        put(target, entity, "incast_fan_in", float(g["fan_in"]))
        for key in ("goodput_gbps", "goodput_efficiency", "fairness", "pause_fraction", "ecn_mark_ratio",
                    "cnp_sent", "cnp_handled", "cnp_ignored"):
            put(target, entity, f"incast_{key}", g[key])
        rec = g["receiver_figures"]
        put(rec["host"], rec["netdev"], "incast_ecn_mark_ratio", rec["ecn_mark_ratio"])
        put(rec["host"], rec["netdev"], "incast_cnp_sent", rec["cnp_sent"])
        put(rec["host"], rec["netdev"], "incast_cnp_per_mark", rec["cnp_per_mark"])
        for s in g["sender_figures"]:
            for key in ("goodput_gbps", "goodput_share", "pause_fraction", "cnp_handled", "cnp_ignored"):
                put(s["host"], s["netdev"], f"incast_{key}", s[key])
    return rows
