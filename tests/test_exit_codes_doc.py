"""Every command's `--help` and the exit-code table of docs/cli-conventions.md (which the README links) say the same,
for every command the CLI has: they cannot drift apart, and a new command cannot ship without its row. The rows every
command shares (a tool missing on a host) and the closed-stdout line are rdmatool.cli.exit_codes' too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from rdmatool.cli import app
from rdmatool.cli.exit_codes import CLOSED, SHARED

ROOT_DIR = Path(__file__).resolve().parents[1]
README = ROOT_DIR / "README.md"
CONVENTIONS = ROOT_DIR / "docs" / "cli-conventions.md"
_ENTRY = re.compile(r"(\d) = (.*?)(?=; \d = |$)")


def leaf_commands(group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path of the CLI (a group has sub-commands; typer brings its own click, so no isinstance)."""
    if getattr(group, "commands", None):
        return [path for name, sub in sorted(group.commands.items()) for path in leaf_commands(sub, (*prefix, name))]
    return [prefix]


COMMANDS = leaf_commands(typer.main.get_command(app))
# How to bring the table up to date after a change to rdmatool/cli/exit_codes.py.
REGENERATE = ("docs/cli-conventions.md's exit-code table is not rdmatool/cli/exit_codes.py's: replace it with what "
              "`python -c 'from rdmatool.cli.exit_codes import markdown_table; print(markdown_table())'` prints")


def table(path: Path) -> tuple[dict[str, dict[int, str]], dict[str, dict[int, str]]]:
    """The rows of a document's "Exit codes" table: command -> {code: meaning}, and the shared rows by their first
    cell; a dash is a code not used. Empty when the document has no such table."""
    text = path.read_text(encoding="utf-8")
    if "\n## Exit codes\n" not in text:
        return {}, {}
    section = text.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    commands, shared = {}, {}
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("| command |"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 6, line
        codes = {code: text for code, text in enumerate(cells[1:]) if text != "—"}
        if cells[0].startswith("`rdmatool "):
            commands[cells[0].strip("`").removeprefix("rdmatool ")] = codes
        else:
            shared[cells[0]] = codes
    return commands, shared


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
    assert sorted(table(CONVENTIONS)[0]) == sorted(" ".join(path) for path in COMMANDS), REGENERATE


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_help_says_what_the_table_says(path: tuple[str, ...]) -> None:
    documented = table(CONVENTIONS)[0].get(" ".join(path), {})
    assert help_codes(path) == documented, REGENERATE
    assert set(documented) <= {0, 1, 2, 3, 4} and 0 in documented and 2 in documented
    assert documented[4].startswith("internal error")  # every command: a crash is never read as a verdict


def test_the_shared_rows_and_the_closed_stdout_line_are_documented() -> None:
    shared = table(CONVENTIONS)[1]
    assert shared == {f"{fact} ({who})": codes for fact, (who, codes) in SHARED.items()}
    assert " ".join(CLOSED.split()) in " ".join(CONVENTIONS.read_text(encoding="utf-8").split())


def test_the_readme_links_the_table_and_copies_no_row() -> None:
    """One table (docs/cli-conventions.md's): a copy in the README would be a second to keep equal."""
    commands, shared = table(README)
    assert not commands and not shared
    text = README.read_text(encoding="utf-8")
    assert "(docs/cli-conventions.md#exit-codes)" in text and "## Exit codes" in text


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
