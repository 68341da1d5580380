"""A collection's failed commands as facts, so that a playbook can say why a metric is missing.

A `missing` rule sees only that a target reports no pause counters; the bundle's manifest says whether `ethtool -S`
ran at all: its tool not installed, or the command hung until its timeout. These facts carry that
(rdmatool.outcome.failures.command_gap): one per target, command (parser) and kind of failure, metric `command_not_installed`
or `command_unfinished`, the failures as recorded in `text`, each once, first first, joined by ` | ` (`ethtool -S
ibp24s0 timed out on gpu11 | ethtool -S ens1f0np0 timed out on gpu11`: one per interface, the same in every snapshot
said once), the command's parser in `raw_key`, no entity and no priority: a fact about the target, as the gap findings
are, so that a rule about it can `replaces` the gap rule on that target. Other failures (a command with another
error, a target not reached) give none: they are the verdict's failures already, and a target without any fact of
its own (nothing answered) is `no data`, not a gap."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rdmatool.outcome.failures import NOT_INSTALLED, UNFINISHED, command_gap
from rdmatool.table.analysis import FACT_COLUMNS, Analysis, grown_by
from rdmatool.table.facts import FactQuery

METRICS = {UNFINISHED: "command_unfinished", NOT_INSTALLED: "command_not_installed"}


def command_failure_facts(analysis: Analysis) -> pd.DataFrame:
    """The facts (rdmatool.table.analysis.FACT_COLUMNS) of the analysis' failed commands."""
    table = getattr(analysis, "table", None)
    failures = list(getattr(table, "collection_failures", None) or [])
    if not failures:
        return pd.DataFrame(columns=FACT_COLUMNS)
    query = FactQuery.of(analysis)
    roles = {t.get("name"): t.get("role") for t in getattr(table, "targets", None) or [] if isinstance(t, dict)}
    said: dict[tuple, list[str]] = {}  # (target, parser, metric) → its failures, first first
    for failure in failures:
        if not isinstance(failure, dict):
            continue
        target, parser = failure.get("target"), failure.get("parser")
        metric = METRICS.get(command_gap(failure.get("error")))
        if not parser or metric is None or query.kind_platform(target) is None:  # no fact: the target said nothing
            continue
        texts = said.setdefault((target, parser, metric), [])
        if str(failure.get("error")) not in texts:
            texts.append(str(failure.get("error")))
    rows = []
    for (target, parser, metric), texts in said.items():
        kind, platform = query.kind_platform(target)
        rows.append({"target": target, "kind": kind, "platform": platform, "role": roles.get(target), "entity": None,
                     "metric": metric, "priority": pd.NA, "size_bytes": pd.NA, "value": np.nan,
                     "text": " | ".join(texts), "raw_key": parser, "window_s": np.nan, "delta": np.nan, "flag": ""})
    if not rows:
        return pd.DataFrame(columns=FACT_COLUMNS)
    return pd.DataFrame(rows, columns=FACT_COLUMNS).astype({"priority": "Int64", "size_bytes": "Int64"})


def with_command_failures(analysis: Analysis) -> Analysis:
    """The analysis with its failed commands added as facts (a new Analysis: the one given is not changed)."""
    return grown_by(analysis, command_failure_facts(analysis))
