"""Cumulus NVUE global RoCE configuration: mode, PFC, ECN thresholds, trust, DSCP/PCP maps, ETS and buffer pools.

Command: `nv show qos roce [-o json]`.
Emits (entity `qos` for the switch-wide settings; a buffer pool's own name, e.g. `roce-reserved-egress`, for pool
rows; raw_key = the dotted tree path or the table column):
- `roce_mode` (text: lossless, lossy, lossless-single-ipool), `roce_enabled`, `trust_mode` (text `pcp,dscp`),
  `congestion_mode` (text), `pfc_rx_enabled`, `pfc_tx_enabled`, `cable_length_m`, `lldp_app_priority`;
- `pfc_enabled` for priorities 0-7 (1 for each `pfc-priority`, else 0); `ecn_enabled` for traffic classes 0-7
  (priority column = the TC; 1 for each `enabled-tc`);
- `ecn_min_threshold_bytes`, `ecn_max_threshold_bytes`, `ecn_max_probability_pct` once per ECN-enabled traffic
  class (priority = the TC; None when no class list is printed);
- `pcp_to_priority` / `dscp_to_priority` (value = switch priority, text = the PCP / DSCP, raw_key `pcp3` /
  `dscp26`: one series per value mapped), `priority_to_tc`
  (priority = switch priority), `tc_tsa` (`ets` for DWRR, `strict`) and `tc_bandwidth_pct` once per TC;
- `buffer_pool_size_pct` per pool (value None, text `inf` for an unbounded pool).
Example:
    mode                lossless-single-ipool  lossless-single-ipool
    pfc
      pfc-priority      3
    congestion-control
      min-threshold     146.48 KB
Caveats: where the operational column is empty the applied one is read (`enable  -  on`). Thresholds print with
binary multiples and two decimals, so `146.48 KB` reads as 149996 bytes (the configured 150000 is only exact in the
JSON form). `lldp-app-tlv` protocol-id/selector and the pools' priority/TC lists are checked, not emitted. The
`Exception List` section must read `No Data`. `-o json` is read for the tree part only, as the same nested keys
(`{"mode": "lossless", "pfc": {"pfc-priority": "3", ...}, "congestion-control": {"min-threshold": 150000, ...}}`,
NVUE object schema, field names from the table form; no public JSON sample exists); any other key is a ParseError.
"""

from __future__ import annotations

from collections.abc import Callable

from rdmatool.model import Sample
from rdmatool.parsers.switch import _cumulus as nv
from rdmatool.parsers.switch import _cumulus_roce as roce

NAME = "cumulus_roce"
ENTITY = "qos"
SECTIONS: dict[str, Callable[[str, list[nv.Line]], list[Sample]]] = {
    "roce pcp/dscp->sp mapping configurations": lambda name, body: roce.mapping_samples(name, ENTITY, body),
    "roce sp->tc mapping and ets configurations": lambda name, body: roce.ets_samples(name, ENTITY, body),
    "roce pool config": roce.pool_config_samples,
    "exception list": roce.no_data,
}


def parse(text: str) -> list[Sample]:
    return roce.parse_view(NAME, ENTITY, SECTIONS, text)
