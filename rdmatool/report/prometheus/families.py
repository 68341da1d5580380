"""The metric families of one bundle, each sample tagged with the target whose file it belongs in.

A `Family` holds samples as (target, labels, value): `target` is the node whose textfile carries the sample (its
`target` label), None for a fleet-wide sample (the verdict, the bundle's own figures). Rendering (rdmatool.report.
prometheus.render) picks the samples of one file; the bound (rdmatool.report.prometheus.bound) drops whole families
of a target over it. Nothing is judged here: the findings and the verdict are the diagnosis' (rdmatool.diagnose.pipeline).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd

from rdmatool.metrics import GLOSSARY, RATE_SUFFIX
from rdmatool.model import MetricKind, Verdict
from rdmatool.outcome.result import DiagnoseResult
from rdmatool.report.prometheus.labels import EntityLabels
from rdmatool.report.prometheus.names import PREFIX, base_name, help_text
from rdmatool.report.shown import terminal

# State texts worth a dashboard panel, as `<name>_info{...,value="..."} 1`; the others (GIDs, JSON records, LLDP
# text) would only add label cardinality. `netdev` names its label for what it holds, so that a netdev's series
# join an RDMA port's: `rdmatool_netdev_info{device="mlx5_0",port="1",netdev="ens1f0np0"}`.
INFO_STATES = (
    "port_state", "phys_state", "link_layer", "link_width", "link_speed", "fw_version", "fw_version_running",
    "board_id", "psid", "ca_type", "fec_mode", "trust_mode", "dcbx_mode", "pfc_mode", "oper_state", "roce_mode",
    "ecn_mode", "pfc_watchdog_status", "cabling_verdict", "perf_node_verdict", "netdev",
)
_INFO_LABEL = {"netdev": "netdev"}

Sample = tuple[str | None, tuple[tuple[str, str], ...], float]


@dataclass
class Family:
    name: str  # with the prefix, without `_total`
    help: str
    type: str  # "counter" or "gauge"
    samples: list[Sample] = field(default_factory=list)

    def add(self, target: str | None, labels, value: float) -> None:
        self.samples.append((target, tuple(labels), float(value)))


def label_value(value) -> str:
    """A label value as text: whole numbers without `.0`, a device's controls shown, never unencodable."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return terminal(str(value), newlines=True)  # a device's lone surrogate cannot be encoded; its controls shown


def _family_of(rows: pd.DataFrame, entities: EntityLabels, name: str, help_: str, kind: str, scale: float,
               keyed: bool) -> Family:
    """One family from the facts of one metric: one sample per distinct label set. `keyed`: a label set read
    twice with two values is told apart by the vendor field (`key`); else (a counter two tools read a moment
    apart: perfquery's PortXmitData and sysfs' port_xmit_data) the first tool's reading is the one kept."""
    samples = []
    for target, entity, metric, priority, size, key, value in zip(
            rows["target"], rows["entity"], rows["metric"], rows["priority"], rows["size_bytes"], rows["raw_key"],
            rows["value"]):
        labels = entities.of(target, entity, metric)
        if not pd.isna(priority):
            labels += (("priority", label_value(priority)),)
        if not pd.isna(size):
            labels += (("size", label_value(size)),)
        samples.append((label_value(target), labels, key, float(value)))
    # The same reading seen by two tools (ibstat and ibv_devinfo both give a port's rate) is one sample.
    samples = _first_of_each(samples, lambda s: (s[0], s[1], s[3]))
    if keyed and len({(t, labels) for t, labels, _, _ in samples}) < len(samples):
        # one metric naming several settings (dcqcn_param, dscp_to_priority): the vendor field tells them apart
        samples = [(t, labels + ((("key", label_value(k)),) if isinstance(k, str) else ()), k, v)
                   for t, labels, k, v in samples]
    family = Family(PREFIX + name, help_, kind)
    # Two samples with one label set are an invalid exposition: what is still alike keeps the first reading.
    for target, labels, _, value in _first_of_each(samples, lambda s: (s[0], s[1])):
        family.add(target, (("target", target), *labels), value * scale)
    return family


def _first_of_each(items: list, key) -> list:
    """`items` in order, each after the first with the same `key(item)` left out."""
    seen, out = set(), []
    for item in items:
        if key(item) not in seen:
            seen.add(key(item))
            out.append(item)
    return out


def fact_families(facts: pd.DataFrame, entities: EntityLabels | None = None) -> list[Family]:
    """The metric families of an analysis' facts (rdmatool.table.analysis.FACT_COLUMNS)."""
    if facts.empty:
        return []
    entities = entities or EntityLabels(facts)
    out = []
    numeric = facts[pd.to_numeric(facts["value"], errors="coerce").notna()]
    numeric = numeric.assign(value=pd.to_numeric(numeric["value"], errors="coerce"))
    for metric, rows in numeric.groupby("metric", sort=True):
        rate = metric.endswith(RATE_SUFFIX)
        known = GLOSSARY.get(metric[: -len(RATE_SUFFIX)] if rate else metric)
        if known is None or known.kind is MetricKind.STATE or (rate and known.kind is not MetricKind.COUNTER):
            continue
        name, scale = base_name(known)
        counter = known.kind is MetricKind.COUNTER
        if rate:
            name, help_, kind = name + "_per_second", help_text(known, rate=True), "gauge"
        else:
            help_, kind = help_text(known), "counter" if counter else "gauge"
        out.append(_family_of(rows, entities, name, help_, kind, scale, keyed=not counter))
    states = facts[facts["metric"].isin(INFO_STATES) & facts["text"].map(lambda t: isinstance(t, str) and t != "")]
    for metric, rows in states.groupby("metric", sort=True):
        known = GLOSSARY[metric]
        family = Family(f"{PREFIX}{base_name(known)[0]}_info", help_text(known), "gauge")
        seen = set()
        for target, entity, text in zip(rows["target"], rows["entity"], rows["text"]):
            target, labels = label_value(target), entities.of(target, entity, metric)
            if (target, labels) not in seen:  # one value per port: the first tool's
                seen.add((target, labels))
                family.add(target, (("target", target), *labels, (_INFO_LABEL.get(metric, "value"),
                                                                 label_value(text))), 1.0)
        out.append(family)
    return out


def result_families(result: DiagnoseResult, created: str | None = None, targets: int | None = None) -> list[Family]:
    """Findings, verdict and the bundle's own figures (when it was collected, its window, its failures). `result`
    is the cleaned one (rdmatool.report.shown.cleaned): its targets and rules are label values."""
    findings = Family(PREFIX + "findings", "findings of the diagnosis, per severity, rule and target", "gauge")
    counts: dict[tuple[str, str, str], int] = {}
    severities: dict[str, int] = {}
    for f in result.findings:
        key = (f.severity.value, f.rule, f.target)
        counts[key] = counts.get(key, 0) + 1
        severities[f.severity.value] = severities.get(f.severity.value, 0) + 1
    for severity, rule, target in sorted(counts):
        findings.add(target, (("severity", severity), ("rule", rule), ("target", target)),
                     counts[(severity, rule, target)])
    fabric = Family(PREFIX + "fabric_findings", "findings of the diagnosis on the whole fabric, per severity", "gauge")
    for severity in sorted(severities):
        fabric.add(None, (("severity", severity),), severities[severity])
    verdict = Family(PREFIX + "gate_verdict", "the verdict of the diagnosis: 1 for this bundle's, 0 for the others "
                     "(pass, warn, fail, inconclusive)", "gauge")
    for v in Verdict:
        verdict.add(None, (("verdict", v.value),), 1.0 if v is result.verdict else 0.0)
    failures = Family(PREFIX + "collection_failures", "targets, commands and outputs that could not be collected or "
                      "parsed (the diagnosis is inconclusive on them)", "gauge")
    failures.add(None, (), len(result.failures))
    per_target = Family(PREFIX + "target_collection_failures", "commands and outputs of this target that could not "
                        "be collected or parsed, or 1 when the target could not be reached", "gauge")
    failed: dict[str, int] = {}
    for failure in result.failures:
        target = failure.get("target") if isinstance(failure, dict) else None
        if isinstance(target, str) and target:
            failed[target] = failed.get(target, 0) + 1
    for target in sorted(failed):
        per_target.add(target, (("target", target),), failed[target])
    out = [findings, fabric, verdict, failures, per_target]
    if result.window_s is not None:
        out.append(_single("bundle_window_seconds", "time between the bundle's two snapshots (the window of every "
                           "rate)", result.window_s))
    if targets is not None:
        out.append(_single("bundle_targets", "targets the bundle was to collect", targets))
    stamp = _timestamp(created)
    if stamp is not None:
        out.append(_single("bundle_timestamp_seconds", "when the bundle was collected, seconds since the epoch "
                           "(alert when it stops moving)", stamp))
    return out


def _single(name: str, help_: str, value: float) -> Family:
    family = Family(PREFIX + name, help_, "gauge")
    family.add(None, (), value)
    return family


def _timestamp(created: str | None) -> float | None:
    if not created:
        return None
    try:
        return datetime.fromisoformat(created.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
