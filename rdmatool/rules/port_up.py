"""Which switch ports are down: a down port's configuration views are not judged.

Onyx and NX-OS list every port in their PFC views, and show a port that is down (a spare, an unused breakout) with
PFC off; SONiC and EOS print the lossless priorities of every port whatever its state. A port with no link carries
no RoCE traffic, so its settings are no finding; it is the cabling and link rules' business if it should be up.
"""

from __future__ import annotations

from rdmatool.platforms.port_names import port_key
from rdmatool.table.facts import FactQuery

# The state views of the switch platforms: `oper_state` (SONiC, Cumulus, Onyx, EOS: Up / Down / Disabled) and NX-OS
# `show interface`'s `port_state` (up / down / the reason it is down).
_STATE_METRICS = ("oper_state", "port_state")


def down_switch_ports(query: FactQuery) -> set[tuple[str, str]]:
    """(switch, port_key(port)) of every switch port whose own state view says it is not up (read once per query:
    each `expected` mismatch rule asks)."""
    return query.derived("down_switch_ports", lambda: _down_switch_ports(query))


def _down_switch_ports(query: FactQuery) -> set[tuple[str, str]]:
    down: set[tuple[str, str]] = set()
    for metric in _STATE_METRICS:
        rows = query.take(query.select(metric, {"kind": "switch"}))
        for target, entity, text in zip(rows["target"], rows["entity"], rows["text"]):
            if isinstance(entity, str) and isinstance(text, str) and text.strip().lower() != "up":
                down.add((target, port_key(entity)))
    return down


def without_down_switch_ports(query: FactQuery, at):
    """The positions `at` (a selection of the facts) less the rows of switch ports that are down."""
    down = down_switch_ports(query) if len(at) else set()
    if not down:
        return at
    rows = query.frame(at, ["target", "entity", "kind"])
    keep = [kind != "switch" or (target, port_key(str(entity))) not in down
            for target, entity, kind in zip(rows["target"], rows["entity"], rows["kind"])]
    return at[keep]
