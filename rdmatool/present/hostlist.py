"""Host sets as Slurm and pdsh users write them, through ClusterShell's NodeSet: `gpu[001-064]`, `10.0.0.[1-64]`,
`r[1-2]n[01-04]`, steps (`gpu[1-9/2]`), and folded back for people (`gpu[001-004,009]`).

NodeSet builds every name of a range up front, so a typo such as `gpu[1-10000000]` would cost seconds and hundreds
of MB before anything could refuse it. Every pattern is therefore sized from its bounds first (a product of range
lengths, stopping as soon as it passes MAX_NAMES) and refused with one line; only then does NodeSet see it.

Two entry points: `expand` / `count` for one pattern (an inventory's `name` or `address`: literal text with bracket
ranges, no operators), and `terms` which splits a selection expression (`--limit`) into its operands and set
operators (`,` union, `!` difference, `&` intersection, `^` symmetric difference, left to right as ClusterShell
evaluates them) for the inventory to resolve; `nodeset` and `fold` turn names into NodeSets and folded text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ClusterShell.NodeSet import NodeSet, NodeSetException

MAX_NAMES = 100_000  # a typo such as [1-9999999] must fail, not exhaust memory
_MAX_QUOTE = 200
_MAX_DIGITS = 18  # any real bound; int() never sees a huge string
_GROUP = re.compile(r"\[([^\[\]]*)\]")
_RANGE = re.compile(r"(\d+)(?:-(\d+)(?:/(\d+))?)?")
# Outside brackets a single pattern is plain text: these characters mean something else to NodeSet (operators,
# `@group`, wildcards) and whitespace never belongs in a host name.
_NOT_IN_A_NAME = re.compile(r"[,!&^@*?\s]")
OPERATORS = {",": "union", "!": "difference", "&": "intersection", "^": "xor"}


def expand(pattern: str) -> list[str]:
    """Every name one pattern stands for, sorted as NodeSet sorts (numerically per range); zero padding follows
    the bounds (`[001-064]`; bounds of different widths are refused). ValueError, one line, on a bad pattern."""
    return list(nodeset(pattern))


def count(pattern: str) -> int:
    """How many names `expand(pattern)` gives; ValueError as `expand` would raise. Sized from the bounds before
    NodeSet builds anything."""
    return len(nodeset(pattern))


def nodeset(pattern: str) -> NodeSet:
    """One pattern as a NodeSet, refused before it is built when it stands for more than MAX_NAMES names."""
    if not isinstance(pattern, str) or not pattern:
        raise ValueError("an empty host pattern")
    literals = _GROUP.split(pattern)[0::2]
    if any(_NOT_IN_A_NAME.search(lit) for lit in literals):
        raise ValueError(f"{_quote(pattern)} is not one host pattern (a name with [ranges], no operators)")
    size_of(pattern)
    try:
        return NodeSet(pattern)
    except (NodeSetException, ValueError, IndexError, TypeError) as exc:
        raise ValueError(f"bad host pattern {_quote(pattern)}: {_first_line(exc)}") from None


def size_of(pattern: str) -> int:
    """An upper bound of how many names a pattern stands for, from its bracket ranges alone (repeated values count
    twice); ValueError when it passes MAX_NAMES or a range is not `N`, `A-B` or `A-B/STEP`."""
    literals = _GROUP.split(pattern)[0::2]
    if any("[" in lit or "]" in lit for lit in literals):
        raise ValueError(f"unbalanced brackets in {_quote(pattern)}")
    total = 1
    for group in _GROUP.findall(pattern):
        total *= _group_size(group, pattern)
        if total > MAX_NAMES:  # over already: no need to multiply out a product of huge bounds
            raise ValueError(f"{_quote(pattern)} expands to more than {MAX_NAMES} names (the limit)")
    return total


def _group_size(group: str, pattern: str) -> int:
    names = 0
    for item in group.split(","):
        match = _RANGE.fullmatch(item.strip())
        if not match or any(len(g) > _MAX_DIGITS for g in match.groups() if g):
            raise ValueError(f"bad range {_quote(item.strip())} in {_quote(pattern)}")
        low, high, step = match.group(1), match.group(2) or match.group(1), match.group(3) or "1"
        if int(high) < int(low):
            raise ValueError(f"descending range {_quote(item.strip())} in {_quote(pattern)}")
        if int(step) < 1:
            raise ValueError(f"bad step in {_quote(item.strip())} in {_quote(pattern)}")
        names += (int(high) - int(low)) // int(step) + 1
        if names > MAX_NAMES:  # one group over the limit is enough: the rest need not be read
            raise ValueError(f"{_quote(pattern)} expands to more than {MAX_NAMES} names (the limit)")
    return names


def terms(expression: str) -> list[tuple[str, str]]:
    """A selection expression as [(operator, operand)], the first operator being `,`. Operators are read outside
    brackets only (`gpu[01-04,07]` is one operand); whitespace separates like `,`; `,!` is `!` (Slurm users write
    `gpu[001-064],!gpu005`); a leading `!` subtracts from everything. ValueError on an operator without operand."""
    out: list[tuple[str, str]] = []
    operator, current, depth = ",", "", 0
    for ch in expression + ",":
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced brackets in {_quote(expression)}")
        if depth == 0 and (ch in OPERATORS or ch.isspace()):
            ch = "," if ch.isspace() else ch
            if current.strip():
                out.append((operator, current.strip()))
                operator, current = ch, ""
            elif ch != ",":
                if operator != "," and (out or operator != "!"):
                    raise ValueError(f"{_quote(expression)}: {operator!r} followed by {ch!r} without a name between")
                operator = ch  # `,!x`: the comma only separates; a leading `!x` subtracts from everything
            continue
        current += ch
    if depth != 0:
        raise ValueError(f"unbalanced brackets in {_quote(expression)}")
    if operator != ",":
        raise ValueError(f"{_quote(expression)}: {operator!r} at the end without a name")
    if not out:
        raise ValueError(f"{_quote(expression)}: no names")
    return out


def fold(names: Iterable[str]) -> str:
    """Names folded as ClusterShell writes them: `gpu[001-004,009],leaf01` (empty string for none); ValueError for
    a name NodeSet cannot hold (brackets of its own)."""
    folded = NodeSet()
    try:
        folded.updaten(list(names))
    except (NodeSetException, ValueError, IndexError, TypeError) as exc:
        raise ValueError(f"cannot fold these names: {_first_line(exc)}") from None
    return str(folded)


def _first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:_MAX_QUOTE]


def _quote(text: str) -> str:
    shown = repr(text[: _MAX_QUOTE + 1])
    return shown if len(text) <= _MAX_QUOTE else shown[:-1] + "…" + shown[-1]
