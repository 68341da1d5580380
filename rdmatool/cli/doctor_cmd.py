"""`rdmatool doctor`: what local mode can read on this machine — pyverbs (usable, or why not), the RDMA devices,
the tools of the host script — and what to do about what is missing."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from rdmatool import __version__
from rdmatool.cli._format import JSON, TABLE, chosen, format_param, json_param
from rdmatool.cli._output import data_console, print_json, print_wrapped
from rdmatool.cli.exit_codes import epilog

SYSTEM_PYTHON = "/usr/bin/python3"  # where Debian's, Ubuntu's, Fedora's and RHEL's python3-pyverbs installs
# The tools the host script runs when they are installed (rdmatool.commands.HOST_SCRIPT), and their packages.
SCRIPT_TOOLS = (("ibstat", "infiniband-diags"), ("ibv_devinfo", "ibverbs-utils / libibverbs-utils"),
                ("perfquery", "infiniband-diags"), ("iblinkinfo", "infiniband-diags"), ("ethtool", "ethtool"),
                ("mlnx_qos", "mlnx-tools"), ("show_gids", "mlnx-tools"), ("lldpctl", "lldpd"),
                ("timeout", "coreutils"))
PROBE_TIMEOUT_S = 30.0


FORMATS = ("table", "json")


def register(app: typer.Typer) -> None:
    app.command("doctor", epilog=epilog("doctor"))(doctor_command)


def doctor_command(
    fmt: Annotated[str, format_param(FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
) -> None:
    """Say what local mode (collect --local, gate --local) can read here: pyverbs, RDMA devices, tools."""
    as_json = chosen("doctor", fmt, as_json, FORMATS) == JSON
    report = examine()
    if as_json:
        from rdmatool.schemas import tag

        print_json({"schema": tag("doctor"), **report})  # rdmatool/schemas/doctor.schema.json
        return
    out = data_console()  # wrapped to COLUMNS (a tool's reason can be long)
    for line in render(report):
        print_wrapped(out, line)


def examine(sysfs: str = "/sys/class/infiniband") -> dict:
    from rdmatool.transport.local import local_target, verbs_command

    verbs = _verbs_read(verbs_command())
    report = {
        "rdmatool": __version__,
        "host": local_target().name,
        "python": sys.executable,
        "python_version": platform.python_version(),
        "pyverbs": {"usable": verbs.get("status") == "ok", "status": verbs.get("status"),
                    "reason": verbs.get("reason"), "path": verbs.get("pyverbs"),
                    "devices": [d.get("name") for d in verbs.get("devices", []) if isinstance(d, dict)]},
        "sysfs_devices": sorted(p.name for p in Path(sysfs).iterdir()) if Path(sysfs).is_dir() else None,
        "tools": {tool: shutil.which(tool) for tool, _ in SCRIPT_TOOLS},
    }
    if verbs.get("status") == "unavailable":
        report["pyverbs"]["system_python_has_it"] = _system_python_has_pyverbs()
    return report


def _verbs_read(argv: list[str]) -> dict:
    """The verbs read exactly as local mode runs it; a reader that fails says so in the same shape."""
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT_S,
                              check=False)
    except subprocess.TimeoutExpired:
        return {"status": "failed", "reason": f"the verbs read did not finish within {PROBE_TIMEOUT_S:g} s"}
    except OSError as exc:
        return {"status": "failed", "reason": f"the verbs read could not start ({exc.strerror or exc})"}
    try:
        doc = json.loads(done.stdout)
    except ValueError:
        doc = None
    if done.returncode != 0 or not isinstance(doc, dict):
        last = (done.stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1]
        return {"status": "failed", "reason": f"the verbs read failed (exit {done.returncode}) {last}".strip()}
    return doc


def _system_python_has_pyverbs() -> bool | None:
    """Whether the distribution's Python imports pyverbs (None: there is no such Python, or it is this one)."""
    if not os.path.exists(SYSTEM_PYTHON) or os.path.realpath(SYSTEM_PYTHON) == os.path.realpath(sys.executable):
        return None
    try:
        done = subprocess.run([SYSTEM_PYTHON, "-I", "-c", "import pyverbs.device"], capture_output=True,
                              timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.returncode == 0


def render(report: dict) -> list[str]:
    verbs = report["pyverbs"]
    out = [f"rdmatool {report['rdmatool']} on {report['host']} (Python {report['python_version']}, "
           f"{report['python']})"]
    if verbs["usable"]:
        out.append(f"pyverbs: usable ({verbs['path']}); devices: {', '.join(verbs['devices'])}")
    else:
        out.append(f"pyverbs: not usable: {verbs['reason']}")
        if verbs["status"] == "unavailable":
            if verbs.get("system_python_has_it"):
                out.append(f"  {SYSTEM_PYTHON} imports pyverbs: run rdmatool from a venv made with "
                           f"`{SYSTEM_PYTHON} -m venv --system-site-packages`, or from {SYSTEM_PYTHON} itself")
            else:
                out.append("  install the distribution's package (apt-get install python3-pyverbs, or "
                           "dnf install python3-pyverbs), then run rdmatool from the system Python or a venv made "
                           "with --system-site-packages; pip cannot build it on a stock system")
        elif verbs["status"] in ("failed", "no_devices"):
            out.append("  pyverbs is installed, but libibverbs sees no RDMA device here (no RDMA driver loaded, "
                       "or no /dev/infiniband in this container)")
    devices = report["sysfs_devices"]
    out.append("RDMA devices in /sys/class/infiniband: " + (", ".join(devices) if devices else
                                                           "none" if devices is not None else "none (no such directory)"))
    missing = [f"{tool} ({package})" for tool, package in SCRIPT_TOOLS if not report["tools"][tool]]
    found = [tool for tool, _ in SCRIPT_TOOLS if report["tools"][tool]]
    out.append("host script tools found: " + (", ".join(found) or "none"))
    if missing:
        out.append("  missing (their sections are recorded as not installed): " + ", ".join(missing))
    if not devices and not verbs["usable"]:
        out.append("local mode: collect --local and gate --local find no RDMA device here: inconclusive (exit 3), "
                   "the gap named")
    elif not verbs["usable"]:
        out.append("local mode: the script's view only (no verbs view to cross-check it)")
    else:
        out.append("local mode: the script's view and the verbs view, cross-checked")
    return out
