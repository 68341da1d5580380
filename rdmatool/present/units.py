"""Numbers as people read them: KiB / MiB, %, Gb/s, µs, seconds; never `1.499e+06 bytes` or `0.9856 of the time`.

Presentation only: the exact values stay in the evidence and the JSON. The glossary's unit of a metric
(rdmatool.metrics) says which form a value takes; `human(value, unit)` is the one place that decides how it reads,
for the playbooks' symptom texts (rdmatool.rules.engine) and for the renderers alike.
"""

from __future__ import annotations

import math

# Glossary units whose values are shares of a whole (0..1), shown as percentages.
SHARE = "ratio"
# Metrics of unit `ratio` that are not shares of a whole: an index or a count per event reads as a plain number.
NOT_SHARES = frozenset({"incast_fairness", "incast_cnp_per_mark"})
# Sizes that are named by their number: an MTU is 1024 or 4096, never "1 KiB".
NAMED_SIZES = frozenset({"active_mtu", "max_mtu", "perftest_mtu"})

# What a template may write right after a placeholder, per glossary unit (`{observed} bytes`): the human form carries
# its own unit, so the template's is dropped instead of read twice (`1.43 MiB bytes`).
WRITTEN_UNITS = {
    "bytes": (" bytes", " B"),
    "Gb/s": (" Gb/s",),
    "us": (" us", " µs"),
    "ms": (" ms",),
    "s": (" s",),
    "%": (" %", "%"),
}


def unit_for(metric: str | None, glossary_unit: str | None) -> str:
    """The unit a metric's value is shown in: the glossary's, except for the ratios that are not shares."""
    if not glossary_unit or metric in NAMED_SIZES or (glossary_unit == SHARE and metric in NOT_SHARES):
        return ""
    return glossary_unit


def human(value: object, unit: str = "") -> str:
    """One value in its human form; text, booleans and None are printed as they are."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "-" if value is None else str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if unit == "bytes":
        return size(value)
    if unit == SHARE:
        return percent(value)
    if unit == "%":
        return f"{_digits(value)} %"
    if unit == "Gb/s":  # four digits: 399.6 Gb/s is not the 400 of its neighbours
        return f"{number(value)} Gb/s"
    if unit == "us":
        return duration(value / 1e6)
    if unit == "ms":
        return duration(value / 1e3)
    if unit == "s":
        return duration(value)
    return number(value)


def size(n: float) -> str:
    """Bytes in binary units: `512 B`, `34.9 KiB`, `1.43 MiB`, `3 MiB`."""
    value = float(n)
    for name in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or name == "TiB":
            return f"{_digits(value) if name != 'B' else _integer(value)} {name}"
        value /= 1024
    raise AssertionError("unreachable")


def percent(fraction: float) -> str:
    """A share of a whole: `98.6 %`; a small share keeps two significant digits (`0.002 %`), never rounds to 0."""
    p = float(fraction) * 100
    if p == 0:
        return "0 %"
    if abs(p) >= 1:
        return f"{_strip(f'{p:.1f}')} %"
    return f"{_strip(f'{p:.2g}')} %" if abs(p) >= 1e-4 else f"{p:.1e} %"


def duration(seconds: float) -> str:
    """A time: `850 ns`, `12.3 µs`, `4.5 ms`, `4.1 s`, `90 s`."""
    s = float(seconds)
    for scale, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(s) >= scale:
            return f"{_digits(s / scale)} {name}"
    return f"{_digits(s * 1e9)} ns" if s else "0 s"


def number(value: float) -> str:
    """A plain number: integers whole with thousands grouped (`14,820`), others with up to four significant
    digits, without an exponent where a person would not write one."""
    if isinstance(value, int) or float(value).is_integer() and abs(value) < 2**53:
        return f"{int(value):,}"
    v = float(value)
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 0.001:
        return _strip(f"{v:.4g}")
    return f"{v:.2g}"


def _digits(x: float) -> str:
    """Three significant digits at most, no exponent: `1.43`, `34.9`, `150`, `1023`."""
    x = float(x)
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return _strip(f"{x:.1f}")
    return _strip(f"{x:.2f}")


def _integer(x: float) -> str:
    return f"{int(x)}" if float(x).is_integer() else _digits(x)


def _strip(text: str) -> str:
    """`20.0` → `20`, `1.50` → `1.5`; integers stay as they are."""
    return text.rstrip("0").rstrip(".") if "." in text and "e" not in text else text
