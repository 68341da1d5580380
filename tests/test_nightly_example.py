"""The nightly example's systemd unit, its command run as systemd would run it (its Environment, `$$` and `%%`
unescaped) against the simulated fabric: a night writes a dated bundle and a baseline; a bad inventory is one line
naming it; a night where nothing answers says so without a traceback. Only the unit's paths are pointed elsewhere."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from tests.fabric.fixtures import fabric_fixture

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[1]
UNIT = REPO / "examples" / "nightly" / "rdmatool-baseline.service"

fabric = fabric_fixture("healthy", scope="module")


def _service() -> tuple[dict[str, str], list[str]]:
    """[Service] Environment and ExecStart, as systemd reads them: continuation lines joined, then `$$` -> `$`
    and `%%` -> `%`."""
    text = UNIT.read_text().replace("\\\n", " ")
    env, exec_start = {}, None
    for line in text.splitlines():
        if line.startswith("Environment="):
            key, _, value = line[len("Environment="):].partition("=")
            env[key] = value
        elif line.startswith("ExecStart="):
            exec_start = line[len("ExecStart="):]
    assert exec_start is not None
    return env, shlex.split(exec_start.replace("$$", "$").replace("%%", "%"))


def _night(tmp_path: Path, inventory: Path, known_hosts: Path) -> subprocess.CompletedProcess:
    env, argv = _service()
    assert env["RDMATOOL"] == "/opt/rdmatool/bin/rdmatool"  # the README's service location
    launcher = tmp_path / "rdmatool"
    launcher.write_text(f"#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m rdmatool \"$@\"\n")
    launcher.chmod(0o755)
    env.update(RDMATOOL=str(launcher), INVENTORY=str(inventory), KNOWN_HOSTS=str(known_hosts),
               BUNDLES=str(tmp_path / "bundles"), STORE=str(tmp_path / "baselines"), INTERVAL="1")
    (tmp_path / "bundles").mkdir(exist_ok=True)
    (tmp_path / "baselines").mkdir(exist_ok=True)
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), **env})


def test_a_night_writes_a_dated_bundle_and_the_baseline(fabric, tmp_path: Path) -> None:
    result = _night(tmp_path, Path(fabric.inventory_path), Path(fabric.known_hosts))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    bundle = tmp_path / "bundles" / date.today().isoformat()
    assert (bundle / "manifest.json").is_file()
    assert [p.name for p in (tmp_path / "baselines").iterdir() if not p.name.startswith(".")], "no baseline saved"


def test_a_bad_inventory_is_one_line_naming_it(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("targets:\n  - {name: gpu01, address: 127.0.1.1, colour: blue}\n")
    result = _night(tmp_path, inventory, tmp_path / "known_hosts")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert str(inventory) in line and "Traceback" not in result.stderr


def test_a_night_where_nothing_answers_is_inconclusive_without_a_traceback(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("targets:\n  - {name: gpu01, address: 127.0.0.1, port: 1}\n")
    result = _night(tmp_path, inventory, tmp_path / "known_hosts")
    assert result.returncode == 3
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr and 1 <= len(lines) <= 2, lines
    assert "gpu01" in lines[0] and all(line.startswith("rdmatool") for line in lines)
