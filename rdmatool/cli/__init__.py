"""The `rdmatool` command: a thin typer app, one module per command group.

Expected errors become exit codes and one line on stderr here, at the boundary; no traceback reaches a user. The root
command (`_Root`) is that boundary for typer's own errors too: a usage error is one line and exit 2, a closed stdout
(`| head -1`) a quiet 141 (rdmatool.cli._boundary), and the help shows plain metavars (rdmatool.cli._format).
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperGroup

from rdmatool import __version__
from rdmatool.cli import _config
from rdmatool.cli._boundary import boundary, reader_gone
from rdmatool.cli._format import plain_metavars
from rdmatool.table import huge_pages

# Each command module and the top-level names it registers, in the order `rdmatool --help` lists them.
COMMAND_MODULES = {
    "parse_cmd": ("parse",),
    "collect_cmd": ("collect", "inventory", "bundle"),
    "diagnose_cmd": ("diagnose",),
    "gate_cmd": ("gate",),
    "baseline_cmd": ("baseline",),
    "perf_cmd": ("perf",),
    "pcap_cmd": ("pcap",),
    "capture_cmd": ("capture",),
    "watch_cmd": ("watch",),
    "export_cmd": ("export",),
    "plan_cmd": ("plan",),
    "nccl_cmd": ("nccl",),
    "trial_cmd": ("trial",),
    "report_cmd": ("report",),
    "schema_cmd": ("schema",),
    "docs_cmd": ("docs",),
    "doctor_cmd": ("doctor",),
    "config_cmd": ("config",),
}
_MODULE_OF = {name: module for module, names in COMMAND_MODULES.items() for name in names}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rdmatool {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version.")] = False,
) -> None:
    """RDMA fabric tuning and diagnostics for InfiniBand and RoCEv2 GPU clusters."""
    # The configuration file's limits bound every command's inputs (a host's output, a capture, the subnet sweep's
    # budget), whichever options the command reads from it; a file that cannot be used stops here, FILE:LINE, exit 2.
    _config.current()


class _Root(TyperGroup):
    """The `rdmatool` group: every command is parsed and run through it, so its boundary covers them all, whether
    run by main() or by a test's CliRunner."""

    def make_context(self, info_name, args, parent=None, **extra):  # noqa: ANN001, ANN201 - click's signature
        plain_metavars(self)  # before any help is printed
        with boundary():  # the root's own options: --help, --version, an unknown command
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx):  # noqa: ANN001, ANN201 - click's signature
        with boundary():
            return super().invoke(ctx)


def build(argv: list[str] | None = None) -> typer.Typer:
    """The command line app: every command, or, when `argv` names one (`collect -i ...`), that command's module
    alone. `rdmatool collect` runs on every node of a fleet (a prolog, a health check, a shard of a job array):
    it need not import the thirteen other command modules and what they bring (rich, the perftest and result
    models). Help, completion and an unknown word get every command, so what they list and suggest is whole."""
    app = typer.Typer(
        name="rdmatool",
        help="RDMA fabric tuning and diagnostics for InfiniBand and RoCEv2 GPU clusters.",
        no_args_is_help=True,
        add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
        pretty_exceptions_enable=False,
        cls=_Root,
    )
    app.callback()(_root)
    # Only a command name in first place is one command's business: the options before it (--help, --version,
    # the completion ones) are the root's, and the root lists every command.
    first = argv[0] if argv else None
    modules = [_MODULE_OF[first]] if first in _MODULE_OF else COMMAND_MODULES
    for module in modules:
        # __import__ rather than importlib.import_module: `-X importtime`, how start-up is profiled, sees only it
        __import__(f"rdmatool.cli.{module}", fromlist=["register"]).register(app)
    return app


def __getattr__(name: str) -> typer.Typer:
    """`rdmatool.cli.app`: the app with every command, built on first use (the tests drive it in-process)."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    app = globals()["app"] = build()
    return app


def main() -> None:
    huge_pages.avoid_huge_pages()  # before numpy is imported: it reads its setting then (see the module)
    try:
        # Shell completion asks through the environment, with no words: build() then registers every command.
        build(sys.argv[1:] if "_RDMATOOL_COMPLETE" not in os.environ else None)()
    except KeyboardInterrupt:
        print("rdmatool: interrupted", file=sys.stderr)
        sys.exit(130)
    except SystemExit as done:  # typer ends a Ctrl-C'd command with exit 130 itself, and silently
        if done.code == 130:
            print("rdmatool: interrupted", file=sys.stderr)
        raise
    except BrokenPipeError:  # written outside a command (shell completion): the reader went away all the same
        try:
            reader_gone()
        except typer.Exit as done:
            sys.exit(done.exit_code)
    except Exception as exc:  # noqa: BLE001 - a bug of rdmatool's own: 1 would read as "drain these nodes", 3 as a verdict
        if os.environ.get("RDMATOOL_TRACEBACK"):
            raise
        where = traceback.extract_tb(exc.__traceback__)[-1]
        print(f"rdmatool: internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]} "
              f"(at {Path(where.filename).name}:{where.lineno}; RDMATOOL_TRACEBACK=1 shows the traceback)",
              file=sys.stderr)
        sys.exit(4)  # EXIT_INTERNAL of rdmatool.cli.exit_codes
