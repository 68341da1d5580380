"""The command line keeps numpy from advising huge pages, and leaves a user's own setting alone."""

from __future__ import annotations

import os
import subprocess
import sys

from rdmatool.table import huge_pages

# A child that says whether its numpy advises huge pages (numpy's setter returns the setting it replaces).
_ASK = "import numpy; print(numpy._core.multiarray._set_madvise_hugepage(True))"


def _child(code: str, **extra: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != huge_pages.VARIABLE} | extra
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return done.stdout.split()[-1]


def test_numpy_advises_huge_pages_unless_told() -> None:
    # the control: numpy's own default on this kernel (if it never advises, the tests below prove nothing)
    assert _child(_ASK) == "True"
    assert _child("from rdmatool.table import huge_pages; huge_pages.avoid_huge_pages(); " + _ASK) == "False"
    # numpy imported first: told directly
    assert _child("import numpy; from rdmatool.table import huge_pages; huge_pages.avoid_huge_pages(); " + _ASK) == "False"


def test_the_command_line_turns_it_off_before_any_command() -> None:
    code = ("import sys; from rdmatool import cli; sys.argv = ['rdmatool', '--version']\n"
            "try:\n    cli.main()\nexcept SystemExit:\n    pass\n" + _ASK)
    assert _child(code) == "False"


def test_a_users_own_setting_stands(monkeypatch) -> None:
    monkeypatch.setenv(huge_pages.VARIABLE, "1")
    assert huge_pages.avoid_huge_pages() is False
    assert os.environ[huge_pages.VARIABLE] == "1"
    monkeypatch.setenv(huge_pages.VARIABLE, "0")
    assert huge_pages.avoid_huge_pages() is True
    assert _child("from rdmatool.table import huge_pages; huge_pages.avoid_huge_pages(); " + _ASK,
                  **{huge_pages.VARIABLE: "1"}) == "True"
