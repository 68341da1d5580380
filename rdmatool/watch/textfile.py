"""The watch's Prometheus textfiles, rewritten atomically every interval.

The families are the export's own (rdmatool.report.prometheus): the light counters' latest readings, their rates
(`<name>_per_second`, over the last interval) and the port states, named and labelled as `rdmatool export
prometheus` names them, so one dashboard serves both; one file per node and the fleet file, each replaced
atomically (rdmatool.report.prometheus.textfiles). Beside them the watch's own: when the interval was read, how
many of the targets answered, and each node's open watch findings.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rdmatool.metrics import RATE_SUFFIX
from rdmatool.report.prometheus import Export
from rdmatool.report.prometheus.families import Family, fact_families
from rdmatool.report.prometheus.names import PREFIX
from rdmatool.report.prometheus.textfiles import write_per_target
from rdmatool.table.analysis import FACT_COLUMNS
from rdmatool.watch.history import History, Key


def facts_of(history: History, rates: dict[Key, float], targets: list[str]) -> pd.DataFrame:
    """The latest counters, their rates this interval and the port states of the targets read, as facts."""
    rows = []
    read = set(targets)
    for key, row in history.index.items():
        target, entity, metric, priority = key
        if target not in read or np.isnan(history.last_value[row]):
            continue
        base = {"target": target, "kind": "host", "platform": None, "role": None, "entity": entity,
                "priority": None if priority < 0 else priority, "size_bytes": None, "text": None, "raw_key": None,
                "window_s": np.nan, "delta": np.nan, "flag": ""}
        rows.append({**base, "metric": metric, "value": float(history.last_value[row])})
        if key in rates:
            rows.append({**base, "metric": metric + RATE_SUFFIX, "value": rates[key]})
    for target in targets:
        for joined, text in history.states.get(target, {}).items():
            entity, _, metric = joined.partition("\t")
            rows.append({"target": target, "kind": "host", "platform": None, "role": None, "entity": entity,
                         "metric": metric, "priority": None, "size_bytes": None, "value": np.nan, "text": text,
                         "raw_key": None, "window_s": np.nan, "delta": np.nan, "flag": ""})
    frame = pd.DataFrame(rows, columns=FACT_COLUMNS)
    return frame.astype({"priority": "Int64", "size_bytes": "Int64", "value": float, "window_s": float,
                         "delta": float})


def write(directory: Path, history: History, rates: dict[Key, float], read: list[str], all_targets: list[str],
          open_findings: list[dict], at: float) -> list[str]:
    """Rewrite every node's textfile and the fleet file; the targets whose names cannot name a file are returned."""
    families = fact_families(facts_of(history, rates, read))
    families.append(_single("watch_last_interval_timestamp_seconds", "when the watch's last interval was read", at))
    families.append(_single("watch_targets", "targets the watch reads", len(all_targets)))
    families.append(_single("watch_targets_read", "targets that answered in the watch's last interval", len(read)))
    findings = Family(PREFIX + "watch_findings", "watch findings open on the node, by rule and severity", "gauge")
    counts: dict[tuple[str, str, str], int] = {}
    for f in open_findings:
        counts[(f["target"], f["rule"], f["severity"])] = counts.get((f["target"], f["rule"], f["severity"]), 0) + 1
    for (target, rule, severity), n in sorted(counts.items()):
        findings.add(target, (("target", target), ("rule", rule), ("severity", severity)), n)
    families.append(findings)
    return write_per_target(directory, Export(families, list(all_targets), None))


def _single(name: str, help_: str, value: float) -> Family:
    family = Family(PREFIX + name, help_, "gauge")
    family.add(None, (), value)
    return family
