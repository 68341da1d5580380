"""The nightly unit's textfile export (its ExecStartPost), run as systemd would run it against a night's bundle and
baseline: the .prom file appears in TEXTFILE_DIR, whole, and Prometheus' parser reads the verdict from it."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from tests.helpers import REPO

UNIT = REPO / "examples" / "nightly" / "rdmatool-baseline.service"


def _unit() -> tuple[dict[str, str], list[str]]:
    text = UNIT.read_text().replace("\\\n", " ")
    env = {}
    export = None
    for line in text.splitlines():
        if line.startswith("Environment="):
            key, _, value = line[len("Environment="):].partition("=")
            env[key] = value
        elif line.startswith("ExecStartPost=") and "export prometheus" in line:
            export = line[len("ExecStartPost="):]
    assert export is not None, "the unit writes no textfile export"
    return env, shlex.split(export.replace("$$", "$").replace("%%", "%"))


def test_the_unit_writes_the_textfile_export_after_the_save(tmp_path: Path) -> None:
    env, argv = _unit()
    assert env["TEXTFILE_DIR"].endswith("textfile_collector")
    launcher = tmp_path / "rdmatool"
    launcher.write_text(f"#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m rdmatool \"$@\"\n")
    launcher.chmod(0o755)
    night = tmp_path / "bundles" / date.today().isoformat()
    shutil.copytree(REPO / "examples" / "demo-bundle", night)
    store, textfiles = tmp_path / "baselines", tmp_path / "textfile"
    textfiles.mkdir()
    saved = subprocess.run([str(launcher), "baseline", "save", str(night), "--store", str(store), "--name", "default"],
                           capture_output=True, text=True, timeout=300)
    assert saved.returncode == 0, saved.stderr
    env.update(RDMATOOL=str(launcher), BUNDLES=str(tmp_path / "bundles"), STORE=str(store),
               TEXTFILE_DIR=str(textfiles))
    result = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path,
                            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), **env})
    assert result.returncode == 0, result.stderr
    assert os.listdir(textfiles) == ["rdmatool.prom"]
    families = {f.name: f for f in text_string_to_metric_families((textfiles / "rdmatool.prom").read_text())}
    verdict = {s.labels["verdict"]: s.value for s in families["rdmatool_gate_verdict"].samples}
    assert verdict["fail"] == 1.0  # the degraded demo night
    assert families["rdmatool_findings"].samples
