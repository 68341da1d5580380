"""The conventions of the command line, for every command it has: help text for every option, nothing cut at 80
columns, `--format` (with its `--json` alias) on every command that prints, and shell completion that completes
commands, options and --format's values."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from rdmatool.cli import app

runner = CliRunner()
ROOT = typer.main.get_command(app)
RDMATOOL = Path(sys.executable).parent / "rdmatool"  # the installed entry point: completion is keyed on its name
# Commands whose output is a file or a fixed format, so that --format would have nothing to choose, each with why.
NOT_PRINTING = {
    ("collect",): "writes a bundle; its summary goes to stderr",
    ("bundle", "merge"): "writes a bundle; its summary goes to stderr",
    ("capture",): "writes a capture into a bundle",
    ("perf", "run"): "writes the matrices, heatmap and attribution.json; its summary goes to stderr",
    ("report",): "writes one HTML file",
    ("export", "prometheus"): "its output is the Prometheus text format",
    ("schema",): "prints a JSON Schema, JSON already",
    ("docs",): "prints a shipped Markdown document (or the places of it a finding cites) as it is",
    ("watch",): "prints its findings as JSON lines already, one a line as they come",
}


def commands(group=ROOT, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    """Every command of the app with its path (typer brings its own click: groups are told by `commands`)."""
    if getattr(group, "commands", None):
        return [found for name, sub in sorted(group.commands.items()) for found in commands(sub, (*prefix, name))]
    return [(prefix, group)]


COMMANDS = commands()
IDS = [" ".join(path) for path, _ in COMMANDS]


def options(command) -> list:
    return [p for p in command.params if p.param_type_name == "option"]


def option_names(command) -> set[str]:
    return {name for p in options(command) for name in p.opts}


def test_the_walk_finds_the_command_tree() -> None:
    assert len(COMMANDS) >= 20
    assert {("diagnose",), ("config", "show"), ("baseline", "diff")} <= {path for path, _ in COMMANDS}
    assert set(NOT_PRINTING) <= {path for path, _ in COMMANDS}  # no stale exemption


@pytest.mark.parametrize(("path", "command"), [((), ROOT), *COMMANDS], ids=["rdmatool", *IDS])
def test_every_option_has_help(path, command) -> None:
    missing = [p.opts[0] for p in options(command) if not (p.help or "").strip()]
    assert not missing, f"rdmatool {' '.join(path)}: options without help: {missing}"


@pytest.mark.parametrize(("path", "command"), [((), ROOT), *COMMANDS], ids=["rdmatool", *IDS])
def test_help_at_80_columns_cuts_nothing(path, command) -> None:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(map(len, lines)) <= 80
    cut = [line for line in lines if "…" in line]
    assert not cut, f"rdmatool {' '.join(path)} --help at 80 columns cuts: {cut}"
    words = set(result.output.replace(",", " ").split())
    shown = {name for p in options(command) if not p.hidden for name in p.opts if name.startswith("--")}
    assert shown <= words, f"option names not printed whole: {sorted(shown - words)}"


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_every_printing_command_has_format_and_its_json_alias(path, command) -> None:
    names = option_names(command)
    if path in NOT_PRINTING:
        assert "--format" not in names and "--json" not in names, f"{path}: exempted, yet it has a format option"
        return
    assert {"--format", "--json"} <= names, f"rdmatool {' '.join(path)}: no --format / --json"
    fmt = next(p for p in options(command) if "--format" in p.opts)
    assert fmt.default == "table"
    assert fmt.help.startswith("table | json"), fmt.help  # the same spelling everywhere (rdmatool.cli._format)


@pytest.mark.parametrize("args", [
    ["plan", "checkpoint", "--size", "100GB", "--interval", "1h", "--write-gbps", "10"],
    ["config", "show"],
    ["baseline", "list", "--store", "{tmp}"],
], ids=["plan checkpoint", "config show", "baseline list"])
def test_json_is_format_json(args: list[str], tmp_path: Path) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    by_alias = runner.invoke(app, [*args, "--json"])
    by_format = runner.invoke(app, [*args, "--format", "json"])
    table = runner.invoke(app, args)
    assert by_alias.exit_code == by_format.exit_code == table.exit_code == 0, by_alias.output + table.output
    assert json.loads(by_alias.stdout) == json.loads(by_format.stdout)
    with pytest.raises(ValueError):
        json.loads(table.stdout)  # the default is the human view
    wrong = runner.invoke(app, [*args, "--format", "yaml"])
    assert wrong.exit_code == 2
    assert "--format must be one of table, json" in wrong.stderr


def test_json_beside_another_format_is_refused() -> None:
    result = runner.invoke(app, ["bundle", "diff", "a", "b", "--json", "--format", "markdown"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "rdmatool bundle diff: --json is --format json; it cannot go with --format markdown"


# --- shell completion ------------------------------------------------------------------------------------------


def complete(words: str, cword: int) -> list[str]:
    """What the completion script asks rdmatool for: the words typed so far, the index of the one completed."""
    env = {**os.environ, "_RDMATOOL_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    done = subprocess.run([str(RDMATOOL)], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


needs_entry_point = pytest.mark.skipif(not RDMATOOL.exists(), reason=f"no installed entry point at {RDMATOOL}")


@needs_entry_point
def test_show_completion_prints_the_bash_script() -> None:
    done = subprocess.run([str(RDMATOOL), "--show-completion", "bash"], env={**os.environ, "SHELL": "/bin/bash"},
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "_RDMATOOL_COMPLETE=complete_bash" in done.stdout
    assert "complete -o default -F _rdmatool_completion rdmatool" in done.stdout


@needs_entry_point
def test_completion_completes_commands_options_and_format_values() -> None:
    top = complete("rdmatool ", 1)
    assert {"diagnose", "gate", "collect", "baseline", "bundle", "config"} <= set(top)
    assert complete("rdmatool ba", 1) == ["baseline"]
    assert sorted(complete("rdmatool baseline s", 2)) == ["save", "show"]
    assert "--format" in complete("rdmatool gate --fo", 2)
    assert complete("rdmatool diagnose --format ", 3) == ["table", "json", "markdown", "commands"]
    assert complete("rdmatool bundle diff a b --format m", 6) == ["markdown"]


@needs_entry_point
@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_install_completion_installs_a_script_bash_runs(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "SHELL": "/bin/bash"}
    done = subprocess.run([str(RDMATOOL), "--install-completion", "bash"], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    script = tmp_path / ".bash_completions" / "rdmatool.sh"
    assert script.is_file()
    assert str(script) in (tmp_path / ".bashrc").read_text()  # sourced by every new shell
    # The script itself, in bash: COMPREPLY for `rdmatool baseline s<TAB>`.
    env["PATH"] = f"{RDMATOOL.parent}{os.pathsep}{env.get('PATH', '')}"
    shell = subprocess.run(
        ["bash", "--norc", "-c", f'source "{script}"; COMP_WORDS=(rdmatool baseline s); COMP_CWORD=2; '
                                 '_rdmatool_completion rdmatool; printf "%s\\n" "${COMPREPLY[@]}"'],
        env=env, capture_output=True, text=True, timeout=60, check=False)
    assert shell.returncode == 0, shell.stderr
    assert sorted(shell.stdout.split()) == ["save", "show"]


def test_the_collect_summary_prints_a_hosts_error_verbatim(capsys: pytest.CaptureFixture) -> None:
    # The host's words go into the table as data: `[/x]` was a rich closing tag that stopped the command.
    from rdmatool.cli.collect_cmd import print_summary
    from rdmatool.collect import TargetOutcome
    from rdmatool.model import Target

    print_summary([TargetOutcome(Target("gpu01", "127.0.0.1"), error="ssh: [/x] refused [red]here"),
                   TargetOutcome(Target("gpu02", "127.0.0.2"))])
    err = capsys.readouterr().err
    assert "collected 1/2 targets" in err and "gpu01" in err
    assert "[/x] refused [red]here" in " ".join(err.split())
    print_summary([TargetOutcome(Target("gpu02", "127.0.0.2"))])
    assert capsys.readouterr().err == "collected 1/1 targets, no errors\n"
