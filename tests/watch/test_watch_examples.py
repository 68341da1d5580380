"""The watch's examples say what the command takes: the systemd unit's and the Deployment's argument lists parse as
`rdmatool watch` options (tests/test_kubernetes_yaml.py validates the manifest itself)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import typer.main
import yaml

from rdmatool.cli import app

REPO = Path(__file__).resolve().parents[2]


def _parsed(args: list[str]) -> dict:
    command = typer.main.get_command(app).commands["watch"]
    return command.make_context("watch", list(args)).params


def test_the_deployment_runs_watch_for_ever_with_a_durable_history() -> None:
    docs = list(yaml.safe_load_all((REPO / "examples/kubernetes/watch-deployment.yaml").read_text()))
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["args"][0] == "watch"
    params = _parsed(container["args"][1:])
    assert params["duration"] == "0" and params["out"] == "/state" and params["textfile_dir"] == "/textfile"
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert {"/state", "/textfile", "/config"} <= mounts
    assert deployment["spec"]["strategy"]["type"] == "Recreate"  # never two watches on one history


def test_the_unit_runs_watch_for_ever_and_is_stopped_by_sigterm() -> None:
    unit = (REPO / "examples/systemd/rdmatool-watch.service").read_text()
    body = re.search(r"^ExecStart=/bin/sh -c '(.*?)'$", unit.replace("\\\n", " "), re.M | re.S).group(1)
    env = dict(re.findall(r"^Environment=(\w+)=(.*)$", unit, re.M))
    words = shlex.split(body.replace("$$", "$"))
    assert words[:2] == ["exec", "$RDMATOOL"] and env["RDMATOOL"] == "/opt/rdmatool/bin/rdmatool"
    assert words[2] == "watch"
    args = [env.get(w[1:], w) if w.startswith("$") else w for w in words[3:]]
    params = _parsed(args)
    assert params["duration"] == "0" and params["interval"] == 10.0 and params["out"] == "/var/lib/rdmatool/watch"
    assert "KillSignal=SIGTERM" in unit and "RestartPreventExitStatus=2" in unit
