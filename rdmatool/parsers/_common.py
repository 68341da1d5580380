"""The line-level helpers every parser shares: line splitting, tool-error recognition, the transcript line loop.

Reading the fields of a line into sample values is `_samples`. No I/O here, as in the parsers themselves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

from rdmatool.errors import EmptyOutput, ParseError
from rdmatool.model import Sample

# Messages with which the tools report their own failure. Such output is data (a `tool_error` sample), not a
# parse error: "perftest could not connect" is exactly what the gate needs to know.
TOOL_ERROR_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"couldn'?t connect to",
        r"failed to get ib devices? list",
        r"can'?t open umad port",
        r"no ib devices found",
        r"ibpanic:",
        r"unable to (?:open|init) (?:file descriptor|the socket connection)",
        r"failed to exchange data between server and clients",
        r"couldn'?t read remote address",
        r"completion with error",
        r"failed status \d+",
        r"failed to modify qp",
        r"couldn'?t allocate mr",
        r"ib device .* not found",
        r"no such device",
        r"command not found",
        r"not installed",
    )
)


def lines(text: str) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, line) with CR/LF endings removed; tolerant of CRLF captures."""
    for number, line in enumerate(text.splitlines(), start=1):
        yield number, line.rstrip("\r")


def _lowercase_literals(pattern: str) -> bool:
    """No uppercase ASCII letter in the pattern outside an escape (`\\S`, `\\D`), and no character given by its
    code (`\\x41` is `A`): matched against a lowercased subject, it then finds exactly what it finds
    case-insensitively in the original."""
    escaped = False
    for char in pattern:
        if escaped:
            if char in "xuUN0123456789":
                return False
            escaped = False
        elif char == "\\":
            escaped = True
        elif "A" <= char <= "Z":
            return False
    return True


class AnyOf:
    """One alternation of several case-insensitive patterns: `search(text)` says whether any of them occurs (the
    same answer as trying each in turn).

    Every line of every output passes the tool-error check, and Python's `re` cannot skip ahead to where a match may
    start when it ignores case: an ASCII line (nearly every line) is lowercased and searched with a case-sensitive
    copy of the alternation instead, six times faster. That copy finds the same matches only when the patterns'
    literals are lowercase (checked here: otherwise every line takes the case-insensitive search)."""

    def __init__(self, patterns: tuple[re.Pattern[str], ...] | list[re.Pattern[str]]) -> None:
        joined = "|".join(f"(?:{p.pattern})" for p in patterns)
        self.caseless = re.compile(joined, re.IGNORECASE)
        self.lowered = re.compile(joined) if _lowercase_literals(joined) else None

    def search(self, text: str) -> bool:
        if self.lowered is not None and text.isascii():
            return self.lowered.search(text.lower()) is not None
        return self.caseless.search(text) is not None


def any_of(patterns: tuple[re.Pattern[str], ...] | list[re.Pattern[str]]) -> AnyOf:
    """One alternation of several case-insensitive patterns (same matches as trying each in turn): one search
    instead of a loop over the patterns took a quarter off the parse time of a large bundle."""
    return AnyOf(patterns)


_ANY_TOOL_ERROR = any_of(TOOL_ERROR_PATTERNS)


def tool_error_message(line: str) -> str | None:
    """The line itself when it is a tool's own failure message, else None."""
    stripped = line.strip()
    if _ANY_TOOL_ERROR.search(stripped):
        return stripped
    return None


def refuse_empty(parser: str, tool: str, text: str) -> None:
    """EmptyOutput when `text` holds nothing but white space: for a tool that always prints something when it
    succeeds (a header, a block per device, a line per counter), an empty answer is missing data, never "nothing
    wrong". `tool` is how the message names it (`ethtool -S`)."""
    if not text or text.isspace():
        raise EmptyOutput(parser, tool)


def is_blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def cli_lines(
    text: str, error: Callable[[str], str | None], *skip: re.Pattern[str]
) -> Iterator[tuple[int, str, str | None]]:
    """The line loop of a command-line transcript: (line number, line, the tool's own complaint or None) for every
    line worth reading.

    Blank lines, `#` comments and lines matching one of `skip` (prompts, carets, table rules, headers) are dropped;
    `error` says whether a line is the tool, or the switch CLI, reporting its own failure, and with what message.
    """
    for line_no, line in lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        for pattern in skip:
            if pattern.match(line):
                break
        else:
            yield line_no, line, error(line)


def load_json(parser: str, numbered: list[tuple[int, str]]) -> object:
    """The JSON document made of the kept lines of a capture (the dropped ones read as empty lines, so that a
    JSON error still names the input line)."""
    first_no, first_line = numbered[0]
    by_number = dict(numbered)
    text = "\n".join(by_number.get(n, "") for n in range(first_no, numbered[-1][0] + 1))
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line_no = first_no + exc.lineno - 1
        raise ParseError(parser, line_no, by_number.get(line_no, ""), f"invalid JSON: {exc.msg}") from None
    except (RecursionError, ValueError) as exc:
        raise ParseError(parser, first_no, first_line, f"invalid JSON: {exc}") from None


class Noise:
    """Counts the recognised noise a parser skips, by class, and turns the counts into `parse_skipped_lines`
    samples (entity = the class), so that skipping is never silent: a diagnosis lists them in its notes."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def skip(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def samples(self) -> list[Sample]:
        return [Sample(kind, "parse_skipped_lines", count, raw_key=kind) for kind, count in self.counts.items()]


# The prompt of a shell or a switch CLI left at the end of pasted output: `root@gpu01:~#`, `[root@gpu01 ~]#`,
# `admin@sonic:~$`, `leaf01#`, `switch>` — a prompt and nothing after it.
TRAILING_PROMPT = re.compile(r"^\s*(?:\[[^\]\n]{1,80}\]|[\w.@:~/()-]{1,80})\s?[#$>%]\s*$")


def without_trailing_prompt(text: str) -> tuple[str, bool]:
    """The text without a shell or CLI prompt as its last non-blank line, and whether one was dropped."""
    stripped = text.rstrip()
    cut = stripped.rfind("\n")
    last = stripped[cut + 1:]
    if last and TRAILING_PROMPT.match(last):
        return stripped[: cut + 1] if cut >= 0 else "", True
    return text, False
