"""nccl-tests (all_reduce_perf, all_gather_perf, broadcast_perf, ...): bus/algorithm bandwidth and time per size.

Command: `all_reduce_perf -b 8 -e 8G -f 2 -g 8` and its siblings (all_gather, broadcast, reduce, reduce_scatter,
    alltoall, sendrecv, gather, scatter, hypercube), alone or under mpirun (`--tag-output` prefixes are removed).
Emits per table row and per half of the row, entity `out_of_place` (left half) or `in_place` (right half),
    `size_bytes` = the `size` column: `nccl_time_us`, `algbw_gbps`, `busbw_gbps` (GB/s x 8, so Gb/s, rounded to 6
    decimals), and `nccl_wrong` (newer `#wrong` column) or `nccl_max_error` (older `error` column); `N/A` cells
    (validation off, `-c 0`) give value None. Footer (entity `nccl`): `nccl_out_of_bounds`, `avg_busbw_gbps`.
    The tool's own failures (`Test NCCL failure ...`, `Test CUDA failure ...`, a segfault): `tool_error`, entity `nccl`.
    `raw_key` = the column name as printed (`busbw`, `#wrong`) or the footer label (`Avg bus bandwidth`).
Example:
    #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
    #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
       134217728      33554432     float     sum      -1   1162.2  115.49  202.11      0   1162.5  115.46  202.05      0
    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 68.4048
Caveats: the column layout is read from the `size count type ...` header comment (old `redop ... error`, newer
    `redop root ... #wrong`, old broadcast/reduce `root` without `redop`); a row before any such header, or with a
    different number of cells, is a ParseError. Every row is emitted in input order, so a size printed twice (the
    repeated first row of some versions, or interleaved independent processes each running the same sweep) gives
    repeated (entity, metric, size_bytes) samples, and several footers give several `avg_busbw_gbps` samples.
    The `type`, `redop`, `root` and `count` columns and the preamble (`# nThread ...`, `# Using devices`) are not
    emitted. A row that leaves the `redop` and/or `root` cells empty (alltoall, sendrecv) is read with the columns
    it has. Several result tables in one log: when the log runs more than one collective (`# Collective test
    starting: all_gather_perf`), each table's entities carry it (`all_gather_perf.out_of_place`).
    Noise is skipped and counted (`parse_skipped_lines`, entity = the class): `NCCL INFO/WARN/TRACE` and UCX log
    lines anywhere (`log`), `NCCL version 2.x.y+cudaN` banners (`banner`), shell traces `+ mpirun ...`
    (`shell_trace`), a shell prompt running a `*_perf` binary (`prompt`), and any other line before the first
    table header (`preamble`: `Initializing SSH...`, launcher chatter) — but an output with no table header at all
    is a ParseError at its first such line. Other `#` comment lines and blank lines are skipped; any other line
    after a header is a ParseError.
    An empty output (nothing, or white space only) is a ParseError (`empty output: the nccl-tests program printed
    nothing`), on which `rdmatool parse` exits 2: an nccl-tests program always prints its `# nThread` preamble and
    its table header, so an empty answer is missing data, not "nothing wrong".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import Noise, lines, refuse_empty, tool_error_message
from rdmatool.parsers._samples import gauge, number, tool_error

NAME = "nccl_tests"
HOST_ENTITY = "nccl"
HALVES = ("out_of_place", "in_place")  # nccl-tests prints out-of-place results first, then in-place

_MPI_TAG = re.compile(r"^\[\d+,\d+\]<(?:stdout|stderr)>:")
_NCCL_LOG = re.compile(r"\bNCCL (?:INFO|WARN|TRACE)\b|\bUCX\s+(?:ERROR|WARN|INFO|DIAG|DEBUG|TRACE)\b")
_BANNER = re.compile(r"^(?:NCCL|RCCL) version \S+\s*$")
_SHELL_TRACE = re.compile(r"^\++ \S")
_COLLECTIVE = re.compile(r"^#\s*Collective test starting:\s*(?P<name>\w+)\s*$", re.M)
_PROMPT = re.compile(r"^(?:\S*|\[[^\]]*\])[#$>]\s+.*\b\w+_perf(?:_mpi)?\b")
_OUT_OF_BOUNDS = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<value>\S+)(?:\s+(?:OK|FAILED))?\s*$")
_AVG_BUSBW = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<value>\S+)\s*$")
_NCCL_ERRORS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bTest (?:NCCL |CUDA )?failure\b",
        r"\bNCCL error\b",
        r"\bNCCL failure\b",
        r"\bSegmentation fault\b",
        r"\bAborted \(core dumped\)",
    )
)

_PREFIX_COLUMNS = {"size", "count", "type", "redop", "root"}
_RESULT_COLUMNS = ("time", "algbw", "busbw")
_CHECK_COLUMNS = {"#wrong": "nccl_wrong", "error": "nccl_max_error"}
_TYPE = re.compile(r"^[A-Za-z_]\w*$")
GBYTES_IN_GBITS = 8


@dataclass(frozen=True)
class _Layout:
    prefix: tuple[str, ...]  # size, count, type, [redop], [root]
    check: str  # "#wrong" or "error", as printed
    halves: int  # 1 or 2 groups of (time, algbw, busbw, check)

    @property
    def width(self) -> int:
        return len(self.prefix) + 4 * self.halves


def _layout(tokens: list[str]) -> _Layout | None:
    """The table layout from the `# size count type redop root time algbw busbw #wrong ...` header, or None."""
    if "time" not in tokens:
        return None
    split = tokens.index("time")
    prefix, rest = tokens[:split], tokens[split:]
    if (
        prefix[:3] != ["size", "count", "type"]
        or not set(prefix) <= _PREFIX_COLUMNS
        or len(set(prefix)) != len(prefix)
    ):
        return None
    if len(rest) not in (4, 8) or rest[3] not in _CHECK_COLUMNS:
        return None
    for start in range(0, len(rest), 4):
        if tuple(rest[start : start + 3]) != _RESULT_COLUMNS or rest[start + 3] != rest[3]:
            return None
    return _Layout(tuple(prefix), rest[3], len(rest) // 4)


def _gbits(value: int | float | None) -> float | None:
    return None if value is None else round(value * GBYTES_IN_GBITS, 6)


def _prefix_of(layout: _Layout, line_no: int, line: str, cells: list[str]) -> tuple[str, ...]:
    """The prefix columns this row prints: all of the header's, or none of its `redop`/`root` cells, which the
    collectives that take neither (alltoall, sendrecv) leave blank. One of the two missing is a damaged row."""
    short = layout.width - len(cells)
    if short == 0:
        return layout.prefix
    optional = {c for c in ("redop", "root") if c in layout.prefix}
    if optional and short == len(optional):
        return tuple(c for c in layout.prefix if c not in optional)
    raise ParseError(NAME, line_no, line, f"expected {layout.width} columns, got {len(cells)}")


def _row(layout: _Layout, line_no: int, line: str, cells: list[str], collective: str = "") -> list[Sample]:
    prefix_columns = _prefix_of(layout, line_no, line, cells)
    prefix = dict(zip(prefix_columns, cells, strict=False))
    size = number(prefix["size"])
    if not isinstance(size, int) or size < 0 or not isinstance(number(prefix["count"]), int):
        raise ParseError(NAME, line_no, line, "size and count must be whole numbers")
    if not _TYPE.match(prefix["type"]) or not _TYPE.match(prefix.get("redop", "sum")):
        raise ParseError(NAME, line_no, line, "unexpected data type or reduction operation")
    if "root" in prefix and not isinstance(number(prefix["root"]), int):
        raise ParseError(NAME, line_no, line, "root must be a whole number")
    samples: list[Sample] = []
    results = cells[len(prefix_columns) :]
    for half in range(layout.halves):
        time, algbw, busbw, check = (
            gauge(NAME, line_no, line, c) for c in results[4 * half : 4 * half + 4]
        )
        entity = f"{collective}.{HALVES[half]}" if collective else HALVES[half]
        samples += [
            Sample(entity, "nccl_time_us", time, size_bytes=size, raw_key="time"),
            Sample(entity, "algbw_gbps", _gbits(algbw), size_bytes=size, raw_key="algbw"),
            Sample(entity, "busbw_gbps", _gbits(busbw), size_bytes=size, raw_key="busbw"),
            Sample(entity, _CHECK_COLUMNS[layout.check], check, size_bytes=size, raw_key=layout.check),
        ]
    return samples


def _footer(line_no: int, line: str) -> Sample | None:
    """The `# Out of bounds values` and `# Avg bus bandwidth` summary lines, else None."""
    match = _OUT_OF_BOUNDS.match(line)
    if match:
        value = gauge(NAME, line_no, line, match["value"])
        return Sample(HOST_ENTITY, "nccl_out_of_bounds", value, raw_key="Out of bounds values")
    match = _AVG_BUSBW.match(line)
    if match:
        raw = match["value"]
        # a failed job can print nan; that is "no reading", not an unknown line
        value = None if raw.lower().lstrip("-+") == "nan" else gauge(NAME, line_no, line, raw)
        return Sample(HOST_ENTITY, "avg_busbw_gbps", _gbits(value), raw_key="Avg bus bandwidth")
    return None


def _error_message(line: str) -> str | None:
    message = tool_error_message(line)
    if message is None and any(p.search(line) for p in _NCCL_ERRORS):
        message = line.strip()
    return message


def _noise_kind(line: str) -> str | None:
    if _NCCL_LOG.search(line):
        return "log"
    if _BANNER.match(line):
        return "banner"
    if _SHELL_TRACE.match(line):
        return "shell_trace"
    if _PROMPT.match(line):
        return "prompt"
    return None


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "the nccl-tests program", text)
    samples: list[Sample] = []
    layout: _Layout | None = None
    noise = Noise()
    # Entities carry the collective only when one log runs several (one table each); one collective keeps the
    # plain out_of_place / in_place the rules and baselines know.
    several = len(set(_COLLECTIVE.findall(text))) > 1
    collective = ""
    first_preamble: tuple[int, str] | None = None
    for line_no, raw_line in lines(text):
        line = _MPI_TAG.sub("", raw_line).strip()
        if not line:
            continue
        announced = _COLLECTIVE.match(line)  # before the prompt check: `# ... all_reduce_perf` looks like one
        if announced:
            collective = announced["name"] if several else ""
            continue
        kind = _noise_kind(line)
        if kind is not None:
            noise.skip(kind)
            continue
        if line.startswith("#"):
            footer = _footer(line_no, line)
            if footer is not None:
                samples.append(footer)
            else:
                layout = _layout(line.lstrip("#").split()) or layout
            continue
        message = _error_message(line)
        if message is not None:
            samples.append(tool_error(HOST_ENTITY, message))
            continue
        if layout is None and not line[0].isdigit():
            # launcher chatter before the first table (`Initializing SSH...`): noise, unless no table follows
            first_preamble = first_preamble or (line_no, raw_line)
            noise.skip("preamble")
            continue
        if not line[0].isdigit():
            raise ParseError(NAME, line_no, raw_line)
        if layout is None:
            raise ParseError(
                NAME, line_no, raw_line, "data row before the `size count type ...` column header"
            )
        samples += _row(layout, line_no, raw_line, line.split(), collective)
    if layout is None and first_preamble is not None:
        raise ParseError(NAME, first_preamble[0], first_preamble[1], "no nccl-tests result table in the output")
    return samples + noise.samples()
