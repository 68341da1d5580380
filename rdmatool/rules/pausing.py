"""Rule kind `pauses_sent_vs_marks`: a switch that pauses its senders on a priority while its ECN marks stay near
zero there. "ECN fires after PFC" seen from the switch that does the pausing (docs/tuning.md §2.5, row 6).

A switch pauses its senders (its transmitted PFC on the priority) when an egress queue backs up to the XOFF
trigger of the ingress priority group; with working ECN the same queue crosses Kmin first, its packets are marked
and DCQCN slows the senders before any pause. Pausing while marking (almost) nothing names that switch's ECN
thresholds. The other direction, a switch port held paused by its host (the host's transmitted PFC), is the host's
story first (a storm, a slow receiver): kinds.ecn_vs_pause and the storm rules judge it, not this kind.

Per switch and priority:
- the paused share of each port's peer: the switch's own `tx_pause_fraction` (Cumulus and Onyx count the time they
  keep the peer paused), else the `rx_pause_fraction` the peer at the other end of the cable counts on the priority
  (SONiC, EOS and NX-OS count frames only, and a frame count says little about time): a host's, or a switch's own
  count (never one it was given from its own far end). The cables are the bundle's LLDP, a port named by its alias
  (SONiC) resolved to the switch's name for it;
- the switch's mark ratio on the priority: its ECN-marked packets over its transmitted packets, summed over its
  ports as rates (per priority where the switch counts per priority, else a port's own total; a port-wide mark
  count over one priority's packets can only overstate the ratio, never raise a false alarm). The ports' packet
  counts may be read at their far end (rdmatool.topology.far_end). Not judged below `min_packets`;
- a switch held paused itself on the priority (`rx_pause_fraction` of a port above `paused_above`, its own or read
  at the far end) only passes on back-pressure from downstream, a storming host or a slow receiver: not named.

One hit per switch and priority; the paused ports and the peers at the other end of their cables (the hosts it
pauses, or a switch) are the evidence (`details.paused`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from rdmatool.metrics import rate_name
from rdmatool.platforms.port_names import PortNames, port_key
from rdmatool.table.facts import FactQuery

if TYPE_CHECKING:
    from rdmatool.rules.kinds import Context
    from rdmatool.rules.rule import Rule

_TARGET_KEYS = ("kind", "role", "platform", "link_layer")


def pauses_sent_vs_marks(facts, rule: Rule, ctx: Context) -> pd.DataFrame:
    # kinds registers this kind, so its helpers are imported when a rule runs, not when the module loads
    from rdmatool.rules.kinds import HIT_COLUMNS, empty_hits

    p = rule.params
    query = ctx.query_of(facts)
    limit = float(p["paused_above"])
    switches = query.targets_where({k: v for k, v in rule.where.items() if k in _TARGET_KEYS})
    priorities = _priorities(rule.where)
    names = _names(query)
    paused = [row for row in _paused_ports(query, ctx.links, switches, priorities, p["metric"], names)
              if row["paused"] > limit]
    if not paused:
        return empty_hits()
    by_switch: dict[tuple, list[dict]] = {}
    for row in paused:
        by_switch.setdefault((row["switch"], row["priority"]), []).append(row)
    held = _held_paused(query, set(by_switch), limit)
    out = []
    for (switch, prio), ports in sorted(by_switch.items()):
        if (switch, prio) in held:
            continue
        marked, packets = _mark_ratio(query, switch, prio)
        if marked is None or packets < float(p.get("min_packets", 1000)) or marked >= float(p["marked_below"]):
            continue
        ports = sorted(ports, key=lambda r: (-r["paused"], str(r["switch_port"])))
        out.append({
            "target": switch, "entity": None, "priority": prio, "observed": ports[0]["paused"],
            "expected": f"ECN marks >= {p['marked_below']} of packets before the switch pauses its senders "
                        f"{p['paused_above']} of the time",
            "baseline": _named(ports, marked), "window_s": ports[0]["window_s"],
            "details": {"paused": [{k: r[k] for k in ("switch_port", "peer", "peer_port", "paused", "read_at")}
                                   for r in ports], "marked": marked, "packets": packets},
        })
    return pd.DataFrame(out, columns=[*HIT_COLUMNS, "details"]) if out else empty_hits()


def _priorities(where: dict) -> set[int] | None:
    wanted = where.get("priority")
    if wanted is None:
        return None
    return {int(x) for x in (wanted if isinstance(wanted, list) else [wanted])}


def _rows(query: FactQuery, metric: str, where: dict) -> pd.DataFrame:
    return query.take(query.select(metric, where))


def _names(query: FactQuery) -> PortNames:
    """The switches' ports under their own names: a host's LLDP may name a SONiC port by its alias (`etp1`), the
    switch's own LLDP and counters by its name (`Ethernet0`); both rows of one cable are one port."""
    aliases = _rows(query, "port_alias", {"kind": "switch"})
    return PortNames.build((), [(t, e, x) for t, e, x in zip(aliases["target"], aliases["entity"], aliases["text"])
                                if isinstance(e, str) and isinstance(x, str)])


def _paused_ports(query: FactQuery, links: pd.DataFrame | None, switches: set, priorities: set[int] | None,
                  metric: str, names: PortNames) -> list[dict]:
    """Each switch port's paused share of its peer per priority: the switch's own figure, else its host's. The
    peer is whatever LLDP saw at the other end of the cable (a host, or another switch), the host's netdev when
    the share was read there."""
    cabled = {}  # (switch, port key) → (peer, its port, the switch port as LLDP names it)
    if links is not None and not links.empty:
        for host, host_port, switch, switch_port in zip(links["host"], links["host_port"], links["switch"],
                                                        links["switch_port"]):
            if switch in switches and isinstance(switch_port, str):
                cabled.setdefault((switch, names.key(switch, switch_port)),
                                  (host, host_port, names.name(switch, switch_port)))
    out: dict[tuple, dict] = {}
    own = _rows(query, metric, {"kind": "switch"})
    for t, e, pr, x, w in zip(own["target"], own["entity"], own["priority"], own["value"], own["window_s"]):
        if t not in switches or pd.isna(pr) or pd.isna(x) or not isinstance(e, str):
            continue
        if priorities is not None and int(pr) not in priorities:
            continue
        peer, peer_port, _ = cabled.get((t, names.key(t, e)), (None, None, None))
        key = (t, names.key(t, e), int(pr))
        if key not in out or float(x) > out[key]["paused"]:
            out[key] = _port(t, e, int(pr), float(x), w, peer, peer_port, "switch")
    at_peers = _peer_shares(query, {(h, hp) for h, hp, _ in cabled.values()}, names)
    for (switch, key), (peer, peer_port, switch_port) in sorted(cabled.items()):
        for prio, (x, w, name, read_at) in sorted(at_peers.get((peer, peer_port), {}).items()):
            if (priorities is None or prio in priorities) and (switch, key, prio) not in out:
                out[(switch, key, prio)] = _port(switch, switch_port, prio, x, w, peer, name, read_at)
    return list(out.values())


def _port(switch, entity, prio, paused, window, peer, peer_port, read_at) -> dict:
    return {"switch": switch, "switch_port": entity, "priority": prio, "paused": paused, "peer": peer,
            "peer_port": peer_port, "read_at": read_at, "window_s": float(window) if pd.notna(window) else np.nan}


def _peer_shares(query: FactQuery, ends: set[tuple], names: PortNames) -> dict[tuple, dict[int, tuple]]:
    """(peer, port as LLDP names it) → {priority: (the share of the window it was paused, window, its port's name,
    where it was read)}: the received pause time at the other end of the cable. A host's netdev (LLDP names a
    netdev, or an RDMA device whose netdev fact ties it to one); a switch peer's own count on that port (Cumulus
    and Onyx count it), never one it was given from its own far end."""
    peers = {h for h, _ in ends}
    shares = query.take(query.select("rx_pause_fraction", {"target": sorted(peers)}))
    if shares.empty:
        return {}
    names_of = _rows(query, "netdev", {"kind": "host"})
    netdev_of = {(t, str(e).split("/")[0]): text for t, e, text in
                 zip(names_of["target"], names_of["entity"], names_of["text"])
                 if t in peers and isinstance(text, str) and text}
    out: dict[tuple, dict[int, tuple]] = {}
    for peer, peer_port in ends:
        kind = query.kind_platform(peer)
        mine = shares[(shares["target"] == peer) & shares["priority"].notna() & shares["value"].notna()]
        if kind and kind[0] == "switch":
            name, read_at = names.name(peer, peer_port), "peer switch"
            wanted = names.key(peer, name)
            keep = [isinstance(e, str) and names.key(peer, e) == wanted and not str(raw).startswith("far end ")
                    for e, raw in zip(mine["entity"], mine["raw_key"])]
            mine = mine[np.asarray(keep, dtype=bool)]
        else:
            name, read_at = netdev_of.get((peer, str(peer_port).split("/")[0]), peer_port), "host"
            mine = mine[mine["entity"] == name]
        for prio, x, w in zip(mine["priority"], mine["value"], mine["window_s"]):
            out.setdefault((peer, peer_port), {})[int(prio)] = (float(x), w, name, read_at)
    return out


def _held_paused(query: FactQuery, judged: set[tuple], limit: float) -> set[tuple]:
    """(switch, priority) of those judged with a port held paused above `limit` (its own or its far end's count)."""
    held = _rows(query, "rx_pause_fraction", {"kind": "switch"})
    return {(t, int(pr)) for t, pr, x in zip(held["target"], held["priority"], held["value"])
            if pd.notna(pr) and pd.notna(x) and (t, int(pr)) in judged and float(x) > limit}


def _mark_ratio(query: FactQuery, switch: str, prio: int) -> tuple[float | None, float]:
    """(marked packets over transmitted packets on `prio`, summed over the switch's ports as rates; the packets
    counted), (None, 0) when no port has both counts."""
    marks = _per_port(query, switch, ("ecn_marked_packets",))
    packets = _per_port(query, switch, ("tx_packets",))
    port_totals = _per_port(query, switch, ("roce_tx_packets",))  # RoCE-only port totals where no priority has one
    marked_rate = sent_rate = sent = 0.0
    judged = False
    for port in {key for key, _ in marks}:
        m = marks.get((port, prio), marks.get((port, None)))
        n = packets.get((port, prio), port_totals.get((port, None), packets.get((port, None))))
        if m is None or n is None or n[0] <= 0:
            continue  # (a port that sent nothing on the priority: its port-wide marks are another priority's)
        judged = True
        marked_rate += m[1]
        sent_rate += n[1]
        sent += n[0]
    if not judged or sent_rate <= 0:
        return None, 0.0
    return marked_rate / sent_rate, sent


def _per_port(query: FactQuery, switch: str, metrics: tuple[str, ...]) -> dict[tuple, tuple[float, float]]:
    """(port key, priority or None) → (delta, rate) of the largest delta among the views of one count (two views of
    one counter, e.g. Cumulus port-stats and RoCE counters, are not added up). The rate is the delta over its window
    (the delta itself when the window is unknown: the ports of one switch are read alike)."""
    out: dict[tuple, tuple[float, float]] = {}
    rows = query.rows(target=switch, metric=[rate_name(m) for m in metrics])
    for e, pr, x, w in zip(rows["entity"], rows["priority"], rows["delta"], rows["window_s"]):
        if not isinstance(e, str) or pd.isna(x):
            continue
        key = (port_key(e), None if pd.isna(pr) else int(pr))
        if key not in out or float(x) > out[key][0]:
            out[key] = (float(x), float(x) / float(w) if pd.notna(w) and w > 0 else float(x))
    return out


def _named(ports: list[dict], marked: float) -> str:
    """The paused ports and their peers, for the text: `2 port(s) marked 1e-05: Ethernet0 → gpu01 ens1f0np0
    (paused 0.6, read at the host), ...`."""
    def one(r: dict) -> str:
        peer = f" → {r['peer']} {r['peer_port']}" if r["peer"] else ""
        return f"{r['switch_port']}{peer} (paused {r['paused']:.3g}, read at the {r['read_at']})"

    return f"{len(ports)} port(s), marked {marked:.3g}: " + ", ".join(one(r) for r in ports)
