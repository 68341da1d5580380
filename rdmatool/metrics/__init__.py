"""The one glossary of canonical metric names: unit, kind (counter | gauge | state) and a one-line meaning.

These names are the public contract of every `--json` output and of the bundle analysis: extend freely, never
rename. Vendor names map onto them in the parsers and survive only as a sample's `raw_key`. A test fails when any
parser emits a metric that is not listed here.

A rate derived from a counter is named `<metric>_per_s` (see `rate_name`); those names are implied, not listed.
"""

from __future__ import annotations

from dataclasses import dataclass

from rdmatool.metrics import captures, fabric, hosts, judged, runs, switches
from rdmatool.model import MetricKind

COUNTER, GAUGE, STATE = MetricKind.COUNTER, MetricKind.GAUGE, MetricKind.STATE


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    kind: MetricKind
    meaning: str


_DEFINITIONS: list[tuple[str, str, MetricKind, str]] = [
    *hosts.DEFINITIONS, *switches.DEFINITIONS, *fabric.DEFINITIONS, *runs.DEFINITIONS, *judged.DEFINITIONS,
    *captures.DEFINITIONS,
]

GLOSSARY: dict[str, Metric] = {}
for _name, _unit, _kind, _meaning in _DEFINITIONS:
    if _name in GLOSSARY:  # a duplicate would silently shadow a meaning
        raise ValueError(f"metric {_name!r} defined twice in the glossary")
    GLOSSARY[_name] = Metric(_name, _unit, _kind, _meaning)

RATE_SUFFIX = "_per_s"


def rate_name(metric: str) -> str:
    return metric + RATE_SUFFIX


def is_known(metric: str) -> bool:
    if metric.endswith(RATE_SUFFIX):
        base = GLOSSARY.get(metric[: -len(RATE_SUFFIX)])
        return base is not None and base.kind is COUNTER
    return metric in GLOSSARY


def kind_of(metric: str) -> MetricKind:
    return GLOSSARY[metric].kind
