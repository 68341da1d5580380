"""The Prometheus name and HELP text of a glossary metric (rdmatool.metrics), by the Prometheus naming conventions.

- every name starts `rdmatool_`;
- a COUNTER's family is `<name>` and its sample `<name>_total` (prometheus_client adds the suffix);
- units become base units in the name, the value scaled to match: `_us` / `_ms` / `_s` → `_seconds`, `_gbps` →
  `_bits_per_second`, `bytes/s` → `_bytes_per_second`, `%` → `_ratio` (0..1), `_mpps` / `packets/s` →
  `_packets_per_second`, `_m` → `_meters`, a size in bytes ends `_bytes`;
- a fraction or any other dimensionless share ends `_ratio` (`rx_pause_fraction` → `port_pause_ratio`,
  `nic_utilization` → `nic_utilization_ratio`);
- HELP is the glossary's meaning, with the unit the bundle read the value in when it was scaled.
"""

from __future__ import annotations

import re

from rdmatool.metrics import Metric

PREFIX = "rdmatool_"
# The PFC pause share is a port's, whichever end reads it: named for what dashboards plot.
ALIASES = {"rx_pause_fraction": "port_pause_fraction", "tx_pause_fraction": "port_tx_pause_fraction"}
_UNITS = (  # (unit, name suffix, base-unit suffix, scale)
    ("us", "_us", "_seconds", 1e-6),
    ("ms", "_ms", "_seconds", 1e-3),
    ("s", "_s", "_seconds", 1.0),
    ("Gb/s", "_gbps", "_bits_per_second", 1e9),
    ("bytes/s", "_bytes_rate", "_bytes_per_second", 1.0),
    ("Mpps", "_mpps", "_packets_per_second", 1e6),
    ("packets/s", "_pps", "_packets_per_second", 1.0),
    ("m", "_m", "_meters", 1.0),
    ("%", "_pct", "_ratio", 0.01),
    ("bytes", "_bytes", "_bytes", 1.0),
)
# Units of a share of one thing in another (0..1, or a multiple of a typical value): `_ratio`, unscaled.
_RATIO_UNITS = ("ratio", "x typical")
_SHARE_SUFFIX = "_fraction"
_INVALID = re.compile(r"[^a-zA-Z0-9_:]")


def base_name(metric: Metric) -> tuple[str, float]:
    """The Prometheus name of a glossary metric without prefix or `_total`, and the factor to its base unit."""
    name = ALIASES.get(metric.name, metric.name)
    if metric.unit in _RATIO_UNITS:
        stem = name[: -len(_SHARE_SUFFIX)] if name.endswith(_SHARE_SUFFIX) else name
        return _INVALID.sub("_", stem if stem.endswith("_ratio") else stem + "_ratio"), 1.0
    for unit, suffix, base, scale in _UNITS:
        if metric.unit == unit:
            stem = name[: -len(suffix)] if name.endswith(suffix) else name
            return _INVALID.sub("_", stem + base), scale
    return _INVALID.sub("_", name), 1.0


def help_text(metric: Metric, rate: bool = False) -> str:
    """The glossary's meaning, saying what the bundle read when the exported value is in another unit."""
    unit = f" (read in {metric.unit})" if metric.unit not in ("", "ratio", "bool") else ""
    return ("rate over the bundle's window of: " if rate else "") + metric.meaning + unit
