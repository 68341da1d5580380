"""Reading `grep -H . <files>` / `grep -r . <dir>` dumps of sysfs and procfs files (`PATH:VALUE` per line).

Shared by `sysfs_counters`, `dcqcn_sysfs` and `psi`. grep prints one line per line of each file, prefixed with the
file's path and a colon; annotated captures write `PATH: VALUE`, so one space after the colon is tolerated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The path runs up to the first colon: sysfs/procfs paths of these trees never contain one, values may ("4: ACTIVE").
_PATH_VALUE = re.compile(r"^\s*(?P<path>[^\s:]*/[^\s:]*):(?P<value>.*)$")
# grep's own complaints (stderr captured with the output): `grep: PATH: No such file or directory`.
_GREP_ERROR = re.compile(r"^\s*(?:grep|cat): (?P<path>.*?): (?P<message>[^:]+)$")


@dataclass(frozen=True)
class FileLine:
    path: str
    value: str  # stripped; may be empty or N/A


def is_comment_or_blank(line: str) -> bool:
    """Blank lines and `#` comments (provenance notes of annotated captures) carry no data."""
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def split_path_value(line: str) -> FileLine | None:
    match = _PATH_VALUE.match(line)
    if match is None:
        return None
    return FileLine(match["path"], match["value"].strip())


def grep_error(line: str) -> tuple[str, str] | None:
    """(path, message) when the line is grep/cat reporting that it could not read a file."""
    match = _GREP_ERROR.match(line)
    if match is None:
        return None
    return match["path"], match["message"].strip()
