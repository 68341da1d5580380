"""A RoCE host without PFC pause counters: the diagnosis names the cause the bundle shows, not one text for three.

ethtool not installed → install it; `ethtool -S` hung until its timeout (or never finished) → the command did not
finish, look at the driver / firmware, never "install ethtool"; ethtool answered but without per-priority counters
→ the driver. Hand-made pods (tests/pods) whose failed commands are written through the transport's own conversion,
diagnosed with the shipped playbooks as `rdmatool diagnose` does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool import bundle as bundle_io
from rdmatool.diagnose.pipeline import diagnose_analysis
from rdmatool.table.analysis import analyse_bundle
from tests.pods import bundle as pods

GAP_RULES = {"missing_pause_counters", "pause_counters_ethtool_hung", "pause_counters_ethtool_missing"}


def _gaps(pod: pods.Pod, path: Path) -> list:
    result = diagnose_analysis(analyse_bundle(bundle_io.read(pods.write(pod, path))))
    return [f for f in result.findings if f.rule in GAP_RULES]


@pytest.mark.parametrize("exit_code", [124, None])  # its `timeout` fired; it never finished
def test_a_hung_ethtool_is_a_command_that_did_not_finish_not_a_missing_tool(exit_code, tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    pod.host("gpu02").failing["ethtool_stats"] = exit_code
    [gap] = _gaps(pod, tmp_path / "hung")
    assert (gap.rule, gap.target) == ("pause_counters_ethtool_hung", "gpu02")
    assert "did not finish on RoCE host gpu02" in gap.symptom
    # the failure as the transport recorded it: `ethtool -S ens1f0np0 timed out on gpu02`, `ethtool did not finish ...`
    assert gap.evidence["observed"].startswith("ethtool") and gap.evidence["observed"].endswith(" on gpu02")
    assert "install ethtool" not in (gap.cause + gap.fix).lower()
    assert "ethtool is installed" in gap.cause and "time ethtool -S" in gap.check and "drain gpu02" in gap.fix


def test_a_missing_ethtool_says_install_it(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    pod.host("gpu03").failing["ethtool_stats"] = 127
    [gap] = _gaps(pod, tmp_path / "missing")
    assert (gap.rule, gap.target) == ("pause_counters_ethtool_missing", "gpu03")
    assert gap.evidence["observed"] == "ethtool not installed on gpu03"
    assert gap.fix == "Install ethtool (the ethtool package) on gpu03"


def test_ethtool_without_per_priority_counters_is_the_driver(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    port = next(p for p in pod.host("stor01").ports if p.roce)
    for name in [n for n in port.ethtool if "pause" in n]:  # the driver prints its other counters, no pause ones
        del port.ethtool[name]
    [gap] = _gaps(pod, tmp_path / "driver")
    assert (gap.rule, gap.target) == ("missing_pause_counters", "stor01")
    assert "driver" in gap.cause and "driver" in gap.fix and "ethtool -i" in gap.check
    assert "install ethtool" not in (gap.cause + gap.fix).lower()
