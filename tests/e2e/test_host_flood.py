"""End to end: a host that floods its output (bare newlines without end) is cut at the line cap as the stream
arrives, fails alone and named with what it sent, and the other host is collected as usual."""

from __future__ import annotations

import pytest
import yaml

from tests.e2e.helpers import collect, manifest
from tests.fabric import scenario as scenario_mod
from tests.fabric.fixtures import sim_fabric
from tests.fabric.scenario import SCENARIOS

pytestmark = pytest.mark.e2e

FLOOD = "#!/bin/sh\nwhile :; do printf '\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n'; done\n"


def _scenario() -> scenario_mod.Scenario:
    data = yaml.safe_load((SCENARIOS / "healthy.yaml").read_text())
    data["name"] = "flood"
    data["hosts"] = [{"name": "gpu[01-02]", "address": "127.0.1.[1-2]", "role": "compute", "nics": "compute"}]
    data["switches"] = [{"name": "leaf01", "platform": "sonic", "address": "127.0.2.1"}]
    data["faults"] = []
    return scenario_mod.from_dict(data)


def test_a_flooding_host_fails_alone_named_with_what_it_sent(tmp_path) -> None:
    with sim_fabric(_scenario()) as fab:
        ibstat = fab.state / "bin" / "gpu02" / "ibstat"
        ibstat.unlink()  # may be a link to the shared launcher: never write through it
        ibstat.write_text(FLOOD)
        ibstat.chmod(0o755)
        out = tmp_path / "bundle"
        result = collect(fab, out, "--interval", "0")
    assert result.returncode == 3, result.stderr  # a failed target: inconclusive, not a crash
    assert "Traceback" not in result.stderr
    failures = {f["target"]: f["error"] for f in manifest(out)["failures"] if "parser" not in f}
    assert set(failures) == {"gpu02"}, failures
    assert "the host sent more than 1000000 lines for one snapshot; output so far kept (" in failures["gpu02"]
    collected = {t["name"] for t in manifest(out)["targets"]}
    assert {"gpu01", "gpu02", "leaf01"} <= collected
    assert (out / "snapshots" / "0" / "gpu01.outputs").is_file()
