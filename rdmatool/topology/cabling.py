"""The cabling judge: what is wrong with the cables a bundle saw, stated as facts for the playbook rules.

Each problem is a `cabling_verdict` fact on its subject (a host and its NIC, or a switch and its port) whose text
names the problem; the subject's detail facts say what was seen and what was expected, and the rules of
`playbooks/15-topology.yaml` (kind `verdict`) turn them into findings. The verdicts:

- `off_rail`: on hosts reaching the same set of leaves (a pod of one group), the NIC of one name goes to one
  switch; a NIC reaching another switch than its peers' NIC of that name is miscabled. With no majority (two hosts,
  one each way) every host of the split rail is named.
- `unexpected_leaf`: a host of a group reaches a leaf none of its group's pod reaches.
- `one_sided`: one end of a cable sees the other and the other does not see it back (both ends collected; host
  to switch and switch to switch: rdmatool.topology.sides).
- `no_neighbor`: an active Ethernet RDMA port without any LLDP neighbour, on a host whose LLDP reports others.
- `speed_mismatch`: a host port and the switch port it is cabled to run at different rates.
- `neighbor_changed`: a port's LLDP neighbour differs between the bundle's snapshots (a flap or a re-cabling).
- `wrong_switch`, `wrong_port`, `missing_link`: the expected topology (topology.yaml) disagrees with the cabling.

A group is the hosts of the same inventory role and groups. Only RDMA NICs are judged on hosts: LLDP on a netdev the
bundle does not map to an RDMA device (a management port) is left alone.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from rdmatool.platforms.port_names import port_key
from rdmatool.table import column_codes
from rdmatool.table.analysis import Analysis, grown_by
from rdmatool.table.facts import FactQuery
from rdmatool.table.frame import OBJECTS
from rdmatool.topology import Link, observed, paths, sides
from rdmatool.topology import expected as expected_topology
from rdmatool.topology.stated import StatedFacts

VERDICT = "cabling_verdict"


def _names(hosts: list[str], limit: int = 6) -> str:
    shown = ", ".join(hosts[:limit])
    return shown + (f" and {len(hosts) - limit} more" if len(hosts) > limit else "")


def _group_of(targets: list[dict]) -> dict[str, tuple]:
    return {t["name"]: (t.get("role"), tuple(sorted(t.get("groups") or ()))) for t in targets
            if isinstance(t, dict) and t.get("name") and t.get("kind", "host") == "host"}


def _rdma_links(analysis, links: list[Link]) -> list[Link]:
    """The cables of RDMA NICs: LLDP on a netdev bound to an RDMA device, and the InfiniBand subnet's links."""
    devices = set(observed.device_of_netdev(analysis).items())
    rdma = {(host, device) for (host, _netdev), device in devices}
    return [link for link in links if link.source == observed.IBLINKINFO or (link.host, link.nic) in rdma]


def _rails(links: list[Link], groups: dict[str, tuple], out: StatedFacts) -> None:
    """off_rail and unexpected_leaf, within each group's pods (hosts reaching the same set of leaves)."""
    by_host: dict[str, dict[str, str]] = {}
    for link in links:
        by_host.setdefault(link.host, {}).setdefault(link.nic, link.switch)
    members: dict[tuple, list[str]] = {}
    for host in sorted(by_host):
        members.setdefault(groups.get(host, (None, ())), []).append(host)
    for hosts in members.values():
        pods: dict[frozenset, list[str]] = {}
        for host in hosts:
            pods.setdefault(frozenset(by_host[host].values()), []).append(host)
        real = {leaves: pod for leaves, pod in pods.items() if len(pod) >= 2}
        for pod in real.values():
            _judge_pod(pod, pod, by_host, out)
        for leaves, pod in pods.items():
            if len(pod) >= 2:
                continue
            host = pod[0]
            near = sorted(((len(leaves & other), len(peers), sorted(peers)) for other, peers in real.items()
                           if leaves & other), reverse=True)
            if not near:
                continue  # a host of its own: nothing to compare it with
            peers = near[0][2]
            peer_leaves = set().union(*(by_host[p].values() for p in peers))
            for nic, switch in sorted(by_host[host].items()):
                usual = Counter(by_host[p][nic] for p in peers if nic in by_host[p]).most_common(1)
                if switch not in peer_leaves:
                    out.add(host, nic, "unexpected_leaf", switch=switch,
                            expected=usual[0][0] if usual else ", ".join(sorted(peer_leaves)), peers=_names(peers))
            _judge_pod([host], peers, by_host, out, skip=set(by_host[host].values()) - peer_leaves)


def _judge_pod(judged: list[str], peers: list[str], by_host: dict, out: StatedFacts, skip: set = frozenset()) -> None:
    """Each NIC of the judged hosts against the switch the pod's NIC of that name reaches: the pod's majority
    (the judged hosts count too when they are of the pod). Without a majority every host of the split rail is named,
    each against the switches the others reach."""
    voters = list(dict.fromkeys([*peers, *judged])) if set(judged) <= set(peers) else peers
    for host in judged:
        for nic, switch in sorted(by_host[host].items()):
            if switch in skip:
                continue
            votes = {p: by_host[p][nic] for p in voters if nic in by_host[p]}
            counts = Counter(votes.values()).most_common()
            if len(counts) < 2 and switch in votes.values():
                continue
            top = [s for s, n in counts if n == counts[0][1]]
            if len(top) == 1 and top[0] == switch:
                continue
            expected = top[0] if len(top) == 1 else ", ".join(sorted(s for s in set(votes.values()) if s != switch))
            if not expected:
                continue
            reach = sorted(p for p, s in votes.items() if s != switch and p != host)
            out.add(host, nic, "off_rail", switch=switch, expected=expected, peers=_names(reach))


def _lonely_ports(analysis, links: list[Link], out: StatedFacts) -> None:
    """no_neighbor: an Active Ethernet RDMA port of a host whose LLDP reports other neighbours."""
    query = FactQuery.of(analysis)
    lldp_hosts = {link.host for link in observed.host_view(analysis)}
    cabled = {(link.host, link.nic) for link in links}
    netdevs = {(host, device): netdev for (host, netdev), device in observed.device_of_netdev(analysis).items()}
    rows = query.take(query.select("port_state", {"kind": "host", "link_layer": "Ethernet"}))
    for target, entity, text in zip(rows["target"], rows["entity"], rows["text"]):
        device = str(entity).split("/")[0]
        if text != "Active" or target not in lldp_hosts or (target, device) in cabled:
            continue
        layer = query.values(target, entity, "link_layer")
        if layer and layer[0][1] != "Ethernet":
            continue
        netdev = netdevs.get((target, device))
        if netdev is None or (target, netdev) in cabled:
            continue
        out.add(target, device, "no_neighbor", switch="none", netdev=netdev)


def _down(texts: list) -> bool:
    """A port state that says the link is not up (`4: ACTIVE`, `Active`, `up`, `Up` are up)."""
    said = [str(t).lower() for t in texts if isinstance(t, str) and t]
    return bool(said) and not any("active" in t or t.strip() == "up" or t.startswith("up ") for t in said)


def _speeds(analysis, links: list[Link], out: StatedFacts) -> None:
    """speed_mismatch: the host port's rate against its switch port's, where both are known and both ends are up
    (a down port's speed is a configured one, not a negotiated rate: NX-OS prints it; the link-state rules judge
    the port). An InfiniBand switch port read by the subnet sweep (rdmatool.topology.ib_fabric) counts too."""
    query = FactQuery.of(analysis)
    hosts = {link.host for link in links}
    states: dict[tuple, list] = {}
    rates: dict[tuple, list] = {}
    # the host ends' state and rate in one pass over those two metrics, not one look-up per cable (a 2,000-host
    # fabric's cables would each cut their host's facts)
    rows = query.of_metric(["port_state", "link_rate_gbps"])
    for target, entity, metric, value, text in zip(rows["target"], rows["entity"], rows["metric"], rows["value"],
                                                   rows["text"]):
        if target in hosts:
            if metric == "port_state":
                states.setdefault((target, entity), []).append(text)
            elif isinstance(value, (int, float)) and not pd.isna(value):
                rates.setdefault((target, entity), []).append(value)
    by_port: dict[str, dict[str, tuple[list, list]]] = {}  # switch → port key → (its states, its rates), read once
    for link in links:
        host_port = f"{link.nic}/1"
        if _down(states.get((link.host, host_port), [])):
            continue
        host_rate = rates.get((link.host, host_port), [])
        if link.switch not in by_port:
            by_port[link.switch] = _switch_ports(query, link.switch)
        ours = by_port[link.switch].get(port_key(link.switch_port))
        if ours is None or _down(ours[0]):
            continue
        switch_rate = ours[1]
        if host_rate and switch_rate and abs(float(host_rate[0]) - switch_rate[0]) > 0.5:
            out.add(link.host, link.nic, "speed_mismatch", switch=link.switch, switch_port=link.switch_port,
                    rate_gbps=float(host_rate[0]), switch_rate_gbps=switch_rate[0])


_RATES = ("link_rate_gbps", "ib_link_rate_gbps")


def _switch_ports(query: FactQuery, switch: str) -> dict[str, tuple[list, list]]:
    """A switch's ports by port key: (their state texts, their rates in Gb/s)."""
    out: dict[str, tuple[list, list]] = {}
    frame = query.rows(target=switch, metric=["link_rate_gbps", "port_state", "oper_state", *_RATES[1:],
                                             "ib_link_state"])
    for entity, metric, value, text in zip(frame["entity"], frame["metric"], frame["value"], frame["text"]):
        if not isinstance(entity, str):
            continue
        states, rates = out.setdefault(port_key(entity), ([], []))
        if metric in _RATES:
            if not pd.isna(value):
                rates.append(float(value))
        else:
            states.append(text)
    return out


def _resolver(analysis):
    """`<neighbour>|<port>` with the port as the neighbour names it (a SONiC alias → its port name)."""
    names, ports = FactQuery.of(analysis).targets(), observed.port_names(analysis)

    def resolved(text: str) -> str:
        remote, bar, port = str(text).partition("|")
        return f"{remote}{bar}{ports.name(observed.short_name(remote, names), port)}" if bar else str(text)
    return resolved


def _changes(analysis, out: StatedFacts) -> None:
    """neighbor_changed: a port whose LLDP neighbour in the last snapshot is not the one of the first."""
    rows = getattr(getattr(analysis, "table", None), "frame", None)
    if not isinstance(rows, pd.DataFrame) or rows.empty or "snapshot" not in rows.columns:
        return
    # (the LLDP rows alone are cut; their entity and text as plain texts, as the rules read them)
    lldp = rows.take(np.flatnonzero(column_codes.mask(rows, None, "metric", ["lldp_neighbor"])))
    lldp = column_codes.as_texts(lldp, OBJECTS)
    if lldp.empty or lldp["snapshot"].nunique() < 2:
        return
    first, last = lldp["snapshot"].min(), lldp["snapshot"].max()
    resolved = _resolver(analysis)
    for (target, entity), rows in lldp.groupby(["target", "entity"], sort=True):
        before = {resolved(t) for t in rows.loc[rows["snapshot"] == first, "text"].dropna()}
        after = {resolved(t) for t in rows.loc[rows["snapshot"] == last, "text"].dropna()}
        if (rows["snapshot"] == last).any() and (rows["snapshot"] == first).any() and before != after:
            out.add(target, entity, "neighbor_changed", switch=" ".join(sorted(after)).replace("|", " ") or "none",
                    previous=" ".join(sorted(before)).replace("|", " ") or "none")


def _against_file(analysis, topology, links: list[Link], hosts: set[str], out: StatedFacts) -> None:
    for d in expected_topology.diff(topology, links, hosts, observed.port_names(analysis)):
        where = f"{d.expected_switch} {d.expected_port}".strip()
        seen = f"{d.observed_switch} {d.observed_port}".strip() or "no cable seen"
        out.add(d.host, d.nic, d.kind, switch=seen, expected=where, topology_file=topology.path)


def cabling_facts(analysis, topology: expected_topology.ExpectedTopology | None = None) -> pd.DataFrame:
    """Every cabling problem of the bundle, as facts (rdmatool.table.analysis.FACT_COLUMNS)."""
    query = FactQuery.of(analysis)
    targets = list(getattr(analysis, "targets", None) or [])
    roles = {t["name"]: t.get("role") for t in targets if isinstance(t, dict) and t.get("name")}
    out = StatedFacts(query, roles, VERDICT, "cabling_", "topology")
    links = observed.links_from_analysis(analysis)
    rdma = _rdma_links(analysis, links)
    _rails(rdma, _group_of(targets), out)
    sides.one_sided(analysis, set(_rdma_links(analysis, observed.host_view(analysis))), out)
    _lonely_ports(analysis, links, out)
    _speeds(analysis, rdma, out)
    _changes(analysis, out)
    if topology is not None:
        hosts = {t for t, k in zip(query.facts.get("target", []), query.facts.get("kind", [])) if k == "host"}
        _against_file(analysis, topology, links, hosts, out)
    return out.frame()


def with_cabling(analysis: Analysis, topology: expected_topology.ExpectedTopology | None = None,
                 pairs=None) -> Analysis:
    """The analysis with its cabling facts added (a new Analysis: the one given is not changed); with perftest
    `pairs` (rdmatool.topology.paths), the slow path classes too."""
    found = cabling_facts(analysis, topology)
    if pairs:
        slow = paths.path_class_facts(pairs, observed.links_from_analysis(analysis), paths.uplinks(analysis))
        found = pd.concat([f for f in (found, slow) if not f.empty], ignore_index=True) if not slow.empty else found
    return grown_by(analysis, found)
