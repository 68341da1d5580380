"""Where every command's parsing and running passes (the root command, rdmatool.cli): a usage error becomes one line
on stderr and exit 2, and output whose reader has gone (`rdmatool parse --list | head -1`) ends the command quietly
with EXIT_CLOSED.

Why 141 for a closed stdout, for every command: it is what a shell reports for a tool that SIGPIPE ended (128 + 13),
so `set -o pipefail` and a script read it as they read `yes | head -1`; it is none of the verdicts 0-4, so a gate
whose output was cut is never read as a pass (0), a drain (1) or a verdict at all. Nothing is printed: the reader
asked for no more. click and rich each end a command with exit 1 ("fail") on a broken pipe; a write refused here
is turned into ReaderGone, which neither intercepts, and ended at the root.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import typer

from rdmatool.cli._output import EXIT_USAGE, die
from rdmatool.cli.exit_codes import EXIT_CLOSED  # 141: stdout's reader went away; never a verdict

# typer brings click (vendored as typer._click in recent releases, the click package before): its usage errors
# (a bad option, a missing argument, a value of the wrong type) are the ClickException typer's BadParameter derives
# from, whichever click that is.
CLICK_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class ReaderGone(Exception):  # noqa: N818 - what happened, not an error of rdmatool's
    """stdout's reader closed its end. Not an OSError: click and rich catch BrokenPipeError (and click any EPIPE)
    and exit 1."""


class _GuardedStdout:
    """sys.stdout while a command runs: the same stream, except that a write or a flush its reader refuses raises
    ReaderGone."""

    def __init__(self, stream) -> None:  # noqa: ANN001 - any text stream (a test runner's too)
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError as exc:
            raise ReaderGone from exc

    def writelines(self, lines) -> None:  # noqa: ANN001 - an iterable of str, as io's
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError as exc:
            raise ReaderGone from exc

    def __getattr__(self, name: str):  # noqa: ANN204 - the stream's own attribute (encoding, isatty, buffer ...)
        return getattr(self._stream, name)


def reader_gone() -> NoReturn:
    """End quietly: what is still buffered for stdout goes to /dev/null, so that the interpreter's flush at exit
    cannot fail and print a traceback of its own (the recipe of the Python documentation on SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a stream without a file descriptor (a test runner's)
        pass
    raise typer.Exit(EXIT_CLOSED)


def usage_error(exc: Exception) -> NoReturn:
    """click's usage error as the project's bad-input errors read: `rdmatool plan bandwidth: no such option:
    --foo`, one line (never the usage block nor a box), exit 2."""
    if type(exc).__name__ == "NoArgsIsHelpError":  # a group called without a command: its help is printed already
        raise typer.Exit(EXIT_USAGE)
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "rdmatool"
    message = " ".join(exc.format_message().split()).rstrip(".")
    die(f"{where}: {message[:1].lower()}{message[1:]}", EXIT_USAGE)


@contextmanager
def boundary() -> Iterator[None]:
    """Around the root command's parsing and its running (and so every sub-command's): usage errors and a reader
    that has gone end here. The output is flushed on the way out, so that a reader that left after the last write
    is seen here too, not by the interpreter at exit."""
    stdout = sys.stdout
    sys.stdout = _GuardedStdout(stdout)
    try:
        try:
            yield
        finally:
            try:
                sys.stdout.flush()
            finally:
                sys.stdout = stdout
    except (ReaderGone, BrokenPipeError):  # BrokenPipeError: a binary write (sys.stdout.buffer) is not guarded
        reader_gone()
    except CLICK_ERROR as exc:
        usage_error(exc)
