"""The Prometheus / OpenMetrics text export of a bundle: its latest values, counter rates, findings and verdict.

For node_exporter's textfile collector (`--collector.textfile.directory`): one `.prom` file, replaced atomically
(`rdmatool.files.write_atomic`), so the collector never reads half a file. The text is written by prometheus_client
(`generate_latest`), which escapes labels and HELP text.

Names follow Prometheus conventions, from the glossary (`rdmatool.metrics`):

- every name starts `rdmatool_`; HELP is the glossary's meaning, with the unit the bundle measured in;
- a COUNTER is `<name>_total` (TYPE counter), its latest cumulative reading;
- its rate over the bundle's window is the gauge `<name>_per_second` (counters have no rate of their own in
  Prometheus; `rate()` needs two scrapes, a bundle already holds two snapshots);
- units become base units in the name: `_us` / `_ms` / `_s` → `_seconds`, `_gbps` → `_bits_per_second`, `%` →
  `_ratio` (0..1), `_mpps` → `_packets_per_second`, `_m` → `_meters`, a size in bytes ends `_bytes`;
- a few configuration and state texts (port state, firmware, trust mode ...) are `<name>_info{value="..."} 1`;
- the paused share of a port's window is `rdmatool_port_pause_fraction{target,port,priority}` (received PFC), and
  `rdmatool_port_tx_pause_fraction` (the share it kept its peer paused);
- `rdmatool_findings{severity,rule,target}`: how many findings of that rule on that target;
  `rdmatool_gate_verdict{verdict}`: 1 for the verdict of this bundle, 0 for the others.

Labels: `target`, `port` (the entity: an RDMA port, netdev or switch port), and where the family has them `priority`,
`size` (perftest message size, bytes) and `key` (the vendor field, when one metric names several: dcqcn_param ...).
Presentation only: the verdict and the findings are the diagnosis' (rdmatool.diagnose), nothing is judged here.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from pathlib import Path

import pandas as pd
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from rdmatool.metrics import GLOSSARY, RATE_SUFFIX, Metric
from rdmatool.model import MetricKind, Verdict
from rdmatool.report.shown import cleaned, terminal
from rdmatool.result import DiagnoseResult

PREFIX = "rdmatool_"
ALIASES = {"rx_pause_fraction": "port_pause_fraction", "tx_pause_fraction": "port_tx_pause_fraction"}
# State texts worth a dashboard panel; the others (GIDs, JSON records, LLDP text) would only add label cardinality.
INFO_STATES = (
    "port_state", "phys_state", "link_layer", "link_width", "link_speed", "fw_version", "fw_version_running",
    "board_id", "psid", "ca_type", "fec_mode", "trust_mode", "dcbx_mode", "pfc_mode", "oper_state", "roce_mode",
    "ecn_mode", "pfc_watchdog_status", "cabling_verdict", "perf_node_verdict",
)
_UNITS = (  # (unit, name suffix, base-unit suffix, scale)
    ("us", "_us", "_seconds", 1e-6),
    ("ms", "_ms", "_seconds", 1e-3),
    ("s", "_s", "_seconds", 1.0),
    ("Gb/s", "_gbps", "_bits_per_second", 1e9),
    ("Mpps", "_mpps", "_packets_per_second", 1e6),
    ("m", "_m", "_meters", 1.0),
    ("%", "_pct", "_ratio", 0.01),
    ("bytes", "_bytes", "_bytes", 1.0),
)
_INVALID = re.compile(r"[^a-zA-Z0-9_:]")


def base_name(metric: Metric) -> tuple[str, float]:
    """The Prometheus name of a glossary metric without prefix or `_total`, and the factor to its base unit."""
    name = ALIASES.get(metric.name, metric.name)
    for unit, suffix, base, scale in _UNITS:
        if metric.unit == unit:
            stem = name[: -len(suffix)] if name.endswith(suffix) else name
            return _INVALID.sub("_", stem + base), scale
    return _INVALID.sub("_", name), 1.0


def _help(metric: Metric, rate: bool = False) -> str:
    unit = f" (read in {metric.unit})" if metric.unit not in ("", "ratio", "bool") else ""
    return ("rate over the bundle's window of: " if rate else "") + metric.meaning + unit


def _is_set(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value)) and value is not pd.NA


def _label_value(value) -> str:
    if not _is_set(value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return terminal(str(value), newlines=True)  # a device's lone surrogate cannot be encoded; its controls shown


def _families_of(rows: pd.DataFrame, name: str, help_text: str, counter: bool, scale: float) -> list:
    """One family from the facts of one metric: the label set each row needs, one sample per distinct label set."""
    labels = ["target", "port"]
    columns = {"target": "target", "port": "entity"}
    if rows["priority"].notna().any():
        labels.append("priority")
        columns["priority"] = "priority"
    if rows["size_bytes"].notna().any():
        labels.append("size")
        columns["size"] = "size_bytes"
    keys = [columns[label] for label in labels]
    # The same reading seen by two tools (ibstat and ibv_devinfo both give a port's rate) is one sample.
    rows = rows.drop_duplicates([*keys, "value"])
    if rows.duplicated(keys).any() and rows["raw_key"].notna().any():
        labels.append("key")  # one metric naming several settings (dcqcn_param): the vendor field tells them apart
        keys.append("raw_key")
    # Two samples with one label set are an invalid exposition: what is still alike keeps the first tool's reading.
    rows = rows.drop_duplicates(keys)
    family = (CounterMetricFamily if counter else GaugeMetricFamily)(PREFIX + name, help_text, labels=labels)
    for values in zip(*(rows[k] for k in keys), rows["value"]):
        family.add_metric([_label_value(v) for v in values[:-1]], float(values[-1]) * scale)
    return [family]


def fact_families(facts: pd.DataFrame) -> list:
    """The metric families of an analysis' facts (rdmatool.analysis.FACT_COLUMNS)."""
    if facts.empty:
        return []
    out = []
    numeric = facts[pd.to_numeric(facts["value"], errors="coerce").notna()]
    numeric = numeric.assign(value=pd.to_numeric(numeric["value"], errors="coerce"))
    for metric, rows in numeric.groupby("metric", sort=True):
        rate = metric.endswith(RATE_SUFFIX)
        known = GLOSSARY.get(metric[: -len(RATE_SUFFIX)] if rate else metric)
        if known is None or known.kind is MetricKind.STATE or (rate and known.kind is not MetricKind.COUNTER):
            continue
        name, scale = base_name(known)
        if rate:
            out += _families_of(rows, name + "_per_second", _help(known, rate=True), False, scale)
        else:
            out += _families_of(rows, name, _help(known), known.kind is MetricKind.COUNTER, scale)
    states = facts[facts["metric"].isin(INFO_STATES) & facts["text"].map(lambda t: isinstance(t, str) and t != "")]
    for metric, rows in states.groupby("metric", sort=True):
        known = GLOSSARY[metric]
        rows = rows.drop_duplicates(["target", "entity"])  # one value per port: the first tool's
        family = GaugeMetricFamily(f"{PREFIX}{base_name(known)[0]}_info", _help(known),
                                   labels=["target", "port", "value"])
        for target, entity, text in zip(rows["target"], rows["entity"], rows["text"]):
            family.add_metric([_label_value(target), _label_value(entity), text], 1.0)
        out.append(family)
    return out


def result_families(result: DiagnoseResult, created: str | None = None, targets: int | None = None) -> list:
    """Findings, verdict and the bundle's own figures (when it was collected, its window, its failures)."""
    findings = GaugeMetricFamily(PREFIX + "findings", "findings of the diagnosis, per severity, rule and target",
                                 labels=["severity", "rule", "target"])
    counts: dict[tuple[str, str, str], int] = {}
    for f in result.findings:
        key = (f.severity.value, f.rule, f.target)
        counts[key] = counts.get(key, 0) + 1
    for key in sorted(counts):
        findings.add_metric(list(key), float(counts[key]))
    verdict = GaugeMetricFamily(PREFIX + "gate_verdict", "the verdict of the diagnosis: 1 for this bundle's, "
                                "0 for the others (pass, warn, fail, inconclusive)", labels=["verdict"])
    for v in Verdict:
        verdict.add_metric([v.value], 1.0 if v is result.verdict else 0.0)
    failures = GaugeMetricFamily(PREFIX + "collection_failures", "targets, commands and outputs that could not be "
                                 "collected or parsed (the diagnosis is inconclusive on them)",
                                 value=float(len(result.failures)))
    out = [findings, verdict, failures]
    if result.window_s is not None:
        out.append(GaugeMetricFamily(PREFIX + "bundle_window_seconds", "time between the bundle's two snapshots "
                                     "(the window of every rate)", value=float(result.window_s)))
    if targets is not None:
        out.append(GaugeMetricFamily(PREFIX + "bundle_targets", "targets the bundle was to collect",
                                     value=float(targets)))
    stamp = _timestamp(created)
    if stamp is not None:
        out.append(GaugeMetricFamily(PREFIX + "bundle_timestamp_seconds", "when the bundle was collected, "
                                     "seconds since the epoch (alert when it stops moving)", value=stamp))
    return out


def _timestamp(created: str | None) -> float | None:
    if not created:
        return None
    try:
        return datetime.fromisoformat(created.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class _Families:
    """A prometheus_client collector over families built beforehand."""

    def __init__(self, families: list):
        self.families = families

    def collect(self):
        return iter(self.families)


def render(facts: pd.DataFrame, result: DiagnoseResult, created: str | None = None, targets: int | None = None,
           ) -> str:
    """The exposition text (Prometheus text format 0.0.4, which node_exporter's textfile collector reads)."""
    registry = CollectorRegistry(auto_describe=False)
    result = cleaned(result)  # targets, rules and failures as label values: encodable, controls shown
    registry.register(_Families([*result_families(result, created, targets), *fact_families(facts)]))
    return generate_latest(registry).decode()


def bundle_exposition(path: str | Path, **diagnose_options) -> tuple[str, DiagnoseResult]:
    """Diagnose a bundle (`diagnose_options`: playbooks_dir, baseline, profile, topology) and render its export."""
    from rdmatool import bundle as bundle_io
    from rdmatool.capture.facts import analyse_with_captures
    from rdmatool.diagnose import diagnose_analysis
    from rdmatool.topology.paths import bundle_pairs

    manifest = bundle_io.read_manifest(Path(path))
    analysis = analyse_with_captures(path, diagnose_options.get("profile"))
    result = diagnose_analysis(analysis, source=str(path), pairs=bundle_pairs(path), **diagnose_options)
    text = render(analysis.facts, result, created=manifest.get("created"), targets=len(manifest.get("targets", [])))
    return text, result
