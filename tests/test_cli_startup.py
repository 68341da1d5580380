"""Starting `rdmatool` stays light: the commands import pandas, paramiko and the rest when they run."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import REPO, imported_modules

HEAVY = ("pandas", "numpy", "paramiko", "netmiko", "rdmatool.baseline", "rdmatool.inventory", "rdmatool.collect")


def test_importing_the_cli_imports_no_heavy_module():
    code = f"import sys, rdmatool.cli; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == ""


def test_baseline_command_defaults_are_the_baseline_modules():
    from rdmatool import baseline
    from rdmatool.cli import baseline_cmd

    assert (baseline_cmd.DEFAULT_STORE, baseline_cmd.DEFAULT_NAME, baseline_cmd.DEFAULT_KEEP) == (
        baseline.DEFAULT_STORE, baseline.DEFAULT_NAME, baseline.DEFAULT_KEEP)


def _names(app) -> set[str]:  # noqa: ANN001 - a typer.Typer
    return {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}


def test_each_command_module_registers_the_names_the_registry_gives_it():
    import importlib

    import typer

    from rdmatool import cli

    for module, names in cli.COMMAND_MODULES.items():
        app = typer.Typer()
        importlib.import_module(f"rdmatool.cli.{module}").register(app)
        assert _names(app) == set(names), module


def test_a_command_builds_its_module_alone_and_the_root_builds_every_command():
    from rdmatool import cli

    every = {name for names in cli.COMMAND_MODULES.values() for name in names}
    assert len(every) == 20
    assert _names(cli.build(["collect", "-i", "inv.yaml"])) == {"collect", "inventory", "bundle"}
    assert _names(cli.build(["gate", "--help"])) == {"gate"}
    for argv in ([], ["--help"], ["--version"], ["colect"], ["--install-completion", "bash"]):
        assert _names(cli.build(argv)) == every, argv
    assert _names(cli.app) == every


def test_collect_help_imports_no_other_command_module():
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "rdmatool", "collect", "--help"],
                          capture_output=True, text=True, check=False, cwd=REPO, env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--interval" in done.stdout and "--shard" in done.stdout
    imported = imported_modules(done.stderr)
    assert {m for m in imported if m.startswith("rdmatool.cli.") and m.endswith("_cmd")} == {
        "rdmatool.cli.collect_cmd"}


def test_rdmatool_help_lists_every_command():
    done = subprocess.run([sys.executable, "-m", "rdmatool", "--help"], capture_output=True, text=True, check=False,
                          cwd=REPO, env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    from rdmatool import cli

    for names in cli.COMMAND_MODULES.values():
        for name in names:
            assert f" {name} " in done.stdout, name


def test_a_collection_reaches_its_first_connection_without_numpy_or_pandas():
    # What `rdmatool collect` imports before its fan-out starts: the parse's numpy is imported by the first target
    # done (collect._store_builder), while the others are still collected, not before the first connection.
    code = ("import sys, rdmatool.cli.collect_cmd, rdmatool.inventory, rdmatool.collect, rdmatool.bundle; "
            "print(' '.join(m for m in ('numpy', 'pandas') if m in sys.modules)); "
            "from rdmatool import collect; collect._store_builder(); print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.split("\n")[:2] == ["", "True"]
