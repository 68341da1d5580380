"""A hand-made rail-optimised pod as facts: three GPU hosts with two RoCE NICs each, NIC mlx5_0 of every host on
rail leaf leaf-r0 and mlx5_1 on leaf-r1 (SONiC), both ends' LLDP, link rates. Mutations move cables."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from rdmatool.table.analysis import FACT_COLUMNS
from rdmatool.table.facts import FactQuery
from rdmatool.topology.cabling import cabling_facts
from tests.pods.facts import row

HOSTS = ("gpu01", "gpu02", "gpu03")
NICS = (("mlx5_0", "ens1f0np0", "leaf-r0"), ("mlx5_1", "ens1f1np1", "leaf-r1"))


def port_of(host: str) -> str:
    return f"Ethernet{4 * HOSTS.index(host)}"


def healthy() -> dict[tuple[str, str], tuple[str, str]]:
    """(host, device) → (switch, switch port): the cabling plan."""
    return {(h, dev): (leaf, port_of(h)) for h in HOSTS for dev, _nd, leaf in NICS}


def rows(cables: dict | None = None, host_blind: set = frozenset(), switch_blind: set = frozenset(),
         rates: dict | None = None) -> list[dict]:
    """The pod's facts for this cabling. `host_blind` / `switch_blind`: (host, device) whose LLDP the host / the
    switch does not report; `rates`: (switch, port) → a switch port rate (every other port 400 Gb/s)."""
    cables = healthy() if cables is None else cables
    out = []
    for h in HOSTS:
        for dev, netdev, _leaf in NICS:
            out += [row(h, "linux", f"{dev}/1", "netdev", text=netdev),
                    row(h, "linux", f"{dev}/1", "port_state", text="Active"),
                    row(h, "linux", f"{dev}/1", "link_layer", text="Ethernet"),
                    row(h, "linux", f"{dev}/1", "link_rate_gbps", 400)]
            if (h, dev) not in cables:
                continue
            switch, port = cables[(h, dev)]
            if (h, dev) not in host_blind:
                out.append(row(h, "linux", netdev, "lldp_neighbor", text=f"{switch}|{port}"))
            if (h, dev) not in switch_blind:
                out.append(row(switch, "sonic", port, "lldp_neighbor", text=f"{h}|{netdev}"))
            rate = (rates or {}).get((switch, port), 400)
            out.append(row(switch, "sonic", port, "link_rate_gbps", rate))
    return out


def analysis(facts: list[dict], snapshots: pd.DataFrame | None = None):
    frame = pd.DataFrame(facts, columns=FACT_COLUMNS).astype({"priority": "Int64", "size_bytes": "Int64"})
    hosts = sorted(set(frame.loc[frame["kind"] == "host", "target"]))
    targets = [{"name": h, "kind": "host", "role": "compute", "groups": ["gpu"]} for h in hosts]
    targets += [{"name": s, "kind": "switch", "role": None, "groups": []}
                for s in sorted(set(frame["target"]) - set(hosts))]
    table = SimpleNamespace(frame=snapshots if snapshots is not None else pd.DataFrame(), targets=targets)
    return SimpleNamespace(facts=frame, links=pd.DataFrame(), window_s=10.0, query=FactQuery(frame), table=table,
                           targets=targets)


LEAVES = {"leaf01": ("h01", "h02", "h03"), "leaf02": ("h04", "h05", "h06"), "leaf03": ("h07", "h08", "h09")}


def leaf_spine_rows() -> list[dict]:
    """Nine hosts, three per leaf (one RoCE NIC each, both ends' LLDP), every leaf cabled to spine01."""
    out = []
    for leaf, hosts in LEAVES.items():
        for i, h in enumerate(hosts):
            out += [row(h, "linux", "mlx5_0/1", "netdev", text="ens1f0np0"),
                    row(h, "linux", "ens1f0np0", "lldp_neighbor", text=f"{leaf}|Ethernet{4 * i}"),
                    row(leaf, "sonic", f"Ethernet{4 * i}", "lldp_neighbor", text=f"{h}|ens1f0np0")]
        out += [row(leaf, "sonic", "Ethernet60", "lldp_neighbor", text=f"spine01|Ethernet{leaf[-1]}"),
                row("spine01", "sonic", f"Ethernet{leaf[-1]}", "lldp_neighbor", text=f"{leaf}|Ethernet60")]
    return out


def pairs(slow_leaf: str | None = None, slow_gbps: float = 180.0) -> list[dict]:
    """ib_write_bw between every two hosts (server < client): 390 Gb/s, or `slow_gbps` across `slow_leaf`'s uplinks."""
    where = {h: leaf for leaf, hosts in LEAVES.items() for h in hosts}
    names = sorted(where)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            crossing = where[a] != where[b] and slow_leaf in (where[a], where[b])
            out.append({"server": a, "client": b, "test": "ib_write_bw", "bw_avg_gbps": slow_gbps if crossing else
                        390.0 - (i % 3), "error": None})
    return out


def with_cabling(a, topology=None, pairs=None):
    """The analysis with the cabling judge's facts, as the diagnosis adds them."""
    found = cabling_facts(a, topology)
    if pairs:
        from rdmatool.topology import observed, paths

        slow = paths.path_class_facts(pairs, observed.links_from_analysis(a), paths.uplinks(a))
        found = pd.concat([found, slow], ignore_index=True) if not slow.empty else found
    facts = pd.concat([a.facts, found], ignore_index=True) if not found.empty else a.facts
    return SimpleNamespace(facts=facts, links=a.links, window_s=a.window_s, query=FactQuery(facts), table=a.table,
                           targets=a.targets)
