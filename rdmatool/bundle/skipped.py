"""An output of a bundle that is not read, and how a bundle path is named in the line that says so."""

from __future__ import annotations

from rdmatool.errors import BundleError


class OutputSkipped(BundleError):
    """One output that is not read; `reason` is the line for `Bundle.skipped` (the other outputs go on)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)



def shown(name: str) -> str:
    """A bundle-relative path for a message: as is when printable, quoted otherwise (a file name may hold a newline
    or a terminal escape sequence)."""
    return name if name.isprintable() else repr(name)
