"""The InfiniBand fabric from one host's sweep, as facts: every switch a target, every switch port its entity, and
the judge's verdicts on the fabric for playbooks/17-ib-fabric.yaml.

The sweep (rdmatool.topology.ib_sweep) sits on the host that ran it; its ports are other nodes'. Left there, a
symbol error on a spine port would read as the sweeping host's and drain it. So the judge moves them: the host's
sweep entities leave its facts, and each switch port is restated on its switch (target `leaf01`, kind `switch`,
platform `infiniband`, role `ib-leaf` when a CA hangs off it, else `ib-spine`; entity the port number): its link
(`ib_link_state`, `ib_link_rate_gbps` ...), its far end (`ib_link_neighbor`: `<far switch>|<port>` or
`<host> <device>|<port>`, as the topology modules read it), its counters with their `_per_s` rates (delta, window,
flag as the table's rate machinery gave them: a saturated counter has no delta, so it never reads as growth), and
`ib_node_guid` (entity `node`). The subnet managers go to the target `subnet` (kind `fabric`, entity `lid<N>`).
The hosts' own ports are not restated: each host reads its own (perfquery, sysfs); the sweep gives their cables.
A CA is read as a host's port by its description (`gpu01 mlx5_0`), which the CA's own host sets: one whose GUID the
named host's own view of its adapters does not list is named `ib-ca-0x<GUID>` instead, with a note (posing_cas).

Verdicts (`ib_fabric_verdict`, with `ib_fabric_*` details), each a fabric failure naming the link, never a node:

- `link_downed`: a switch port's LinkDownedCounter grew (the far end named);
- `below_fabric`: a switch-to-switch link runs below the rate most switch-to-switch links of the fabric run at
  (its own majority: no hard-coded speed);
- `congested`: a switch-to-switch port waits for credits or discards on transmit past the thresholds of
  playbooks/10-links.yaml (PortXmitWait 1e7 ticks/s, PortXmitDiscards 100 in the window), with the oversubscription
  of the leaf it serves (its host-facing capacity over its uplink capacity);
- `vl15_dropped`: subnet management packets dropped on a switch port;
- `cable_gone`: a cable of the first sweep that the last sweep no longer saw (on a switch end);
- `no_master`, `several_masters` (on `subnet`, entity `sm`): what sminfo said of the subnet managers.
Symbol errors and link error recoveries are judged per cable by rdmatool.topology.link_errors, which the switch ports
restated here join (the far end named, the host's own counters paired).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter

import numpy as np
import pandas as pd

from rdmatool.bundle import collector_paused
from rdmatool.metrics import rate_name
from rdmatool.platforms.port_names import ca_of
from rdmatool.table.analysis import FACT_COLUMNS, Analysis, stacked, with_facts
from rdmatool.table.facts import FactQuery
from rdmatool.topology import ib_sweep
from rdmatool.topology.ib_sweep import Port, Sweep

VERDICT = "ib_fabric_verdict"
PLATFORM = "infiniband"
RAW_KEY = "subnet sweep"
# The roles of the switches the sweep restates (the rules' `where: {role: ...}` picks them out of Ethernet ones).
LEAF, SPINE = "ib-leaf", "ib-spine"
XMIT_WAIT_PER_S = 1e7  # ticks/s: ib_xmit_wait_high of playbooks/10-links.yaml
XMIT_DISCARDS = 100  # in the window: ib_xmit_discards of playbooks/10-links.yaml
_PHYSICAL = ("symbol_errors", "link_error_recovery", "link_downed", "port_rcv_errors")


# The order of the values of a row in _Rows.rows (the frame puts them in FACT_COLUMNS' order).
_ORDER = ("target", "kind", "platform", "role", "entity", "metric", "priority", "size_bytes", "value", "text", "raw_key",
          "window_s", "delta", "flag")


class _Rows:
    """The facts, a tuple a row (_ORDER): tens of thousands of rows at a fabric's scale, where a dict per row and the
    frame built from them would cost more than the judging."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []

    def add(self, target: str, kind: str, role, entity: str, metric: str, value=np.nan, text=None,
            window=np.nan, delta=np.nan, flag: str = "", raw_key: str = RAW_KEY) -> None:
        number = isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
        self.rows.append((target, kind, PLATFORM if kind == "switch" else None, role, entity, metric, pd.NA, pd.NA,
                          float(value) if number else np.nan,
                          text if text is not None else (None if number else str(value)),
                          raw_key, float(window), float(delta), flag))

    def verdict(self, target: str, role, entity: str, verdict: str, **details) -> None:
        kind = "switch" if target != "subnet" and not target.startswith("subnet ") else "fabric"
        self.add(target, kind, role, entity, VERDICT, text=verdict)
        for name, value in details.items():
            self.add(target, kind, role, entity, f"ib_fabric_{name}", value)

    def frame(self) -> pd.DataFrame:
        if not self.rows:
            return pd.DataFrame(columns=FACT_COLUMNS).astype({"priority": "Int64", "size_bytes": "Int64"})
        columns = dict(zip(_ORDER, map(list, zip(*self.rows))))
        return pd.DataFrame(columns, columns=FACT_COLUMNS).astype({"priority": "Int64", "size_bytes": "Int64"})


def _roles(sweep: Sweep) -> dict[str, str]:
    """switch key → LEAF (a CA hangs off one of its ports) or SPINE."""
    leaves = {p.node.key for p in sweep.ports.values()
              if p.node.kind == "Switch" and p.far is not None and _kind(sweep, p.far[0]) != "Switch"}
    return {n.key: LEAF if n.key in leaves else SPINE for n in sweep.switches()}


def _kind(sweep: Sweep, key: str) -> str:
    node = sweep.nodes.get(key)
    return node.kind if node is not None else "node"


def far_name(sweep: Sweep, port: Port) -> str | None:
    """The far end of a port as the findings name it: `spine02 port 7`, `gpu01 mlx5_0 port 1`."""
    if port.far is None:
        return None
    node = sweep.nodes.get(port.far[0])
    return f"{node.name if node is not None else port.far[0]} port {port.far[1]}"


def _neighbor_text(sweep: Sweep, port: Port) -> str | None:
    if port.far is None:
        return None
    node = sweep.nodes.get(port.far[0])
    return f"{node.name if node is not None else port.far[0]}|{port.far[1]}"


def _switch_ports(sweep: Sweep) -> list[Port]:
    return sorted((p for p in sweep.ports.values() if p.node.kind == "Switch"), key=lambda p: (p.node.name, p.number))


def restated(sweep: Sweep, out: _Rows, roles: dict[str, str]) -> None:
    """Each switch port's facts on its switch."""
    for node in sweep.switches():
        out.add(node.name, "switch", roles[node.key], "node", "ib_node_guid", text=node.key)
    for port in _switch_ports(sweep):
        target, role, entity = port.node.name, roles[port.node.key], str(port.number)
        for metric, value in port.link.items():
            out.add(target, "switch", role, entity, metric, value)
        neighbor = _neighbor_text(sweep, port) if sweep.cabled_now(port) else None
        if neighbor is not None:
            out.add(target, "switch", role, entity, "ib_link_neighbor", text=neighbor, raw_key="Switch")
            if port.far[0].startswith("0x"):
                out.add(target, "switch", role, entity, "ib_link_neighbor_guid", text=port.far[0], raw_key="Switch")
        for metric, value in port.counters.items():
            out.add(target, "switch", role, entity, metric, value)
        for metric in sorted(port.saturated):
            out.add(target, "switch", role, entity, "counter_saturated", 1.0, text=metric)
        for metric, (delta, window, flag) in port.growth.items():
            rate = delta / window if window and window > 0 and not math.isnan(delta) else np.nan
            out.add(target, "switch", role, entity, rate_name(metric), rate, window=window, delta=delta, flag=flag)
            if flag == "reset":
                out.add(target, "switch", role, entity, "counter_reset", text=metric)
    for lid, sm in sorted(sweep.sms.items()):
        for metric, value in sm.items():
            out.add(_subnet(sweep), "fabric", None, lid, metric, value)


def _subnet(sweep: Sweep) -> str:
    return "subnet"


def _grown(port: Port, metric: str) -> float:
    delta = port.growth.get(metric, (np.nan, np.nan, ""))[0]
    return 0.0 if math.isnan(delta) else delta


def _counters(port: Port, metrics) -> str:
    return ", ".join(f"{m} +{_grown(port, m):g}" for m in metrics if _grown(port, m) > 0) or "none"


def judged(sweep: Sweep, out: _Rows, roles: dict[str, str]) -> None:
    """The verdicts of one sweep (see the module's docstring)."""
    ports = _switch_ports(sweep)
    inter = [p for p in ports if p.far is not None and _kind(sweep, p.far[0]) == "Switch"]
    rates = Counter(p.link.get("ib_link_rate_gbps") for p in inter
                    if isinstance(p.link.get("ib_link_rate_gbps"), float))
    majority = rates.most_common(1)[0][0] if rates else None
    said: set[frozenset] = set()
    between_switches = {(p.node.key, p.number) for p in inter}
    for port in ports:
        target, role, entity = port.node.name, roles[port.node.key], str(port.number)
        far = far_name(sweep, port) or "not known (no far end in the sweep)"
        if _grown(port, "link_downed") > 0:
            out.verdict(target, role, entity, "link_downed", far_end=far, errors=_grown(port, "link_downed"),
                        counters=_counters(port, _PHYSICAL))
        if _grown(port, "vl15_dropped") > 0:
            out.verdict(target, role, entity, "vl15_dropped", errors=_grown(port, "vl15_dropped"), far_end=far)
        if (port.node.key, port.number) not in between_switches:
            continue
        rate = port.link.get("ib_link_rate_gbps")
        cable = frozenset({(port.node.key, port.number), port.far})
        if majority is not None and isinstance(rate, float) and rate < majority and cable not in said:
            said.add(cable)
            out.verdict(target, role, entity, "below_fabric", far_end=far, link=_link(port), rate_gbps=rate,
                        expected=f"{majority:g} Gb/s ({_majority_link(inter, majority)}), the fabric's majority")
        wait = port.growth.get("port_xmit_wait", (np.nan, np.nan, ""))
        wait_rate = wait[0] / wait[1] if wait[1] and wait[1] > 0 and not math.isnan(wait[0]) else 0.0
        discards = _grown(port, "port_xmit_discards")
        if wait_rate > XMIT_WAIT_PER_S or discards > XMIT_DISCARDS:
            out.verdict(target, role, entity, "congested", far_end=far, xmit_wait_rate=wait_rate,
                        counters=f"port_xmit_wait {wait_rate:.3g} ticks/s, port_xmit_discards +{discards:g}",
                        oversubscription=oversubscription(sweep, port, roles))
    _gone(sweep, out, roles)
    _masters(sweep, out)


def _link(port: Port) -> str:
    width, speed = port.link.get("ib_link_width"), port.link.get("ib_link_speed")
    rate = port.link.get("ib_link_rate_gbps")
    shown = " ".join(str(x) for x in (width, speed) if isinstance(x, str))
    return f"{shown} ({rate:g} Gb/s)" if shown else f"{rate:g} Gb/s"


def _majority_link(ports: list[Port], rate: float) -> str:
    shapes = Counter(" ".join(str(p.link.get(m)) for m in ("ib_link_width", "ib_link_speed") if p.link.get(m))
                     for p in ports if p.link.get("ib_link_rate_gbps") == rate)
    return shapes.most_common(1)[0][0] if shapes else "?"


def oversubscription(sweep: Sweep, port: Port, roles: dict[str, str]) -> str:
    """The leaf's host-facing capacity over its uplink capacity: the leaf of the port, or the leaf at its far end."""
    leaf = port.node.key if roles.get(port.node.key) == LEAF else (port.far[0] if port.far else None)
    if leaf is None or roles.get(leaf) != LEAF:
        return "not known (no leaf at either end)"
    down, up = _capacities(sweep).get(leaf, (0.0, 0.0))
    name = sweep.nodes[leaf].name
    if up <= 0:
        return f"{name}: no uplink up"
    return f"{down / up:.2g}:1 ({name}: {down:g} Gb/s to hosts, {up:g} Gb/s up)"


def _capacities(sweep: Sweep) -> dict[str, tuple[float, float]]:
    """switch key → (Gb/s of its links to hosts, Gb/s of its links to switches), once per sweep."""
    if sweep.capacities is None:
        out: dict[str, list[float]] = {}
        for p in sweep.ports.values():
            rate = p.link.get("ib_link_rate_gbps")
            if p.node.kind != "Switch" or p.far is None or not isinstance(rate, float):
                continue
            pair = out.setdefault(p.node.key, [0.0, 0.0])
            pair[1 if _kind(sweep, p.far[0]) == "Switch" else 0] += rate
        sweep.capacities = {key: (down, up) for key, (down, up) in out.items()}
    return sweep.capacities


def _gone(sweep: Sweep, out: _Rows, roles: dict[str, str]) -> None:
    """Cables of the first sweep the last sweep did not see (when the last sweep saw any cable at all)."""
    if len(sweep.cables) < 2:
        return
    first, last = min(sweep.cables), max(sweep.cables)
    for cable in sorted(sweep.cables[first] - sweep.cables[last], key=lambda c: sorted(map(str, c))):
        ends = sorted((e for e in cable if _kind(sweep, e[0]) == "Switch"),
                      key=lambda e: (sweep.nodes[e[0]].name, e[1]))
        if not ends:
            continue
        key, number = ends[0]
        other = next((e for e in cable if e != ends[0]), ends[0])
        node = sweep.nodes[key]
        far_node = sweep.nodes.get(other[0])
        port = sweep.ports.get((key, number))
        state = "/".join(str(port.link[m]) for m in ("ib_link_state", "ib_link_phys_state")
                         if port is not None and m in port.link) or "not reported"
        out.verdict(node.name, roles[key], str(number), "cable_gone",
                    far_end=f"{far_node.name if far_node else other[0]} port {other[1]}", state=state)


def _masters(sweep: Sweep, out: _Rows) -> None:
    if not sweep.sm_read:
        return
    masters = sorted(lid for lid, sm in sweep.sms.items() if sm.get("sm_state") == "master")
    listed = "; ".join(f"{lid} {sm.get('sm_state', '?')} priority {sm.get('sm_priority', '?'):g} "
                       f"({sm.get('sm_guid', '?')})" if isinstance(sm.get("sm_priority"), float)
                       else f"{lid} {sm.get('sm_state', '?')}" for lid, sm in sorted(sweep.sms.items()))
    if len(masters) == 1:
        return
    out.verdict(_subnet(sweep), None, "sm", "no_master" if not masters else "several_masters",
                masters=float(len(masters)), sms=listed or f"none answered sminfo on {sweep.host}",
                host=sweep.host)


def _reserved(analysis, sweeps: list[Sweep]) -> set[str]:
    """The names no swept switch may take: the bundle's hosts (listed, failed or sweeping) and the subnet's target."""
    table = getattr(analysis, "table", None)
    listed = getattr(table, "targets", None) or []
    failed = getattr(table, "failures", None) or []
    names = {t.get("name") for t in listed if isinstance(t, dict) and t.get("kind", "host") != "switch"}
    names.update(f.get("target") for f in failed if isinstance(f, dict))
    names = {n for n in names if isinstance(n, str)} | {s.host for s in sweeps} | {_subnet(sweeps[0])}
    return names | {n.split(".")[0] for n in names}  # a CA's description names its host by its short name


def unclaimed_names(sweep: Sweep, reserved: set[str]) -> None:
    """A switch names itself (its node description, which any node of the subnet sets): a name that is a host of the
    bundle (or the subnet's target), or a host's port (`gpu01 mlx5_0`), would put the switch's faults on that host
    and drain it, and one with control characters or of any length would be a target name no view should carry.
    Such a switch is named by its GUID instead, `ib-switch-0x...`, which says it is the subnet's node."""
    for node in sweep.switches():
        name = node.name
        base = name.split(" (0x")[0]
        as_host = ca_of(base)  # `gpu01 mlx5_0` is read as host gpu01's port wherever a far end is named
        if base in reserved or (as_host and as_host[0] in reserved) or len(name) > _NAME_MAX or not name.isprintable():
            node.name = f"ib-switch-{node.key if _GUID.fullmatch(node.key) else _digest(node.key)}"


def own_guids(query: FactQuery) -> dict[str, set[int]]:
    """Each collected host → the GUIDs its own view of its adapters lists (ibstat, ibv_devinfo, sysfs: node and port
    GUIDs, spelled `0x...` or colon-grouped), by the host's name and its short name."""
    rows = query.of_metric(["node_guid", "port_guid"])
    out: dict[str, set[int]] = {}
    for target, text in zip(rows["target"], rows["text"]):
        value = _guid_value(text)
        if isinstance(target, str) and value is not None:
            out.setdefault(target, set()).add(value)
            out.setdefault(target.split(".")[0], set()).add(value)
    return out


def _guid_value(text) -> int | None:
    digits = text.strip().lower().removeprefix("0x").replace(":", "") if isinstance(text, str) else ""
    return int(digits, 16) if digits and len(digits) <= 16 and all(c in _HEX for c in digits) else None


_HEX = frozenset("0123456789abcdef")


def posing_cas(sweep: Sweep, hosts_guids: dict[str, set[int]]) -> list[str]:
    """A CA's description is its own to set: a host may describe its CA as `gpu01 mlx5_0`, and a cloned image gives
    two CAs one description. Read as gpu01's port, the leaf port cabled to that CA would put its faults on gpu01 and
    drain it. So a CA whose description names a host the bundle holds the adapters of, and whose GUIDs that host does
    not list, is named by its GUID (`ib-ca-0x...`, which is no host's port); of two CAs of one description, the one
    the host lists keeps the name (the sweep keeps them apart by GUID: rdmatool.topology.ib_sweep). A CA naming a
    host the bundle did not read is taken at its description (nothing to check it against). Returns one note per CA
    renamed, naming it, its switch port and the description it claims."""
    notes: list[str] = []
    cabled: dict[str, list[str]] | None = None  # CA key → the switch ports cabled to it, made on the first need
    for node in sweep.nodes.values():
        claim = ca_of(node.desc) if node.kind != "Switch" else None
        known = hosts_guids.get(claim[0]) if claim else None
        if not known or not node.guids:
            continue
        if any(_guid_value(g) in known for g in node.guids):
            continue
        guid = node.guid or min(node.guids)
        node.name = f"ib-ca-{guid}"
        if cabled is None:
            cabled = {}
            for p in sweep.ports.values():
                if p.node.kind == "Switch" and p.far is not None:
                    cabled.setdefault(p.far[0], []).append(f"{p.node.name} port {p.number}")
        at = sorted(cabled.get(node.key, ()))
        notes.append(f"InfiniBand CA {guid}{' on ' + ', '.join(at) if at else ''} describes itself as "
                     f"{_shown(node.desc)}, which {claim[0]}'s own view of its adapters (ibstat, ibv_devinfo, sysfs) "
                     f"does not list: named {node.name}, not read as {claim[0]}'s port")
    return notes


def _shown(text: str) -> str:
    """A node description as a note quotes it: printable, and no longer than a target name."""
    shown = text if text.isprintable() else text.encode("unicode_escape").decode("ascii")
    return f"`{shown[:_NAME_MAX]}`"


_NAME_MAX = 128  # a target name's length in a bundle (rdmatool.bundle.names.TARGET_NAME)
_GUID = re.compile(r"0x[0-9a-fA-F]{1,16}")


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def fabric_facts(sweeps: list[Sweep]) -> pd.DataFrame:
    """The restated switch ports and the verdicts of every sweep (FACT_COLUMNS)."""
    out = _Rows()
    for sweep in sweeps:
        roles = _roles(sweep)
        restated(sweep, out, roles)
        judged(sweep, out, roles)
    return out.frame()


def with_ib_fabric(analysis: Analysis) -> Analysis:
    """The analysis with the sweep's ports moved from the sweeping host to their switches, and the verdicts added
    (a new Analysis; the same one when the bundle holds no sweep, or when its sweep was restated already)."""
    query = FactQuery.of(analysis)
    if len(query.select("ib_node_guid", {"entity": "node", "raw_key": RAW_KEY})):
        return analysis  # restated already (a report judges the sweep before its diagnosis does)
    # A fabric's sweep makes some hundred thousand small objects (ports, dicts, tuples) and none is part of a cycle:
    # every collection their allocations trigger would walk the whole table alive (see bundle.collector_paused).
    with collector_paused():
        sweeps = ib_sweep.read(analysis)
        if not sweeps:
            return analysis
        reserved = _reserved(analysis, sweeps)
        hosts_guids = own_guids(query)
        said = []
        for sweep in sweeps:
            unclaimed_names(sweep, reserved)
            said += posing_cas(sweep, hosts_guids)
        found = fabric_facts(sweeps)
    notes = getattr(getattr(analysis, "table", None), "notes", None)
    if isinstance(notes, list):  # the diagnosis' notes (a second judging of one table adds none twice)
        notes.extend(n for n in dict.fromkeys(said) if n not in notes)
    drop = []
    positions = query.target_positions()
    for sweep in sweeps:
        for host, entities in sweep.dropped.items():
            at = positions.get(host)
            if at is None or not entities:
                continue
            hit = query.column("entity", at).isin(entities).to_numpy(dtype=bool)
            drop.append(at[hit])
    keep = np.ones(len(query.source), dtype=bool)
    if drop:
        keep[np.concatenate(drop)] = False
    kept = np.flatnonzero(keep)
    found = found.astype({"priority": "Int64", "size_bytes": "Int64"})
    return with_facts(analysis, stacked(query.facts.take(kept).reset_index(drop=True), found))


def switch_cables(analysis) -> list:
    """Each switch-to-switch cable of the subnet once, as a Link whose `host` end is a switch (the topology map draws
    those as arcs between switches): from the restated facts (rdmatool.topology.observed.fabric_view)."""
    from rdmatool.topology import Link, observed

    ib = swept_switches(analysis)
    out, seen = [], set()
    for cable in observed.fabric_view(analysis):
        if cable.switch not in ib or cable.peer not in ib:
            continue
        key = frozenset({(cable.switch, cable.port), (cable.peer, cable.peer_port)})
        if key not in seen:
            seen.add(key)
            out.append(Link(cable.switch, cable.port, cable.peer, cable.peer_port, "ibnetdiscover"))
    return out


def swept_switches(analysis) -> set[str]:
    """The switches a subnet sweep restated (roles LEAF and SPINE)."""
    return set(FactQuery.of(analysis).targets_where({"role": [LEAF, SPINE]}))
