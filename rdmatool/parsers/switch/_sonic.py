"""Shared reading of SONiC `show` output: python-tabulate "simple" tables and the noise around them.

Every sonic-utilities table is a header row, a dashes row (one run of `-` per column) and data rows. Cells are
found by trying, in order: runs of 2+ spaces (or a tab), single whitespace (a real capture where `137,407` abuts
the port name, and pastes whose whitespace was collapsed), and finally the column spans of the dashes row. A row
that none of these splits into exactly the header's column count is a ParseError.

No I/O here, as in the parsers themselves.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import Noise, lines, tool_error_message
from rdmatool.parsers._samples import HOST, tool_error

_DASHES = re.compile(r"^\s*-+(?:\s+-+)*\s*$")
_DASH_RUN = re.compile(r"-+")
# `admin@sonic:~$ show pfc counters`, `root@r-qa-sw-eth-2133:/home/admin# pfcstat`: pasted shell prompts.
PROMPT = re.compile(r"^\s*[\w.-]+@[\w.-]+:\S*[#$](?:\s+(?P<command>.*?))?\s*$")
# Printed by every counter command after `sonic-clear ...`: the values below are deltas since that time. Newer
# releases print it per port (`Ethernet0 Last cached time was 2024-05-02T10:11:12.123456`).
_LAST_CACHED = re.compile(r"^\s*(?:Ethernet\S*\s+)?Last cached time was \d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?\s*$")
# Multi-ASIC headers: queuestat `For namespace asic0:` (empty name on single-ASIC), pfc `Namespace asic0`.
_NAMESPACE = re.compile(r"^\s*(?:For namespace\s*[\w-]*\s*:|Namespace\s+[\w-]+)\s*$")
# Published docs truncate long tables with a lone `...`.
_ELLIPSIS = re.compile(r"^\s*(?:\.\.\.|…)\s*$")
# A hand-written `<----- note` after a row in a pasted capture (pfc_counters__6); never tool output.
_ANNOTATION = re.compile(r"\s+<-{2,}.*$")
# click reports bad arguments as `Error: ...`; that is the tool's own failure, so data, not a parse error.
_CLICK_ERROR = re.compile(r"^\s*Error:\s+\S")


@dataclass(frozen=True)
class Row:
    line_no: int
    line: str
    cells: tuple[str, ...]


@dataclass
class Table:
    header: Row
    rows: list[Row] = field(default_factory=list)


@dataclass(frozen=True)
class Loose:
    """A line outside any table that is not common noise: a title, a parser-specific line, or an error."""

    line_no: int
    line: str


def is_dashes(line: str) -> bool:
    return bool(_DASHES.match(line))


def is_common_noise(line: str) -> bool:
    """Lines every SONiC parser skips: blank, prompts, `Last cached time`, namespace headers, `...`."""
    return not line.strip() or noise_kind(line) is not None


def noise_kind(line: str) -> str | None:
    """The class of a recognised noise line (counted in `parse_skipped_lines`), None for anything else."""
    if PROMPT.match(line):
        return "prompt"
    if _LAST_CACHED.match(line):
        return "cached_time"  # the values are deltas since the counters were cleared: worth a note
    if _NAMESPACE.match(line):
        return "namespace"
    if _ELLIPSIS.match(line):
        return "ellipsis"
    return None


def strip_annotation(line: str) -> str:
    return _ANNOTATION.sub("", line)


def split_cells(
    line: str, spans: list[tuple[int, int]], allow_missing_trailing: bool = False
) -> tuple[str, ...] | None:
    """The cells of one table line, or None when no strategy yields exactly len(spans) cells."""
    wanted = len(spans)
    text = line.strip()
    if not text:
        return None
    for pattern in (r"\s{2,}|\t", r"\s+"):
        cells = re.split(pattern, text)
        if len(cells) == wanted:
            return tuple(cells)
    by_span = _split_by_spans(line.expandtabs(8), spans)
    if by_span is not None:
        return by_span
    if allow_missing_trailing:
        cells = re.split(r"\s{2,}|\t", text)
        if len(cells) < wanted:
            return tuple(cells) + ("",) * (wanted - len(cells))
    return None


def _split_by_spans(line: str, spans: list[tuple[int, int]]) -> tuple[str, ...] | None:
    """Give each whitespace-separated token to the column it overlaps most (or lies nearest to)."""
    columns: list[list[str]] = [[] for _ in spans]
    last = 0
    for token in re.finditer(r"\S+", line):
        start, end = token.span()
        best = max(
            range(len(spans)),
            key=lambda i: (_overlap(spans[i], start, end), -_distance(spans[i], start, end)),
        )
        if best < last:  # tokens must fill columns left to right
            return None
        last = best
        columns[best].append(token.group())
    if any(not tokens for tokens in columns):
        return None
    return tuple(" ".join(tokens) for tokens in columns)


def _overlap(span: tuple[int, int], start: int, end: int) -> int:
    return max(0, min(span[1], end) - max(span[0], start))


def _distance(span: tuple[int, int], start: int, end: int) -> int:
    if end <= span[0]:
        return span[0] - end
    return max(0, start - span[1])


def scan(
    parser: str, text: str, allow_missing_trailing: bool = False, blank_ends_table: bool = True,
    noise: Noise | None = None,
) -> Iterator[Table | Loose]:
    """Walk the output in order, yielding whole tables and the loose lines between them.

    A header is the line right above a dashes row. A table ends at a blank line (unless no row came yet: a
    hand-edited doc sample has a blank line after the dashes), at the next header, or at a line that is a tool
    error. With `blank_ends_table=False` blank lines separate row groups of one table (`pfcstat --history`). `# ...` comment lines are skipped only before any output (a collector's provenance note).
    """
    numbered = [(no, strip_annotation(line)) for no, line in lines(text)]
    table: Table | None = None
    spans: list[tuple[int, int]] = []
    seen_output = False
    for index, (line_no, line) in enumerate(numbered):
        if not seen_output and line.lstrip().startswith("#") and not PROMPT.match(line):
            continue
        seen_output = seen_output or bool(line.strip())
        next_is_dashes = index + 1 < len(numbered) and is_dashes(numbered[index + 1][1])
        if is_dashes(line):
            if table is None or table.rows or spans:
                raise ParseError(parser, line_no, line, "separator row without a header above it")
            spans = [m.span() for m in _DASH_RUN.finditer(line.expandtabs(8))]
            cells = split_cells(table.header.line, spans)
            if cells is None:
                raise ParseError(
                    parser, table.header.line_no, table.header.line, "header does not match its separator"
                )
            table.header = Row(table.header.line_no, table.header.line, cells)
            continue
        if next_is_dashes and line.strip():
            if table is not None and spans:
                yield table
            table, spans = Table(Row(line_no, line, ())), []
            continue
        if table is not None and spans:
            if not line.strip():
                if table.rows and blank_ends_table:
                    yield table
                    table, spans = None, []
                continue
            if _skipped(line, noise):
                continue
            if is_tool_failure(line):
                yield table
                table, spans = None, []
                yield Loose(line_no, line)
                continue
            cells = split_cells(line, spans, allow_missing_trailing)
            if cells is None:
                raise ParseError(
                    parser, line_no, line, f"row does not split into the {len(spans)} table columns"
                )
            table.rows.append(Row(line_no, line, cells))
            continue
        if not line.strip() or _skipped(line, noise):
            continue
        yield Loose(line_no, line)
    if table is not None and spans:
        yield table


def _skipped(line: str, noise: Noise | None) -> bool:
    kind = noise_kind(line)
    if kind is not None and noise is not None:
        noise.skip(kind)
    return kind is not None


def is_tool_failure(line: str) -> bool:
    return tool_error_message(line) is not None or bool(_CLICK_ERROR.match(line))


def tool_error_or_fail(parser: str, item: Loose, message: str = "unrecognised line") -> Sample:
    """A loose line the parser has no use for: the tool's own failure becomes a sample, anything else fails."""
    if is_tool_failure(item.line):
        return tool_error(HOST, item.line.strip())
    raise ParseError(parser, item.line_no, item.line, message)


def indexed(name: str, prefix: str) -> int | None:
    """`PFC3` -> 3 for prefix `PFC`; None when the name is not prefix + digits."""
    match = re.fullmatch(re.escape(prefix) + r"(\d{1,3})", name.strip())
    return int(match.group(1)) if match else None


def row_error(parser: str, row: Row, message: str) -> ParseError:
    return ParseError(parser, row.line_no, row.line, message)


def header_error(parser: str, table: Table, message: str = "unexpected table header") -> ParseError:
    return ParseError(parser, table.header.line_no, table.header.line, message)


def each_table(
    name: str,
    text: str,
    read_table: Callable[[Table], list[Sample]],
    read_loose: Callable[[Loose], list[Sample] | None] | None = None,
    allow_missing_trailing: bool = False,
    blank_ends_table: bool = True,
) -> list[Sample]:
    """The loop of every SONiC show command: each table, in input order, through `read_table`; each line outside a
    table through `read_loose` (a title, a parser-specific line) and, when that has no use for it (None), either
    the tool's own failure message (a `tool_error` sample) or a ParseError. See `scan` for the two options."""
    samples: list[Sample] = []
    noise = Noise()
    for item in scan(name, text, allow_missing_trailing, blank_ends_table, noise):
        if isinstance(item, Loose):
            found = None if read_loose is None else read_loose(item)
            if found is None:
                samples.append(tool_error_or_fail(name, item))
            else:
                samples.extend(found)
        else:
            samples.extend(read_table(item))
    return samples + noise.samples()
