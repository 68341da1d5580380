"""A finding about one traffic class says which: one port's findings on two classes never read as one line twice.

A switch that reports its ECN thresholds per traffic class (Cumulus, Onyx, EOS) gave one `ecn_kmax_above_pfc_trigger`
finding per class with the same text ("ECN Kmax on leaf02 swp1 is 3 MiB" twice, for classes 0 and 3 of the demo);
pause frames counted per priority and for the whole port gave two `pause_rate_above_baseline` lines for one port
("leaf02 swp1 receives 14,882 pause frames/s" and "... 15,116 ..."), the total's and priority 3's. The engine fills
`{priority}` with `-` where a fact has none, so each judgement has two rules: one for the facts with a class, naming
it, which replaces on its port the one that reads right without.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from rdmatool import baseline as baselines
from rdmatool import bundle as bundle_io
from rdmatool.diagnose.pipeline import diagnose_analysis
from rdmatool.table.analysis import analyse_bundle
from tests.helpers import REPO
from tests.pods import bundle as pods

KMAX = ("ecn_kmax_above_pfc_trigger", "ecn_kmax_above_pfc_trigger_tc")
PAUSE = ("pause_rate_above_baseline", "pause_rate_above_baseline_total")
DEMO = REPO / "examples" / "demo-bundle"


@pytest.fixture(scope="module")
def demo() -> list:
    stats = baselines.stats_for_rules(baselines.resolve(str(REPO / "baselines" / "demo-healthy.json")))
    return diagnose_analysis(analyse_bundle(bundle_io.read(DEMO)), baseline=stats).findings


def _said_twice(findings: list) -> list[str]:
    return [text for text, n in Counter(f.symptom for f in findings).items() if n > 1]


def test_the_demo_says_each_kmax_once_with_its_traffic_class(demo: list) -> None:
    kmax = [f for f in demo if f.rule in KMAX]
    per_class = [f for f in kmax if f.evidence["priority"] is not None]
    # the demo's Cumulus leaf reports its thresholds for two classes of each port
    assert len({f.evidence["priority"] for f in per_class if f.target == "leaf02"}) == 2
    assert _said_twice(kmax) == []
    for f in per_class:
        assert f.rule == "ecn_kmax_above_pfc_trigger_tc"
        assert f"traffic class {f.evidence['priority']} on {f.target} {f.entity} is" in f.symptom, f.symptom
    # a SONiC WRED profile has no class: no class named, no `-` for one
    [profile] = [f for f in kmax if f.evidence["priority"] is None]
    assert (profile.rule, profile.target) == ("ecn_kmax_above_pfc_trigger", "leaf01")
    assert profile.symptom == f"ECN Kmax on leaf01 {profile.entity} is 1.43 MiB"


def test_the_demo_says_which_priority_pauses_above_its_baseline(demo: list) -> None:
    pause = [f for f in demo if f.rule in PAUSE]
    assert pause and _said_twice(pause) == []
    for f in pause:
        assert f.rule == "pause_rate_above_baseline" and f.evidence["priority"] is not None
        assert f"pause frames/s on priority {f.evidence['priority']}," in f.symptom, f.symptom
    # one place, one line: the port's total (the same pauses counted once more) is left to the priority's finding
    assert len({(f.target, f.entity, f.evidence["priority"]) for f in pause}) == len(pause)
    assert not any(f.target == "leaf02" and f.entity == "swp1" and f.evidence["priority"] is None for f in pause)


@pytest.fixture(scope="module")
def healthy_baseline(tmp_path_factory):
    root = tmp_path_factory.mktemp("baseline")
    baselines.save(pods.write(pods.healthy_pod(), root / "healthy-night"), store=root / "store", name="healthy")
    return baselines.stats_for_rules(baselines.resolve("healthy", root / "store"))


def _pause_findings(pod: pods.Pod, path: Path, baseline) -> list:
    result = diagnose_analysis(analyse_bundle(bundle_io.read(pods.write(pod, path))), baseline=baseline)
    return [f for f in result.findings if f.rule in PAUSE]


def test_a_port_total_alone_above_its_baseline_says_it_is_the_total(tmp_path: Path, healthy_baseline) -> None:
    pod = pods.healthy_pod()
    port = next(p for p in pod.host("gpu02").ports if p.roce)
    port.ethtool["rx_pause_ctrl_phy"][1] = 60_000  # link-level pauses: no priority counter grows
    [f] = _pause_findings(pod, tmp_path / "total", healthy_baseline)
    assert (f.rule, f.target, f.evidence["priority"]) == ("pause_rate_above_baseline_total", "gpu02", None)
    assert "pause frames/s in all (the port's total)" in f.symptom and "priority" not in f.symptom


def test_a_priority_and_the_total_above_their_baselines_say_the_priority_once(tmp_path: Path,
                                                                             healthy_baseline) -> None:
    pod = pods.healthy_pod()
    port = next(p for p in pod.host("gpu02").ports if p.roce)
    port.ethtool["rx_prio3_pause"][1] = 60_000
    port.ethtool["rx_pause_ctrl_phy"][1] = 60_000  # the same pauses, in the port's total
    [f] = _pause_findings(pod, tmp_path / "both", healthy_baseline)
    assert (f.rule, f.target, f.evidence["priority"]) == ("pause_rate_above_baseline", "gpu02", 3)
    assert "pause frames/s on priority 3, far above its baseline" in f.symptom


STORM = ("host_pause_storm_rate", "host_pause_storm_rate_total")


def _storm_findings(pod: pods.Pod, path: Path) -> list:
    result = diagnose_analysis(analyse_bundle(bundle_io.read(pods.write(pod, path))))
    return [f for f in result.findings if f.rule in STORM]


def test_a_storm_on_priority_3_is_said_once_with_its_priority(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    port = next(p for p in pod.host("gpu01").ports if p.roce)
    port.ethtool["tx_prio3_pause"][1] = 400_000
    port.ethtool["tx_pause_ctrl_phy"][1] = 400_000  # the same frames, in the port's total
    [f] = _storm_findings(pod, tmp_path / "prio")
    assert (f.rule, f.target, f.evidence["priority"]) == ("host_pause_storm_rate", "gpu01", 3)
    assert "pause frames/s on priority 3" in f.symptom and "priority -" not in f.symptom


def test_a_global_pause_storm_is_said_as_the_ports_total(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    port = next(p for p in pod.host("gpu01").ports if p.roce)
    port.ethtool["tx_pause_ctrl_phy"][1] = 400_000  # 802.3x pause: no priority counter moves
    [f] = _storm_findings(pod, tmp_path / "total")
    assert (f.rule, f.target, f.evidence["priority"]) == ("host_pause_storm_rate_total", "gpu01", None)
    assert "in all (the port's total)" in f.symptom and "priority" not in f.symptom
    assert f.severity.value == "critical"
