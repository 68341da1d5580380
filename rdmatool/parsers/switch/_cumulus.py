"""Shared reading of NVIDIA Cumulus Linux NVUE (`nv show ...`) outputs: noise, tables, trees, units, JSON.

NVUE prints three shapes (see /work/shared/reference/switch-formats.md §2):
- tables: a header row, a dashes row (one run of `-` per column), then rows; values left-aligned, columns
  separated by two or more spaces, often with trailing spaces;
- trees: `operational  applied  [description|pending]` columns where child keys are indented two spaces per level;
- sectioned outputs: a title line underlined with `=`, then a 4-space-indented table (or `No Data`).
With `-o json` the same object is printed as JSON (keys are the hyphenated names of the table form).

No I/O here, as in the parsers themselves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines, number, tool_error, tool_error_message

# The collector stores one output per switch port and the NVUE table forms do not name the interface: per-port
# views emit this placeholder and the analysis substitutes the real port name (`swp1`).
PORT = "port"

Line = tuple[int, str]  # (1-based line number, text)

# `cumulus@leaf01:mgmt:~$ nv show ...` - a prompt echoed into a capture (doc examples, netmiko sessions).
_PROMPT = re.compile(r"^\s*[\w.-]+@[\w.-]+(?::[\w~/.-]*)*\s*[$#]\s")
# NVUE's own failure lines (besides the shared patterns): `Error: The requested item does not exist.` and the
# nvued daemon being unreachable.
_NVUE_ERRORS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (r"^error:\s", r"^invalid command", r"unable to connect to", r"nvued? (?:is )?not running")
)
_DASHES = re.compile(r"^-+(?:\s+-+)*$")
_UNDERLINE = re.compile(r"^=+$")
_BYTES = re.compile(r"^(\d+(?:\.\d+)?)\s*(bytes|b|kb|mb|gb|tb|kib|mib|gib|tib)$", re.IGNORECASE)
# NVUE renders sizes with binary multiples: the default ECN threshold of 150000 bytes prints as `146.48 KB`.
_UNIT = {"bytes": 1, "b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3, "tb": 1024**4}
_NA = {"n/a", "na", "-", "", "none", "null"}


@dataclass(frozen=True)
class Output:
    """The significant lines of one NVUE capture and, when the tool reported its own failure, that message."""

    lines: list[Line]
    error: str | None = None
    error_line_no: int | None = None


def tool_failure(line: str) -> str | None:
    """The line when it is a tool's own failure message (shared patterns plus NVUE's own), else None."""
    found = tool_error_message(line)
    if found:
        return found
    stripped = line.strip()
    return stripped if any(p.search(stripped) for p in _NVUE_ERRORS) else None


def is_noise(line: str) -> bool:
    """Blank lines, `# ...` provenance comments, echoed prompts and the docs' `...` truncation marker."""
    stripped = line.strip()
    return not stripped or stripped.startswith("#") or stripped == "..." or bool(_PROMPT.match(line))


def read_output(text: str) -> Output:
    """Drop noise; stop at the first tool-failure line (the lines before it are partial output, kept)."""
    kept: list[Line] = []
    for line_no, line in lines(text):
        if is_noise(line):
            continue
        message = tool_failure(line)
        if message:
            return Output(kept, message, line_no)
        kept.append((line_no, line))
    return Output(kept)


def with_tool_error(samples: list[Sample], output: Output, entity: str) -> list[Sample]:
    if output.error is not None:
        samples.append(tool_error(entity, output.error))
    return samples


def is_json(output: Output) -> bool:
    return bool(output.lines) and output.lines[0][1].lstrip()[:1] in ("{", "[")


# --- values ---------------------------------------------------------------------------------------------------


def fail(name: str, where: Line, message: str) -> ParseError:
    return ParseError(name, where[0], where[1], message)


def counter(name: str, where: Line, raw: object) -> int | None:
    """A packet/frame count as printed (`1,234`, `n/a`) or a JSON number; None for N/A."""
    if isinstance(raw, bool):
        raise fail(name, where, f"expected a count, got {raw!r}")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str):
        if raw.strip().lower() in _NA:
            return None
        value = number(raw)
        if isinstance(value, int):
            return value
    raise fail(name, where, f"expected a count, got {raw!r}")


def byte_size(name: str, where: Line, raw: object) -> int | None:
    """`0 Bytes`, `146.48 KB`, `92824.38 GB` or a plain number of bytes; None for `n/a` and `inf` (unbounded).

    Human-formatted sizes carry two decimals, so the byte count is the nearest integer of the rounded display.
    """
    if isinstance(raw, bool):
        raise fail(name, where, f"expected a size, got {raw!r}")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw == raw and abs(raw) < 2**63:
        return round(raw)
    if isinstance(raw, str):
        s = raw.strip().replace(",", "")
        if s.lower() in _NA or s.lower() == "inf":
            return None
        if re.fullmatch(r"\d+", s):
            return int(s)
        match = _BYTES.match(s)
        if match:
            unit = match.group(2).lower().replace("i", "")
            return round(float(match.group(1)) * _UNIT[unit])
    raise fail(name, where, f"expected a size in bytes, got {raw!r}")


def gauge(name: str, where: Line, raw: object) -> int | float | None:
    if isinstance(raw, bool):
        raise fail(name, where, f"expected a number, got {raw!r}")
    if isinstance(raw, (int, float)):
        return raw if raw == raw else None
    if isinstance(raw, str):
        if raw.strip().lower() in _NA:
            return None
        value = number(raw.strip().rstrip("%"))
        if value is not None:
            return value
    raise fail(name, where, f"expected a number, got {raw!r}")


def flag(name: str, where: Line, raw: object) -> int | None:
    """`yes`/`enabled`/`on`/true -> 1, `no`/`disabled`/`off`/false -> 0."""
    if isinstance(raw, bool):
        return int(raw)
    s = str(raw).strip().lower() if isinstance(raw, (str, int)) else None
    if s in ("yes", "enabled", "enable", "on", "true", "1"):
        return 1
    if s in ("no", "disabled", "disable", "off", "false", "0"):
        return 0
    if s in _NA:
        return None
    raise fail(name, where, f"expected yes/no, got {raw!r}")


def text_value(name: str, where: Line, raw: object) -> str | None:
    if isinstance(raw, (str, int, float)) and not isinstance(raw, bool):
        s = str(raw).strip()
        return None if s.lower() in _NA else s
    raise fail(name, where, f"expected text, got {raw!r}")


def int_list(name: str, where: Line, raw: object) -> list[int]:
    """`0,3`, `0-2,4`, `3`, `-` (none) or a JSON list/number of priorities or traffic classes (0-15)."""
    if isinstance(raw, bool):
        raise fail(name, where, f"expected a list of numbers, got {raw!r}")
    if isinstance(raw, int):
        items = [str(raw)]
    elif isinstance(raw, list):
        items = [str(item) for item in raw if not isinstance(item, bool)]
        if len(items) != len(raw):
            raise fail(name, where, f"expected a list of numbers, got {raw!r}")
    elif isinstance(raw, str):
        if raw.strip().lower() in _NA:
            return []
        items = [part.strip() for part in re.split(r"[,\s]+", raw.strip()) if part.strip()]
    else:
        raise fail(name, where, f"expected a list of numbers, got {raw!r}")
    values: list[int] = []
    for item in items:
        bounds = re.fullmatch(r"(\d{1,2})(?:-(\d{1,2}))?", item)
        if not bounds:
            raise fail(name, where, f"expected a list of numbers, got {raw!r}")
        low, high = int(bounds.group(1)), int(bounds.group(2) or bounds.group(1))
        if high < low:
            raise fail(name, where, f"bad range {item!r}")
        values.extend(range(low, high + 1))
    return values


# --- tables -----------------------------------------------------------------------------------------------------


def _expand_indent(line: str, tab: int) -> str:
    body = line.lstrip(" \t")
    indent = line[: len(line) - len(body)]
    return indent.replace("\t", " " * tab) + body.replace("\t", "  ")


def _spans(dashes: str) -> list[int]:
    return [m.start() for m in re.finditer(r"-+", dashes)]


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[tuple[Line, list[str]]]


def _cells(name: str, where: Line, starts: list[int]) -> list[str]:
    line = _expand_indent(where[1], 4).rstrip()
    tokens = re.split(r"\s{2,}", line.strip())
    if len(tokens) == len(starts) and not line[: starts[0]].strip():
        return tokens
    if line[: starts[0]].strip():
        raise fail(name, where, "row starts left of the first column")
    cells = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(line)
        if start > 0 and start < len(line) and line[start - 1] != " " and line[start] != " ":
            raise fail(name, where, "value overflows its column")
        cells.append(line[start:end].strip())
    return cells


def read_table(name: str, body: list[Line], pos: int = 0) -> tuple[Table, int]:
    """A header row and a dashes row at body[pos], then rows up to the end or the next section title."""
    if pos + 1 >= len(body):
        raise fail(name, body[pos] if pos < len(body) else (0, ""), "expected a table header and a dashes row")
    header_line, dashes_line = body[pos], body[pos + 1]
    dashes = _expand_indent(dashes_line[1], 4).rstrip()
    if not _DASHES.match(dashes.strip()):
        raise fail(name, dashes_line, "expected the dashes row under a table header")
    starts = _spans(dashes)
    header = _cells(name, header_line, starts)
    rows: list[tuple[Line, list[str]]] = []
    pos += 2
    while pos < len(body) and not is_section_title(body, pos):
        rows.append((body[pos], _cells(name, body[pos], starts)))
        pos += 1
    return Table(header, rows), pos


def check_header(name: str, table: Table, where: Line, expected: Iterable[str]) -> None:
    want = list(expected)
    if table.header != want:
        raise fail(name, where, f"unexpected table columns {table.header!r}, expected {want!r}")


def is_section_title(body: list[Line], pos: int) -> bool:
    return pos + 1 < len(body) and bool(_UNDERLINE.match(body[pos + 1][1].strip())) and bool(body[pos][1].strip())


@dataclass(frozen=True)
class Section:
    title: str | None  # None for what precedes the first `====` title
    title_line: Line | None
    body: list[Line]


def split_sections(lines_: list[Line]) -> list[Section]:
    sections: list[Section] = []
    title: str | None = None
    title_line: Line | None = None
    body: list[Line] = []
    pos = 0
    while pos < len(lines_):
        if is_section_title(lines_, pos):
            if title is not None or body:
                sections.append(Section(title, title_line, body))
            title_line = lines_[pos]
            title, body = lines_[pos][1].strip(), []
            pos += 2
            continue
        body.append(lines_[pos])
        pos += 1
    if title is not None or body:
        sections.append(Section(title, title_line, body))
    return sections


# --- trees ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TreeEntry:
    path: str  # dotted: `congestion-control.min-threshold`
    operational: str
    applied: str
    where: Line


def read_tree(name: str, body: list[Line]) -> list[TreeEntry]:
    """An `operational  applied  ...` tree (header, dashes, indented keys) that fills the whole body."""
    if len(body) < 2:
        raise fail(name, body[0] if body else (0, ""), "expected an operational/applied tree")
    header_line, dashes_line = body[0], body[1]
    if not re.match(r"^\s+operational\s+applied\b", header_line[1]):
        raise fail(name, header_line, "expected the `operational  applied` header")
    dashes = dashes_line[1].replace("\t", "  ").rstrip()
    if not _DASHES.match(dashes.strip()):
        raise fail(name, dashes_line, "expected the dashes row under the tree header")
    starts = _spans(dashes)
    if len(starts) < 3:
        raise fail(name, dashes_line, "expected at least key, operational and applied columns")
    entries: list[TreeEntry] = []
    stack: list[str] = []
    for where in body[2:]:
        line = _expand_indent(where[1], 2).rstrip()
        indent = len(line) - len(line.lstrip(" "))
        if indent % 2 or indent // 2 > len(stack):
            raise fail(name, where, "unexpected indentation")
        key_end = line.find("  ", indent)
        key = line[indent:key_end if key_end != -1 else len(line)].strip()
        if not re.fullmatch(r"[\w][\w.-]*", key) or (key_end != -1 and key_end > starts[1]):
            raise fail(name, where, "expected a key")
        if len(line) > starts[1] and line[starts[1] - 1] != " ":
            raise fail(name, where, "value overflows its column")
        applied_end = starts[3] if len(starts) > 3 else len(line)
        operational = line[starts[1] : starts[2]].strip()
        applied = line[starts[2] : applied_end].strip()
        del stack[indent // 2 :]
        stack.append(key)
        entries.append(TreeEntry(".".join(stack), operational, applied, where))
    return entries


# --- JSON ---------------------------------------------------------------------------------------------------------


def load_json(name: str, output: Output) -> tuple[object, Callable[[str], Line]]:
    """The JSON document of a `-o json` capture, and a function locating a key's line for error messages."""
    first = output.lines[0][0]
    by_number = dict(output.lines)
    text = "\n".join(by_number.get(n, "") for n in range(first, output.lines[-1][0] + 1))
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        line_no = first + exc.lineno - 1
        raise ParseError(name, line_no, by_number.get(line_no, ""), f"invalid JSON: {exc.msg}") from None
    except (RecursionError, ValueError) as exc:
        raise ParseError(name, first, output.lines[0][1], f"invalid JSON: {exc}") from None

    def locate(key: str) -> Line:
        quoted = json.dumps(key)
        for where in output.lines:
            if quoted in where[1]:
                return where
        return output.lines[0]

    return document, locate


def json_object(name: str, where: Line, value: object, what: str) -> dict:
    if not isinstance(value, dict):
        raise fail(name, where, f"expected a JSON object for {what}")
    return value


def flatten(name: str, document: dict, locate: Callable[[str], Line], prefix: str = "") -> list[tuple[str, object]]:
    """Leaves of a nested JSON object as (dotted path, value), in document order."""
    leaves: list[tuple[str, object]] = []
    for key, value in document.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            leaves.extend(flatten(name, value, locate, path + "."))
        elif isinstance(value, list):
            raise fail(name, locate(str(key)), f"unexpected list under {path!r}")
        else:
            leaves.append((path, value))
    return leaves


# --- the two table views most counter commands share -----------------------------------------------------------

Reader = Callable[[str, Line, object], int | float | None]


@dataclass(frozen=True)
class Column:
    metric: str
    read: Reader


def indexed_table(name: str, body: list[Line], index: str, columns: dict[str, Column]) -> list[Sample]:
    """`<index>  <col>...` rows (index = switch priority, traffic class or priority group) -> per-priority samples."""
    table, end = read_table(name, body)
    if end != len(body):
        raise fail(name, body[end], "unexpected section after the table")
    check_header(name, table, body[0], [index, *columns])
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
        value = spec.read(name, where, row[column]) if column in row else None
        if value is not None:  # `n/a` cells are skipped, as documented by the parsers
            samples.append(Sample(PORT, spec.metric, value, priority=priority, raw_key=column))
    return samples


# Receive/Transmit counter tables: the stand-alone commands print `ECN Marked Packets`, the combined
# `nv show interface <if> counters qos` prints `ecn-marked-packets`; both normalise to the hyphenated form.
def counter_key(label: str) -> str:
    return re.sub(r"\s+", "-", label.strip().lower())


Direction = tuple[str | None, str | None]  # (metric for Receive, metric for Transmit); None: always n/a


def direction_table(name: str, body: list[Line], counters: dict[str, Direction]) -> list[Sample]:
    table, end = read_table(name, body)
    if end != len(body):
        raise fail(name, body[end], "unexpected section after the table")
    check_header(name, table, body[0], ["Counter", "Receive", "Transmit"])
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
        value = counter(name, where, cells[direction])
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
