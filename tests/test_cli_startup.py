"""Starting `rdmatool` stays light: the commands import pandas, paramiko and the rest when they run."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import REPO

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
