"""A switch port's paused share and packet count read at the far end of its cable, where the switch counts neither.

"ECN fires after PFC" is judged per switch port and priority from the share of the window the port was paused
against the share of its packets it marked (rdmatool.rules.kinds.ecn_vs_pause). Cumulus and Onyx count pause
durations per port; SONiC, EOS and NX-OS count only pause frames, and a frame count says little about time (a
paused peer refreshes XOFF before it expires: docs/tuning.md §3.2). EOS counts no transmitted packets per queue
either. The host at the other end of the cable counts both, in the same units the rule reads:

- the host's `tx_pause_duration_us` on a priority is the time it held the switch port's transmitter: the switch
  port's `rx_pause_fraction` on that priority;
- the host's `rx_packets` on a priority are the packets the switch port transmitted to it there: the switch port's
  `tx_packets` (as a rate over the host's window; the rule compares rates, so the two windows need not match).

Each is stated only for a switch port that has no count of its own for it (a switch's own reading always wins),
with `raw_key` naming the far end (`far end gpu01 ens1f0np0: tx_pause_duration_us`), so that the evidence says where
the figure comes from. The entity is the port as the switch's own counters spell it, so the rule pairs the figure
with that port's ECN marks. Marks are never taken from the host: a host counts the marks of every hop on the path.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from rdmatool.metrics import rate_name
from rdmatool.platforms.port_names import port_key
from rdmatool.table.analysis import FACT_COLUMNS, Analysis, grown_by
from rdmatool.table.facts import FactQuery
from rdmatool.topology import observed

# (the host's metric, the switch port's metric it becomes, whether the fact is a rate row)
_ACROSS = (("tx_pause_fraction", "rx_pause_fraction", False), (rate_name("rx_packets"), rate_name("tx_packets"), True))
# the host-side counter each figure comes from, for the evidence
_SOURCE = {"rx_pause_fraction": "tx_pause_duration_us", rate_name("tx_packets"): "rx_packets"}


def _netdev(query: FactQuery, host: str, nic: str) -> str:
    """The netdev of a cable's host end: LLDP names a netdev, or an RDMA device whose port has one."""
    rows = query.rows(target=host, metric="netdev")
    for entity, text in zip(rows["entity"], rows["text"]):
        if isinstance(entity, str) and entity.split("/")[0] == nic and isinstance(text, str) and text:
            return text
    return nic


def _per_port(query: FactQuery, switch: str, metric: str) -> dict[str, set]:
    """port key → the priorities the switch itself reports `metric` for (None: a port-wide count)."""
    rows = query.rows(target=switch, metric=metric)
    out: dict[str, set] = {}
    for entity, prio in zip(rows["entity"], rows["priority"]):
        if isinstance(entity, str):
            out.setdefault(port_key(entity), set()).add(None if pd.isna(prio) else int(prio))
    return out


def _spelling(query: FactQuery, switch: str, port: str) -> str:
    """The port as the switch's own ECN counters spell it (`Ethernet1/1` where LLDP said `Ethernet1/1` or `Et1/1`)."""
    rows = query.rows(target=switch, metric=rate_name("ecn_marked_packets"))
    for entity in rows["entity"]:
        if isinstance(entity, str) and port_key(entity) == port_key(port):
            return entity
    return port


def _role(query: FactQuery, target: str):
    rows = query.rows(target=target)
    role = rows["role"].iloc[0] if len(rows) and "role" in rows.columns else None
    return None if pd.isna(role) else role


def far_end_facts(analysis) -> pd.DataFrame:
    """The figures a switch port lacks, read at the host end of its cable (FACT_COLUMNS); empty when none."""
    query = FactQuery.of(analysis)
    out = []
    # per switch, not per cable: a leaf has dozens of cables, and these read all of its rows
    own_of = functools.cache(lambda switch, metric: _per_port(query, switch, metric))
    role_of = functools.cache(lambda switch: _role(query, switch))
    for link in observed.links_from_analysis(analysis):
        kind = query.kind_platform(link.switch)
        if not kind or kind[0] != "switch" or not link.switch_port or link.host not in query.targets():
            continue  # (a host the subnet sweep names but the bundle did not read has no figure to lend)
        if kind[1] == "infiniband":
            continue  # an InfiniBand switch port the subnet sweep read: no pause, no ECN to lend it figures for
        netdev = _netdev(query, link.host, link.nic)
        key = port_key(link.switch_port)
        entity = None
        for host_metric, switch_metric, is_rate in _ACROSS:
            # a port-wide count of the switch's own does not stand for one priority's: the far end's per-priority
            # count is the better figure there
            own = own_of(link.switch, switch_metric).get(key, set())
            rows = query.rows(target=link.host, entity=netdev, metric=host_metric)
            for prio, value, delta, window in zip(rows["priority"], rows["value"], rows["delta"], rows["window_s"]):
                if pd.isna(prio) or int(prio) in own or pd.isna(value):
                    continue
                entity = entity or _spelling(query, link.switch, link.switch_port)
                out.append({
                    "target": link.switch, "kind": "switch", "platform": kind[1], "role": role_of(link.switch),
                    "entity": entity,
                    "metric": switch_metric, "priority": int(prio), "size_bytes": pd.NA, "value": float(value),
                    "text": None, "raw_key": f"far end {link.host} {netdev}: {_SOURCE[switch_metric]}",
                    "window_s": float(window) if pd.notna(window) else np.nan,
                    "delta": float(delta) if is_rate and pd.notna(delta) else np.nan, "flag": "",
                })
    if not out:
        return pd.DataFrame(columns=FACT_COLUMNS)
    return pd.DataFrame(out, columns=FACT_COLUMNS).astype({"priority": "Int64", "size_bytes": "Int64"})


def with_far_end(analysis: Analysis) -> Analysis:
    """The analysis with the far-end figures added (a new Analysis: the one given is not changed)."""
    return grown_by(analysis, far_end_facts(analysis))
