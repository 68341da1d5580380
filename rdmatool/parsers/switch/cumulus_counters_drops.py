"""Cumulus NVUE drop counters of one port by cause: ACL, buffer, queue, non-queue and total drops.

Command: `nv show interface <if> counters drops [-o json]`.
Emits (entity `port`, a placeholder the analysis replaces by the real port such as `swp1`, since the table does not
name it; priority None): `acl_drops` (ACL Drops Receive), `rx_discards` (Buffer Drops Receive: no ingress
buffer), `non_queue_drops` (Non-Queue Drops Transmit), `queue_drops` (Queue Drops Transmit), `rx_drops_total` /
`tx_drops_total` (Total Drops) - counters; raw_key = the row label as printed.
Example:
    Counter          Receive  Transmit
    ---------------  -------  --------
    ACL Drops        0        n/a
    Buffer Drops     17       n/a
    Non-Queue Drops  n/a      0
    Queue Drops      n/a      902
    Total Drops      17       902
Caveats: `n/a` cells (a direction the cause cannot happen in) are skipped; a number in such a cell is a
ParseError. `-o json` is read as `{"rx-stats": {"acl-drops": 0, ...}, "tx-stats": {...}}` (hyphenated row names,
the NVUE object convention; no public JSON sample of this command exists).
Prompt lines, `# ...` comments and blank lines are skipped; anything else unexpected is a ParseError.
"""

from __future__ import annotations

from rdmatool.model import Sample
from rdmatool.parsers.switch import _cumulus_views as views

NAME = "cumulus_counters_drops"
COUNTERS: dict[str, views.Direction] = {
    "acl-drops": ("acl_drops", None),
    "buffer-drops": ("rx_discards", None),
    "non-queue-drops": (None, "non_queue_drops"),
    "queue-drops": (None, "queue_drops"),
    "total-drops": ("rx_drops_total", "tx_drops_total"),
}


def parse(text: str) -> list[Sample]:
    return views.parse_port_view(
        NAME,
        text,
        lambda name, body: views.direction_table(name, body, COUNTERS),
        lambda name, document, locate: views.direction_json(name, document, locate, COUNTERS),
    )
