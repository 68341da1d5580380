"""Hostlist range expansion as cluster tools write it: `gpu[001-064]`, `gpu[01-04,07]`, `10.0.0.[1-64]`."""

from __future__ import annotations

import itertools
import re

_GROUP = re.compile(r"\[([^\[\]]*)\]")
_MAX_EXPANSION = 100_000  # a typo such as [1-9999999] must fail, not exhaust memory


def expand(pattern: str) -> list[str]:
    """Every name a pattern stands for, in order; zero padding follows the width of the range's first bound."""
    parts = _GROUP.split(pattern)
    literals, groups = parts[0::2], parts[1::2]
    if any("[" in lit or "]" in lit for lit in literals):
        raise ValueError(f"unbalanced brackets in {pattern!r}")
    choices = [_expand_group(g, pattern) for g in groups]
    total = 1
    for c in choices:
        total *= len(c)
    if total > _MAX_EXPANSION:
        raise ValueError(f"{pattern!r} expands to {total} names (limit {_MAX_EXPANSION})")
    out = []
    for combo in itertools.product(*choices):
        name = literals[0]
        for value, literal in zip(combo, literals[1:], strict=False):
            name += value + literal
        out.append(name)
    return out


def _expand_group(group: str, pattern: str) -> list[str]:
    values: list[str] = []
    for item in group.split(","):
        item = item.strip()
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", item)
        if not match:
            raise ValueError(f"bad range {item!r} in {pattern!r}")
        low, high = match.group(1), match.group(2) or match.group(1)
        if int(high) < int(low):
            raise ValueError(f"descending range {item!r} in {pattern!r}")
        width = len(low) if low.startswith("0") else 0
        values.extend(str(n).zfill(width) for n in range(int(low), int(high) + 1))
    return values
