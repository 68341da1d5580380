"""At most N series per target: a switch with hundreds of ports and sixteen queues, or a hostile bundle, must not
flood the time-series database (or push a node's scrape over its `sample_limit`) through one node's textfile.

Over the bound, whole families of that target are left out (half a family would plot as ports that do not exist),
in this order of what is kept: its findings; the rates and shares (`_per_second`, `_ratio`: what dashboards plot and
alerts fire on); the other gauges (settings, sizes); the `_info` states; last the raw counter totals (`_total`),
whose rates are already kept. Within each, the smallest families first, so what goes is the widest breakdowns (per
queue, per priority). `rdmatool_export_dropped_series{target}` says how many of its series were left out, 0 when
none, so an alert can tell a bound that bites from a target that stopped reporting; a gauge, since each file is a
fresh snapshot rather than a running count.
"""

from __future__ import annotations

from rdmatool.report.prometheus.families import Family
from rdmatool.report.prometheus.names import PREFIX

# A host with two NICs and eight GPUs exports some 600 series, one with eight NICs some 2,000; a switch some 300 per
# port at eight priorities (counters, their rates, the per-priority pause and queue figures), so 9,600 for 32 ports.
# The default holds those; a 64-port switch needs more (docs/prometheus.md), a hostile bundle is cut here.
DEFAULT_MAX_SERIES = 10_000
DROPPED = PREFIX + "export_dropped_series"
_FIRST = (PREFIX + "findings", PREFIX + "target_collection_failures")


def _rank(family: Family) -> int:
    """The order families are kept in when a target is over the bound (module docstring)."""
    if family.name in _FIRST:
        return 0
    if family.type == "counter":
        return 4
    if family.name.endswith(("_per_second", "_ratio")):
        return 1
    return 3 if family.name.endswith("_info") else 2


def bounded(families: list[Family], targets: list[str], limit: int) -> list[Family]:
    """`families` with each of `targets` at most `limit` series (module docstring), and the dropped-series family.
    Samples of any other target (the fabric, a finding on a pair) and fleet-wide ones are kept as they are."""
    counts: dict[str, dict[str, int]] = {t: {} for t in targets}
    rank = {family.name: _rank(family) for family in families}
    for family in families:
        for target, _, _ in family.samples:
            if target in counts:
                counts[target][family.name] = counts[target].get(family.name, 0) + 1
    dropped_of: dict[str, set[str]] = {}
    dropped = Family(DROPPED, f"series of this target left out of the export: over the bound of {limit} series per "
                     "target (rdmatool export prometheus --max-series)", "gauge")
    for target in targets:
        kept, left_out, over = 0, set(), 0
        order = sorted(counts[target].items(), key=lambda item: (rank[item[0]], item[1], item[0]))
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
