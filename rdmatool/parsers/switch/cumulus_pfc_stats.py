"""Cumulus NVUE per-priority PFC pause counters of one port (`nv show interface <if> counters qos pfc-stats`).

Command: `nv show interface <if> counters qos pfc-stats [-o json]` (Cumulus Linux >= 5.5; 5.4 and older spell it
`nv show interface <if> qos counters pfc-stats` and print the same table).
Emits (entity `port`, a placeholder: the table does not name the interface, the collector stores one output per
switch port and the analysis substitutes the real name such as `swp1`; priority = the switch priority, 0-7):
`rx_pause_frames`, `rx_pause_duration_us`, `tx_pause_frames`, `tx_pause_duration_us` (counters, ints);
raw_key = the column name (`rx-pause-frames` ...). A tool failure becomes `tool_error` (entity `port`).
Example:
    switch-priority  rx-pause-frames  rx-pause-duration  tx-pause-frames  tx-pause-duration
    ---------------  ---------------  -----------------  ---------------  -----------------
    3                1207             38112              0                0
Caveats: NVUE prints no unit for the durations; Spectrum counts them in microseconds (mlxsw pause-duration), which
is what the `_us` metrics assume. `n/a` cells are skipped. With `-o json` the output is an object keyed by the
switch priority, `{"3": {"rx-pause-frames": 1207, "rx-pause-duration": 38112, ...}}` (the NVUE object the table
renders, field names as in the table; no public JSON sample exists - the fixture follows that NVUE schema).
Prompt lines, `# ...` comments and blank lines are skipped; anything else unexpected is a ParseError.
"""

from __future__ import annotations

from rdmatool.model import Sample
from rdmatool.parsers.switch import _cumulus as nv
from rdmatool.parsers.switch import _cumulus_views as views

NAME = "cumulus_pfc_stats"
INDEX = "switch-priority"
COLUMNS = {
    "rx-pause-frames": views.Column("rx_pause_frames", nv.count),
    "rx-pause-duration": views.Column("rx_pause_duration_us", nv.count),
    "tx-pause-frames": views.Column("tx_pause_frames", nv.count),
    "tx-pause-duration": views.Column("tx_pause_duration_us", nv.count),
}


def table_samples(name: str, body: list[nv.Line]) -> list[Sample]:
    """The PFC table alone; also used for the `PFC Statistics` section of `counters qos`."""
    return views.indexed_table(name, body, INDEX, COLUMNS)


def parse(text: str) -> list[Sample]:
    return views.parse_port_view(NAME, text, table_samples,
                              lambda name, document, locate: views.indexed_json(name, document, locate, COLUMNS))
