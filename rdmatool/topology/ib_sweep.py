"""The InfiniBand subnet as one host's sweep read it: every switch port, every cable, the subnet managers.

One host per subnet runs `ibnetdiscover`, `iblinkinfo`, `ibqueryerrors` and `sminfo` (rdmatool.commands), whose
samples sit on that host's target with entities naming other nodes (`MF0;leaf01:MQM8700/U1/33`, `gpu07 mlx5_0/1`,
`lid1`). `read(analysis)` gathers them from the sample table (the snapshot of each reading is needed: a cable seen in
one sweep and gone in the next, a counter ibqueryerrors printed only in the last) into a `Sweep`:

- each node by its GUID where a tool printed one (by its name otherwise), its type and description; a CA's far end
  by its GUID first (two CAs of one description, a cloned image or one posing as another, are two nodes);
- each switch named as a target from its description (`MF0;leaf01:MQM8700/U1` → `leaf01`, see
  rdmatool.topology.observed.switch_name); several switches of one name are told apart by GUID, `leaf01 (0x...)`;
- each port's latest link state, width, speed, rate and far end; the cables of each sweep, joined from both ends;
- each counter's change over the window through the table's own rate machinery (rdmatool.table.frame: wraps,
  resets and saturated counters flagged, a saturated one has no delta, except one that was below its maximum in the
  first sweep: it grew by at least the difference, a lower bound that is still growth). ibqueryerrors prints only the ports above
  its threshold: a counter printed in the last sweep and not in the first (which did read the subnet) grew from at
  most its threshold (`ib_error_threshold`, 0 without a threshold file).

A sweep read by several hosts of one subnet (older bundles ran iblinkinfo on each) is read from the first host by
name; the others' readings are the same subnet's and are only dropped from their hosts.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rdmatool.platforms.port_names import ca_of, node_description
from rdmatool.table import frame as frames
from rdmatool.topology.observed import switch_name

PARSERS = ("ibnetdiscover", "iblinkinfo", "ibqueryerrors", "sminfo")
_PORT = re.compile(r"^(?P<node>.+)/(?P<port>\d+)$")
_SM = re.compile(r"^lid\d+$")
_COLUMNS = ("snapshot", "time", "target", "parser", "qualifier", "entity", "metric", "priority", "size_bytes",
            "value", "text", "raw_key", "exact")
# What a port's latest reading says of its link (the rest of the port's metrics are counters).
LINK_METRICS = ("ib_link_state", "ib_link_phys_state", "ib_link_rate_gbps", "ib_link_width", "ib_link_speed",
                "ib_link_capable")
_LINK = frozenset(LINK_METRICS)
SM_METRICS = ("sm_guid", "sm_priority", "sm_state", "sm_activity_count")


@dataclass
class Node:
    key: str  # its GUID (0x...), else the name the tools print
    kind: str  # Switch, CA, Router, or `node` where no tool said
    desc: str  # the node description, without a GUID a parser added
    name: str = ""  # a switch's target name; a CA's description
    guid: str | None = None  # its node GUID where a tool printed one, else a port GUID
    guids: set = field(default_factory=set)  # every GUID the sweep printed for it (node and ports)


@dataclass
class Port:
    node: Node
    number: int
    link: dict = field(default_factory=dict)  # LINK_METRICS → latest value (number or text)
    far: tuple[str, int] | None = None  # (far node key, far port), latest sweep that saw one
    counters: dict = field(default_factory=dict)  # counter → latest value
    growth: dict = field(default_factory=dict)  # counter → (delta or NaN, window_s, flag)
    saturated: set = field(default_factory=set)


@dataclass
class Sweep:
    host: str  # the host whose target holds the sweep
    also: set[str]  # other hosts holding a reading of the same subnet
    nodes: dict[str, Node]
    ports: dict[tuple[str, int], Port]  # (node key, port number) → port
    cables: dict[int, set[frozenset]]  # snapshot → its cables, each the frozenset of its two (node key, port) ends
    sms: dict[str, dict]  # `lid<N>` → SM_METRICS → latest value
    window_s: float | None
    dropped: dict[str, set[str]]  # host → the entities of its target that are other nodes' (restated elsewhere)
    sm_read: bool = False  # sminfo ran (answered, or failed: no subnet manager answered)
    capacities: dict | None = None  # switch key → (Gb/s to hosts, Gb/s to switches), computed on first need

    def switches(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.kind == "Switch"]

    def cabled_now(self, port: Port) -> bool:
        """Whether the port's cable is in the last sweep (a cable gone is named by its verdict, not restated)."""
        if port.far is None:
            return False
        return not self.cables or frozenset({(port.node.key, port.number), port.far}) in self.cables[max(self.cables)]


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({c: frame[c].astype(object) if isinstance(frame[c].dtype, pd.CategoricalDtype) else frame[c]
                        for c in _COLUMNS if c in frame.columns})
    return out.reset_index(drop=True)


def sweep_rows(analysis) -> pd.DataFrame | None:
    """The sample rows of the sweep's parsers, texts as plain objects; None when the bundle has none."""
    table = getattr(analysis, "table", None)
    frame = getattr(table, "frame", None)
    if not isinstance(frame, pd.DataFrame) or "parser" not in frame.columns or frame.empty:
        return None
    at = np.flatnonzero(frame["parser"].isin(PARSERS).to_numpy(dtype=bool))
    if not len(at):
        return None
    return _plain(frame.take(at))


def read(analysis) -> list[Sweep]:
    """Each subnet as its sweep read it (none when the bundle holds no sweep). Hosts whose sweeps share a switch read
    one subnet: the first by name is read, the others' readings only dropped from their hosts."""
    rows = sweep_rows(analysis)
    if rows is None:
        return []
    out: list[Sweep] = []
    for host in sorted(set(rows["target"])):
        own = rows[rows["target"] == host]
        # each entity split once (a fabric's sweep is hundreds of thousands of rows over some 20,000 entities)
        matched = {e: _PORT.match(e) for e in set(own["entity"]) if isinstance(e, str)}
        dropped = {e for e, m in matched.items() if m or _SM.match(e)}
        split = {e: (m["node"], int(m["port"])) for e, m in matched.items() if m}
        sweep = _read_one(host, own, dropped, split)
        same = next((s for s in out if {n.key for n in s.switches()} & {n.key for n in sweep.switches()}), None)
        if same is not None:
            same.also.add(host)
            same.dropped[host] = dropped
        else:
            out.append(sweep)
    return out


def _listed(frame: pd.DataFrame, *columns: str) -> list[list]:
    """The columns as lists of the values a Series yields (Python floats and ints), made at once, not per item."""
    return [frame[c].to_numpy().tolist() for c in columns]


def _read_one(host: str, own: pd.DataFrame, dropped: set[str], split: dict) -> Sweep:
    """`split`: each port's entity → (node name, port number)."""
    nodes, names = _nodes(own, split)
    owners = {g: n.key for n in nodes.values() if n.kind != "Switch" for g in n.guids}  # a CA's GUID → its key
    # entity → (node key, port number): every node name of `split` is one of `names` (the far ends read below only add
    # names no entity has), so each entity's port is known before the rows are read
    keyed = {e: (names[name], number) for e, (name, number) in split.items()}
    ports: dict[tuple[str, int], Port] = {}
    cables: dict[int, set[frozenset]] = {}
    metrics = own["metric"]
    part = own[metrics == "ib_link_neighbor_guid"]
    neighbor_guids = dict(zip(zip(*_listed(part, "entity", "snapshot")), _listed(part, "text")[0]))  # → GUID
    latest = own[["entity", "metric", "value", "text", "snapshot"]][~metrics.isin(_NOT_COUNTERS)]
    latest = latest.sort_values("snapshot", kind="stable")
    far_keys: dict[tuple[str, str | None], str | None] = {}  # each far end resolved once (it is the same every time)
    for entity, metric, value, text, snapshot in zip(*_listed(latest, "entity", "metric", "value", "text", "snapshot")):
        key = keyed.get(entity)
        if key is None:
            continue
        port = ports.get(key)
        if port is None:
            port = ports[key] = Port(nodes[key[0]], key[1])
        if metric in _LINK:
            port.link[metric] = text if isinstance(text, str) else value
        elif metric == "ib_link_neighbor":
            if isinstance(text, str) and "|" in text:
                far_desc, _, far_number = text.rpartition("|")
                asked = (far_desc, neighbor_guids.get((entity, snapshot)))
                far = far_keys[asked] if asked in far_keys else far_keys.setdefault(
                    asked, _far_key(nodes, names, owners, *asked))
                if far is not None and far_number.isdigit():
                    port.far = (far, int(far_number))
                    cables.setdefault(int(snapshot), set()).add(frozenset({key, port.far}))
        elif metric == "counter_saturated":
            if isinstance(text, str):
                port.saturated.add(text)
        elif value == value:  # (not NaN: a counter's reading)
            port.counters[metric] = value
    window = _growth(own, ports, keyed)
    sms: dict[str, dict] = {}
    at_sm = latest[latest["metric"].isin(SM_METRICS)]
    for entity, metric, value, text in zip(at_sm["entity"], at_sm["metric"], at_sm["value"], at_sm["text"]):
        if isinstance(entity, str) and _SM.match(entity):
            sms.setdefault(entity, {})[metric] = text if isinstance(text, str) else value
    _name_switches(nodes)
    sm_failed = ((own["parser"] == "sminfo") & (own["metric"] == "tool_error")).any()
    return Sweep(host, set(), nodes, ports, cables, sms, window, {host: dropped}, sm_read=bool(sms) or sm_failed)


_NOT_COUNTERS = {"ib_lid", "ib_link_neighbor_guid", "ib_port_guid", "ib_node_guid", "ib_node_type", "tool_error"}
_NODE_METRICS = ("ib_node_type", "ib_link_neighbor", "ib_node_guid", "ib_port_guid")


def _nodes(rows: pd.DataFrame, split: dict) -> tuple[dict[str, Node], dict[str, str]]:
    """Every node of the sweep by key, and each printed node name (`<description>` or `<description> (0x...)`) →
    its key. `split`: entity → (node name, port number)."""
    kinds: dict[str, str] = {}
    guids: dict[str, str] = {}
    every: dict[str, set[str]] = {}  # name → all its GUIDs
    port_numbers: dict[str, set[int]] = {}
    for name, number in split.values():
        port_numbers.setdefault(name, set()).add(number)
    said = rows[rows["metric"].isin(_NODE_METRICS)]
    for entity, metric, text, raw_key in zip(*_listed(said, "entity", "metric", "text", "raw_key")):
        found = split.get(entity)
        if found is None:
            continue
        name = found[0]
        if metric == "ib_node_type" and isinstance(text, str):
            kinds[name] = text
        elif metric == "ib_link_neighbor" and raw_key in ("Switch", "CA"):
            kinds.setdefault(name, raw_key)
        elif metric in ("ib_node_guid", "ib_port_guid") and isinstance(text, str) and (
                metric == "ib_node_guid" or name not in guids):
            guids[name] = text  # a switch's ports share its GUID; a CA's node GUID is the one its ports share
        if metric in ("ib_node_guid", "ib_port_guid") and isinstance(text, str):
            every.setdefault(name, set()).add(text)
    nodes: dict[str, Node] = {}
    names: dict[str, str] = {}
    for name, numbers in port_numbers.items():
        kind = kinds.get(name) or ("Switch" if len(numbers) > 1 and name in guids else "node")
        key = guids.get(name) if kind == "Switch" and name in guids else name
        node = nodes.setdefault(key, Node(key, kind, node_description(name), guid=guids.get(name)))
        node.guids |= every.get(name, set())
        names[name] = key
    return nodes, names


def _far_key(nodes: dict[str, Node], names: dict[str, str], owners: dict[str, str], desc: str,
             guid: str | None) -> str | None:
    """The key of a far end: by its GUID when it is a known switch's or a CA's the sweep listed (two CAs may print
    one description), else by the name the tools print it under (a CA is known by its description), else a new CA
    node of that description."""
    desc = node_description(desc)
    if guid is not None and guid in nodes:
        return guid
    if guid is not None and guid in owners:
        return owners[guid]
    if desc in names:
        return names[desc]
    shared = [n.key for n in nodes.values() if n.desc == desc]
    if len(shared) == 1:
        return shared[0]
    if not desc:
        return None
    node = nodes.setdefault(desc, Node(desc, "CA" if ca_of(desc) else "node", desc, guid=guid))
    if guid is not None:  # a CA seen only as a far end: its GUIDs are the ones its cables print
        node.guids.add(guid)
    names[desc] = desc
    return desc


def _name_switches(nodes: dict[str, Node]) -> None:
    """Each switch's target name from its description; a name several switches share gets the GUID."""
    switches = [n for n in nodes.values() if n.kind == "Switch"]
    counts = Counter(switch_name(n.desc) for n in switches)
    for n in switches:
        base = switch_name(n.desc)
        n.name = base if counts[base] == 1 or not n.key.startswith("0x") else f"{base} ({n.key})"
    for n in nodes.values():
        if n.kind != "Switch":
            n.name = n.desc


def _growth(rows: pd.DataFrame, ports: dict, keyed: dict) -> float | None:
    """Each port's counter changes over the window (Port.growth); returns the sweep's window in seconds."""
    snapshots = sorted(set(rows["snapshot"]))
    if len(snapshots) < 2:
        return None
    rates, _ = frames.rates_with_rows(rows.reset_index(drop=True))
    windows = [w for w in rates["window_s"] if w > 0] if len(rates) else []
    for entity, metric, delta, window, flag, before, after in zip(
            rates["entity"], rates["metric"], rates["delta"], rates["window_s"], rates["flag"], rates["previous"],
            rates["current"]):
        port = _port_of(entity, ports, keyed)
        if port is not None:
            if flag == "saturated" and after > before:  # reached its maximum within the window: grew by at least that
                delta, flag = after - before, ""
            port.growth[metric] = (float(delta), float(window), flag)
    first, last = snapshots[0], snapshots[-1]
    if windows:
        window = float(np.median(windows))
    else:
        times = rows.groupby("snapshot")["time"].median()
        window = float(times[last] - times[first]) if not pd.isna(times[last] - times[first]) else None
    read_first = ((rows["parser"] == "ibqueryerrors") & (rows["snapshot"] == first)
                  & (rows["metric"] == "ib_ports_checked")).any()
    if not read_first:
        return window
    said = rows[(rows["metric"] == "ib_error_threshold") & (rows["snapshot"] == first) & rows["value"].notna()]
    thresholds = dict(zip(said["entity"], said["value"].astype(float)))
    counters = rows[(rows["parser"] == "ibqueryerrors") & rows["value"].notna()]
    seen_first = set(zip(*(counters.loc[counters["snapshot"] == first, c] for c in ("entity", "metric"))))
    in_last = counters[counters["snapshot"] == last]
    for entity, metric, value in zip(in_last["entity"], in_last["metric"], in_last["value"]):
        if (entity, metric) in seen_first:
            continue
        port = _port_of(entity, ports, keyed)
        if port is None or metric in port.growth or metric in ("ib_lid",):
            continue
        if metric in port.saturated:
            port.growth[metric] = (float("nan"), window or float("nan"), "saturated")
        else:  # not printed in the first sweep: at most its threshold then
            port.growth[metric] = (max(float(value) - thresholds.get(metric, 0.0), 0.0), window or float("nan"), "")
    return window


def _port_of(entity, ports: dict, keyed: dict) -> Port | None:
    key = keyed.get(entity)
    return None if key is None else ports.get(key)
