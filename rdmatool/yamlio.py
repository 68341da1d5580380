"""YAML reading that remembers where each mapping started, so errors can say `FILE:LINE: message`.

Playbooks and inventories are small documents; a YAML file that is not one must fail with one line, not take the
machine down. YAML aliases make a few hundred bytes stand for billions of nodes ("billion laughs"), and an alias to
its own ancestor makes a structure without end. So the composed node graph is checked before any Python object is
built: one walk over the distinct nodes (an alias is the same node object reached twice, so the walk memoises each
node's expanded size) refuses a document whose aliases add more than MAX_ALIAS_NODES nodes, an alias cycle, or a
nesting deeper than MAX_DEPTH.
"""

from __future__ import annotations

import reprlib
from pathlib import Path
from typing import Any

import yaml

MAX_ALIAS_NODES = 10_000  # nodes that aliases add beyond the file's own: a shared anchor or two, never more
MAX_DEPTH = 200  # playbooks and inventories nest a handful of levels; Python's recursion limit is far above that
MAX_QUOTE = 200  # characters of a value quoted in an error message
MAX_FILE_BYTES = 64 * 1024 * 1024  # a playbook or inventory is kilobytes; this only stops a runaway read


class LineDict(dict):
    """A dict from YAML that knows the 1-based line its mapping started on."""

    line: int = 0


# libyaml's C scanner when PyYAML was built with it (eight times faster on the shipped playbooks, read by every
# diagnose); the same safe constructors and the same marks either way.
_SAFE_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlError(ValueError):
    """Unreadable YAML; the message is already `FILE:LINE: problem`."""


class _LineLoader(_SAFE_BASE):  # type: ignore[misc, valid-type]
    def get_single_data(self) -> Any:
        # Compose, check the graph, and only then construct: the bound must hold before objects are made.
        node = self.get_single_node()
        if node is None:
            return None
        _check_graph(node)
        return self.construct_document(node)


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    mapping = LineDict(_SAFE_BASE.construct_mapping(loader, node, deep=True))
    mapping.line = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


class _GraphRefused(Exception):
    def __init__(self, node: yaml.Node, problem: str) -> None:
        super().__init__(problem)
        self.line = node.start_mark.line + 1 if node.start_mark is not None else 0
        self.problem = problem


def _children(node: yaml.Node) -> list:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def _check_graph(root: yaml.Node) -> None:
    """Raise _GraphRefused when the document's aliases expand too far, loop, or it nests too deep.

    Iterative depth-first walk; each distinct node is expanded once (memoised by id), so the cost is linear in the
    file whatever its aliases stand for. A node met again while it is still open is an alias to an ancestor.
    """
    size: dict[int, int] = {}  # node id → expanded node count of its subtree
    open_ids = {id(root)}
    distinct = 0
    # (node, its children, index of the next child to visit)
    stack: list[list] = [[root, _children(root), 0]]
    while stack:
        frame = stack[-1]
        node, children, next_child = frame
        if next_child < len(children):
            frame[2] = next_child + 1
            child = children[next_child]
            key = id(child)
            if key in size:
                continue
            if child.__class__ is yaml.ScalarNode:  # most nodes: a leaf, settled without a stack frame
                size[key] = 1
                distinct += 1
                continue
            if key in open_ids:
                raise _GraphRefused(child, "an alias refers to its own enclosing node (a structure without end)")
            if len(stack) >= MAX_DEPTH:
                raise _GraphRefused(child, f"nested deeper than {MAX_DEPTH} levels")
            open_ids.add(key)
            stack.append([child, _children(child), 0])
            continue
        stack.pop()
        open_ids.discard(id(node))
        distinct += 1
        total = 1
        for c in children:
            total += size[id(c)]
        size[id(node)] = total
        if total - distinct > MAX_ALIAS_NODES:
            raise _GraphRefused(node, f"aliases expand to more than {MAX_ALIAS_NODES} extra nodes (refused)")


def load(path: Path) -> Any:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise YamlError(f"{path}: no such file") from None
    except OSError as exc:
        raise YamlError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise YamlError(f"{path}: larger than {MAX_FILE_BYTES} bytes; not a playbook or inventory")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlError(f"{path}: cannot read: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return loads(text, str(path))


def loads(text: str, label: str) -> Any:
    try:
        return yaml.load(text, Loader=_LineLoader)  # noqa: S506 - a (C)SafeLoader subclass
    except _GraphRefused as exc:
        where = f"{label}:{exc.line}" if exc.line else label
        raise YamlError(f"{where}: invalid YAML: {exc.problem}") from None
    except RecursionError:
        raise YamlError(f"{label}: invalid YAML: nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{label}:{mark.line + 1}" if mark else label
        problem = getattr(exc, "problem", None) or (str(exc).splitlines() or ["unreadable"])[0]
        raise YamlError(f"{where}: invalid YAML: {shorten(problem)}") from None


def line_of(obj: Any) -> int:
    return getattr(obj, "line", 0)


def shorten(text: str, limit: int = MAX_QUOTE) -> str:
    """One line of at most `limit` characters (an ellipsis marks a cut), for messages that quote input."""
    text = str(text)
    if "\n" in text or "\r" in text:
        text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Brief(reprlib.Repr):
    """repr() that stops early: a huge or deeply nested entry is never rendered whole just to be cut."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxdict, self.maxlist, self.maxtuple, self.maxset = 3, 8, 8, 8, 8
        self.maxstring = self.maxother = self.maxlong = MAX_QUOTE

    def repr_LineDict(self, obj: LineDict, level: int) -> str:  # noqa: N802 - reprlib's naming scheme
        return self.repr_dict(obj, level)


_BRIEF = _Brief()


def quote(value: Any, limit: int = MAX_QUOTE) -> str:
    """`repr(value)`, bounded: an entry quoted in an error message stays one readable line of <= `limit` chars."""
    return shorten(_BRIEF.repr(value), limit)
