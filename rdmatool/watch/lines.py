"""The line-local outputs of a watch's snapshot (`ethtool -S`, the sysfs dump), read at the cost of their values.

Parsing is most of an interval's cost at 1,000 hosts, and the outputs of one host are those of every other interval
with other numbers. Each line is `name: value` (`path:value`) and gives its samples alone, so:

1. Lines: each line's name is learnt once, by the parser itself on that one line, as kept (it gives a counter or a
   state the watch keeps, or the parser refuses the line) or dropped; only the kept lines go on.
2. Shapes: the kept lines' names, in order (a line whose value is not a whole number, a port state, counts by its
   whole text), are the output's shape, the same on every host with the same NICs. A shape is parsed once by the
   parser, each value replaced by a marker (1, 2, 3...): each sample whose value is a marker is that line's value
   as read, the others (states) are kept as they are. The next outputs of that shape are read by taking each
   line's number. A shape the markers do not explain (a parser that scales a value, a refused line) is parsed
   whole every time.
3. Plans: an output whose every line's name (one regular expression, at C speed) and line count are those of an
   output read before is read by that output's plan: each counter's number taken from its line, the states kept
   while every kept line that is not a number reads as before (else steps 1-2 again).

The samples are the parser's on the whole output, except that a malformed line of a counter the watch does not keep
no longer costs the output's other counters (the watch never reads it).
"""

from __future__ import annotations

import re

from rdmatool import parsers
from rdmatool.errors import ParseError

MAX_NAMES = 50_000  # names learnt (a fleet prints a few hundred); past it, lines are kept unlearnt
MAX_SHAPES = 10_000
MAX_PLANS = 20_000  # one per output of a watched target: 1,000 hosts print 3 to 6 each
Item = tuple[str, str, "int | None", "float | None", "str | None"]  # entity, metric, priority, value, text

_KEEP: dict[tuple[str, str], bool] = {}
_SHAPES: dict[tuple, list | None] = {}  # (parser, shape) -> [(entity, metric, priority, line or None, text)]
# (parser, line count, every line's name) -> [(entity, metric, priority, pair index, its fixed text or None)]: the
# whole output's layout, told at C speed by one regular expression, so a known output costs its numbers alone
_PLANS: dict[tuple, list] = {}
_PAIR = re.compile(r"^([^:\n]*):([^\n]*)$", re.M)


WHOLE = frozenset({"perfquery"})  # a header line names the port of the lines after it: every line is kept


def _number(rest: str) -> str:
    """A line's value as text: perfquery pads it with dots (`PortXmitData:.......123`)."""
    return rest.strip(" .\t\r")


def clear() -> None:
    _KEEP.clear()
    _SHAPES.clear()
    _PLANS.clear()


def items(parser: str, text: str, wanted, where: tuple = ()) -> list[Item]:
    """The samples of the output whose metric is in `wanted`, as items; ParseError as the parser raises it.
    `where` (target, qualifier) keeps each output's plan its own (a perfquery header names the host's LID)."""
    pairs = _PAIR.findall(text)
    key = (parser, where, text.count("\n"), tuple([name for name, _ in pairs]))
    plan = _PLANS.get(key)
    if plan is not None:
        out = _planned(plan, pairs)
        if out is not None:
            return out
    out, plan = _items(parser, text, wanted, pairs)
    if plan is not None and len(_PLANS) < MAX_PLANS:
        _PLANS[key] = plan
    return out


def _planned(plan: list, pairs: list[tuple[str, str]]) -> list[Item] | None:
    """The items by the plan, None when the output is not what the plan was made of (a state, a non-number)."""
    out = []
    for step in plan:
        if step[0] == "count":
            value = _number(pairs[step[4]][1])
            if not value.isdigit():
                return None
            out.append((step[1], step[2], step[3], float(int(value)), None))
        elif step[0] == "state":
            out.append(step[1])
        elif pairs[step[1]][1] != step[2]:
            return None  # a line that is not a number changed (a port state): read the output again
    return out


def _items(parser: str, text: str, wanted, pairs: list[tuple[str, str]]) -> tuple[list[Item], list | None]:
    """The items of the output, and the plan that reads the next output of the same layout (None: none)."""
    kept = []
    colon_lines = 0
    for line in text.splitlines():
        name, colon, rest = line.partition(":")
        name = name.strip()
        keep = True if parser in WHOLE else _KEEP.get((parser, name))
        if keep is None:
            keep = _learn(parser, name, line, wanted)
        if colon:
            colon_lines += 1
        if keep:
            kept.append((line, name, colon, rest, colon_lines - 1 if colon else None))
    if not kept:
        return [], (None if colon_lines != len(pairs) else [])
    values: list[int] = []
    shape = []
    for line, name, colon, rest, _ in kept:
        value = _number(rest)
        if colon and value.isdigit():
            values.append(int(value))
            shape.append(name)
        else:
            values.append(0)
            shape.append(line)
    key = (parser, tuple(shape))
    known = _SHAPES.get(key, False)
    if known is False:
        known = _learn_shape(parser, kept, wanted)
        if len(_SHAPES) < MAX_SHAPES:
            _SHAPES[key] = known
    if known is None:  # not explained by the markers: the parser reads the kept lines whole
        return [(s.entity, s.metric, s.priority, s.value, s.text)
                for s in parsers.parse(parser, "".join(line + "\n" for line, *_ in kept)) if s.metric in wanted], None
    out = [(entity, metric, priority, float(values[index]) if index is not None else None, fixed)
           for entity, metric, priority, index, fixed in known]
    # the plan, where every line with a colon is one of the expression's pairs, in order (else none): each counter
    # read from its pair, each state kept as long as every kept line that is not a number reads as it did
    if colon_lines != len(pairs) or any(pos is None or pairs[pos][0].strip() != name
                                        for _, name, _, _, pos in kept):
        return out, None
    plan: list = [("check", pos, pairs[pos][1]) for _, _, _, rest, pos in kept if not _number(rest).isdigit()]
    for item, (_, _, _, index, _) in zip(out, known):
        plan.append(("count", *item[:3], kept[index][4]) if index is not None else ("state", item))
    return out, plan


def _learn(parser: str, name: str, line: str, wanted) -> bool:
    try:
        samples = parsers.parse(parser, line + "\n")
    except ParseError:
        return True  # the parser refuses the line: the whole output is refused, as without the filter
    keep = any(s.metric in wanted for s in samples)
    if len(_KEEP) < MAX_NAMES:
        _KEEP[(parser, name)] = keep
    return keep


def _learn_shape(parser: str, kept: list[tuple], wanted) -> list | None:
    """The shape's samples, each counter pointing at its line (module docstring); None when the markers do not
    explain them."""
    template, marker_of = [], {}
    for index, (line, _name, colon, rest, _) in enumerate(kept):
        value = _number(rest)
        if colon and value.isdigit():
            marker = index + 1
            marker_of[marker] = index
            head = line[: len(line) - len(rest)]
            template.append(head + rest.replace(value, str(marker), 1))
        else:
            template.append(line)
    try:
        samples = parsers.parse(parser, "".join(t + "\n" for t in template))
    except ParseError:
        return None
    out = []
    for s in samples:
        if s.metric not in wanted:
            continue
        if isinstance(s.value, (int, float)) and not isinstance(s.value, bool):
            index = marker_of.get(s.value) if float(s.value).is_integer() else None
            if index is None:
                return None
            out.append((s.entity, s.metric, s.priority, index, None))
        else:
            out.append((s.entity, s.metric, s.priority, None, s.text))
    return out
