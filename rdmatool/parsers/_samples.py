"""The one set of value readers and sample builders every parser uses.

A reader turns one field, as the tool printed it or as a JSON value, into a sample's number or text. Every reader
that can fail takes the parser name and the line the field came from (`parser, line_no, line, raw`), so that a
field it cannot read is a ParseError pointing at that line; an N/A spelling is None, never an error.

The tools do not agree on N/A: ibstat prints `N/A` and a `-` there would be garbage, NVUE prints `-`. A reader
takes the set of spellings to accept (`na`), and the wording of its error where a parser's contract fixes one
(`expected`: every failure reads `expected <expected>, got <raw!r>`).

No I/O here, as in the parsers themselves.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from rdmatool.errors import ParseError
from rdmatool.model import Sample

HOST = "host"  # the entity of host-wide and switch-wide facts: a tool's own failure, a summary line

NA = frozenset({"n/a", "na", "-", "", "none", "null"})  # no reading, in any tool's spelling
NA_TEXT = frozenset({"", "n/a", "na"})  # the InfiniBand tools and sysfs: a `-` or `none` there is a value


def number(raw: str) -> int | float | None:
    """Read a counter or gauge as printed: thousands separators, `N/A`, hex, plain floats. None when not a number.

    Integers stay ints so 64-bit counters keep every digit.
    """
    if raw.isdecimal():  # the common case, plain digits: nothing to normalise
        try:
            return int(raw)
        except ValueError:  # more digits than int() reads; the float below says inf, as for any such number
            pass
    s = raw.strip().replace(",", "")
    if s.lower() in NA:
        return None
    try:
        return int(s, 0) if s.lower().startswith("0x") else int(s)
    except ValueError:
        pass
    try:
        value = float(s)
    except ValueError:
        return None
    return value if value == value else None  # NaN is never a reading


_MBPS_PER_UNIT = {"M": 1, "G": 1000, "T": 1_000_000}


def speed_gbps(number: str, unit: str) -> float:
    """A port speed as a switch prints it, number and unit apart (`100` `G`, `10000` `M`), in Gb/s."""
    return float(number) * _MBPS_PER_UNIT[unit.upper()] / 1000


def is_na(raw: str, na: Collection[str] = NA) -> bool:
    return raw.strip().lower() in na


def _expected(parser: str, line_no: int, line: str, expected: str, raw: object) -> ParseError:
    return ParseError(parser, line_no, line, f"expected {expected}, got {raw!r}")


def gauge(
    parser: str,
    line_no: int,
    line: str,
    raw: object,
    na: Collection[str] = NA,
    expected: str | None = None,
    suffix: str = "",
) -> int | float | None:
    """An instantaneous or configured number: as printed (see `number`; a `suffix` such as `%` may follow it) or
    a JSON number. None for N/A and NaN; anything else fails `expected a number, got '<raw stripped>'`."""
    if isinstance(raw, str):
        value = number(raw.strip().rstrip(suffix) if suffix else raw)
        if value is None and raw.strip().lower() not in na:
            if expected is None:
                raise ParseError(parser, line_no, line, f"expected a number, got {raw.strip()!r}")
            raise _expected(parser, line_no, line, expected, raw)
        return value
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return raw if raw == raw else None
    raise _expected(parser, line_no, line, expected or "a number", raw)


def counter(
    parser: str,
    line_no: int,
    line: str,
    raw: object,
    na: Collection[str] = NA,
    expected: str | None = None,
    fraction: str | None = None,
) -> int | None:
    """A cumulative count: a whole number as printed or a JSON integer; None for N/A.

    Not a number fails `expected a number, got '<raw stripped>'`; a fraction fails with `fraction`, by default
    `expected an integer counter, got '<raw stripped>'`."""
    if isinstance(raw, str):
        value = number(raw)
        if isinstance(value, int):
            return value
        if value is None and raw.strip().lower() in na:
            return None
        if expected is not None:
            raise _expected(parser, line_no, line, expected, raw)
        if value is None:
            raise ParseError(parser, line_no, line, f"expected a number, got {raw.strip()!r}")
        raise ParseError(parser, line_no, line, fraction or f"expected an integer counter, got {raw.strip()!r}")
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    raise _expected(parser, line_no, line, expected or "an integer counter", raw)


def text(parser: str, line_no: int, line: str, raw: object, na: Collection[str] = NA) -> str | None:
    """A textual field, stripped, or a JSON string or number; None for N/A. Any other JSON value fails."""
    if isinstance(raw, (str, int, float)) and not isinstance(raw, bool):
        value = str(raw).strip()
        return None if value.lower() in na else value
    raise _expected(parser, line_no, line, "text", raw)


# `4: ACTIVE` (ibstatus, sysfs) or `PORT_ACTIVE (4)` (ibv_devinfo).
_NUMBER_FIRST = re.compile(r"^(\d+)\s*:\s*(\S.*)$")
_NUMBER_LAST = re.compile(r"^(\S.*?)\s*\((\d+)\)$")


def state(raw: str, names: dict[int, str], na: Collection[str] = NA_TEXT) -> str | None:
    """An enumerated state in any tool's spelling: `4: ACTIVE`, `PORT_ACTIVE (4)` or `Active`.

    The number is the reliable part, the spelling differs per tool: a known number gives its name in `names`, an
    unknown one keeps the printed text, and so does a state printed without a number."""
    value = raw.strip()
    if value.lower() in na:
        return None
    first = _NUMBER_FIRST.match(value)
    last = _NUMBER_LAST.match(value)
    if first:
        code, printed = int(first.group(1)), first.group(2)
    elif last:
        code, printed = int(last.group(2)), last.group(1)
    else:
        return value
    return names.get(code, printed)


_NUMBERED_STATE = re.compile(r"^(?P<number>\d+)\s*:\s*\S.*$")


def numbered_state(
    parser: str, line_no: int, line: str, raw: str, names: dict[int, str], na: Collection[str] = NA_TEXT
) -> str | None:
    """A state printed `<number>: <NAME>` (sysfs): the name has been seen wrong (phys_state `4: ACTIVE`), the
    number not, so only a known number is read."""
    value = raw.strip()
    if value.lower() in na:
        return None
    match = _NUMBERED_STATE.match(value)
    if match is None or int(match["number"]) not in names:
        raise ParseError(parser, line_no, line, "expected `<number>: <STATE>` with a known state number")
    return names[int(match["number"])]


def json_number(parser: str, line_no: int, key: str, raw: object) -> int | float | None:
    """A JSON member that must be a number (NX-OS and EOS quote most of them): int, float, numeric string or N/A.

    The error names the member (`key: raw`), JSON having no line of its own for it."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)) and raw is not None:
        raise ParseError(parser, line_no, f"{key}: {raw!r}"[:120], "expected a number")
    if raw is None or isinstance(raw, (int, float)):
        return raw if raw is None or raw == raw else None
    value = number(raw)
    if value is None and raw.strip().lower() not in NA:
        raise ParseError(parser, line_no, f"{key}: {raw!r}"[:120], "expected a number")
    return value


def tool_error(entity: str, message: str, raw_key: str | None = None) -> Sample:
    """The tool's own failure (`Couldn't connect to ...`, `% Invalid command`): data for the caller, not an error."""
    return Sample(entity=entity, metric="tool_error", text=message, raw_key=raw_key)
