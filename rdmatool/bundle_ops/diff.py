"""What changed between two bundles of one fleet: the on-call question "what changed since last night?".

Four kinds of change, each a list of plain dicts (the JSON shape, schema `rdmatool-bundle-diff/1`):

- targets: added to or removed from the bundle's target list, newly unreachable (no connection in B, read in A) and
  recovered (the other way round); those unreachable in both are listed apart, as no change;
- configuration: a setting of a target both bundles read that differs — firmware, the PFC vector of a port (its
  priorities with PFC on), trust mode, ECN thresholds and marking, MTU, link speed and width, port state, the RoCE
  notification and reaction points, the ToS; a setting one bundle has and the other lacks is a change too (a port gone);
- cabling: the neighbour of a port (LLDP from either end, iblinkinfo) that differs;
- rates: a counter rate (`<metric>_per_s`) or a derived share (pause fraction, ECN mark ratio ...) that moved by more
  than `tolerance` of its value in A and by at least a floor (`min_rate` per second; 0.01 for a share), over at
  least MIN_EVENTS counted events in one of the two windows, so that a counter ticking once or thrice is not called
  a change. Traffic that moved (bytes, packets) is a change like the others: `rates=False` leaves rates out.

Only targets that answered in both bundles are compared for configuration, cabling and rates: a target that did not
answer is a target change, not a hundred settings gone.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from rdmatool.errors import NoData
from rdmatool.metrics import GLOSSARY, RATE_SUFFIX
from rdmatool.outcome.failures import bundle_failures
from rdmatool.outcome.verdict import no_data
from rdmatool.table.analysis import Analysis, analyse_path
from rdmatool.table.facts import plain

SCHEMA = "rdmatool-bundle-diff/1"  # the `schema` const of rdmatool/schemas/bundle-diff.schema.json (tested)
# The settings compared one value per (target, entity, priority); pfc_enabled is compared as a vector per port.
SETTINGS = (
    "fw_version", "fw_version_running", "trust_mode", "ecn_min_threshold_bytes", "ecn_max_threshold_bytes",
    "ecn_max_probability_pct", "ecn_enabled", "ecn_mode", "active_mtu", "link_rate_gbps", "link_width", "link_speed",
    "port_state", "phys_state", "oper_state", "roce_np_enabled", "roce_rp_enabled", "roce_tos", "pfc_mode",
    # an InfiniBand switch port, as the subnet sweep read it (rdmatool.topology.ib_fabric)
    "ib_link_state", "ib_link_phys_state", "ib_link_rate_gbps", "ib_link_width", "ib_link_speed",
)
SHARES = ("rx_pause_fraction", "tx_pause_fraction", "ecn_mark_ratio", "cnp_handled_ratio", "bw_efficiency")
SHARE_FLOOR = 0.01
# A counter rate stands on the events counted in its window: 1 → 3 pause frames in a second is counting noise, not a
# change. The larger of the two windows' counts must reach this many.
MIN_EVENTS = 10


@dataclass
class BundleDiff:
    a: str
    b: str
    created_a: str | None
    created_b: str | None
    tolerance: float
    min_rate: float
    targets: dict = field(default_factory=dict)
    config: list[dict] = field(default_factory=list)
    cabling: list[dict] = field(default_factory=list)
    rates: list[dict] = field(default_factory=list)

    @property
    def changes(self) -> int:
        t = self.targets
        return (len(t.get("added", [])) + len(t.get("removed", [])) + len(t.get("unreachable", []))
                + len(t.get("recovered", [])) + len(self.config) + len(self.cabling) + len(self.rates))

    def as_json(self) -> dict:
        return {"schema": SCHEMA, "a": self.a, "b": self.b, "created_a": self.created_a, "created_b": self.created_b,
                "tolerance": self.tolerance, "min_rate": self.min_rate, "changes": self.changes,
                "targets": self.targets, "config": self.config, "cabling": self.cabling, "rates": self.rates}


def diff_paths(a: str | Path, b: str | Path, tolerance: float = 0.5, min_rate: float = 1.0,
               rates: bool = True, prepare: Callable[[Analysis], Analysis] | None = None) -> BundleDiff:
    """Compare bundle directories A (before) and B (after). NoData when either holds nothing (no target answered):
    there is then nothing to compare, which is no answer to "what changed". `prepare`: what each analysis goes
    through first (the command line moves a subnet sweep's switch ports onto their switches, a layer above this)."""
    left, right = analyse_path(a), analyse_path(b)
    if prepare is not None:
        left, right = prepare(left), prepare(right)
    for path, analysis in ((a, left), (b, right)):
        answered = not analysis.facts.empty or bool(analysis.table.parse_failures)
        nothing = no_data(len(analysis.table.targets), answered, _failures(analysis))
        if nothing:
            raise NoData(f"{path}: {nothing}")
    return diff(left, right, str(a), str(b), tolerance, min_rate, rates, _created(a), _created(b))


def _switches(analysis: Analysis) -> set[str]:
    """The switches the facts hold, read over SSH or by a subnet sweep from a host."""
    return set(analysis.query.targets_where({"kind": "switch"})) if not analysis.query.empty() else set()


def _created(path: str | Path) -> str | None:
    from rdmatool import bundle as bundle_io

    return bundle_io.read_manifest(Path(path)).get("created")


def _failures(analysis: Analysis) -> list[dict]:
    return bundle_failures(analysis.table.collection_failures, analysis.table.parse_failures)


def _unreachable(analysis: Analysis) -> dict[str, str]:
    """Targets the collection could not reach at all (a failure naming no command), with the first error."""
    out: dict[str, str] = {}
    for failure in analysis.table.collection_failures:
        if not failure.get("parser") and failure.get("target"):
            out.setdefault(str(failure["target"]), str(failure.get("error") or ""))
    return out


def diff(left: Analysis, right: Analysis, a: str = "A", b: str = "B", tolerance: float = 0.5, min_rate: float = 1.0,
         rates: bool = True, created_a: str | None = None, created_b: str | None = None) -> BundleDiff:
    names_a = [t["name"] for t in left.table.targets]
    names_b = [t["name"] for t in right.table.targets]
    down_a, down_b = _unreachable(left), _unreachable(right)
    both = set(names_a) & set(names_b)
    targets = {
        "added": sorted(set(names_b) - set(names_a)),
        "removed": sorted(set(names_a) - set(names_b)),
        "unreachable": [{"target": t, "error": down_b[t]} for t in sorted(both & set(down_b) - set(down_a))],
        "recovered": sorted(both & set(down_a) - set(down_b)),
        "still_unreachable": sorted(both & set(down_a) & set(down_b)),
    }
    answered = (both & set(left.facts["target"])) & set(right.facts["target"]) if not left.facts.empty and \
        not right.facts.empty else set()
    answered |= _switches(left) & _switches(right)  # a switch read by a subnet sweep in both: compared like a target
    result = BundleDiff(a, b, created_a, created_b, tolerance, min_rate, targets=targets)
    fa = plain(left.facts[left.facts["target"].isin(answered)])  # (plain texts: None where missing)
    fb = plain(right.facts[right.facts["target"].isin(answered)])
    result.config = _settings(fa, fb) + _pfc_vectors(fa, fb)
    result.config.sort(key=lambda r: (r["target"], str(r["entity"]), r["setting"], _sortable(r["priority"])))
    result.cabling = _cabling(left, right, answered)
    if rates:
        result.rates = _rates(fa, fb, tolerance, min_rate)
    return result


def _sortable(value) -> float:
    return -1.0 if value is None else float(value)


def _clean(value):
    """A fact's value for JSON: an int where it is one, None for NaN / NA."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value.item() if hasattr(value, "item") else value


def _setting_values(facts: pd.DataFrame) -> dict[tuple, object]:
    rows = facts[facts["metric"].isin(SETTINGS)]
    out: dict[tuple, object] = {}
    for target, entity, metric, priority, value, text in zip(rows["target"], rows["entity"], rows["metric"],
                                                            rows["priority"], rows["value"], rows["text"]):
        key = (target, _clean(entity), metric, _clean(priority))
        if key not in out:  # the first tool's reading (ibstat before ibv_devinfo): one value per setting
            out[key] = text if isinstance(text, str) and text != "" else _clean(value)
    return out


def _settings(fa: pd.DataFrame, fb: pd.DataFrame) -> list[dict]:
    before, after = _setting_values(fa), _setting_values(fb)
    out = []
    for key in set(before) | set(after):
        old, new = before.get(key), after.get(key)
        if old != new:
            target, entity, metric, priority = key
            out.append({"target": target, "entity": entity, "setting": metric, "priority": priority,
                        "before": old, "after": new})
    return out


def _pfc_vector(facts: pd.DataFrame) -> dict[tuple, str]:
    """Each port's priorities with PFC on, as `3` or `3,4` (`none`: PFC off on every priority it reports)."""
    rows = facts[(facts["metric"] == "pfc_enabled") & facts["priority"].notna()]
    vectors: dict[tuple, set[int]] = {}
    for target, entity, priority, value in zip(rows["target"], rows["entity"], rows["priority"], rows["value"]):
        on = vectors.setdefault((target, _clean(entity)), set())
        if _clean(value):
            on.add(int(priority))
    return {key: ",".join(map(str, sorted(on))) or "none" for key, on in vectors.items()}


def _pfc_vectors(fa: pd.DataFrame, fb: pd.DataFrame) -> list[dict]:
    before, after = _pfc_vector(fa), _pfc_vector(fb)
    return [{"target": t, "entity": e, "setting": "pfc_priorities", "priority": None,
             "before": before.get((t, e)), "after": after.get((t, e))}
            for t, e in set(before) | set(after) if before.get((t, e)) != after.get((t, e))]


def _neighbours(analysis: Analysis, answered: set) -> dict[tuple, str]:
    """(target, port) → what is at the other end: LLDP seen from either end, and iblinkinfo's neighbours."""
    seen: dict[tuple, set[str]] = {}
    links = analysis.links
    for host, host_port, switch, switch_port in zip(links.get("host", []), links.get("host_port", []),
                                                    links.get("switch", []), links.get("switch_port", [])):
        if host in answered:
            seen.setdefault((host, host_port), set()).add(f"{switch} {switch_port}")
        if switch in answered:
            seen.setdefault((switch, switch_port), set()).add(f"{host} {host_port}")
    facts = analysis.facts
    ib = facts[(facts["metric"] == "ib_link_neighbor") & facts["target"].isin(answered)] if not facts.empty else facts
    for target, entity, text in zip(ib.get("target", []), ib.get("entity", []), ib.get("text", [])):
        if isinstance(text, str):
            seen.setdefault((target, entity), set()).add(text.replace("|", " "))
    return {key: "; ".join(sorted(values)) for key, values in seen.items()}


def _cabling(left: Analysis, right: Analysis, answered: set) -> list[dict]:
    before, after = _neighbours(left, answered), _neighbours(right, answered)
    out = [{"target": t, "port": p, "before": before.get((t, p)), "after": after.get((t, p))}
           for t, p in set(before) | set(after) if before.get((t, p)) != after.get((t, p))]
    return sorted(out, key=lambda r: (r["target"], str(r["port"])))


def _rate_values(facts: pd.DataFrame) -> pd.DataFrame:
    metric = facts["metric"].astype(str)
    rows = facts[(metric.str.endswith(RATE_SUFFIX) | metric.isin(SHARES)) & facts["value"].notna()]
    keys = ["target", "entity", "metric", "priority", "size_bytes", "raw_key"]
    rows = rows[[*keys, "value", "delta"]].astype({"entity": object, "raw_key": object, "priority": object,
                                          "size_bytes": object})
    return rows.fillna({k: "" for k in ("entity", "raw_key", "priority", "size_bytes")}).drop_duplicates(keys)


def _rates(fa: pd.DataFrame, fb: pd.DataFrame, tolerance: float, min_rate: float) -> list[dict]:
    keys = ["target", "entity", "metric", "priority", "size_bytes", "raw_key"]
    joined = _rate_values(fa).merge(_rate_values(fb), on=keys, how="inner", suffixes=("_a", "_b"))
    if joined.empty:
        return []
    before = joined["value_a"].astype(float)
    after = joined["value_b"].astype(float)
    change = after - before
    share = joined["metric"].isin(SHARES)
    floor = share.map({True: SHARE_FLOOR, False: min_rate}).astype(float)
    counted = pd.concat([joined["delta_a"].astype(float).abs(), joined["delta_b"].astype(float).abs()], axis=1).max(
        axis=1)
    enough = share | (counted.fillna(0.0) >= MIN_EVENTS)
    moved = (change.abs() >= floor) & (change.abs() > tolerance * before.abs()) & enough
    out = []
    for row, a, b, c in zip(joined[moved].itertuples(index=False), before[moved], after[moved], change[moved]):
        base = row.metric.removesuffix(RATE_SUFFIX)
        known = GLOSSARY.get(base)
        out.append({"target": row.target, "entity": row.entity or None, "metric": row.metric,
                    "priority": _clean(row.priority) if row.priority != "" else None,
                    "size_bytes": _clean(row.size_bytes) if row.size_bytes != "" else None,
                    "key": row.raw_key or None, "unit": (known.unit + "/s" if row.metric.endswith(RATE_SUFFIX)
                                                         else known.unit) if known else "",
                    "before": float(a), "after": float(b), "change": float(c),
                    "relative": float(c / abs(a)) if a != 0 else None})
    # One counter seen by two tools (sysfs and perfquery both read a port's PMA counters) is one change, not two;
    # readings of one metric that differ (queue drops of two kinds) stay apart.
    seen: set[tuple] = set()
    unique = []
    for r in out:
        same = (r["target"], r["entity"], r["metric"], r["priority"], r["size_bytes"], r["before"], r["after"])
        if same not in seen:
            seen.add(same)
            unique.append(r)
    out = unique
    # the largest moves first; a rate that appeared from zero (relative None) ahead of all
    out.sort(key=lambda r: (r["relative"] is not None, -abs(r["relative"] or 0.0), r["target"], str(r["entity"])))
    return out
