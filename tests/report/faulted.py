"""One generated RoCE fabric (tests/generated) with several faults of its catalogue at once, each on its own compute
host: a flapping optic, a rail down, a speed downgrade (physical: their cables are red on the report's map) and a
PFC priority mismatch (a setting: marked on its port, its cable not red). The report's tests read it as a page
(test_report_topology.py) and in the browser (test_html_browser.py).

    fabric, injected, bundle = faulted_fabric(tmp)  # injected: fault name -> (host, entity, rule ids)
"""

from __future__ import annotations

import copy
import random
from pathlib import Path

from tests.generated.bundle_writer import write
from tests.generated.generate import generate
from tests.generated.judge import FAULTS
from tests.generated.model import Fabric

PHYSICAL = ("optic_flapping_host", "rail_down", "speed_downgrade")
SETTING = "pfc_priority_mismatch"
# The first fabric from here on that fits: four to six compute hosts (a host for each fault, and peers for the
# rules that compare a port with its fleet) of two rails or more, two snapshots (counters that grow) and lldpd on
# the hosts. Small, so that writing and diagnosing it is quick.
FIRST_SEED = 28


def _fits(fabric: Fabric) -> bool:
    compute = [h for h in fabric.hosts if h.role == "compute"]
    return (4 <= len(compute) <= 6 and len(compute[0].rails) >= 2 and fabric.snapshots >= 2
            and fabric.hosts_run_lldpd)


def faulted_fabric(where: Path) -> tuple[Fabric, dict[str, tuple], Path]:
    """The fabric, the faults injected (each the catalogue's own function, on a host no other fault took) and the
    bundle written under `where`."""
    seed = FIRST_SEED
    while not _fits(fabric := generate(seed, link_layer="Ethernet")):
        seed += 1
    injected: dict[str, tuple] = {}
    for name in (*PHYSICAL, SETTING):
        for attempt in range(100):  # the catalogue picks its host at random: the first pick on a host of its own
            trial = copy.deepcopy(fabric)
            got = FAULTS[name].apply(trial, random.Random(attempt))
            if got is not None and got[0] not in {host for host, _, _ in injected.values()}:
                fabric, injected[name] = trial, got
                break
        else:
            raise AssertionError(f"{name} found no host of its own in {fabric.describe()}")
    return fabric, injected, write(fabric, where / f"fabric-{fabric.seed}")
