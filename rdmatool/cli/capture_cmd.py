"""`rdmatool capture`: one bounded, passive packet capture on a host, into a bundle (placeholder until wired)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    pass
