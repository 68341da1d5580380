"""From a bundle to a night: the numeric figures of its facts per fine group and the counts of its configuration
facts (the package docstring says which facts are figures and how the groups are keyed)."""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from rdmatool import metrics
from rdmatool.baseline.stats import FINE_KEYS, sort_key
from rdmatool.errors import NoData
from rdmatool.model import MetricKind

_SKIP_METRICS = {"counter_reset", "counter_saturated"}
_ECN_METRICS = {
    "ecn_min_threshold_bytes": "min", "ecn_max_threshold_bytes": "max", "ecn_max_probability_pct": "pmax",
    "ecn_enabled": "enabled", "ecn_mode": "mode",
}


def night_from_bundle(bundle_path: str | Path) -> dict:
    """Analyse one bundle and reduce it to a night: value lists per fine group and counts of reference facts."""
    from rdmatool import bundle as bundle_io
    from rdmatool.table.analysis import analyse_path
    from rdmatool.table.facts import plain

    manifest = bundle_io.read_manifest(Path(bundle_path))
    facts = plain(analyse_path(bundle_path).facts)  # (plain texts: None where missing)
    values = figures_of(facts)
    if not values:
        # a night of nothing (every target unreachable, a bundle without outputs) must not enter the history
        raise NoData(f"{bundle_path}: no data: no numeric figures to baseline (did any target answer?)")
    created = manifest.get("created") or ""
    where = str(Path(bundle_path).resolve())
    return {
        "id": f"{created}|{where}",
        "bundle": where,
        "created": created,
        "saved": utc_now(),
        "targets": len(manifest.get("targets", [])),
        "values": values,
        "facts": reference_counts(facts),
    }


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _attributes(facts: pd.DataFrame) -> tuple[dict, dict, dict, dict]:
    """(target, device) → ca_type, target → most common ca_type, (target, entity) → link rate, target → max rate."""
    cas = facts[(facts["metric"] == "ca_type") & facts["text"].notna()]
    by_device = {(t, str(e).split("/")[0]): x for t, e, x in zip(cas["target"], cas["entity"], cas["text"])}
    by_target: dict = {}
    for target, group in cas.groupby("target"):
        counts = Counter(group["text"])
        by_target[target] = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    links = facts[(facts["metric"] == "link_rate_gbps") & facts["value"].notna()]
    by_port = {(t, e): float(v) for t, e, v in zip(links["target"], links["entity"], links["value"])}
    max_rate = links.groupby("target")["value"].max().astype(float).to_dict()
    return by_device, by_target, by_port, max_rate


def _is_figure(metric: str) -> bool:
    if metric in _SKIP_METRICS:
        return False
    if metric.endswith(metrics.RATE_SUFFIX):
        return True
    known = metrics.GLOSSARY.get(metric)
    return known is None or known.kind is MetricKind.GAUGE


def figures_of(facts: pd.DataFrame) -> list[dict]:
    """The numeric figures of one facts table as value lists per fine group (sorted, deterministic)."""
    numeric = facts[facts["value"].notna() & np.isfinite(facts["value"].astype(float))]
    numeric = numeric[numeric["metric"].map(_is_figure)]
    if numeric.empty:
        return []
    by_device, by_target, by_port, max_rate = _attributes(facts)
    groups: dict[tuple, list[float]] = {}
    for row in numeric.itertuples(index=False):
        entity = str(row.entity) if row.entity is not None else ""
        ca = by_device.get((row.target, entity.split("/")[0])) or by_target.get(row.target)
        rate = None if row.metric == "link_rate_gbps" else by_port.get((row.target, entity), max_rate.get(row.target))
        key = (row.metric, _clean(row.kind), _clean(row.role), _clean(row.platform), ca,
               None if rate is None else float(rate), _int(row.priority), _int(row.size_bytes))
        groups.setdefault(key, []).append(float(row.value))
    out = []
    for key in sorted(groups, key=sort_key):
        out.append({**dict(zip(FINE_KEYS, key)), "values": sorted(groups[key])})
    return out


def _clean(value):
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


def _int(value):
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return int(value)


def reference_counts(facts: pd.DataFrame) -> dict[str, dict[str, dict[str, int]]]:
    """Counts of configuration facts in one bundle: {category: {group: {value: count}}}."""
    out: dict[str, dict[str, Counter]] = {}

    def add(category: str, group, value) -> None:
        if group is None or value is None:
            return
        out.setdefault(category, {}).setdefault(str(group), Counter())[str(value)] += 1

    by_device, _, _, _ = _attributes(facts)
    boards = facts[(facts["metric"] == "board_id") & facts["text"].notna()]
    board_of = {(t, str(e).split("/")[0]): x for t, e, x in zip(boards["target"], boards["entity"], boards["text"])}
    fw = facts[(facts["metric"] == "fw_version") & facts["text"].notna()]
    for target, entity, version in zip(fw["target"], fw["entity"], fw["text"]):
        device = (target, str(entity).split("/")[0])
        add("fw_version_by_ca_type", by_device.get(device), version)
        add("fw_version_by_board_id", board_of.get(device), version)
    hosts = facts[facts["kind"] == "host"]
    trust = hosts[(hosts["metric"] == "trust_mode") & hosts["text"].notna()]
    for role, mode in zip(trust["role"], trust["text"]):
        add("trust_mode_by_role", _clean(role) or "", mode)
    pfc = hosts[(hosts["metric"] == "pfc_enabled") & hosts["priority"].notna()]
    for _key, group in pfc.groupby(["target", "entity"], dropna=False):
        enabled = sorted(int(p) for p, v in zip(group["priority"], group["value"]) if v == 1)
        role = _clean(group["role"].iloc[0]) or ""
        add("pfc_priorities_by_role", role, ",".join(map(str, enabled)) or "none")
    ecn = facts[(facts["kind"] == "switch") & facts["metric"].isin(_ECN_METRICS)]
    for (_target, platform, entity), group in ecn.groupby(["target", "platform", "entity"], dropna=False):
        parts = []
        for metric, value, text in sorted(zip(group["metric"], group["value"], group["text"]),
                                          key=lambda r: _ECN_METRICS[r[0]]):
            shown = text if isinstance(text, str) else (f"{value:g}" if value == value else None)
            if shown is not None:
                parts.append(f"{_ECN_METRICS[metric]}={shown}")
        if parts:
            add("ecn_by_profile", f"{_clean(platform) or ''}/{entity}", ",".join(parts))
    return {c: {g: dict(sorted(v.items())) for g, v in sorted(groups.items())} for c, groups in sorted(out.items())}
