"""A host port and the switch port it is cabled to at different speeds, behind a leaf of each switch OS: the hand-built
pod of tests/pods written as a bundle (every switch output rendered in its NOS's own format and read by the real
parsers), diagnosed with the shipped playbooks. The speed-mismatch rule must name the host, its NIC, the switch and
the switch port, with both speeds, whichever end is the slower one; the healthy pod of each NOS is silent (that is
tests/pods/test_healthy_pods.py, which also checks every cabled switch port's speed is read)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool.diagnose.pipeline import diagnose_analysis
from rdmatool.model import Severity
from rdmatool.table.analysis import analyse_path
from tests.pods import bundle as pods

RULE = "link_speed_mismatch"
# (switch OS, the switch port's speed): the host ports are 200G RoCE ports
CASES = [(platform, speed) for platform in pods.PLATFORMS for speed in (100, 400)]


def _findings(tmp_path: Path, platform: str, switch_speed: int | None):
    pod = pods.healthy_pod((platform,))
    host = pod.host("gpu02")
    nic = host.port("mlx5_1")
    if switch_speed is not None:
        pod.switch.port(nic.switch_port).speed_gbps = switch_speed
    analysis = analyse_path(pods.write(pod, tmp_path / "bundle"))
    return pod, nic, [f for f in diagnose_analysis(analysis).findings if f.rule == RULE]


@pytest.mark.parametrize(("platform", "switch_speed"), CASES, ids=[f"{p}-{s}G" for p, s in CASES])
def test_a_switch_port_at_another_speed_than_its_host_port_is_named(tmp_path: Path, platform: str,
                                                                     switch_speed: int) -> None:
    pod, nic, found = _findings(tmp_path, platform, switch_speed)
    assert [(f.target, f.entity) for f in found] == [("gpu02", "mlx5_1")], [f.symptom for f in found]
    (finding,) = found
    assert finding.severity is Severity.ERROR
    assert f"{pod.switch.name} {nic.switch_port}" in finding.symptom, finding.symptom
    assert f"{nic.rate} Gb/s" in finding.symptom and f"{switch_speed} Gb/s" in finding.symptom, finding.symptom


@pytest.mark.parametrize("platform", pods.PLATFORMS)
def test_the_same_speeds_at_both_ends_are_no_mismatch(tmp_path: Path, platform: str) -> None:
    _, _, found = _findings(tmp_path, platform, None)
    assert found == []


@pytest.mark.parametrize("platform", pods.PLATFORMS)
def test_a_down_host_port_is_no_speed_mismatch(tmp_path: Path, platform: str) -> None:
    """A down link has no negotiated rate: the configured speeds either end prints (sysfs, NX-OS) are no mismatch;
    the link-state rules name the port instead."""
    pod = pods.healthy_pod((platform,))
    nic = pod.host("gpu02").port("mlx5_1")
    nic.state, nic.phys = "1: DOWN", "3: Disabled"
    pod.switch.port(nic.switch_port).speed_gbps = 100
    findings = diagnose_analysis(analyse_path(pods.write(pod, tmp_path / "bundle"))).findings
    assert [f for f in findings if f.rule == RULE] == []
    named = {(f.target, f.entity) for f in findings if f.severity in (Severity.ERROR, Severity.CRITICAL)}
    assert ("gpu02", "mlx5_1/1") in named  # the port is still named: as down, not as a speed mismatch
