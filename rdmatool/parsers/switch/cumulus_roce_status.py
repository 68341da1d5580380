"""Cumulus NVUE RoCE status of one port: mode, PFC, ECN, trust, its RoCE/CNP maps, ETS and pool occupancy.

Command: `nv show interface <if> qos roce status [-o json]`.
Emits (entity `port`, a placeholder the analysis replaces by the real port such as `swp1`, since the output does
not name it; a buffer pool's own name for pool rows; raw_key = the dotted tree path or the table column, prefixed
with the row label for the `roce` / `cnp` rows, e.g. `roce.dscp26` for the mapping of DSCP 26):
- the tree, as in `cumulus_roce`: `roce_mode`, `trust_mode`, `congestion_mode` (text `ecn, absolute`),
  `pfc_rx_enabled`, `pfc_tx_enabled`, `lldp_app_priority`, `pfc_enabled` for priorities 0-7, `ecn_enabled` for
  traffic classes 0-7, and `ecn_min_threshold_bytes` / `ecn_max_threshold_bytes` / `ecn_max_probability_pct` once
  per ECN-enabled traffic class (priority = the TC);
- `pcp_to_priority` / `dscp_to_priority` for the RoCE and CNP rows (value = switch priority, text = PCP / DSCP),
  `priority_to_tc`, `tc_tsa` and `tc_bandwidth_pct` per traffic class;
- per pool (`RoCE Pool Status`): `buffer_pool_size_bytes` (None with text `inf` when unbounded),
  `buffer_pool_usage_bytes`, `buffer_pool_max_usage_bytes` - the buffer occupancy the switch reports.
Example:
    pfc
      pfc-priority      3                       switch-prio on which PFC is enabled
    mode                lossless                Roce Mode
Caveats: sizes print with binary multiples and two decimals (`153.00 KB` = 156672 bytes, `7.29 MB` ~ 7644119),
exact only in the JSON form. The description column is ignored; `lldp-app-tlv` protocol-id/selector and the pools'
priority/TC lists are checked, not emitted. `-o json` is read for the tree part only, as the same nested keys (NVUE
object schema, field names from the table form; no public JSON sample exists); other keys are a ParseError.
"""

from __future__ import annotations

from collections.abc import Callable

from rdmatool.model import Sample
from rdmatool.parsers.switch import _cumulus as nv
from rdmatool.parsers.switch import _cumulus_roce as roce

NAME = "cumulus_roce_status"
SECTIONS: dict[str, Callable[[str, list[nv.Line]], list[Sample]]] = {
    "roce pcp/dscp->sp mapping configurations": lambda name, body: roce.mapping_samples(name, nv.PORT, body),
    "roce sp->tc mapping and ets configurations": lambda name, body: roce.ets_samples(name, nv.PORT, body),
    "roce pool status": roce.pool_status_samples,
}


def parse(text: str) -> list[Sample]:
    return roce.parse_view(NAME, nv.PORT, SECTIONS, text)
