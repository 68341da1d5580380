"""The guard of the PFC / ECN / CNP figures: every shipped playbook stays silent (nothing at warning or above) on the
hand-built healthy pod behind leaves of each switch OS alone, and of all of them mixed.

Silence proves nothing when the switch said nothing, so each pod is first checked to carry its switches' figures:
counter rates, pause or mark counts, ECN thresholds where the NOS shows them, receive error rates (the cable rules'
switch side), every cabled port's speed (the speed-mismatch judge's switch side), and the cabling.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool.diagnose.pipeline import diagnose_analysis
from rdmatool.model import Severity, Verdict
from rdmatool.table.analysis import analyse_path
from tests.pods import bundle as pods

CASES = [(p,) for p in pods.PLATFORMS] + [pods.PLATFORMS]
BAD = (Severity.WARNING, Severity.ERROR, Severity.CRITICAL)
# What each switch OS's outputs give the rules, at the least (the parsers' own documentation says which metric).
# Every NOS gives its ports' speeds (link_rate_gbps: the cabling judge's speed_mismatch) and state.
SWITCH_FIGURES = {
    "sonic": {"tx_pause_frames_per_s", "ecn_marked_packets_per_s", "ecn_min_threshold_bytes", "ecn_mark_ratio",
              "rx_errors_per_s", "link_rate_gbps", "oper_state", "port_mtu"},
    "cumulus": {"rx_pause_fraction", "ecn_marked_packets_per_s", "ecn_min_threshold_bytes",
                "switch_cnp_tx_packets_per_s", "tx_packets_per_s", "rx_crc_errors_per_s", "rx_symbol_errors_per_s",
                "link_rate_gbps", "oper_state", "port_mtu"},
    "onyx": {"rx_pause_fraction", "ecn_marked_packets_per_s", "ecn_min_threshold_bytes", "tx_packets_per_s",
             "rx_crc_errors_per_s", "rx_symbol_errors_per_s", "link_rate_gbps", "oper_state"},
    "eos": {"tx_pause_frames_per_s", "ecn_marked_packets_per_s", "ecn_min_threshold_bytes", "rx_crc_errors_per_s",
            "rx_symbol_errors_per_s", "link_rate_gbps", "oper_state"},
    "nxos": {"tx_pause_frames_per_s", "ecn_marked_packets_per_s", "link_rate_gbps", "ecn_mark_ratio",
             "rx_crc_errors_per_s"},
}


def _pod(platforms: tuple[str, ...]) -> pods.Pod:
    return pods.healthy_pod(platforms, gpus=5 if len(platforms) > 1 else 3)


@pytest.fixture(scope="module", params=CASES, ids=["+".join(c) for c in CASES])
def healthy(request, tmp_path_factory):
    platforms = request.param
    path = pods.write(_pod(platforms), tmp_path_factory.mktemp("pod") / "bundle")
    analysis = analyse_path(path)
    return platforms, analysis, diagnose_analysis(analysis)


def test_every_switch_of_the_pod_gave_its_figures(healthy) -> None:
    platforms, analysis, result = healthy
    assert result.failures == []
    facts = analysis.facts
    for sw in _pod(platforms).switches:
        have = set(facts.loc[facts["target"] == sw.name, "metric"])
        assert SWITCH_FIGURES[sw.platform] <= have, (sw.name, sw.platform, SWITCH_FIGURES[sw.platform] - have)
        cabled = analysis.links[analysis.links["switch"] == sw.name]
        assert set(cabled["switch_port"]) >= {p.name for p in sw.ports}, (sw.name, cabled)
        rates = facts[(facts["target"] == sw.name) & (facts["metric"] == "link_rate_gbps")]
        assert dict(zip(rates["entity"], rates["value"])) == {p.name: p.speed_gbps for p in sw.ports}, sw.name


def test_every_playbook_is_silent_on_the_healthy_pod(healthy) -> None:
    platforms, _analysis, result = healthy
    bad = [(f.rule, f.severity.value, f.target, f.entity, f.evidence.get("priority"), f.evidence.get("observed"))
           for f in result.findings if f.severity in BAD]
    assert bad == [], (platforms, bad)
    assert result.verdict is Verdict.PASS


def test_the_pods_differ_only_in_their_switches(tmp_path: Path) -> None:
    # the same hosts and cabling plan behind every NOS: a silent NOS is not silent for want of traffic
    sonic, cumulus = _pod(("sonic",)), _pod(("cumulus",))
    assert [h.name for h in sonic.hosts] == [h.name for h in cumulus.hosts]
    assert [p.name for p in sonic.switch.ports] == ["Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"]
    assert [p.name for p in cumulus.switch.ports] == ["swp1", "swp2", "swp3", "swp4"]
    mixed = _pod(pods.PLATFORMS)
    assert sorted(sw.platform for sw in mixed.switches if sw.ports) == sorted(pods.PLATFORMS)
