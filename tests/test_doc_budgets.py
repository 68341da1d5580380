"""The documents stay short enough to read in minutes, and the command reference stays whole.

Budgets: docs/architecture.md at most 1,200 words with no table cell over 300 characters, README.md at most 200
lines, benchmarks/README.md at most 250 lines. docs/cli.md has a section for every command `rdmatool --help` lists,
and the README's test command is the one CI runs (the last line of .ci/run).
"""

from __future__ import annotations

import re

import typer.main

from tests.helpers import REPO

ARCHITECTURE = REPO / "docs" / "architecture.md"
README = REPO / "README.md"
BENCHMARKS = REPO / "benchmarks" / "README.md"
CLI = REPO / "docs" / "cli.md"


def table_cells(text: str) -> list[str]:
    """Every cell of every Markdown table row (a line starting with `|`)."""
    return [cell.strip() for line in text.splitlines() if line.startswith("|")
            for cell in line.strip().strip("|").split("|")]


def top_level_commands() -> list[str]:
    """The commands `rdmatool --help` lists, from the app itself."""
    from rdmatool.cli import app

    group = typer.main.get_command(app)
    return sorted(name for name, command in group.commands.items() if not getattr(command, "hidden", False))


def test_architecture_is_at_most_1200_words() -> None:
    words = len(ARCHITECTURE.read_text(encoding="utf-8").split())
    assert words <= 1200, f"docs/architecture.md has {words} words (budget 1,200)"


def test_architecture_table_cells_are_short() -> None:
    cells = table_cells(ARCHITECTURE.read_text(encoding="utf-8"))
    assert len(cells) > 20  # the steps table was found
    long = [f"{len(cell)}: {cell[:60]}..." for cell in cells if len(cell) > 300]
    assert not long, "docs/architecture.md: table cells over 300 characters:\n" + "\n".join(long)


def test_readme_is_at_most_200_lines() -> None:
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= 200, f"README.md has {lines} lines (budget 200)"


def test_benchmarks_readme_is_at_most_250_lines() -> None:
    lines = len(BENCHMARKS.read_text(encoding="utf-8").splitlines())
    assert lines <= 250, f"benchmarks/README.md has {lines} lines (budget 250)"


def test_cli_reference_has_a_section_for_every_command() -> None:
    commands = top_level_commands()
    assert {"collect", "diagnose", "gate", "baseline"} <= set(commands)  # the app's commands were read
    headings = re.findall(r"^## `rdmatool ([a-z][a-z-]*)", CLI.read_text(encoding="utf-8"), re.M)
    missing = [name for name in commands if name not in headings]
    assert not missing, f"docs/cli.md has no `## \\`rdmatool NAME` section for: {', '.join(missing)}"


def test_readme_test_command_is_the_one_ci_runs() -> None:
    ci_command = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci_command.startswith("python3 -m venv .venv") and "pytest" in ci_command
    assert ci_command in README.read_text(encoding="utf-8").splitlines()
