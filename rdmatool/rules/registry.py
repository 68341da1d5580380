"""The rule kinds, each declared once: the function that judges it (rdmatool.rules.kinds) and the parameters a
playbook rule of that kind takes and needs (checked by rdmatool.rules.playbook at load). A new kind is one entry
here plus its function; the loader, the engine and the documentation test read this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from rdmatool.rules import kinds
from rdmatool.rules.pausing import pauses_sent_vs_marks
from rdmatool.rules.rule import Rule


@dataclass(frozen=True)
class Kind:
    judge: Callable[[pd.DataFrame, Rule, kinds.Context], pd.DataFrame]  # facts, rule, context -> hits (HIT_COLUMNS)
    params: frozenset[str]  # every parameter a rule of this kind may take, besides the common keys
    required: frozenset[str]
    # `observed` (and baseline) is a value of the rule's metric, in its unit or its rate per second, so the texts
    # show it in human units; the other kinds observe a ratio of two metrics, a count of ports, a metric's name.
    in_metric_units: bool = True


def _kind(judge, params: str, required: str, in_metric_units: bool = True) -> Kind:
    return Kind(judge, frozenset(params.split()), frozenset(required.split()), in_metric_units)


KINDS: dict[str, Kind] = {
    "threshold": _kind(kinds.threshold, "metric op value field also aggregate group_by", "metric op value"),
    "rate": _kind(kinds.rate, "metric op value field also", "metric op value"),
    "deviation": _kind(kinds.deviation, "metric field min_deviation direction mad_factor min_baseline_n", "metric"),
    "fleet_outlier": _kind(kinds.fleet_outlier,
                           "metric group_by min_group tolerance_pct direction also outlier_values", "metric"),
    "mismatch": _kind(kinds.mismatch, "metric against against_metric expected compare when_value", "metric"),
    "ratio": _kind(kinds.ratio, "numerator denominator op value scope min_denominator field",
                   "numerator denominator op value", in_metric_units=False),
    "missing": _kind(kinds.missing, "metrics require_any peers_have", "metrics", in_metric_units=False),
    "verdict": _kind(kinds.verdict, "metric verdict value expected at_least at_most details", "metric verdict value"),
    "ecn_vs_pause": _kind(kinds.ecn_vs_pause, "metric paused_above marked_below min_packets scope",
                          "metric paused_above marked_below"),
    "pauses_sent_vs_marks": _kind(pauses_sent_vs_marks, "metric paused_above marked_below min_packets",
                                  "metric paused_above marked_below"),
}
