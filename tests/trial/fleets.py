"""Runs of the hand-made pod (tests/pods) before and after a change, written as real bundles: a trial's inputs.

`run(path, seed, ...)` writes one run: the healthy pod with the switch's ECN thresholds as given, and its load's
outcome scaled as a change of them would move it (pause time, p99 latency, ECN marks and CNPs, bandwidth), with a
little run-to-run noise from `seed` (±2 %), so that repeated runs have a spread as real ones do. The effect of the
thresholds is stated here, not modelled: the trial under test is what reads it back.
"""

from __future__ import annotations

from pathlib import Path

from tests.pods import bundle as pods

HEALTHY = {"kmin": 153_600, "kmax": 409_600}
TUNED = {"kmin": 51_200, "kmax": 204_800, "pause": 0.3, "p99": 0.8, "marks": 3.0}  # ECN before PFC: fewer pauses
DETUNED = {"kmin": 1_536_000, "kmax": 3_072_000, "pause": 4.0, "p99": 1.5, "marks": 0.2}  # ECN after PFC


def _scale(counter: list[int], factor: float) -> None:
    counter[1] = int(counter[1] * factor)


def run(path: Path, seed: int, kmin: int = HEALTHY["kmin"], kmax: int = HEALTHY["kmax"], pause: float = 1.0,
        p99: float = 1.0, marks: float = 1.0, bw: float = 1.0) -> Path:
    noise = 1 + 0.02 * (seed % 3 - 1)
    pod = pods.healthy_pod()
    pod.switch.kmin, pod.switch.kmax = kmin, kmax
    for host in pod.hosts:
        if host.lat:
            host.lat = [(size, typical * noise, pct * p99 * noise) for size, typical, pct in host.lat]
        if host.bw:
            host.bw = {size: gbps * bw * (1 + (noise - 1) / 10) for size, gbps in host.bw.items()}
        for port in host.ports:
            for name, counter in port.ethtool.items():
                if name.endswith("_pause_duration") or name.endswith("_pause"):
                    _scale(counter, pause * noise)
                elif name.endswith("_marked"):
                    _scale(counter, marks * noise)
            for name in ("np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled"):
                if name in port.hw:
                    _scale(port.hw[name], marks * noise)
    for sp in pod.switch.ports:
        for counters in (sp.rx_pfc, sp.tx_pfc, sp.rx_pause_us, sp.tx_pause_us):
            for counter in counters.values():
                _scale(counter, pause * noise)
        for counter in sp.ecn_marks.values():
            _scale(counter, marks * noise)
    return pods.write(pod, path)


def side(root: Path, runs: int, **change) -> Path:
    """`runs` runs of one side under root/run-1, root/run-2 ...; the directory is the side."""
    for i in range(runs):
        run(root / f"run-{i + 1}", i, **change)
    return root
