"""Usage errors and help, for every command the CLI has (rdmatool.cli._boundary, rdmatool.cli._format): a bad option,
a missing argument or a bad value is one line on stderr naming the command, exit 2, nothing on stdout (never typer's
usage block in a box); the help names values plainly (FILE, N, PATTERN), never by a Python type (`<str>`)."""

from __future__ import annotations

import re

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from rdmatool.cli import _Root, app

runner = CliRunner()
# What typer prints for a value without a metavar: the Python type, in angle brackets.
PYTHON_TYPE = re.compile(r"<(?:str|int|float|bool|path|datetime|uuid|[a-z]+ range|(?:list|tuple|dict)\[[^>]*\])>")


ROOT = typer.main.get_command(app)


def every_path(group=ROOT, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The root, every group and every command (typer brings its own click: groups are told by `commands`)."""
    subs = getattr(group, "commands", None) or {}
    return [prefix, *(path for name, sub in sorted(subs.items()) for path in every_path(sub, (*prefix, name)))]


PATHS = every_path()
IDS = [" ".join(("rdmatool", *path)) for path in PATHS]


def one_line_usage_error(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, (args, result.output)
    assert result.stdout == "", result.stdout  # no usage block, no help
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "╭" not in lines[0] and "Usage:" not in lines[0] and "Traceback" not in lines[0]
    return lines[0]


def test_the_walk_finds_every_command() -> None:
    assert len(PATHS) >= 25 and ("plan", "bandwidth") in PATHS and () in PATHS


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_a_bad_option_is_one_line_naming_the_command(path: tuple[str, ...]) -> None:
    line = one_line_usage_error([*path, "--no-such-option"])
    assert line.startswith(" ".join(("rdmatool", *path)) + ": no such option: --no-such-option"), line


@pytest.mark.parametrize(("args", "expected"), [
    (["baseline", "show"], "rdmatool baseline show: missing argument 'NAME'"),
    (["plan", "bandwidth", "--params", "7B"], "rdmatool plan bandwidth: missing option '--iterations-per-s'"),
    (["bundle", "diff", "a"], "rdmatool bundle diff: missing argument 'B'"),
    (["diagnose", "--interval", "soon"], "rdmatool diagnose: invalid value for '--interval': "),
    (["collect", "-o", "b", "--forks", "0"], "rdmatool collect: invalid value for '--forks': "),
    (["no-such-command"], "rdmatool: no such command 'no-such-command'"),
    (["parse", "ibstat", "a", "b"], "rdmatool parse: got unexpected extra argument"),
], ids=["missing argument", "missing option", "second argument", "bad value", "out of range", "unknown command",
        "extra argument"])
def test_missing_and_bad_values_are_one_line(args: list[str], expected: str) -> None:
    assert one_line_usage_error(args).startswith(expected)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_help_shows_no_python_type(path: tuple[str, ...]) -> None:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert not PYTHON_TYPE.findall(result.output), f"{' '.join(path)} --help: {PYTHON_TYPE.findall(result.output)}"


def test_the_help_check_sees_python_types_where_nothing_names_them() -> None:
    """The check above could fail: a typer app of its own, without rdmatool's root, prints the types."""
    def command(path: str = typer.Option(None, "--path", help="A path."), n: int = typer.Option(1, help="N."),
                flag: bool = typer.Option(False, "--flag", help="A flag.")) -> None:
        """A command."""

    for cls, has_types in ((None, True), (_Root, False)):
        bare = typer.Typer(cls=cls) if cls else typer.Typer()
        bare.command("x")(command)
        bare.command("y")(command)  # two commands: a group, as rdmatool's root is
        shown = CliRunner().invoke(bare, ["x", "--help"], env={"COLUMNS": "120"}).output
        assert bool(PYTHON_TYPE.findall(shown)) is has_types, shown
    assert re.search(r"--path\s+PATH\s", shown) and re.search(r"--n\s+N\s", shown)


def test_common_options_have_the_same_metavar_everywhere() -> None:
    shown = " ".join(runner.invoke(app, ["diagnose", "--help"], env={"COLUMNS": "200"}).output.split())
    for option, metavar in (("--inventory", "FILE"), ("--limit", "PATTERN"), ("--store", "DIR"), ("--forks", "N"),
                            ("--baseline", "NAME|FILE")):
        assert f"{option} {metavar}" in shown or re.search(rf"{option} -\w {metavar}", shown), option
