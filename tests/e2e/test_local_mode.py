"""Local mode end to end on this machine, through the real CLI: `collect --local`, then `diagnose` and `baseline
save` of its bundle, and `gate --local`; and `doctor`.

This machine is the node (no simulated fabric, no SSH). It has no RDMA subsystem in its kernel, so what is tested
for real is the path every such node takes: the script runs and its bundle is written, the verbs read says why it
has no view, the host is a failed target naming the gap, and the diagnosis and the gate are inconclusive (exit 3,
nothing drained), never a pass and never a fail.

With pyverbs: Debian's `python3-pyverbs` installs for the system Python, and the project's venv has no system site
packages. The supported way is a venv made by the system Python with `--system-site-packages`; the test makes one
in a temporary directory (without pip: rdmatool and its dependencies come from the project's venv through a .pth
file, as an install into it would have put them there) and runs the CLI from it, so that pyverbs itself answers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sysconfig
from pathlib import Path

import pytest

from tests.bundle_sides import outputs_of, read_pack
from tests.e2e.helpers import REPO, manifest, rdmatool

SYSTEM_PYTHON = Path("/usr/bin/python3")
HAS_RDMA = Path("/sys/class/infiniband").is_dir() and any(Path("/sys/class/infiniband").iterdir())
pytestmark = pytest.mark.skipif(HAS_RDMA, reason="this machine has RDMA devices: the no-RDMA path cannot be seen")


def _verbs_document(bundle: Path) -> dict:
    [pack] = list((bundle / "snapshots" / "0").glob("*.outputs"))
    return json.loads(read_pack(pack)["verbs"][1])


def test_collect_local_then_diagnose_and_baseline(tmp_path: Path) -> None:
    bundle = tmp_path / "local"
    done = rdmatool("collect", "--local", "-o", str(bundle), "--interval", "1", "--timeout", "10")
    assert done.returncode == 3, done.stderr  # no data: nothing of the fabric here
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "no RDMA device: /sys/class/infiniband lists none" in done.stderr
    assert "Traceback" not in done.stderr
    record = manifest(bundle)
    [target] = record["targets"]
    assert (target["kind"], target["address"]) == ("host", "localhost")
    [failure] = record["failures"]
    assert failure["target"] == target["name"] and "no RDMA device" in failure["error"]
    # the same layout as an SSH bundle: the script's sections, and the verbs output saying why it has no view
    assert {"ibstat", "loadavg", "verbs"} <= set(outputs_of(bundle, 0, target["name"]))
    verbs = _verbs_document(bundle)
    assert verbs["status"] in ("unavailable", "failed", "no_devices") and verbs["reason"]
    assert verbs["reason"] in failure["error"]

    diagnosis = rdmatool("diagnose", str(bundle), "--format", "json")
    assert diagnosis.returncode == 3, diagnosis.stderr
    result = json.loads(diagnosis.stdout)
    assert result["verdict"] == "inconclusive" and result["drain"] == []
    rules = {f["rule"]: f for f in result["findings"]}
    assert rules["missing_port_state"]["severity"] == "warning"  # the monitoring gap, named
    assert rules["verbs_unavailable"]["evidence"]["observed"] == verbs["reason"]
    assert [f["error"] for f in result["failures"]] == [failure["error"]]
    table = rdmatool("diagnose", str(bundle))
    assert table.returncode == 3 and "Monitoring gap: no RDMA port state" in table.stdout

    saved = rdmatool("baseline", "save", str(bundle), "--store", str(tmp_path / "store"))
    assert saved.returncode == 0, saved.stderr  # the bundle is a bundle like any other


def test_gate_local_is_inconclusive_with_the_gap_named(tmp_path: Path) -> None:
    drain = tmp_path / "drain"
    drain.write_text("stale-node\n")  # a list a previous run left: never acted on again
    done = rdmatool("gate", "--local", "--budget", "60", "--json", "--drain-file", str(drain))
    assert done.returncode == 3, done.stderr
    result = json.loads(done.stdout)
    assert result["verdict"] == "inconclusive" and result["drain"] == []
    assert drain.read_text() == ""
    assert any("no RDMA device" in str(f["error"]) for f in result["failures"])
    stages = {s["name"]: s for s in result["stages"]}
    assert stages["state"]["status"] == "inconclusive"
    assert stages["bandwidth"]["status"] == "skipped"  # one node: no pair to measure
    text = rdmatool("gate", "--local", "--budget", "60")
    assert text.returncode == 3 and "unreachable (1): " in text.stdout and "no RDMA device" in text.stdout


def test_local_refuses_an_inventory_and_needs_one_source() -> None:
    both = rdmatool("collect", "--local", "-i", "inventory.yaml", "-o", "/nonexistent/b")
    assert both.returncode == 2 and "--local reads this machine only" in both.stderr
    neither = rdmatool("gate")
    assert neither.returncode == 2 and "--local" in neither.stderr


def test_doctor_says_why_pyverbs_is_not_usable() -> None:
    done = rdmatool("doctor", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["pyverbs"]["usable"] is False
    assert "pyverbs" in report["pyverbs"]["reason"]
    assert report["sysfs_devices"] in (None, [])
    text = rdmatool("doctor")
    assert text.returncode == 0 and "pyverbs: not usable: " in text.stdout
    assert "RDMA devices in /sys/class/infiniband: none" in text.stdout


def _system_pyverbs() -> bool:
    return SYSTEM_PYTHON.exists() and subprocess.run(
        [str(SYSTEM_PYTHON), "-I", "-c", "import pyverbs.device"], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def pyverbs_venv(tmp_path_factory) -> Path:
    """A venv of the system Python with its site packages (Debian's python3-pyverbs), rdmatool added."""
    if not _system_pyverbs():
        pytest.skip("python3-pyverbs is not installed for /usr/bin/python3")
    venv = tmp_path_factory.mktemp("pyverbs") / "venv"
    subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
                   check=True, capture_output=True, timeout=120)
    [site] = list((venv / "lib").glob("python3*/site-packages"))
    project = sysconfig.get_paths()["purelib"]  # the project venv: rdmatool (editable) and its dependencies
    (site / "rdmatool-project.pth").write_text(f"import site; site.addsitedir({project!r})\n{REPO}\n")
    return venv / "bin" / "python"


def _run(python: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(python), "-m", "rdmatool", *args], capture_output=True, text=True, timeout=240,
                          env={**env, "COLUMNS": "200"}, cwd=REPO)


def test_with_debian_pyverbs_the_verbs_read_is_pyverbs_own_answer(pyverbs_venv: Path, tmp_path: Path) -> None:
    doctor = _run(pyverbs_venv, "doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr
    verbs = json.loads(doctor.stdout)["pyverbs"]
    assert verbs["path"].startswith("/usr/lib/python3/dist-packages/pyverbs")  # the distribution's package
    assert (verbs["usable"], verbs["reason"]) == (False, "pyverbs: Failed to get devices list")

    bundle = tmp_path / "local"
    done = _run(pyverbs_venv, "collect", "--local", "-o", str(bundle), "--interval", "0")
    assert done.returncode == 3, done.stderr
    assert "no RDMA device: /sys/class/infiniband lists none; pyverbs: Failed to get devices list" in done.stderr
    document = _verbs_document(bundle)
    assert (document["status"], document["python"]) == ("failed", str(pyverbs_venv))

    diagnosis = _run(pyverbs_venv, "diagnose", str(bundle), "--format", "json")
    assert diagnosis.returncode == 3, diagnosis.stderr
    findings = {f["rule"]: f for f in json.loads(diagnosis.stdout)["findings"]}
    assert findings["verbs_unavailable"]["evidence"]["observed"] == "pyverbs: Failed to get devices list"
    gate = _run(pyverbs_venv, "gate", "--local", "--budget", "60")
    # the table wraps the reason to the terminal: read it as one line
    assert gate.returncode == 3 and "pyverbs: Failed to get devices list" in " ".join(gate.stdout.split())
