"""Regenerate the shipped demo: `examples/demo-bundle/` (the degraded pod) and `baselines/demo-healthy.json`
(three collections of the healthy pod), recorded from the simulated fabric with the real collector.

    sudo python -m tests.fabric.make_demo        # from the repository root; needs openssh-server, as the tests do
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.fabric.fixtures import sim_fabric

REPO = Path(__file__).resolve().parents[2]


def _rdmatool(*args: str) -> int:
    return subprocess.run([sys.executable, "-m", "rdmatool", *args], cwd=REPO).returncode


def _collect(fab, out: Path, interval: int) -> None:
    code = _rdmatool("collect", "-i", str(fab.inventory_path), "-o", str(out), "--known-hosts", str(fab.known_hosts),
                     "--interval", str(interval), "--timeout", "4")
    if code not in (0, 3):
        raise SystemExit(f"collect failed with exit {code}")


def main() -> None:
    baseline = REPO / "baselines" / "demo-healthy.json"
    with tempfile.TemporaryDirectory() as tmp, sim_fabric("healthy") as fab:
        if baseline.exists():
            baseline.unlink()
        for night in range(3):
            bundle = Path(tmp) / f"night{night}"
            _collect(fab, bundle, 5)
            if _rdmatool("baseline", "save", str(bundle), "--store", str(baseline.parent), "--name",
                         "demo-healthy") != 0:
                raise SystemExit("baseline save failed")
    demo = REPO / "examples" / "demo-bundle"
    with tempfile.TemporaryDirectory() as tmp, sim_fabric("degraded") as fab:
        fresh = Path(tmp) / "demo"
        _collect(fab, fresh, 5)
        if demo.exists():
            shutil.rmtree(demo)
        shutil.copytree(fresh, demo)
    print(f"wrote {demo} and {baseline}")


if __name__ == "__main__":
    main()
