"""Physical errors judged per cable: which end of a cable counts them, stated as facts for the playbook rules.

A bad cable or optic shows as errors on one end or both: symbol, CRC or uncorrectable FEC errors and link error
recoveries on the host port (perfquery, sysfs, ethtool), CRC / input errors and symbol errors on the switch port
(SONiC RX_ERR; NX-OS CRC and input errors; Cumulus `counters errors`, Onyx `counters`, EOS `counters errors`: FCS,
symbol and total receive errors). Counted apart, one cable gives two unrelated findings and neither names the other
end. Paired through the cabling the bundle saw (rdmatool.topology.observed), each cable whose errors grew in the
window is one `link_error_verdict` fact:

- `both_ends`: the host port and the switch port it is cabled to both count errors (on the host port's subject);
- `host_end`: only the host port does (on the host port, naming its switch port);
- `switch_end`: only the switch port does (on the switch port, naming the far end when the cable is known: the
  host port, or the peer switch's port of a switch-to-switch cable).

The subject's detail facts (`link_host`, `link_host_port`, `link_switch`, `link_switch_port`, `link_far_end`,
`link_host_errors`, `link_switch_errors`, `link_host_counters`, `link_switch_counters`) are what the rules of `playbooks/10-links.yaml`
(kind `verdict`) print. A host port whose cable is not known is left to the per-counter rules of that playbook.
"""

from __future__ import annotations

import pandas as pd

from rdmatool.metrics import rate_name
from rdmatool.platforms.port_names import port_key
from rdmatool.table.analysis import Analysis, grown_by
from rdmatool.table.facts import FactQuery
from rdmatool.topology import observed
from rdmatool.topology.stated import StatedFacts

VERDICT = "link_error_verdict"
# Errors a bad cable or optic makes the host port count (the error-severity physical rules of 10-links.yaml).
HOST_ERRORS = ("symbol_errors", "link_error_recovery", "rx_crc_errors", "rx_symbol_errors", "fec_uncorrectable_blocks")
# What a switch port counts of them: frames with a bad FCS, all input errors (SONiC RX_ERR, NX-OS input errors,
# the receive totals of Cumulus, Onyx and EOS), which include the FCS errors, and PHY symbol errors (Cumulus, Onyx,
# EOS): the largest is the port's count, never their sum.
# An InfiniBand switch port, restated from the subnet sweep (rdmatool.topology.ib_fabric), counts symbol errors and
# link error recoveries as a host port does.
SWITCH_ERRORS = ("rx_crc_errors", "rx_errors", "rx_symbol_errors", "symbol_errors", "link_error_recovery")


def _growth(query: FactQuery, kind: str, metrics: tuple[str, ...]) -> dict[tuple[str, str], dict[str, float]]:
    """(target, entity) → {metric: its growth over the window} for the counters of `metrics` that grew. The same
    counter read by two tools (sysfs and perfquery) is counted once: the larger reading."""
    out: dict[tuple[str, str], dict[str, float]] = {}
    rows = query.of_metric([rate_name(m) for m in metrics])
    for target, target_kind, entity, metric, delta in zip(rows["target"], rows["kind"], rows["entity"],
                                                          rows["metric"], rows["delta"]):
        if target_kind != kind or not isinstance(entity, str) or pd.isna(delta) or float(delta) <= 0:
            continue
        name = metric.removesuffix("_per_s")
        seen = out.setdefault((target, entity), {})
        seen[name] = max(seen.get(name, 0.0), float(delta))
    return out


def _counters(grown: dict[str, float]) -> str:
    return ", ".join(f"{name} +{value:g}" for name, value in sorted(grown.items()))


def _host_ports(query: FactQuery, grown: dict) -> dict[tuple[str, str], dict[str, float]]:
    """The host errors per RDMA port (`mlx5_1/1`): a netdev's counters (ethtool) join its RDMA port's."""
    out: dict[tuple[str, str], dict[str, float]] = {}
    for (host, entity), counters in grown.items():
        port = entity if "/" in entity else query.entity_with_text(host, "netdev", entity) or entity
        merged = out.setdefault((host, port), {})
        for name, value in counters.items():
            merged[name] = max(merged.get(name, 0.0), value)
    return out


def _port_of(query: FactQuery, host: str, nic: str) -> str:
    """The RDMA port a cable's host end is: the NIC's port that has a netdev (LLDP runs on it), else `<nic>/1`;
    a netdev no RDMA port is bound to stays the netdev."""
    bound, first = query.derived("netdev_ports", lambda: _netdev_ports(query))
    return bound.get((host, nic)) or first.get((host, nic)) or f"{nic}/1"


def _netdev_ports(query: FactQuery) -> tuple[dict, dict]:
    """(host, netdev) → the RDMA port bound to it, and (host, device) → the device's first port with a netdev: one
    pass over the netdev facts, not a look-up per cable (a 2,000-host fabric's cables)."""
    bound: dict[tuple[str, str], str] = {}
    first: dict[tuple[str, str], str] = {}
    rows = query.of_metric("netdev")
    for target, entity, text in zip(rows["target"], rows["entity"], rows["text"]):
        if not isinstance(entity, str):
            continue
        if isinstance(text, str):
            bound.setdefault((target, text), entity)
        if "/" in entity:
            first.setdefault((target, entity.split("/")[0]), entity)
    return bound, first


def _reported(query: FactQuery) -> set[tuple[str, str]]:
    """The switch ports that report an error counter at all (grown or not): their silence means no errors."""
    rows = query.of_metric([rate_name(m) for m in SWITCH_ERRORS])
    return {(t, port_key(e)) for t, e in zip(rows["target"], rows["entity"]) if isinstance(e, str)}


def link_error_facts(analysis) -> pd.DataFrame:
    """Every cable whose physical error counters grew, as facts (rdmatool.table.analysis.FACT_COLUMNS)."""
    query = FactQuery.of(analysis)
    roles = {t["name"]: t.get("role") for t in list(getattr(analysis, "targets", None) or [])
             if isinstance(t, dict) and t.get("name")}
    out = StatedFacts(query, roles, VERDICT, "link_", "link_errors")
    host = _host_ports(query, _growth(query, "host", HOST_ERRORS))
    switch = {(target, port_key(entity)): (entity, counters)
              for (target, entity), counters in _growth(query, "switch", SWITCH_ERRORS).items()}
    reported = _reported(query)
    said_host: set[tuple[str, str]] = set()
    said_switch: set[tuple[str, str]] = set()
    for link in observed.links_from_analysis(analysis):
        port = _port_of(query, link.host, link.nic)
        key = (link.switch, port_key(link.switch_port))
        if (link.host, port) in said_host or key in said_switch:
            continue  # one cable seen twice (from both ends): said once
        at_host, at_switch = host.get((link.host, port)), switch.get(key)
        if not at_host and not at_switch:
            continue
        said_host.add((link.host, port))
        said_switch.add(key)
        ends = {"host": link.host, "host_port": port, "switch": link.switch, "switch_port": link.switch_port}
        if at_host and at_switch:
            out.add(link.host, port, "both_ends", **ends, host_errors=max(at_host.values()),
                    host_counters=_counters(at_host), switch_errors=max(at_switch[1].values()),
                    switch_counters=_counters(at_switch[1]))
        elif at_host:
            silent = "none" if key in reported else f"not reported by {link.switch}"
            out.add(link.host, port, "host_end", **ends, host_errors=max(at_host.values()),
                    host_counters=_counters(at_host), switch_counters=silent)
        else:
            out.add(link.switch, at_switch[0], "switch_end", **{**ends, "switch_port": at_switch[0]},
                    far_end=f"{link.host} {port}", switch_errors=max(at_switch[1].values()), switch_counters=_counters(at_switch[1]))
    peers = {(c.switch, port_key(c.port)): f"{c.peer} {c.peer_port}" for c in observed.fabric_view(analysis)}
    for key, (entity, counters) in sorted(switch.items()):
        if key not in said_switch:  # a switch-to-switch cable, or one the bundle did not see: still its errors
            far_end = peers.get(key, "not known (no LLDP neighbour in the bundle)")
            out.add(key[0], entity, "switch_end", far_end=far_end,
                    switch=key[0], switch_port=entity, switch_errors=max(counters.values()), switch_counters=_counters(counters))
    return out.frame()


def with_link_errors(analysis: Analysis) -> Analysis:
    """The analysis with its per-cable error verdicts added (a new Analysis: the one given is not changed)."""
    return grown_by(analysis, link_error_facts(analysis))
