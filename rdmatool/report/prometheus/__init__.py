"""The Prometheus text export of a bundle: its latest values, counter rates, findings and verdict.

For node_exporter's textfile collector (`--collector.textfile.directory`), as one file for the whole fabric or, with
`--per-target DIR`, one file per node (only that node's series) and one fleet file (the verdict, the fabric-wide
finding counts, the bundle's own figures): rdmatool.report.prometheus.textfiles. Every file is replaced atomically,
so the collector never reads half a file. The text is written by prometheus_client (`generate_latest`), which
escapes label values and HELP text; the label values have passed rdmatool.report.shown.terminal first (controls
shown, never an unencodable surrogate).

The pieces: names (a glossary metric's Prometheus name, base unit and HELP), labels (the bundle's entity split into
device / port / netdev / gpu / ... labels), families (the families of the facts and of the diagnosis, each sample
tagged with its node), bound (at most N series per node). docs/prometheus.md is the reference for operators.
Presentation only: the verdict and the findings are the diagnosis' (rdmatool.diagnose.pipeline), nothing is judged here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd
from prometheus_client import generate_latest
from prometheus_client.metrics_core import Metric

from rdmatool.outcome.result import DiagnoseResult
from rdmatool.report.prometheus.bound import DEFAULT_MAX_SERIES, bounded
from rdmatool.report.prometheus.families import Family, fact_families, label_value, result_families
from rdmatool.report.prometheus.labels import EntityLabels
from rdmatool.report.prometheus.names import PREFIX, base_name
from rdmatool.report.shown import cleaned
from rdmatool.table.facts import plain

__all__ = ["DEFAULT_MAX_SERIES", "PREFIX", "Export", "base_name", "build", "bundle_export", "bundle_exposition",
           "render"]

# Written to the fleet file and the single file even when empty: an alert on them must find the family.
_ALWAYS = {PREFIX + "findings", PREFIX + "fabric_findings"}


@dataclass
class Export:
    """One bundle's families, bounded per node, and the nodes (the bundle's targets) they are split by."""

    families: list[Family]
    targets: list[str]
    result: DiagnoseResult

    def text(self) -> str:
        """Everything in one file."""
        return _exposition(self.families, {i: f.samples for i, f in enumerate(self.families)}, always=True)

    def fleet_text(self) -> str:
        """The series of no node: the verdict, the bundle's figures, findings on the fabric or on a pair."""
        nodes, merged = set(self.targets), {}
        for target, samples in self._by_target.items():
            if target not in nodes:
                for i, some in samples.items():
                    merged.setdefault(i, []).extend(some)
        return _exposition(self.families, merged, always=True)

    def target_text(self, target: str) -> str:
        """The series of one node only."""
        return _exposition(self.families, self._by_target.get(target, {}), always=False)

    @cached_property
    def _by_target(self) -> dict[str | None, dict[int, list]]:
        """target -> family index -> its samples of that target: one pass, however many nodes are written."""
        grouped: dict[str | None, dict[int, list]] = {}
        for i, family in enumerate(self.families):
            for sample in family.samples:
                grouped.setdefault(sample[0], {}).setdefault(i, []).append(sample)
        return grouped


def build(facts: pd.DataFrame, result: DiagnoseResult, created: str | None = None,
          targets: list[str] | None = None, max_series: int = DEFAULT_MAX_SERIES) -> Export:
    """The export of an analysis' facts and its diagnosis. `targets`: the bundle's targets (its manifest's), to which
    the facts' hosts and switches are added; each is a node with at most `max_series` series."""
    shown = cleaned(result)  # targets, rules and failures as label values: encodable, controls shown
    facts = plain(facts)  # (plain texts: None where missing)
    entities = EntityLabels(facts)
    nodes = [label_value(t) for t in targets or ()]
    if not facts.empty:
        nodes += sorted({label_value(t) for t in facts["target"] if entities.kind(t) in ("host", "switch")})
    nodes = [t for t in dict.fromkeys(nodes) if t]  # a nameless target's series are the fleet file's
    families = [*result_families(shown, created, len(targets) if targets is not None else None),
                *fact_families(facts, entities)]
    return Export(bounded(families, nodes, max_series), nodes, result)


def render(facts: pd.DataFrame, result: DiagnoseResult, created: str | None = None, targets: list[str] | None = None,
           max_series: int = DEFAULT_MAX_SERIES) -> str:
    """The exposition text in one file (Prometheus text format 0.0.4, which node_exporter's textfile collector
    reads)."""
    return build(facts, result, created, targets, max_series).text()


def _exposition(families: list[Family], samples_of: dict[int, list], always: bool) -> str:
    """The text of `families` with the samples `samples_of` gives each (by its index); a family without any is left
    out, unless `always` and it is one an alert must find."""
    metrics = []
    for i, family in enumerate(families):
        samples = samples_of.get(i, [])
        if not samples and not (always and family.name in _ALWAYS):
            continue
        metric = Metric(family.name, family.help, family.type)
        sample_name = family.name + ("_total" if family.type == "counter" else "")
        for _, labels, value in samples:
            metric.add_sample(sample_name, dict(labels), value)
        metrics.append(metric)
    return generate_latest(_Families(metrics)).decode()


class _Families:
    """A prometheus_client collector over metrics built beforehand."""

    def __init__(self, metrics: list):
        self.metrics = metrics

    def collect(self):
        return iter(self.metrics)


def bundle_export(path: str | Path, max_series: int = DEFAULT_MAX_SERIES, **diagnose_options) -> Export:
    """Diagnose a bundle (`diagnose_options`: playbooks_dir, baseline, profile, topology) and build its export."""
    from rdmatool import bundle as bundle_io
    from rdmatool.capture.facts import analyse_with_captures
    from rdmatool.diagnose.pipeline import diagnose_analysis
    from rdmatool.topology.ib_fabric import with_ib_fabric
    from rdmatool.topology.paths import bundle_pairs

    manifest = bundle_io.read_manifest(Path(path))
    analysis = with_ib_fabric(analyse_with_captures(path, diagnose_options.get("profile")))  # switch ports too
    result = diagnose_analysis(analysis, source=str(path), pairs=bundle_pairs(path), **diagnose_options)
    names = [t.get("name") if isinstance(t, dict) else t for t in manifest.get("targets", [])]
    return build(analysis.facts, result, created=manifest.get("created"),
                 targets=[n for n in names if isinstance(n, str) and n], max_series=max_series)


def bundle_exposition(path: str | Path, **diagnose_options) -> tuple[str, DiagnoseResult]:
    """The one-file export of a bundle and its diagnosis."""
    export = bundle_export(path, **diagnose_options)
    return export.text(), export.result
