"""Hostlist range expansion as cluster tools write it: `gpu[001-064]`, `gpu[01-04,07]`, `10.0.0.[1-64]`."""

from __future__ import annotations

import itertools
import re

_GROUP = re.compile(r"\[([^\[\]]*)\]")
_RANGE = re.compile(r"(\d{1,18})(?:-(\d{1,18}))?")  # 18 digits: any real bound, and int() never sees a huge string
_MAX_EXPANSION = 100_000  # a typo such as [1-9999999] must fail, not exhaust memory
_MAX_QUOTE = 200


def expand(pattern: str) -> list[str]:
    """Every name a pattern stands for, in order; zero padding follows the width of the range's first bound.

    The count is known from the bounds alone, so a pattern over the limit is refused before any name is built.
    """
    literals, ranges = _parse(pattern)
    out = []
    choices = [[str(n).zfill(width) for low, high, width in group for n in range(low, high + 1)] for group in ranges]
    for combo in itertools.product(*choices):
        name = literals[0]
        for value, literal in zip(combo, literals[1:], strict=False):
            name += value + literal
        out.append(name)
    return out


def count(pattern: str) -> int:
    """How many names `expand(pattern)` gives, without building them; ValueError as `expand` would raise."""
    _, ranges = _parse(pattern)
    return _total(ranges)


def _parse(pattern: str) -> tuple[list[str], list[list[tuple[int, int, int]]]]:
    """(literal parts, per bracket group its ranges as (low, high, zero-padded width)); refuses over the limit."""
    parts = _GROUP.split(pattern)
    literals, groups = parts[0::2], parts[1::2]
    if any("[" in lit or "]" in lit for lit in literals):
        raise ValueError(f"unbalanced brackets in {_quote(pattern)}")
    ranges = [_parse_group(g, pattern) for g in groups]
    total = _total(ranges)
    if total > _MAX_EXPANSION:
        raise ValueError(f"{_quote(pattern)} expands to more than {_MAX_EXPANSION} names (the limit)")
    return literals, ranges


def _total(ranges: list[list[tuple[int, int, int]]]) -> int:
    total = 1
    for group in ranges:
        total *= sum(high - low + 1 for low, high, _ in group)
        if total > _MAX_EXPANSION:  # over already: no need to multiply out a product of huge bounds
            return total
    return total


def _parse_group(group: str, pattern: str) -> list[tuple[int, int, int]]:
    out, names = [], 0
    for item in group.split(","):
        if names > _MAX_EXPANSION:  # one group over the limit is enough: the rest need not be read
            break
        item = item.strip()
        match = _RANGE.fullmatch(item)
        if not match:
            raise ValueError(f"bad range {_quote(item)} in {_quote(pattern)}")
        low, high = match.group(1), match.group(2) or match.group(1)
        if int(high) < int(low):
            raise ValueError(f"descending range {_quote(item)} in {_quote(pattern)}")
        out.append((int(low), int(high), len(low) if low.startswith("0") else 0))
        names += int(high) - int(low) + 1
    return out


def _quote(text: str) -> str:
    shown = repr(text[: _MAX_QUOTE + 1])
    return shown if len(text) <= _MAX_QUOTE else shown[:-1] + "…" + shown[-1]
