"""YAML reading that remembers where each mapping started, so errors can say `FILE:LINE: message`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class LineDict(dict):
    """A dict from YAML that knows the 1-based line its mapping started on."""

    line: int = 0


# libyaml's C scanner when PyYAML was built with it (eight times faster on the shipped playbooks, read by every
# diagnose); the same safe constructors and the same marks either way.
_SAFE_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_SAFE_BASE):  # type: ignore[misc, valid-type]
    pass


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    mapping = LineDict(_SAFE_BASE.construct_mapping(loader, node, deep=True))
    mapping.line = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


class YamlError(ValueError):
    """Unreadable YAML; the message is already `FILE:LINE: problem`."""


def load(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise YamlError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise YamlError(f"{path}: cannot read: {exc}") from None
    return loads(text, str(path))


def loads(text: str, label: str) -> Any:
    try:
        return yaml.load(text, Loader=_LineLoader)  # noqa: S506 - a (C)SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{label}:{mark.line + 1}" if mark else label
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlError(f"{where}: invalid YAML: {problem}") from None


def line_of(obj: Any) -> int:
    return getattr(obj, "line", 0)
