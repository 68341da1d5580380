"""Running the real `rdmatool` command line against the simulated fabric."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def rdmatool(*args: str, timeout: float = 240, env: dict | None = None) -> subprocess.CompletedProcess:
    """The CLI as a user runs it: a separate process, exit code and both streams captured."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", **(env or {})}
    return subprocess.run([sys.executable, "-m", "rdmatool", *args], capture_output=True, text=True,
                          timeout=timeout, env=full_env, cwd=REPO)


def collect(fabric, out: Path, *extra: str, inventory: Path | None = None, known_hosts: Path | None = None,
            env: dict | None = None):
    return rdmatool("collect", "-i", str(inventory or fabric.inventory_path), "-o", str(out),
                    "--known-hosts", str(known_hosts or fabric.known_hosts), "--timeout", "10", *extra, env=env)


def manifest(bundle: Path) -> dict:
    return json.loads((bundle / "manifest.json").read_text())


def rewrite_inventory(fabric, path: Path, change) -> Path:
    """A copy of the fabric's inventory with `change(data)` applied."""
    data = yaml.safe_load(Path(fabric.inventory_path).read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def sigint_default() -> None:
    """A `preexec_fn` for a child that a test interrupts with SIGINT. A shell runs its background jobs with SIGINT
    ignored, the child inherits that, and Python then installs no KeyboardInterrupt handler: restore the default,
    as an operator's terminal has it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
