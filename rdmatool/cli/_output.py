"""Shared CLI plumbing: stderr messages and JSON on a clean stdout."""

from __future__ import annotations

import json
import sys
from typing import NoReturn

import typer

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INCONCLUSIVE = 0, 1, 2, 3


def die(message: str, code: int) -> NoReturn:
    """One line on stderr, then the exit code; the message names the file, host or line at fault."""
    print(message, file=sys.stderr)
    raise typer.Exit(code)


def print_json(obj: object) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")
