"""What a bundle may hold under which name: the format tag and the names that become folders and files. The writer
and the reader check against the same patterns, so a name one refuses the other never makes."""

from __future__ import annotations

import re

# The format a writer writes, and every format a reader reads: /3 keeps each target's outputs of a snapshot in one
# file, its outputs pack (one file where /2 had some 18: a fleet's bundle is written, synced, linked and listed
# file by file); /2 kept a target folder's side data in one `outputs.json` (half the files of /1, which had one
# side file per output). /1 and /2 bundles are read as they are, and a bundle may mix packs and folders.
FORMAT = "rdmatool-bundle/3"
FORMATS = ("rdmatool-bundle/1", "rdmatool-bundle/2", FORMAT)
# A target's outputs of one snapshot in one file, `snapshots/<i>/<target>.outputs`: one JSON header line (this
# format tag and, per output, its name, its length in bytes and its side data), then the raw outputs one after the
# other. A folder is never a pack, so a target named `x.outputs` (a folder) and target `x`'s pack cannot be confused.
PACK_SUFFIX = ".outputs"
PACK_FORMAT = "rdmatool-outputs/1"
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
