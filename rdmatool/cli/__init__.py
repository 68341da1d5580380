"""The `rdmatool` command: a thin typer app, one module per command group.

Expected errors become exit codes and one line on stderr here, at the boundary; no traceback reaches a user.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

import typer

from rdmatool import __version__
from rdmatool.cli import (
    baseline_cmd,
    capture_cmd,
    collect_cmd,
    config_cmd,
    diagnose_cmd,
    doctor_cmd,
    export_cmd,
    gate_cmd,
    parse_cmd,
    pcap_cmd,
    perf_cmd,
    plan_cmd,
    report_cmd,
    schema_cmd,
)

app = typer.Typer(
    name="rdmatool",
    help="RDMA fabric tuning and diagnostics for InfiniBand and RoCEv2 GPU clusters.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rdmatool {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """RDMA fabric tuning and diagnostics for InfiniBand and RoCEv2 GPU clusters."""


parse_cmd.register(app)
collect_cmd.register(app)
diagnose_cmd.register(app)
gate_cmd.register(app)
baseline_cmd.register(app)
perf_cmd.register(app)
pcap_cmd.register(app)
capture_cmd.register(app)
export_cmd.register(app)
plan_cmd.register(app)
report_cmd.register(app)
schema_cmd.register(app)
doctor_cmd.register(app)
config_cmd.register(app)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        print("rdmatool: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - a bug of rdmatool's own: exit 1 would read as "drain these nodes"
        if os.environ.get("RDMATOOL_TRACEBACK"):
            raise
        where = traceback.extract_tb(exc.__traceback__)[-1]
        print(f"rdmatool: internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]} "
              f"(at {Path(where.filename).name}:{where.lineno}; RDMATOOL_TRACEBACK=1 shows the traceback)",
              file=sys.stderr)
        sys.exit(3)
