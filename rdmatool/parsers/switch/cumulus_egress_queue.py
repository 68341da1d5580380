"""Cumulus NVUE per-traffic-class egress queue counters of one port (`... counters qos egress-queue-stats`).

Command: `nv show interface <if> counters qos egress-queue-stats [-o json]` (Cumulus Linux >= 5.5; 5.4 and older:
`nv show interface <if> qos counters egress-queue-stats`).
Emits (entity `port`, a placeholder the analysis replaces by the real port such as `swp1`, since the table does not
name it; priority = the traffic class, i.e. the egress queue index 0-7, NOT the switch priority):
`tx_packets` (tx-frames), `tx_bytes` (tx-bytes), `queue_drop_bytes` (tx-uc-buffer-discards: unicast tail drops,
counted in bytes), `wred_drops` (wred-discards, packets) - all counters; raw_key = the column name.
Example:
    traffic-class  tx-frames  tx-bytes   tx-uc-buffer-discards  wred-discards
    -------------  ---------  ---------  ---------------------  -------------
    3              52113      6.21 GB    1.50 KB                12
Caveats: sizes are human-formatted with binary multiples and two decimals (`6.21 GB`), so byte counters are exact
only below 1 KB or in the JSON form; the value is the nearest byte of the display. `n/a` cells are skipped.
`-o json` prints an object keyed by traffic class with the table's field names and plain numbers,
`{"3": {"tx-frames": 52113, "tx-bytes": 6667804508, ...}}` (NVUE object schema; no public JSON sample exists).
Prompt lines, `# ...` comments and blank lines are skipped; anything else unexpected is a ParseError.
"""

from __future__ import annotations

from rdmatool.model import Sample
from rdmatool.parsers.switch import _cumulus as nv
from rdmatool.parsers.switch import _cumulus_views as views

NAME = "cumulus_egress_queue"
INDEX = "traffic-class"
COLUMNS = {
    "tx-frames": views.Column("tx_packets", nv.count),
    "tx-bytes": views.Column("tx_bytes", nv.byte_size),
    "tx-uc-buffer-discards": views.Column("queue_drop_bytes", nv.byte_size),
    "wred-discards": views.Column("wred_drops", nv.count),
}


def table_samples(name: str, body: list[nv.Line]) -> list[Sample]:
    """The egress-queue table alone; also used for the `Egress Queue Statistics` section of `counters qos`."""
    return views.indexed_table(name, body, INDEX, COLUMNS)


def parse(text: str) -> list[Sample]:
    return views.parse_port_view(NAME, text, table_samples,
                              lambda name, document, locate: views.indexed_json(name, document, locate, COLUMNS))
