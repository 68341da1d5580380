"""Sizes, durations and counts as a planner's command line takes them: `100GB`, `1.5TiB`, `1h`, `90s`, `5min`, `7B`.

Decimal prefixes are powers of 1000 (100GB = 10^11 bytes, as disks and links count), binary ones (KiB, MiB ...)
powers of 1024. A count is written as model sizes are: K, M, B (billion) or T, in either case (7B = 7 × 10^9
parameters). A bare number is bytes, seconds or the count itself (`7e9`).
"""

from __future__ import annotations

import re

_SIZE = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "pb": 10**15,
         "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "pib": 2**50}
_TIME = {"": 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
_COUNT = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}
_QUANTITY = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def _parse(text: str, units: dict[str, int], what: str) -> float:
    m = _QUANTITY.match(text or "")
    unit = m.group(2).lower() if m else None
    if not m or unit not in units:
        raise ValueError(f"{what} {text!r}: expected a number with one of the "
                         f"{'suffixes' if units is _COUNT else 'units'} "
                         f"{', '.join(u.upper() if units is _COUNT else u for u in units if u)}")
    value = float(m.group(1)) * units[unit]
    if value <= 0:
        raise ValueError(f"{what} {text!r}: must be more than zero")
    return value


def parse_size(text: str) -> float:
    """Bytes."""
    return _parse(text, _SIZE, "size")


def parse_duration(text: str) -> float:
    """Seconds."""
    return _parse(text, _TIME, "duration")


def parse_count(text: str, what: str = "count") -> float:
    """A count: `7B` is 7 × 10^9, `350M`, `1.5T`, `70k`, `7e9`."""
    return _parse(text, _COUNT, what)
