"""Cumulus NVUE per-priority-group ingress buffer counters of one port (`... counters qos ingress-buffer-stats`).

Command: `nv show interface <if> counters qos ingress-buffer-stats [-o json]` (Cumulus Linux >= 5.5; 5.4 and
older: `nv show interface <if> qos counters ingress-buffer-stats`).
Emits (entity `port`, a placeholder the analysis replaces by the real port such as `swp1`, since the table does not
name it; priority = the ingress priority group, 0-7, NOT the switch priority): `rx_packets` (rx-frames),
`pg_drop_bytes` (rx-buffer-discards), `pg_shared_drop_bytes` (rx-shared-buffer-discards) - counters, the discards
in bytes as NVUE prints them; raw_key = the column name.
Example:
    priority-group  rx-frames  rx-buffer-discards  rx-shared-buffer-discards
    --------------  ---------  ------------------  -------------------------
    3               918211     0 Bytes             4.50 KB
Caveats: drops at the lossless priority group while PFC is enabled mean headroom is too small (docs/tuning.md §3.1).
Sizes are human-formatted (binary multiples, two decimals): exact below 1 KB or in the JSON form. `n/a` cells are
skipped. `-o json` prints an object keyed by priority group with the table's field names and plain numbers,
`{"3": {"rx-frames": 918211, "rx-buffer-discards": 0, ...}}` (NVUE object schema; no public JSON sample exists).
Prompt lines, `# ...` comments and blank lines are skipped; anything else unexpected is a ParseError.
"""

from __future__ import annotations

from rdmatool.model import Sample
from rdmatool.parsers.switch import _cumulus as nv
from rdmatool.parsers.switch import _cumulus_views as views

NAME = "cumulus_ingress_buffer"
INDEX = "priority-group"
COLUMNS = {
    "rx-frames": views.Column("rx_packets", nv.count),
    "rx-buffer-discards": views.Column("pg_drop_bytes", nv.byte_size),
    "rx-shared-buffer-discards": views.Column("pg_shared_drop_bytes", nv.byte_size),
}


def table_samples(name: str, body: list[nv.Line]) -> list[Sample]:
    """The ingress-buffer table alone; also used for the `Ingress Buffer Statistics` section of `counters qos`."""
    return views.indexed_table(name, body, INDEX, COLUMNS)


def parse(text: str) -> list[Sample]:
    return views.parse_port_view(NAME, text, table_samples,
                              lambda name, document, locate: views.indexed_json(name, document, locate, COLUMNS))
