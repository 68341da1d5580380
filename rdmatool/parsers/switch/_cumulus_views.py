"""The views most NVUE counter commands share, on top of the NVUE shapes of `_cumulus`: an indexed table (one row
per switch priority, traffic class or priority group), a Receive/Transmit table, and the leaves of an
operational/applied tree; each with its `-o json` form. Per-port views emit the `PORT` placeholder entity.

No I/O here, as in the parsers themselves.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rdmatool.model import Sample
from rdmatool.parsers.switch._cumulus import (
    PORT,
    Line,
    count,
    fail,
    flatten,
    is_json,
    json_object,
    load_json,
    only_table,
    read_output,
    read_tree,
    with_tool_error,
)

# --- the two table views most counter commands share -----------------------------------------------------------

Reader = Callable[[str, int, str, object], int | float | None]  # (name, line_no, line, raw), as in `_samples`


@dataclass(frozen=True)
class Column:
    metric: str
    read: Reader


def indexed_table(name: str, body: list[Line], index: str, columns: dict[str, Column]) -> list[Sample]:
    """`<index>  <col>...` rows (index = switch priority, traffic class or priority group) -> per-priority samples."""
    table = only_table(name, body, [index, *columns])
    samples: list[Sample] = []
    for where, cells in table.rows:
        samples.extend(_indexed_row(name, where, cells[0], dict(zip(columns, cells[1:], strict=True)), columns))
    return samples


def indexed_json(name: str, document: object, locate: Callable[[str], Line], columns: dict[str, Column]) -> list[Sample]:
    """`{"<index>": {"<col>": value, ...}, ...}` - the `-o json` form of an indexed table."""
    top = json_object(name, locate(""), document, "the table")
    samples: list[Sample] = []
    for key, row in top.items():
        where = locate(str(key))
        row = json_object(name, where, row, f"row {key!r}")
        unknown = [col for col in row if col not in columns]
        if unknown:
            raise fail(name, locate(str(unknown[0])), f"unknown field {unknown[0]!r}")
        samples.extend(_indexed_row(name, where, key, row, columns))
    return samples


def _indexed_row(name: str, where: Line, index: str, row: dict, columns: dict[str, Column]) -> list[Sample]:
    if not re.fullmatch(r"\d{1,2}", str(index).strip()):
        raise fail(name, where, f"expected a priority/queue index, got {index!r}")
    priority = int(str(index).strip())
    samples = []
    for column, spec in columns.items():
        value = spec.read(name, where[0], where[1], row[column]) if column in row else None
        if value is not None:  # `n/a` cells are skipped, as documented by the parsers
            samples.append(Sample(PORT, spec.metric, value, priority=priority, raw_key=column))
    return samples


# Receive/Transmit counter tables: the stand-alone commands print `ECN Marked Packets`, the combined
# `nv show interface <if> counters qos` prints `ecn-marked-packets`; both normalise to the hyphenated form.
def counter_key(label: str) -> str:
    return re.sub(r"\s+", "-", label.strip().lower())


Direction = tuple[str | None, str | None]  # (metric for Receive, metric for Transmit); None: always n/a
# A direction that is counted and read (a number is checked) but has no canonical metric of its own.
NOT_EMITTED = "-"


def direction_table(name: str, body: list[Line], counters: dict[str, Direction]) -> list[Sample]:
    table = only_table(name, body, ["Counter", "Receive", "Transmit"])
    samples: list[Sample] = []
    for where, (label, receive, transmit) in table.rows:
        samples.extend(_direction_row(name, where, label, {"rx": receive, "tx": transmit}, counters))
    return samples


def direction_json(name: str, document: object, locate: Callable[[str], Line], counters: dict[str, Direction]) -> list[Sample]:
    """`{"rx-stats": {"<counter>": n}, "tx-stats": {...}}` - the `-o json` form of a Receive/Transmit table."""
    top = json_object(name, locate(""), document, "the counters")
    by_label: dict[str, dict[str, object]] = {}
    where_of: dict[str, Line] = {}
    for direction_key, values in top.items():
        direction = {"rx-stats": "rx", "tx-stats": "tx"}.get(direction_key)
        if direction is None:
            raise fail(name, locate(str(direction_key)), f"unknown field {direction_key!r}")
        for label, value in json_object(name, locate(direction_key), values, direction_key).items():
            by_label.setdefault(label, {})[direction] = value
            where_of.setdefault(label, locate(label))
    samples: list[Sample] = []
    for label, cells in by_label.items():
        samples.extend(_direction_row(name, where_of[label], label, cells, counters))
    return samples


def _direction_row(name: str, where: Line, label: str, cells: dict[str, object], counters: dict[str, Direction]) -> list[Sample]:
    key = counter_key(label)
    if key not in counters:
        raise fail(name, where, f"unknown counter {label!r}")
    samples = []
    for direction, metric in zip(("rx", "tx"), counters[key], strict=True):
        if direction not in cells:
            continue
        value = count(name, where[0], where[1], cells[direction])
        if metric == NOT_EMITTED:
            continue
        if metric is None:
            # a direction the ASIC does not count is printed `n/a`; a number there is a format we do not know
            if value is not None:
                raise fail(name, where, f"no canonical metric for {direction} {label!r}")
            continue
        if value is not None:  # `n/a`: not counted in this direction - skipped, as documented by the parsers
            samples.append(Sample(PORT, metric, value, raw_key=label.strip()))
    return samples


# --- trees and their JSON objects as one list of leaves --------------------------------------------------------

Leaf = tuple[str, object, Line]  # (dotted path, value, where)


def tree_leaves(name: str, body: list[Line], groups: set[str]) -> list[Leaf]:
    """Tree entries with a value; the operational column wins, the applied one fills in (`enable  -  on`).

    A key without any value must be a known group (`pfc`, `rx-stats.rx-pfc-stats` ...).
    """
    leaves: list[Leaf] = []
    for entry in read_tree(name, body):
        value = entry.operational or entry.applied
        if not value:
            if entry.path not in groups:
                raise fail(name, entry.where, f"unknown group {entry.path!r}")
            continue
        leaves.append((entry.path, value, entry.where))
    return leaves


def json_leaves(name: str, document: object, locate: Callable[[str], Line]) -> list[Leaf]:
    top = json_object(name, locate(""), document, "the output")
    return [(path, value, locate(path.rsplit(".", 1)[-1])) for path, value in flatten(name, top, locate)]


def groups_of(paths: Iterable[str]) -> set[str]:
    """Every proper dotted prefix of the given paths: the tree keys that only group others."""
    found: set[str] = set()
    for path in paths:
        parts = path.split(".")
        found.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return found


def parse_port_view(name: str, text: str, table, from_json) -> list[Sample]:
    """The shape every per-port counter view shares: empty output, the `-o json` form, or the table; then the tool's
    own failure line if any. `table(name, lines)` and `from_json(name, document, locate)` read the two forms."""
    output = read_output(text)
    if not output.lines:
        samples: list[Sample] = []
    elif is_json(output):
        document, locate = load_json(name, output)
        samples = from_json(name, document, locate)
    else:
        samples = table(name, output.lines)
    return with_tool_error(samples, output, PORT)
