"""What a bundle may hold under which name: the format tag and the names that become folders and files. The writer
and the reader check against the same patterns, so a name one refuses the other never makes."""

from __future__ import annotations

import re

# The format a writer writes, and every format a reader reads: /2 keeps a target folder's side data in one
# `outputs.json` (half the files of /1, which had one side file per output); /1 bundles are read as they are.
FORMAT = "rdmatool-bundle/2"
FORMATS = ("rdmatool-bundle/1", FORMAT)
# A target folder's side data in one file: {"<file stem>": {side keys}, ...}. Where it is, it is the side data of
# every output of that folder, and the folder's per-output side files are not read.
OUTPUTS_FILE = "outputs.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._:+-]")
# A target is a directory of the bundle: no separator, no leading dot (so never `.` or `..`), nothing a shell or a
# terminal would read as more than a name. The inventory allows no other names.
TARGET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
# What a command may be qualified with: a device, netdev or switch port, optionally with a view (`mlx5_0.1`,
# `Ethernet1/1`, `Ethernet0.prio3`); `file_stem` maps it to a file name.
QUALIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+/-]{0,127}")
# The file names the writer makes (`file_stem` + .txt/.json); a reader takes no other name for an output.
STEM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,255}")


def file_stem(parser: str, qualifier: str | None) -> str:
    """`<parser>[.<qualifier>]` with the qualifier made safe for a file name (`Ethernet1/1` → `Ethernet1_1`)."""
    return parser if not qualifier else f"{parser}.{_UNSAFE.sub('_', qualifier)}"
