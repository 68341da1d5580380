"""The nightly example's systemd unit, its command run as systemd would run it (its Environment, `$$` and `%%`
unescaped) against the simulated fabric: a night writes a dated bundle and a baseline; a bad inventory is one line
naming it; a night where nothing answers says so without a traceback. Only the unit's paths are pointed elsewhere.

The example is complete as written: every directory the unit and the cron line write to is created for the service
user by the README's set-up (or by the unit's StateDirectory=), and the cron line, run on a tree the set-up's
commands made, writes its log there."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from tests.fabric.fixtures import fabric_fixture

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[1]
NIGHTLY = REPO / "examples" / "nightly"
UNIT = NIGHTLY / "rdmatool-baseline.service"
SERVICE_USER = "rdmatool"

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
    (night,) = json.loads((tmp_path / "baselines" / "default.json").read_text())["nights"]
    assert night["diagnosis"]["verdict"] in ("pass", "warn"), night["diagnosis"]  # a healthy night, and it counts


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


# --- the set-up creates what the nightly writes to ---------------------------------------------------------------


def _setup_lines() -> list[str]:
    """The commands of the README's set-up block, continuation lines joined, comments dropped."""
    text = (NIGHTLY / "README.md").read_text(encoding="utf-8")
    block = text.split("```sh\n", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    return [line.split(" #", 1)[0].strip() for line in block.splitlines() if line.strip() and
            not line.lstrip().startswith("#")]


def _created_for_the_user() -> list[str]:
    """The directories the set-up gives the service user: its home (useradd), `install -d -o USER` and the unit's
    StateDirectory= / LogsDirectory= (systemd creates them under /var/lib and /var/log for User=)."""
    made = []
    for line in _setup_lines():
        words = shlex.split(line)
        if words[:1] == ["useradd"] and words[-1] == SERVICE_USER and "--create-home" in words:
            made.append(words[words.index("--home-dir") + 1])
        if words[:2] == ["install", "-d"] and "-o" in words and words[words.index("-o") + 1] == SERVICE_USER:
            made += [w for w in words[2:] if w.startswith("/")]
    unit = UNIT.read_text(encoding="utf-8")
    assert re.search(rf"^User={SERVICE_USER}$", unit, re.M)
    for key, root in (("StateDirectory", "/var/lib"), ("LogsDirectory", "/var/log")):
        made += [f"{root}/{name}" for m in re.finditer(rf"^{key}=(.+)$", unit, re.M) for name in m[1].split()]
    return made


def _cron_command() -> str:
    """The crontab's command as cron hands it to /bin/sh: after the five time fields, `\\%` read as `%`."""
    (line,) = [x for x in (NIGHTLY / "crontab.txt").read_text(encoding="utf-8").splitlines()
               if x.strip() and not x.startswith("#")]
    return line.split(None, 5)[5].replace("\\%", "%")


def _written_by_the_nightly() -> dict[str, str]:
    """Each directory the unit or the cron line writes into (a file's directory, a directory it creates under)."""
    env, _ = _service()
    cron = _cron_command()
    (log,) = re.findall(r">>\s*(\S+)", cron)
    (lock,) = re.findall(r"flock -n (\S+)", cron)
    (workdir,) = re.findall(r"^cd (\S+) &&", cron)
    outs = re.findall(r" -o (/\S+?)'", cron)
    return {"unit BUNDLES": env["BUNDLES"], "unit STORE": env["STORE"],
            "unit KNOWN_HOSTS": str(Path(env["KNOWN_HOSTS"]).parent), "unit TEXTFILE_DIR": env["TEXTFILE_DIR"],
            "cron log": str(Path(log).parent), "cron lock": str(Path(lock).parent), "cron cd": workdir,
            **{f"cron -o {o}": str(Path(o).parent) for o in outs}}


def test_every_directory_the_nightly_writes_to_is_created_for_the_service_user() -> None:
    made = _created_for_the_user()
    written = _written_by_the_nightly()
    assert "cron log" in written and written["unit TEXTFILE_DIR"] in made
    missing = {what: path for what, path in written.items()
               if not any(path == m or path.startswith(m.rstrip("/") + "/") for m in made)}
    assert missing == {}, f"written by the nightly, never created for {SERVICE_USER} by the set-up: {missing}"


def test_the_cron_line_logs_on_a_machine_set_up_as_the_readme_says(tmp_path: Path) -> None:
    # The set-up's directories made under a scratch root (as root here: no `rdmatool` user, so no -o/-g), then the
    # cron line run there by /bin/sh as cron runs it. Its inventory is bad, so collect's one line is the night, and
    # it must land in the log: a log the shell cannot open skips the whole night.
    root = tmp_path / "root"
    for line in _setup_lines():
        words = shlex.split(line)
        if words[:1] == ["useradd"]:
            (root / words[words.index("--home-dir") + 1].lstrip("/")).mkdir(parents=True)
        elif words[:2] == ["install", "-d"]:
            kept, skip = [], False
            for w in words:
                if skip or w in ("-o", "-g"):
                    skip = not skip
                    continue
                kept.append(f"{root}{w}" if w.startswith("/") else w)
            subprocess.run(kept, check=True)
    launcher = root / "opt" / "rdmatool" / "bin" / "rdmatool"
    launcher.parent.mkdir(parents=True)
    launcher.write_text(f"#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m rdmatool \"$@\"\n")
    launcher.chmod(0o755)
    inventory = root / "etc" / "rdmatool" / "inventory.yaml"
    inventory.parent.mkdir(parents=True)
    inventory.write_text("targets:\n  - {name: gpu01, address: 127.0.1.1, colour: blue}\n")
    command = re.sub(r"(?<![\w.$])/(var|opt|etc)/", rf"{root}/\1/", _cron_command())
    result = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, timeout=120,
                            env={"PATH": os.environ["PATH"], "HOME": str(root / "var" / "lib" / "rdmatool")})
    (log,) = re.findall(r">>\s*(\S+)", command)
    assert result.returncode == 2 and result.stderr == "", result.stderr  # cron would mail stderr: nothing
    lines = Path(log).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 and str(inventory) in lines[0] and "colour" in lines[0], lines
