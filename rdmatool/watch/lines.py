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

The samples are the parser's on the whole output, except that a malformed line of a counter the watch does not keep
no longer costs the output's other counters (the watch never reads it).
"""

from __future__ import annotations

from rdmatool import parsers
from rdmatool.errors import ParseError

MAX_NAMES = 50_000  # names learnt (a fleet prints a few hundred); past it, lines are kept unlearnt
MAX_SHAPES = 10_000
Item = tuple[str, str, "int | None", "float | None", "str | None"]  # entity, metric, priority, value, text

_KEEP: dict[tuple[str, str], bool] = {}
_SHAPES: dict[tuple, list | None] = {}  # (parser, shape) -> [(entity, metric, priority, line or None, text)]


def clear() -> None:
    _KEEP.clear()
    _SHAPES.clear()


def items(parser: str, text: str, wanted) -> list[Item]:
    """The samples of the output whose metric is in `wanted`, as items; ParseError as the parser raises it."""
    kept = []
    for line in text.splitlines():
        name, colon, rest = line.partition(":")
        name = name.strip()
        keep = _KEEP.get((parser, name))
        if keep is None:
            keep = _learn(parser, name, line, wanted)
        if keep:
            kept.append((line, name, colon, rest))
    if not kept:
        return []
    values: list[int] = []
    shape = []
    for line, name, colon, rest in kept:
        value = rest.strip()
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
                for s in parsers.parse(parser, "".join(line + "\n" for line, *_ in kept)) if s.metric in wanted]
    return [(entity, metric, priority, float(values[index]) if index is not None else None, fixed)
            for entity, metric, priority, index, fixed in known]


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
    for index, (line, _name, colon, rest) in enumerate(kept):
        value = rest.strip()
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
