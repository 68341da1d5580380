"""What storage reads did to the compute class: the pause counters of the storage nodes, their clients and their
switches, read before and after the reads (as the gate's incast stage reads them: rdmatool.perf.incast_figures),
on the priority the site's RoCE (compute) traffic is lossless on. Pure: two analyses in, figures and facts out.

Storage traffic that shares the compute class, or leaks into it (a DSCP map that puts both on one priority), pauses
the training collectives whenever the storage plane congests: the reads are many-to-one, and PFC holds back every
flow of the paused priority on that link, not only the storage ones. A port paused on the compute priority for
more than PAUSED_SHARE of the read's duration is named, with the host or switch, the priority and the storage
nodes being read; the figure is the share of the read the port was paused (received or sent pause time, the
larger), so the background pauses of a busy fabric (a few microseconds a second) stay below it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from rdmatool.perf.incast_figures import Deltas, lossless_priority
from rdmatool.table.analysis import FACT_COLUMNS

# A port paused on the compute priority for more than this share of the storage read is named: a fabric's own
# background pauses are some 1e-5 of the time, a congested class's several percent.
PAUSED_SHARE = 0.01
_PAUSES = ("rx_pause_duration_us", "tx_pause_duration_us")


def figures(before, after, storage_nodes: Iterable[str], targets: Mapping[str, str], priority: int,
            seconds: float, storage_netdevs: Mapping[str, str | None] | None = None) -> dict:
    """The ports of `targets` (name -> kind, `host` or `switch`) paused on `priority` during the read (`seconds`
    long), most paused first, each with its share of the read; the storage nodes' own lossless priority beside
    the compute one (the storage class shares it, or differs and leaks into it)."""
    deltas = Deltas(before, after)
    paused: dict[tuple[str, str], dict] = {}
    for (target, entity, metric, prio), grown in deltas.values.items():
        if target not in targets or metric not in _PAUSES or prio != priority or grown <= 0:
            continue
        share = min(1.0, grown / (seconds * 1e6)) if seconds > 0 else None
        key = (target, entity)
        if share is not None and share > paused.get(key, {}).get("share", -1.0):
            paused[key] = {"target": target, "kind": targets[target], "entity": entity, "share": share,
                           "direction": "received" if metric.startswith("rx") else "sent"}
    ports = sorted(paused.values(), key=lambda p: (-p["share"], p["target"], p["entity"]))
    nodes = sorted(set(storage_nodes))
    classes = sorted({lossless_priority(after, n, (storage_netdevs or {}).get(n)) for n in nodes})
    return {"priority": priority, "duration_s": seconds, "storage_nodes": nodes, "storage_priorities": classes,
            "ports": ports, "paused": [p for p in ports if p["share"] > PAUSED_SHARE]}


def _port(p: dict) -> str:
    return f"{p['target']} {p['entity']} ({100 * p['share']:.1f} % of the read)"


def facts(fig: dict, roles: Mapping[str, str | None] | None = None) -> list[dict]:
    """The figures as facts on `fabric`, entity `storage` (raw_key `storage`), for the rule storage_pauses_compute
    (playbooks/80-storage.yaml): `storage_compute_pause_verdict` paused | clear, `storage_compute_pause_fraction`
    (the most paused port's share), `storage_paused_ports`, `storage_read_nodes`, `storage_compute_priority`,
    `storage_class` (whether the storage nodes' lossless class is the compute one) and `storage_pause_record`."""
    paused, prio = fig["paused"], fig["priority"]
    storage = fig["storage_priorities"]
    if storage == [prio]:
        said = f"the storage nodes share the compute class (priority {prio})"
    elif prio in storage or not storage:
        said = f"the storage nodes are lossless on priorities {', '.join(map(str, storage)) or 'none read'}"
    else:
        said = (f"the storage nodes' class (priority {', '.join(map(str, storage))}) differs from the compute "
                f"class, yet the compute class paused: their traffic reaches priority {prio} (DSCP map, trust mode)")
    values = {
        "storage_compute_pause_verdict": (None, "paused" if paused else "clear"),
        "storage_compute_pause_fraction": (paused[0]["share"] if paused else
                                           (fig["ports"][0]["share"] if fig["ports"] else 0.0), None),
        "storage_paused_ports": (None, ", ".join(_port(p) for p in paused) or "none"),
        "storage_read_nodes": (None, ", ".join(fig["storage_nodes"])),
        "storage_compute_priority": (float(prio), None),
        "storage_class": (None, said),
        "storage_pause_record": (None, json.dumps(fig, default=str)),
    }
    return [{**dict.fromkeys(FACT_COLUMNS), "target": "fabric", "kind": "fabric", "role": (roles or {}).get("fabric"),
             "entity": "storage", "metric": metric, "value": value, "text": text, "raw_key": "storage", "flag": "",
             "priority": prio, "window_s": float(fig["duration_s"])}
            for metric, (value, text) in values.items()]
