"""Light on the node (docs/node-install.md): `gate --local`, which runs on every node and in every DaemonSet pod,
loads none of the workstation's packages (the figures' matplotlib, the captures' scapy, the switches' netmiko, the
SSH transport's paramiko); those two are extras, which the dev install brings for the tests; and a command that needs
an extra that is not installed says which, in one line, exit 2.

The gate runs in a child Python whose `sys.modules` is printed at exit: what the command itself loaded, not what
this test process happens to hold. An extra is "not installed" by `sys.modules[name] = None` (what
`import name` and `importlib.util.find_spec` both then report as absent).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

# Loaded by no node check. pandas.plotting is not here: `import pandas` brings that stub itself (1 ms), and it
# imports no plotting library until a plot is drawn.
NOT_ON_A_NODE = ("matplotlib", "scapy", "netmiko", "paramiko", "PIL", "prometheus_client")

RUN = """
import atexit, json, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n"))
sys.argv = ["rdmatool", *{args!r}]
from rdmatool.cli import main
main()
"""


def _rdmatool(*args: str) -> tuple[int, str, set[str]]:
    """Exit code, stderr without the module list, and the modules loaded when the command ended."""
    done = subprocess.run([sys.executable, "-c", RUN.format(args=list(args))], capture_output=True,
                          text=True, timeout=120, cwd=REPO, env={"PATH": "/usr/bin:/bin", "COLUMNS": "200"})
    stderr, _, modules = done.stderr.rpartition("\nMODULES ")
    return done.returncode, stderr.strip(), set(json.loads(modules))


def _top(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_gate_local_loads_none_of_the_workstation_packages(tmp_path: Path) -> None:
    code, stderr, modules = _rdmatool("gate", "--local", "--budget", "30", "--json", "--drain-file",
                                      str(tmp_path / "drain"))
    assert code in (0, 1, 3), stderr  # a verdict on this machine, whatever it has (tests/e2e/test_local_mode.py)
    assert (tmp_path / "drain").exists()  # it ran to the end
    assert {"rdmatool.transport.local", "rdmatool.gate.run", "pandas"} <= modules  # the check itself, all of it
    assert not _top(modules) & set(NOT_ON_A_NODE), sorted(_top(modules) & set(NOT_ON_A_NODE))


def test_the_figures_and_the_captures_are_extras_the_dev_install_brings() -> None:
    text = (REPO / "pyproject.toml").read_text()
    core = re.search(r"^dependencies = \[(.*?)\]", text, re.S | re.M).group(1)
    assert "matplotlib" not in core and "scapy" not in core
    assert re.search(r'^report = \["matplotlib[^"]*"\]', text, re.M)
    assert re.search(r'^capture = \["scapy[^"]*"\]', text, re.M)
    assert re.search(r'^dev = \["rdmatool\[report,capture\]"', text, re.M)
    assert "pip install -q -e '.[dev]'" in (REPO / ".ci" / "run").read_text()


@pytest.mark.parametrize(("extra", "module", "command"), [
    ("report", "matplotlib", ["report", "{tmp}", "-o", "{tmp}/r.html"]),
    ("capture", "scapy", ["pcap", "{tmp}/capture.pcap"]),
])
def test_a_command_without_its_extra_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str,
                                                     module: str, command: list[str]) -> None:
    from typer.testing import CliRunner

    from rdmatool.cli import app

    (tmp_path / "capture.pcap").write_bytes(b"\xd4\xc3\xb2\xa1" + bytes(20))
    monkeypatch.setitem(sys.modules, module, None)  # not installed, for this test only
    done = CliRunner().invoke(app, [word.format(tmp=tmp_path) for word in command])
    assert done.exit_code == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1 and f"pip install 'rdmatool[{extra}]'" in done.stderr, done.stderr
    assert f"needs {module}, which is not installed here" in done.stderr
