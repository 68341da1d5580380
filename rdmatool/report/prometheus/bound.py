"""At most N series per target: a switch with hundreds of ports and sixteen queues, or a hostile bundle, must not
flood the time-series database through one node's textfile.

Over the bound, whole families of that target are dropped (half a family would plot as ports that do not exist):
its findings are kept first, then its families from the smallest up, so that what goes is the widest breakdowns
(per queue, per priority). `rdmatool_export_dropped_series{target}` says how many of its series were dropped, 0 when
none, so an alert can tell a bound that bites from a target that stopped reporting.
"""

from __future__ import annotations

from rdmatool.report.prometheus.families import Family
from rdmatool.report.prometheus.names import PREFIX

# A host with eight NICs exports some 2,500 series (counters, their rates and the per-priority pause figures of
# each port); a 32-port switch with eight queues some 4,000. The default holds both with a margin and bounds what a
# 64-port switch with sixteen queues, or a hostile bundle, may add to one node's file.
DEFAULT_MAX_SERIES = 5000
DROPPED = PREFIX + "export_dropped_series"
_FIRST = (PREFIX + "findings",)


def bounded(families: list[Family], targets: list[str], limit: int) -> list[Family]:
    """`families` with each of `targets` at most `limit` series (module docstring), and the dropped-series family.
    Samples of any other target (the fabric, a finding on a pair) and fleet-wide ones are kept as they are."""
    counts: dict[str, dict[str, int]] = {t: {} for t in targets}
    for family in families:
        for target, _, _ in family.samples:
            if target in counts:
                counts[target][family.name] = counts[target].get(family.name, 0) + 1
    dropped_of: dict[str, set[str]] = {}
    dropped = Family(DROPPED, f"series of this target left out of the export: over the bound of {limit} series per "
                     "target (rdmatool export prometheus --max-series)", "gauge")
    for target in targets:
        kept, left_out, over = 0, set(), 0
        order = sorted(counts[target].items(), key=lambda item: (item[0] not in _FIRST, item[1], item[0]))
        for name, n in order:
            if kept + n <= limit:
                kept += n
            else:
                left_out.add(name)
                over += n
        dropped_of[target] = left_out
        dropped.add(target, (("target", target),), over)
    out = []
    for family in families:
        samples = [s for s in family.samples if s[0] not in dropped_of or family.name not in dropped_of[s[0]]]
        out.append(Family(family.name, family.help, family.type, samples))
    return [*out, dropped]
