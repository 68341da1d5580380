"""Shared reading of NVIDIA Cumulus Linux NVUE (`nv show ...`) outputs: noise, tables, trees, units, JSON.

NVUE prints three shapes (as in the command examples of NVIDIA's Cumulus Linux 5.x user guide):
- tables: a header row, a dashes row (one run of `-` per column), then rows; values left-aligned, columns
  separated by two or more spaces, often with trailing spaces;
- trees: `operational  applied  [description|pending]` columns where child keys are indented two spaces per level;
- sectioned outputs: a title line underlined with `=`, then a 4-space-indented table (or `No Data`).
With `-o json` the same object is printed as JSON (keys are the hyphenated names of the table form).

The two table views most counter commands share, and the leaves of trees, are `_cumulus_views`. No I/O here, as in
the parsers themselves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers import _common
from rdmatool.parsers._common import cli_lines, tool_error_message
from rdmatool.parsers._samples import NA, counter, gauge, tool_error

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
# The docs' truncation marker.
_ELLIPSIS = re.compile(r"^\s*\.\.\.\s*\Z")
_DASHES = re.compile(r"^-+(?:\s+-+)*$")
_UNDERLINE = re.compile(r"^=+$")
_BYTES = re.compile(r"^(\d+(?:\.\d+)?)\s*(bytes|b|kb|mb|gb|tb|kib|mib|gib|tib)$", re.IGNORECASE)
# NVUE renders sizes with binary multiples: the default ECN threshold of 150000 bytes prints as `146.48 KB`.
_UNIT = {"bytes": 1, "b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3, "tb": 1024**4}


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


def read_output(text: str) -> Output:
    """Drop noise (blank lines, `# ...` provenance comments, echoed prompts, the docs' `...` truncation marker);
    stop at the first tool-failure line (the lines before it are partial output, kept)."""
    kept: list[Line] = []
    for line_no, line, message in cli_lines(text, tool_failure, _ELLIPSIS, _PROMPT):
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
# Every reader takes `(name, line_no, line, raw)`, raw being a table cell or a JSON value, as the shared ones do.


def fail(name: str, where: Line, message: str) -> ParseError:
    return ParseError(name, where[0], where[1], message)


# The shared readers in NVUE's wording of a value they cannot read (`expected a count, got '1.5'`); a number may
# carry a `%` (`50%` of a pool).
count = partial(counter, expected="a count")
amount = partial(gauge, expected="a number", suffix="%")


def byte_size(name: str, line_no: int, line: str, raw: object) -> int | None:
    """`0 Bytes`, `146.48 KB`, `92824.38 GB` or a plain number of bytes; None for `n/a` and `inf` (unbounded).

    Human-formatted sizes carry two decimals, so the byte count is the nearest integer of the rounded display.
    """
    if isinstance(raw, bool):
        raise ParseError(name, line_no, line, f"expected a size, got {raw!r}")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw == raw and abs(raw) < 2**63:
        return round(raw)
    if isinstance(raw, str):
        s = raw.strip().replace(",", "")
        if s.lower() in NA or s.lower() == "inf":
            return None
        if re.fullmatch(r"\d+", s):
            return int(s)
        match = _BYTES.match(s)
        if match:
            unit = match.group(2).lower().replace("i", "")
            return round(float(match.group(1)) * _UNIT[unit])
    raise ParseError(name, line_no, line, f"expected a size in bytes, got {raw!r}")


def flag(name: str, line_no: int, line: str, raw: object) -> int | None:
    """`yes`/`enabled`/`on`/true -> 1, `no`/`disabled`/`off`/false -> 0."""
    if isinstance(raw, bool):
        return int(raw)
    s = str(raw).strip().lower() if isinstance(raw, (str, int)) else None
    if s in ("yes", "enabled", "enable", "on", "true", "1"):
        return 1
    if s in ("no", "disabled", "disable", "off", "false", "0"):
        return 0
    if s in NA:
        return None
    raise ParseError(name, line_no, line, f"expected yes/no, got {raw!r}")


def int_list(name: str, line_no: int, line: str, raw: object) -> list[int]:
    """`0,3`, `0-2,4`, `3`, `-` (none) or a JSON list/number of priorities or traffic classes (0-15)."""
    if isinstance(raw, bool):
        raise ParseError(name, line_no, line, f"expected a list of numbers, got {raw!r}")
    if isinstance(raw, int):
        items = [str(raw)]
    elif isinstance(raw, list):
        items = [str(item) for item in raw if not isinstance(item, bool)]
        if len(items) != len(raw):
            raise ParseError(name, line_no, line, f"expected a list of numbers, got {raw!r}")
    elif isinstance(raw, str):
        if raw.strip().lower() in NA:
            return []
        items = [part.strip() for part in re.split(r"[,\s]+", raw.strip()) if part.strip()]
    else:
        raise ParseError(name, line_no, line, f"expected a list of numbers, got {raw!r}")
    values: list[int] = []
    for item in items:
        bounds = re.fullmatch(r"(\d{1,2})(?:-(\d{1,2}))?", item)
        if not bounds:
            raise ParseError(name, line_no, line, f"expected a list of numbers, got {raw!r}")
        low, high = int(bounds.group(1)), int(bounds.group(2) or bounds.group(1))
        if high < low:
            raise ParseError(name, line_no, line, f"bad range {item!r}")
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


def only_table(
    name: str, body: list[Line], header: Iterable[str], trailing: str = "unexpected section after the table"
) -> Table:
    """The one table that fills `body`, with exactly the columns `header`; anything after it fails `trailing`."""
    table, end = read_table(name, body)
    if end != len(body):
        raise fail(name, body[end], trailing)
    check_header(name, table, body[0], header)
    return table


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
    document = _common.load_json(name, output.lines)

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
