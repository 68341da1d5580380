"""Cumulus NVUE port-level QoS counters of one port: ECN marks, multicast buffer discards, pause frames.

Command: `nv show interface <if> counters qos port-stats [-o json]` (Cumulus Linux >= 5.5; 5.4 and older:
`nv show interface <if> qos counters port-stats`).
Emits (entity `port`, a placeholder the analysis replaces by the real port such as `swp1`, since the table does not
name it; priority None - these are port totals): `ecn_marked_packets` (Transmit), `mc_buffer_discards` (Transmit),
`rx_pause_frames` / `tx_pause_frames` (Pause Frames Receive / Transmit) - counters; raw_key = the row label as
printed (`ECN Marked Packets`, or `ecn-marked-packets` in the combined view).
Example:
    Counter             Receive  Transmit
    ------------------  -------  --------
    ECN Marked Packets  n/a      48812
    MC Buffer Discards  n/a      0
    Pause Frames        0        1207
Caveats: `n/a` means the ASIC does not count that direction: the cell is skipped; a number where only `n/a` is
known (Receive ECN / MC discards) is a ParseError rather than a guess. `-o json` prints
`{"rx-stats": {"pause-frames": 0}, "tx-stats": {"ecn-marked-packets": 48812, ...}}` (NVUE object schema with the
hyphenated row names of the combined view; no public JSON sample exists).
Prompt lines, `# ...` comments and blank lines are skipped; anything else unexpected is a ParseError.
"""

from __future__ import annotations

from rdmatool.model import Sample
from rdmatool.parsers.switch import _cumulus as nv
from rdmatool.parsers.switch import _cumulus_views as views

NAME = "cumulus_port_stats"
COUNTERS: dict[str, views.Direction] = {
    "ecn-marked-packets": (None, "ecn_marked_packets"),
    "mc-buffer-discards": (None, "mc_buffer_discards"),
    "pause-frames": ("rx_pause_frames", "tx_pause_frames"),
}


def table_samples(name: str, body: list[nv.Line]) -> list[Sample]:
    """The Receive/Transmit table alone; also used for the `Qos Port Statistics` section of `counters qos`."""
    return views.direction_table(name, body, COUNTERS)


def parse(text: str) -> list[Sample]:
    return views.parse_port_view(NAME, text, table_samples,
                              lambda name, document, locate: views.direction_json(name, document, locate, COUNTERS))
