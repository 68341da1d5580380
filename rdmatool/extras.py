"""The optional parts of rdmatool and the package each needs: pyproject.toml's optional dependencies.

A node runs `collect --local` and `gate --local` on every check, in every DaemonSet pod: its install leaves out
what only the workstation's commands draw or read (docs/node-install.md has the sizes). A command that needs a part
that is not installed stops with one line naming what to install (MissingExtra, exit 2); a command for which the
part is a by-product (the perftest heatmap PNG beside its CSV matrices) goes on without it.

Asked with `importlib.util.find_spec`: knowing whether matplotlib is there costs nothing, importing it ~0.3 s.
"""

from __future__ import annotations

import importlib.util

from rdmatool.errors import RdmatoolError

# extra -> the module it installs
EXTRAS = {"report": "matplotlib", "capture": "scapy"}


class MissingExtra(RdmatoolError):
    """A command needs an optional part of rdmatool that is not installed: `WHAT needs MODULE ...: pip install ...`."""


def installed(extra: str) -> bool:
    return importlib.util.find_spec(EXTRAS[extra]) is not None


def require(extra: str, what: str) -> None:
    """MissingExtra, naming the extra to install, unless `extra` is installed. `what`: the part that needs it."""
    if not installed(extra):
        raise MissingExtra(f"{what} needs {EXTRAS[extra]}, which is not installed here: "
                           f"pip install 'rdmatool[{extra}]'")
