"""Cumulus NVUE RoCE counters of one port: RoCE/CNP traffic, PFC pauses, ECN marks, buffer use and discards.

Command: `nv show interface <if> qos roce counters [-o json]` (reset with `nv action clear interface <if> qos roce
counters`).
Emits (entity `port`, a placeholder the analysis replaces by the real port such as `swp1`, since the tree does not
name it; priority None - the view aggregates the RoCE priority without naming it; raw_key = the dotted tree path,
e.g. `tx-stats.tx-roce-stats.unicast-no-buffer-discard`):
- counters: `rx_pause_frames` / `rx_pause_duration_us` (rx-pfc-stats), `tx_pause_frames` / `tx_pause_duration_us`
  (tx-pfc-stats), `ecn_marked_packets` (tx-ecn-stats), `switch_cnp_tx_packets` (tx-cnp-stats.cnp-packets:
  CNPs leaving this port, forwarded by the switch - not the hosts' `cnp_sent`), `cnp_tx_bytes`, `roce_rx_bytes`, `roce_rx_packets`, `roce_tx_bytes`, `roce_tx_packets`,
  `non_roce_rx_bytes`, `non_roce_rx_packets`, `roce_rx_buffer_discards`, `non_roce_rx_buffer_discards`,
  `roce_tx_buffer_discards`, `cnp_tx_buffer_discards`;
- gauges (bytes): `<class>_<rx|tx>_<pool|pg|tc>_[max_]usage_bytes` for class roce / non_roce (rx) and roce / cnp
  (tx): current and peak pool, priority-group and traffic-class buffer use.
Example:
    tx-stats
      tx-ecn-stats
        ecn-marked-packets         693777677344           Tx ECN marked packets
Caveats: sizes are human-formatted (`92824.38 GB`, binary multiples, two decimals) so byte counters are the
nearest byte of the display - exact only in the JSON form; packet counts are exact ints. Huge tx discards with
zero pauses (the docs' capture) is the "PFC not engaging" signature. `-o json` is read as the same tree,
`{"rx-stats": {"rx-pfc-stats": {"pause-packets": 0, ...}, ...}, "tx-stats": {...}}` with plain numbers (NVUE object
schema, field names from the table form; no public JSON sample exists). Unknown keys are a ParseError.
"""

from __future__ import annotations

from rdmatool.model import Sample
from rdmatool.parsers.switch import _cumulus as nv
from rdmatool.parsers.switch import _cumulus_views as views

NAME = "cumulus_roce_counters"


def _usage(prefix: str, cls: str, direction: str, scope: str) -> dict[str, views.Column]:
    """`buffer-usage`, `pg-max-usage` ... of one traffic class -> `roce_rx_pg_max_usage_bytes` ..."""
    nvue_scope = {"pool": "buffer", "pg": "pg", "tc": "tc"}[scope]
    return {
        f"{prefix}.{nvue_scope}-usage": views.Column(f"{cls}_{direction}_{scope}_usage_bytes", nv.byte_size),
        f"{prefix}.{nvue_scope}-max-usage": views.Column(f"{cls}_{direction}_{scope}_max_usage_bytes", nv.byte_size),
    }


_NON_ROCE = "rx-stats.rx-non-roce-stats"
_RX_ROCE = "rx-stats.rx-roce-stats"
_CNP = "tx-stats.tx-cnp-stats"
_TX_ROCE = "tx-stats.tx-roce-stats"
LEAVES: dict[str, views.Column] = {
    **_usage(_NON_ROCE, "non_roce", "rx", "pool"),
    **_usage(_NON_ROCE, "non_roce", "rx", "pg"),
    f"{_NON_ROCE}.no-buffer-discard": views.Column("non_roce_rx_buffer_discards", nv.count),
    f"{_NON_ROCE}.non-roce-bytes": views.Column("non_roce_rx_bytes", nv.byte_size),
    f"{_NON_ROCE}.non-roce-packets": views.Column("non_roce_rx_packets", nv.count),
    "rx-stats.rx-pfc-stats.pause-duration": views.Column("rx_pause_duration_us", nv.count),
    "rx-stats.rx-pfc-stats.pause-packets": views.Column("rx_pause_frames", nv.count),
    **_usage(_RX_ROCE, "roce", "rx", "pool"),
    **_usage(_RX_ROCE, "roce", "rx", "pg"),
    f"{_RX_ROCE}.no-buffer-discard": views.Column("roce_rx_buffer_discards", nv.count),
    f"{_RX_ROCE}.roce-bytes": views.Column("roce_rx_bytes", nv.byte_size),
    f"{_RX_ROCE}.roce-packets": views.Column("roce_rx_packets", nv.count),
    **_usage(_CNP, "cnp", "tx", "pool"),
    **_usage(_CNP, "cnp", "tx", "tc"),
    f"{_CNP}.cnp-bytes": views.Column("cnp_tx_bytes", nv.byte_size),
    f"{_CNP}.cnp-packets": views.Column("switch_cnp_tx_packets", nv.count),
    f"{_CNP}.unicast-no-buffer-discard": views.Column("cnp_tx_buffer_discards", nv.count),
    "tx-stats.tx-ecn-stats.ecn-marked-packets": views.Column("ecn_marked_packets", nv.count),
    "tx-stats.tx-pfc-stats.pause-duration": views.Column("tx_pause_duration_us", nv.count),
    "tx-stats.tx-pfc-stats.pause-packets": views.Column("tx_pause_frames", nv.count),
    **_usage(_TX_ROCE, "roce", "tx", "pool"),
    **_usage(_TX_ROCE, "roce", "tx", "tc"),
    f"{_TX_ROCE}.roce-bytes": views.Column("roce_tx_bytes", nv.byte_size),
    f"{_TX_ROCE}.roce-packets": views.Column("roce_tx_packets", nv.count),
    f"{_TX_ROCE}.unicast-no-buffer-discard": views.Column("roce_tx_buffer_discards", nv.count),
}
GROUPS = views.groups_of(LEAVES)


def _samples(leaves: list[views.Leaf]) -> list[Sample]:
    samples: list[Sample] = []
    for path, raw, where in leaves:
        spec = LEAVES.get(path)
        if spec is None:
            raise nv.fail(NAME, where, f"unknown counter {path!r}")
        value = spec.read(NAME, *where, raw)
        if value is not None:  # `n/a`: not counted on this platform, skipped
            samples.append(Sample(nv.PORT, spec.metric, value, raw_key=path))
    return samples


def parse(text: str) -> list[Sample]:
    output = nv.read_output(text)
    if not output.lines:
        leaves: list[views.Leaf] = []
    elif nv.is_json(output):
        leaves = views.json_leaves(NAME, *nv.load_json(NAME, output))
    else:
        leaves = views.tree_leaves(NAME, output.lines, GROUPS)
    return nv.with_tool_error(_samples(leaves), output, nv.PORT)
