"""End to end: `rdmatool trial BEFORE AFTER` on bundles collected from the simulated fabric before and after a change
of the leaf's ECN thresholds, under the steady over-subscribed load of the fabric's congestion model
(tests/fabric/congestion.py `steady`: the pause time follows Kmin / XOFF while ECN marks first, and the whole
over-subscribed share once ECN fires after PFC). A tuned threshold (Kmin a third of before) is `helped` (exit 0), a
detuned one (Kmin above XOFF) `hurt` (exit 1) with the command restoring BEFORE's thresholds, a raised Kmax (the
queue of a DCQCN-held class sits near Kmin: no effect) inconclusive (exit 3). Three collections a side, taken at
once, one 1 s counter window each (the simulated host stamps a read with its counters' time, tests/fabric/server.py
`_HOST_CLOCK`, so a loaded machine does not move the figures). The trial runs through the real CLI in-process (its
start-up would be most of the time)."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool import inventory
from rdmatool.cli import app
from rdmatool.collect import CollectOptions, collect_to_bundle
from tests.fabric import scenario
from tests.fabric.fixtures import sim_fabric
from tests.fabric.server import write_state

pytestmark = pytest.mark.e2e

KMAX = 1_499_136
# (Kmin, Kmax) in bytes, XOFF 524288
SIDES = {"before": (153_600, KMAX), "tuned": (51_200, KMAX), "detuned": (1_048_576, KMAX), "noop": (153_600, 1_572_864)}


@pytest.fixture(scope="module")
def sides(tmp_path_factory) -> dict[str, Path]:
    sc = scenario.from_dict({  # one host with its RoCE NIC alone, its leaf: few commands, a window's timing tight
        "name": "trial", "background_load": 1.5, "hosts": [{"name": "gpu01", "address": "127.0.1.1", "role": "compute",
                                                           "nics": scenario.COMPUTE_NICS[1:]}],
        "switches": [{"name": "leaf01", "platform": "sonic", "address": "127.0.2.1"}]})
    root = tmp_path_factory.mktemp("trial-fabric")
    with sim_fabric(sc) as fab:
        targets = inventory.load(fab.inventory_path)
        options = CollectOptions(interval_s=1.0, known_hosts=str(fab.known_hosts), target_deadline=30.0)
        for side, (kmin, kmax) in SIDES.items():
            qos = fab.scenario.switches[0].qos  # the change, as an engineer makes it on the leaf
            qos.ecn_min_bytes, qos.ecn_max_bytes = kmin, kmax
            write_state(fab.scenario, fab.state)
            with ThreadPoolExecutor(3) as pool:
                list(pool.map(lambda run, side=side: collect_to_bundle(targets, options,
                                                                       str(root / side / f"run-{run}")), (1, 2, 3)))
    return {side: root / side for side in SIDES}


def trial(sides: dict[str, Path], after: str):
    return CliRunner().invoke(app, ["trial", str(sides["before"]), str(sides[after])])


def test_a_tuned_ecn_threshold_on_the_fabric_helped(sides) -> None:
    done = trial(sides, "tuned")
    assert done.exit_code == 0, done.output
    assert "leaf01 AZURE_LOSSLESS ecn_min_threshold_bytes: 153600 → 51200" in done.output
    assert re.search(r"^verdict: helped: keep: pause fraction 6\d% lower$", done.output, re.M), done.output


def test_a_detuned_ecn_threshold_on_the_fabric_hurt_and_its_revert_is_printed(sides) -> None:
    done = trial(sides, "detuned")
    assert done.exit_code == 1, done.output
    assert "verdict: hurt: revert: pause fraction" in done.output
    assert f"ecnconfig -p AZURE_LOSSLESS -gmin 153600 -gmax {KMAX} -gdrop 100" in done.output


def test_a_raised_kmax_on_the_fabric_is_inconclusive(sides) -> None:
    done = trial(sides, "noop")
    assert done.exit_code == 3, done.output
    assert f"leaf01 AZURE_LOSSLESS ecn_max_threshold_bytes: {KMAX} → 1572864" in done.output
    assert "verdict: inconclusive: inconclusive: no measurable effect" in done.output


def test_the_steady_model_follows_kmin_and_pfc() -> None:
    """The model itself (no fabric): pauses grow with Kmin / XOFF while ECN marks first, take the whole
    over-subscribed share once ECN fires after PFC, and vanish on a lossy priority; Kmax does not move them."""
    from tests.fabric.congestion import steady

    qos = {"pfc": [3], "ecn_min_bytes": 153_600, "ecn_max_bytes": KMAX, "ecn_probability": 100,
           "xoff_bytes": 524_288}
    before = steady(qos, 3, 1.5)["pause"]
    assert steady({**qos, "ecn_min_bytes": 51_200}, 3, 1.5)["pause"] == pytest.approx(before / 3)
    assert steady({**qos, "ecn_max_bytes": 1_572_864}, 3, 1.5)["pause"] == before
    assert steady({**qos, "ecn_min_bytes": 1_048_576}, 3, 1.5) == {"pause": pytest.approx(1 / 3), "marks": 0.0}
    assert steady({**qos, "ecn_probability": 0}, 3, 1.5)["pause"] == pytest.approx(1 / 3)
    assert steady({**qos, "pfc": [4]}, 3, 1.5)["pause"] == 0.0 and steady(qos, 3, 0.9)["pause"] == 0.0
