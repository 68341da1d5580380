"""The exception hierarchy: every expected failure is an RdmatoolError subclass.

The CLI turns these into a one-line message and an exit code; anything else is a bug and may show a traceback.
"""

from __future__ import annotations


class RdmatoolError(Exception):
    """Base class of every error rdmatool expects and reports without a traceback."""


class InventoryError(RdmatoolError):
    """The inventory file is unreadable or inconsistent (names the file and, where known, the line)."""


class PlaybookError(RdmatoolError):
    """A playbook is malformed: `FILE:LINE: message`."""


class BundleError(RdmatoolError):
    """A bundle on disk is missing, foreign or corrupt."""


class NoData(RdmatoolError):
    """Nothing to judge: no target selected, none answered, or a bundle without outputs. Inconclusive (exit 3):
    never a pass, and never a failure that would drain nodes."""


class NothingCollected(NoData):
    """No target gave any output, and writing the bundle would replace an existing one (exit 3, inconclusive)."""


class BaselineError(RdmatoolError):
    """A baseline file is missing, foreign or corrupt."""


class ParseError(RdmatoolError):
    """A parser met output it does not understand.

    Parsers fail loud on an unknown line (like a textfsm template ending in `^. -> Error`): new firmware must fail
    visibly instead of silently dropping counters.
    """

    def __init__(self, parser: str, line_no: int, line: str, message: str = "unrecognised line") -> None:
        self.parser = parser
        self.line_no = line_no
        self.line = line
        self.message = message
        super().__init__(f"{parser}: line {line_no}: {message}: {line.strip()[:120]!r}")

    def located(self, filename: str) -> str:
        """The one-line form the CLI prints: `NAME: FILE:LINE: message`."""
        return f"{self.parser}: {filename}:{self.line_no}: {self.message}: {self.line.strip()[:120]!r}"


class EmptyOutput(ParseError):
    """A tool that always prints something when it succeeds printed nothing (or white space only): its data is
    missing, which must not read as "nothing wrong". Not a line the parser does not know but an input with nothing in
    it: `rdmatool parse` exits 2 on it (bad input), and in a collection the output is a parse failure like the others.
    """

    def __init__(self, parser: str, tool: str) -> None:
        super().__init__(parser, 0, "", f"empty output: {tool} printed nothing")
        self.args = (f"{parser}: {self.message}",)

    def located(self, filename: str) -> str:
        """`NAME: FILE: empty output: TOOL printed nothing` (no line to name)."""
        return f"{self.parser}: {filename}: {self.message}"
