"""The README's exit-code table and each command's `--help` say the same, for every command the CLI has: the two
cannot drift apart, and a new command cannot ship without its row."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from rdmatool.cli import app

README = Path(__file__).resolve().parents[1] / "README.md"
_ENTRY = re.compile(r"(\d) = (.*?)(?=; \d = |$)")


def leaf_commands(group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path of the CLI (a group has sub-commands; typer brings its own click, so no isinstance)."""
    if getattr(group, "commands", None):
        return [path for name, sub in sorted(group.commands.items()) for path in leaf_commands(sub, (*prefix, name))]
    return [prefix]


COMMANDS = leaf_commands(typer.main.get_command(app))


def readme_table() -> dict[str, dict[int, str]]:
    """The rows of the README's "Exit codes" table: command -> {code: meaning}; a dash is a code not used."""
    section = README.read_text(encoding="utf-8").split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `rdmatool ")]
    table = {}
    for line in rows:
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 6, line
        command = cells[0].strip("`").removeprefix("rdmatool ")
        table[command] = {code: text for code, text in enumerate(cells[1:]) if text != "—"}
    return table


def help_codes(path: tuple[str, ...]) -> dict[int, str]:
    """The exit codes a command's `--help` prints, whatever the terminal's width did to the lines."""
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "Exit codes: " in text, f"`rdmatool {' '.join(path)} --help` does not print its exit codes"
    entries = text.split("Exit codes: ", 1)[1].removesuffix(".")
    return {int(code): meaning for code, meaning in _ENTRY.findall(entries)}


def test_every_command_has_a_row() -> None:
    assert len(COMMANDS) >= 10  # the walk found the command tree, not just the root
    assert sorted(readme_table()) == sorted(" ".join(path) for path in COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_help_says_what_the_readme_says(path: tuple[str, ...]) -> None:
    documented = readme_table()[" ".join(path)]
    assert help_codes(path) == documented
    assert set(documented) <= {0, 1, 2, 3, 4} and 0 in documented and 2 in documented
    assert documented[4].startswith("internal error")  # every command: a crash is never read as a verdict


def test_an_internal_error_is_exit_4_one_line_never_a_verdict(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A bug of rdmatool's own is neither 1 (drain these nodes) nor 3 (inconclusive: a prolog lets the job run)."""
    import rdmatool.cli as cli

    def broken(argv: list[str] | None = None) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(cli, "build", broken)
    monkeypatch.setattr("sys.argv", ["rdmatool", "gate"])
    monkeypatch.delenv("RDMATOOL_TRACEBACK", raising=False)
    with pytest.raises(SystemExit) as ended:
        cli.main()
    assert ended.value.code == 4
    err = capsys.readouterr().err
    assert err.startswith("rdmatool: internal error: KeyError") and err.count("\n") == 1
