"""Hand-made pods as facts tables (below the bundle): a few targets and an Analysis-like object for the suggester
tests, which ask about single facts of many platforms."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from rdmatool.table.analysis import FACT_COLUMNS
from rdmatool.table.facts import FactQuery

PLATFORM_KIND = {"linux": "host", "sonic": "switch", "cumulus": "switch", "onyx": "switch", "eos": "switch",
                 "nxos": "switch"}


def row(target, platform, entity, metric, value=None, text=None, priority=None, raw_key=None) -> dict:
    return {"target": target, "kind": PLATFORM_KIND[platform], "platform": platform, "role": None, "entity": entity,
            "metric": metric, "priority": priority, "size_bytes": None, "value": value, "text": text,
            "raw_key": raw_key, "window_s": None, "delta": None, "flag": ""}


def pfc_rows(target, platform, entity, enabled) -> list[dict]:
    return [row(target, platform, entity, "pfc_enabled", int(p in enabled), priority=p) for p in range(8)]


def host(name, netdev="ens1f0np0", rdma="mlx5_0/1", rate=100, mtu=4096) -> list[dict]:
    rows = [row(name, "linux", rdma, "netdev", text=netdev, raw_key="GID[3]")]
    if rate is not None:
        rows.append(row(name, "linux", rdma, "link_rate_gbps", rate, raw_key="rate"))
    if mtu is not None:
        rows.append(row(name, "linux", rdma, "active_mtu", mtu, raw_key="active_mtu"))
    return rows


def analysis(rows: list[dict], links: list[tuple[str, str, str, str]] = (), profile: dict | None = None):
    facts = pd.DataFrame(rows, columns=FACT_COLUMNS)
    facts["priority"] = facts["priority"].astype("Int64")
    facts["size_bytes"] = facts["size_bytes"].astype("Int64")
    link_frame = pd.DataFrame(list(links), columns=["host", "host_port", "switch", "switch_port"])
    out = SimpleNamespace(facts=facts, links=link_frame, window_s=None, query=FactQuery(facts))
    if profile is not None:
        out.profile = profile
    return out


def fabric():
    """gpu01 — SONiC leaf1 Ethernet0; gpu02 — Cumulus leaf2 swp1; gpu03 — EOS leaf3 Ethernet1/1;
    gpu04 — NX-OS leaf4 Ethernet1/2; gpu05 — Onyx leaf5 Eth1/1."""
    rows = []
    # gpu01: trust pcp, PFC off, DSCP 26 → 0 (48 → 6 right), cable 7, NP off / RP on, CNP 802.1p 3, TOS 0
    rows += host("gpu01")
    rows += [row("gpu01", "linux", "ens1f0np0", "trust_mode", text="pcp", raw_key="Priority trust state")]
    rows += pfc_rows("gpu01", "linux", "ens1f0np0", set())
    rows += [row("gpu01", "linux", "ens1f0np0", "dscp_to_priority", 0, text="26", raw_key="dscp26"),
             row("gpu01", "linux", "ens1f0np0", "dscp_to_priority", 6, text="48", raw_key="dscp48"),
             row("gpu01", "linux", "ens1f0np0", "cable_length_m", 7, raw_key="Cable len"),
             row("gpu01", "linux", "ens1f0np0", "roce_np_enabled", 0, priority=3, raw_key="roce_np/enable/3"),
             row("gpu01", "linux", "ens1f0np0", "roce_rp_enabled", 1, priority=3, raw_key="roce_rp/enable/3"),
             row("gpu01", "linux", "ens1f0np0", "cnp_dscp", 48, raw_key="roce_np/cnp_dscp"),
             row("gpu01", "linux", "ens1f0np0", "cnp_802p_prio", 3, raw_key="roce_np/cnp_802p_prio"),
             row("gpu01", "linux", "mlx5_0", "roce_tos", 0, raw_key="default_roce_tos")]
    # leaf1 (SONiC): Azure default lossless 3,4; the RoCE WRED profile at the generic default thresholds
    rows += pfc_rows("leaf1", "sonic", "Ethernet0", {3, 4})
    rows += [row("leaf1", "sonic", "ROCE_LOSSLESS", "ecn_min_threshold_bytes", 1_048_576, raw_key="green_min_threshold"),
             row("leaf1", "sonic", "ROCE_LOSSLESS", "ecn_max_threshold_bytes", 2_097_152, raw_key="green_max_threshold"),
             row("leaf1", "sonic", "ROCE_LOSSLESS", "ecn_max_probability_pct", 5, raw_key="green_drop_probability")]
    # gpu02 (400G, nothing configured known) behind Cumulus leaf2: global RoCE config, cable 10 m
    rows += host("gpu02", rate=400)
    rows += pfc_rows("leaf2", "cumulus", "qos", {3})
    rows += [row("leaf2", "cumulus", "qos", "cable_length_m", 10, raw_key="pfc.cable-length"),
             row("leaf2", "cumulus", "qos", "trust_mode", text="pcp,dscp", raw_key="trust.trust-mode"),
             row("leaf2", "cumulus", "qos", "ecn_min_threshold_bytes", 150_000, priority=3),
             row("leaf2", "cumulus", "qos", "ecn_max_threshold_bytes", 1_500_000, priority=3),
             row("leaf2", "cumulus", "qos", "ecn_max_probability_pct", 100, priority=3)]
    # gpu03 behind EOS leaf3
    rows += host("gpu03")
    rows += [row("gpu03", "linux", "ens1f0np0", "trust_mode", text="pcp")]
    rows += [row("leaf3", "eos", "Ethernet1/1", "ecn_min_threshold_bytes", 153_600, priority=3)]
    # gpu04 behind NX-OS leaf4, whose port reports 400G; the host reports no rate
    rows += host("gpu04", rate=None, mtu=None)
    rows += [row("leaf4", "nxos", "Ethernet1/2", "link_rate_gbps", 400, raw_key="eth_speed")]
    # gpu05 (200G) behind Onyx leaf5
    rows += host("gpu05", rate=200)
    rows += [row("leaf5", "onyx", "Eth1/1", "ecn_min_threshold_bytes", 153_600, priority=3)]
    links = [("gpu01", "ens1f0np0", "leaf1", "Ethernet0"), ("gpu02", "ens1f0np0", "leaf2", "swp1"),
             ("gpu03", "ens1f0np0", "leaf3", "Ethernet1/1"), ("gpu04", "ens1f0np0", "leaf4", "Ethernet1/2"),
             ("gpu05", "ens1f0np0", "leaf5", "Eth1/1")]
    return rows, links
