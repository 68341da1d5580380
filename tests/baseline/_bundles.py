"""The baseline tests' small fleets: a few hosts (sysfs, ethtool, perftest, mlnx_qos) and SONiC switches, described
by the few knobs these tests vary and written through the one pod builder (tests/pods/bundle.py).

Every figure a test asserts on is an input here; the tests compute their expectations from these inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tests.pods import bundle as pods

WINDOW_S = pods.WINDOW_S
T0 = datetime(2024, 5, 1, 2, 0, 0, tzinfo=timezone.utc)
SPEEDS = {100: "EDR", 200: "HDR", 400: "NDR"}
# The outputs a baseline night of these tests holds: enough for the figures they assert on, nothing more.
OUTPUTS = {"sysfs_counters", "ethtool_stats", "mlnx_qos", "perftest", "sonic_ecn"}


@dataclass
class Host:
    name: str
    role: str = "compute"
    fw: str = "28.39.1002"
    ca_type: str = "MT4129"
    board_id: str = "MT_0000000838"
    link_rate: int = 400
    bw: dict[int, float] = field(default_factory=lambda: {65536: 96.5, 1048576: 97.4})
    pauses: tuple[int, int] = (1000, 1500)  # rx_prio3_pause in snapshot 0 and 1
    trust: str = "dscp"
    pfc: tuple[int, ...] = (3,)

    def pod_host(self) -> pods.Host:
        """One RoCE port, mlx5_0 / eth0, with these settings and counters."""
        port = pods.Port("mlx5_0", "Ethernet", "eth0", self.link_rate, SPEEDS[self.link_rate], self.fw,
                         self.board_id, self.ca_type, pma={"port_xmit_wait": [123, 0]}, hw={}, pfc=self.pfc,
                         trust=self.trust,
                         ethtool={"rx_packets": [100, 0],
                                  "rx_prio3_pause": [self.pauses[0], self.pauses[1] - self.pauses[0]]})
        return pods.Host(self.name, self.role, [port], bw=self.bw)


@dataclass
class Switch:
    name: str = "leaf01"
    kmin: int = 102400
    kmax: int = 409600
    pmax: int = 20

    def pod_switch(self) -> pods.Switch:
        return pods.Switch(self.name, [], kmin=self.kmin, kmax=self.kmax, pmax=self.pmax, ecn_profile="ROCE_LOSSLESS",
                           ecn_mode="ecn_green")


def write_bundle(path: Path, hosts: list[Host], switches: list[Switch] = (), night: int = 0) -> Path:
    """Two snapshots WINDOW_S apart; `night` sets the manifest's `created` (night n = T0 + n days)."""
    pod = pods.Pod([h.pod_host() for h in hosts], [s.pod_switch() for s in switches])
    return pods.write(pod, path, created=T0 + timedelta(days=night), only=OUTPUTS)


def pause_rate(h: Host) -> float:
    return (h.pauses[1] - h.pauses[0]) / WINDOW_S
