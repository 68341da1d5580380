"""`--per-target DIR`: one textfile per node and one fleet file, each replaced atomically.

A node's file is `DIR/rdmatool-<target>.prom`, what node_exporter's textfile collector on that node serves (or one
collector serving DIR: every sample keeps its `target` label, so the files never collide). The fleet file
`DIR/rdmatool.prom` holds the series of no node: the verdict, the fabric-wide finding counts, the bundle's figures.
A target name comes from the bundle, which may be hostile: only a plain host name (letters, digits, `.`, `_`, `:`,
`-`, starting with a letter or digit) names a file; any other is refused, its file not written, and named by the
caller. With the `rdmatool-` prefix and no `/`, a name can neither leave DIR nor hide as a dot file, nor be the
fleet file's.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from rdmatool.files import write_atomic

FLEET_FILE = "rdmatool.prom"
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}")


def target_file(target: str) -> str | None:
    """The file name of a node's textfile, None when its name cannot safely name a file."""
    if not isinstance(target, str) or not _SAFE.fullmatch(target):
        return None
    return f"rdmatool-{target}.prom"


def write_per_target(directory: str | os.PathLike, export) -> list[str]:
    """Write each node's textfile, then the fleet file, into the existing `directory`. The targets refused (their
    name cannot name a file) are returned; OSError (the file that could not be written is named) stops the rest."""
    folder = Path(directory)
    if not folder.is_dir():  # node_exporter's directory is made when it is set up, never guessed here
        raise (NotADirectoryError(20, "not a directory", str(folder)) if folder.exists()
               else FileNotFoundError(2, "no such directory", str(folder)))
    refused = []
    for target in export.targets:
        name = target_file(target)
        if name is None:
            refused.append(target)
            continue
        _write(folder / name, export.target_text(target))
    _write(folder / FLEET_FILE, export.fleet_text())  # last: its timestamp says the night's files are all in place
    return refused


def _write(path: Path, text: str) -> None:
    try:
        write_atomic(path, text.encode())
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(path)
        raise
