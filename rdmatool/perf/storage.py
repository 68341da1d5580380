"""Storage reads: compute clients read from each storage node many-to-one, so that the storage plane is measured at
the rate the fabric promises (`rdmatool plan storage` says what that is; the 3FS reference delivered about 81 % of
its line rate).

The pattern is an incast turned round: on each storage node one perftest server per client, and `ib_read_bw`
clients on the compute hosts, so that the data flows out of the storage node's NICs into the clients, as a file
system's reads do (`ib_write_bw` for the write path). Three steps, values in, values out:

- `plan(storage, clients, clients_per_node)` (pure): rounds of groups (rdmatool.perf.incast.Group, the storage node
  as `receiver`, its clients as `senders`); in one round no client serves two storage nodes, each storage node is
  driven by `clients_per_node` clients at once, and the clients rotate from one round to the next so that a slow
  client does not always sit in front of the same storage node;
- `run(session, rounds, deadline)`: the rounds one after the other, each as an incast round (every group at once);
- `figures(rounds, results, line_gbps, reference)` (pure): per storage node the delivered bandwidth (its clients'
  sum) against its line rate, and the fleet's aggregate and efficiency beside the reference's.

`facts(figures, nics, cabling)` (pure) states the figures as facts and `findings(...)` judges them with the storage
rules of the playbooks (playbooks/80-storage.yaml): a slow node named with its NIC and, where the cabling is known,
its switch port; the fleet below the reference's efficiency.

`rdmatool perf run --mode storage` runs it (rdmatool.cli._perf_storage), and so does the gate's storage stage
(rdmatool.gate.storage_stage). A storage node with several NICs is driven through all of them (`with_nics`: its
clients spread over its NICs, each NIC its own perftest servers), judged against the line rate of them all, and a
slow node is named by its weakest NIC. What the reads did to the pause counters of the compute class is
rdmatool.perf.storage_pauses'.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace

import pandas as pd

from rdmatool.perf import incast
from rdmatool.perf.incast import Group
from rdmatool.perf.model import PairResult
from rdmatool.table import frame as frames
from rdmatool.table.analysis import FACT_COLUMNS, Analysis

# The default of the share of the fleet's median delivery below which a storage node is named slow (the gate
# profile's `storage.slow_share_of_median`, perf run's `--slow-share`): the planning rule's 70 % of line rate would
# name every node of a fleet whose clients are the bottleneck, the fleet's own median names the outlier.
SLOW_SHARE_OF_MEDIAN = 0.8


def plan(storage: Iterable[str], clients: Iterable[str], clients_per_node: int) -> list[list[Group]]:
    """Rounds of groups: each storage node once, with `clients_per_node` distinct clients (fewer when there are not
    that many); ValueError when there is no storage node or no client, or `clients_per_node` < 1."""
    nodes, pool = sorted(set(storage)), sorted(set(clients) - set(storage))
    if clients_per_node < 1:
        raise ValueError(f"clients_per_node must be at least 1, not {clients_per_node}")
    if not nodes or not pool:
        raise ValueError(f"a storage read needs storage nodes and clients: {len(nodes)} storage, {len(pool)} clients")
    k = min(clients_per_node, len(pool))
    per_round = max(1, len(pool) // k)
    rounds: list[list[Group]] = []
    for start in range(0, len(nodes), per_round):
        offset = (len(rounds) * k) % len(pool)
        rotated = pool[offset:] + pool[:offset]
        rounds.append([Group(node, tuple(rotated[i * k:(i + 1) * k]))
                       for i, node in enumerate(nodes[start:start + per_round])])
    return rounds


def with_nics(rounds: list[list[Group]], rails: Mapping[str, Iterable[str]]) -> list[list[Group]]:
    """The rounds with each storage node's clients spread over its NICs (`rails`: host -> its RDMA devices of the
    run's link layer), round-robin in device order, so that every NIC of a multi-NIC node carries reads; a node
    with one NIC (or none known) keeps the NIC discovery chose."""
    out = []
    for groups in rounds:
        spread = []
        for g in groups:
            devices = sorted(rails.get(g.receiver, ()))
            nics = tuple((c, devices[i % len(devices)]) for i, c in enumerate(g.senders)) if len(devices) > 1 else ()
            spread.append(replace(g, receiver_nics=nics))
        out.append(spread)
    return out


def line_rates(session) -> tuple[dict[str, float], dict[str, dict[str, float]]]:  # noqa: ANN001 - a PerfSession
    """(host -> the line rate of all its NICs the run drives, host -> device -> each NIC's rate), from discovery; a
    host whose NICs are not known by name, the rate of the port it tests with."""
    per_nic = {name: {d: float(i.rate_gbps) for d, i in state.rails.items() if i.rate_gbps}
               for name, state in session.hosts.items() if state.info is not None}
    whole = {**session.expected_gbps(), **{name: sum(rates.values()) for name, rates in per_nic.items() if rates}}
    return whole, per_nic


def run(session, rounds: list[list[Group]], deadline: float | None = None) -> list[PairResult]:  # noqa: ANN001 - a perf engine session
    """The rounds in turn (each storage node's servers, then its clients together: rdmatool.perf.incast.run); a
    round that cannot finish before `deadline` is reported not run."""
    results: list[PairResult] = []
    for groups in rounds:
        if deadline is not None and time.monotonic() >= deadline:
            results += [incast._not_run(session, g.receiver, s, "deadline reached") for g in groups for s in g.senders]
            continue
        results += incast.run(session, groups, deadline)
    return results


def _gbps(r: PairResult | None) -> float | None:
    return r.bw_avg_gbps if r is not None and r.ok and r.bw_avg_gbps is not None else None


def _per_nic(group: Group, got: list[PairResult | None], rates: Mapping[str, float]) -> list[dict]:
    """Each NIC of a storage node read through several: its clients, what they got, its own rate and share."""
    nics: dict[str, list] = {}
    for client, r in zip(group.senders, got, strict=True):
        nics.setdefault(dict(group.receiver_nics).get(client, ""), []).append((client, _gbps(r)))
    out = []
    for device, served in sorted(nics.items()):
        values = [v for _, v in served if v is not None]
        delivered = sum(values) if len(values) == len(served) else None
        line = rates.get(device)
        out.append({"device": device, "clients": [c for c, _ in served], "delivered_gbps": delivered,
                    "line_gbps": line, "share": delivered / line if delivered is not None and line else None})
    return out


def figures(rounds: list[list[Group]], results: list[PairResult], line_gbps: Mapping[str, float | None],
            reference_efficiency: float | None = None, slow_share: float = SLOW_SHARE_OF_MEDIAN,
            nic_rates: Mapping[str, Mapping[str, float]] | None = None) -> dict:
    """Per storage node: its clients' delivered Gb/s, its line rate (`line_gbps`, all its NICs), the share, whether
    every client measured, and `slow` (below `slow_share` of the fleet's median share); read through several NICs
    (`receiver_nics`), each NIC's figures against its rate (`nic_rates`: host -> device -> Gb/s) and the weakest
    one named; for the fleet: the aggregate over the nodes fully measured, their line rate, the efficiency and the
    reference's beside it."""
    by_pair = {(r.server, r.client): r for r in results}
    nodes = []
    for group in (g for groups in rounds for g in groups):
        got = [by_pair.get((group.receiver, c)) for c in group.senders]
        measured = [v for v in map(_gbps, got) if v is not None]
        line = line_gbps.get(group.receiver)
        complete = len(measured) == len(group.senders)
        delivered = sum(measured) if measured else None
        node = {"node": group.receiver, "clients": list(group.senders), "delivered_gbps": delivered,
                "line_gbps": line, "share": delivered / line if delivered is not None and line else None,
                "complete": complete,
                "errors": {c: r.error if r is not None else "not run" for c, r in zip(group.senders, got)
                           if r is None or not r.ok}}
        if group.receiver_nics:
            node["nics"] = _per_nic(group, got, (nic_rates or {}).get(group.receiver, {}))
            shared = [n for n in node["nics"] if n["share"] is not None]
            node["weakest_nic"] = min(shared, key=lambda n: n["share"])["device"] if shared else None
        nodes.append(node)
    shares = [n["share"] for n in nodes if n["complete"] and n["share"] is not None]
    median = statistics.median(shares) if shares else None
    for n in nodes:
        n["slow"] = bool(median and n["complete"] and n["share"] is not None and n["share"] < slow_share * median)
    full = [n for n in nodes if n["complete"] and n["share"] is not None]
    aggregate = sum(n["delivered_gbps"] for n in full) if full else None
    line = sum(n["line_gbps"] for n in full) if full else None
    efficiency = aggregate / line if aggregate is not None and line else None
    return {"nodes": nodes, "median_share": median, "slow_share_of_median": slow_share,
            "fleet": {"nodes_measured": len(full), "nodes": len(nodes), "aggregate_gbps": aggregate,
                      "line_gbps": line, "efficiency": efficiency, "reference_efficiency": reference_efficiency,
                      "below_reference": (efficiency < reference_efficiency
                                          if efficiency is not None and reference_efficiency is not None else None)}}


def facts(figures: dict, nics: Mapping[str, str], cabling: Mapping[str, tuple[str, str]] | None = None,
          roles: Mapping[str, str | None] | None = None) -> list[dict]:
    """The figures as fact rows (rdmatool.table.analysis.FACT_COLUMNS, raw_key `storage`) for the storage rules:

    - each storage node (target: the node, entity: the NIC it was read through, `nics`, or of a node read through
      several NICs the one with the lowest share of its rate): `storage_node_verdict`
      slow | ok | incomplete, `storage_read_gbps`, `storage_line_gbps`, `storage_read_efficiency` (the share of its
      line rate), `storage_clients`, `storage_switch_port` (`leaf switch port` from `cabling`: host -> (switch,
      port), else that it is not known) and `storage_record` (its figures and the fleet's median share, JSON);
    - the fleet (target `fabric`, entity `storage`): `storage_fleet_read_efficiency` over the nodes fully measured,
      `storage_fleet_read_gbps`, `storage_fleet_line_gbps`, `storage_fleet_nodes`.

    A figure that was not measured stays absent, so no rule judges a number nobody saw."""
    cabling, roles = cabling or {}, roles or {}
    rows: list[dict] = []

    def row(target: str, kind: str, entity: str | None, metric: str, value=None, text=None) -> None:
        if value is None and text is None:
            return
        rows.append({**dict.fromkeys(FACT_COLUMNS), "target": target, "kind": kind, "role": roles.get(target),
                     "entity": entity, "metric": metric, "value": None if value is None else float(value),
                     "text": text, "raw_key": "storage", "flag": ""})

    for n in figures["nodes"]:
        node, nic = n["node"], n.get("weakest_nic") or nics.get(n["node"])
        verdict = "slow" if n["slow"] else "ok" if n["complete"] else "incomplete"
        switch = cabling.get(node)
        row(node, "host", nic, "storage_node_verdict", text=verdict)
        row(node, "host", nic, "storage_read_gbps", n["delivered_gbps"])
        row(node, "host", nic, "storage_line_gbps", n["line_gbps"])
        row(node, "host", nic, "storage_read_efficiency", n["share"])
        row(node, "host", nic, "storage_clients", text=", ".join(n["clients"]))
        row(node, "host", nic, "storage_switch_port",
            text=f"{switch[0]} {switch[1]}".strip() if switch else "not known (the inventory lists no cabling for it)")
        row(node, "host", nic, "storage_record", text=json.dumps({**n, "median_share": figures["median_share"]},
                                                                   default=str))
    fleet = figures["fleet"]
    row("fabric", "fabric", "storage", "storage_fleet_read_efficiency", fleet["efficiency"])
    row("fabric", "fabric", "storage", "storage_fleet_read_gbps", fleet["aggregate_gbps"])
    row("fabric", "fabric", "storage", "storage_fleet_line_gbps", fleet["line_gbps"])
    row("fabric", "fabric", "storage", "storage_fleet_nodes", fleet["nodes_measured"])
    return rows


def findings(rows: list[dict], rules) -> list:  # noqa: ANN001 - the playbooks' rules (rdmatool.rules.playbook)
    """The storage facts judged by the rules of the `bandwidth` stage that read them (playbooks/80-storage.yaml, or
    a site's own copy): through the rules engine like any diagnosis, so a site's playbook values hold here too."""
    from rdmatool.rules import engine

    metrics = {r["metric"] for r in rows}
    mine = [r for r in rules if r.stage == "bandwidth" and (r.params.get("metric") in metrics
                                                            or r.params.get("verdict") in metrics)]
    table = pd.DataFrame(rows, columns=FACT_COLUMNS).astype(
        {"value": float, "window_s": float, "delta": float, "priority": "Int64", "size_bytes": "Int64"})
    return engine.evaluate(Analysis(facts=table, table=frames.SampleTable(frame=pd.DataFrame()), window_s=None), mine)
