"""Reading `grep -H . <files>` / `grep -r . <dir>` dumps of sysfs and procfs files (`PATH:VALUE` per line).

Shared by `sysfs_counters`, `dcqcn_sysfs` and `psi`. grep prints one line per line of each file, prefixed with the
file's path and a colon; annotated captures write `PATH: VALUE`, so one space after the colon is tolerated.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines, tool_error_message
from rdmatool.parsers._samples import HOST, tool_error

# The path runs up to the first colon: sysfs/procfs paths of these trees never contain one, values may ("4: ACTIVE").
_PATH_VALUE = re.compile(r"^\s*(?P<path>[^\s:]*/[^\s:]*):(?P<value>.*)$")
# grep's own complaints (stderr captured with the output): `grep: PATH: No such file or directory`.
_GREP_ERROR = re.compile(r"^\s*(?:grep|cat): (?P<path>.*?): (?P<message>[^:]+)$")

ReadValue = Callable[[str, str, int, str], list[Sample]]  # (path, stripped value, line_no, line) -> samples
ReadLine = Callable[[int, str], "list[Sample] | None"]  # (line_no, line) -> samples, or None: not such a line
ReadFailure = Callable[[str, str], list[Sample]]  # (path, line) of a file grep could not read -> samples


def _host_failure(path: str, line: str) -> list[Sample]:
    return [tool_error(HOST, line.strip())]


def read_files(
    parser: str,
    text: str,
    read_value: ReadValue | None = None,
    read_line: ReadLine | None = None,
    read_failure: ReadFailure = _host_failure,
    unknown: str = "expected PATH:VALUE",
) -> list[Sample]:
    """The samples of a dump, line by line in input order.

    Blank lines and `#` comments are skipped; a file grep could not read goes to `read_failure` (by default a
    host-wide `tool_error`); then `read_line` may claim the line (a dump that is not only `PATH:VALUE` lines); a
    `PATH:VALUE` line goes to `read_value`. Any other line is the tool's own failure message (a `tool_error`
    sample), or a ParseError with the message `unknown`.
    """
    samples: list[Sample] = []
    for line_no, line in lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        failure = _GREP_ERROR.match(line)
        if failure is not None:
            samples.extend(read_failure(failure["path"], line))
            continue
        if read_line is not None:
            found = read_line(line_no, line)
            if found is not None:
                samples.extend(found)
                continue
        if read_value is not None:
            entry = _PATH_VALUE.match(line)
            if entry is not None:
                samples.extend(read_value(entry["path"], entry["value"].strip(), line_no, line))
                continue
        message = tool_error_message(line)
        if message is None:
            raise ParseError(parser, line_no, line, unknown)
        samples.append(tool_error(HOST, message))
    return samples
