"""ecn_kmax_above_pfc_trigger (with its per-traffic-class text, ecn_kmax_above_pfc_trigger_tc) judges only the queues
(or WRED profiles) that mark: a queue with ECN off has no Kmax that could sit above the PFC trigger, whatever
thresholds its switch prints for it.

Hand-made pods (tests/pods) with a Kmax above 1 MB: behind an Arista EOS leaf, whose ECN view prints the thresholds of
every transmit queue while only the RoCE queue 3 has ECN enabled; behind a SONiC leaf whose WRED profile marks
(`ecn_all`) or only drops (`ecn_none`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool import bundle as bundle_io
from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.rules import engine, playbook
from rdmatool.table.analysis import analyse_bundle
from tests.pods import bundle as pods

# the judgement's two texts: per traffic class where the switch reports one (it replaces the other on its port)
RULES = [r for r in playbook.load_dir(default_playbooks())
         if r.id in ("ecn_kmax_above_pfc_trigger", "ecn_kmax_above_pfc_trigger_tc")]
KMAX = 1_499_136  # above the rule's 1 MB


def _analysis(pod: pods.Pod, path: Path):
    analysis = analyse_bundle(bundle_io.read(pods.write(pod, path)))
    assert analysis.table.parse_failures == []
    return analysis


def _where(analysis) -> set[tuple]:
    return {(f.target, f.entity, f.evidence["priority"]) for f in engine.evaluate(analysis, RULES)}


def _facts(analysis, metric: str, value: float | None = None) -> set[tuple]:
    facts = analysis.facts[analysis.facts["metric"] == metric]
    if value is not None:
        facts = facts[facts["value"] == value]
    return {(t, e, int(p)) for t, e, p in zip(facts["target"], facts["entity"], facts["priority"])}


def test_eos_fires_on_the_queue_with_ecn_on_and_not_on_the_queues_with_ecn_off(tmp_path: Path) -> None:
    pod = pods.healthy_pod(("eos",))
    pod.switch.kmax = KMAX
    analysis = _analysis(pod, tmp_path / "eos")
    ports = {p.name for p in pod.switch.ports}
    # the switch prints the large Kmax for all eight queues of every port; only queue 3 marks
    assert _facts(analysis, "ecn_max_threshold_bytes", KMAX) == {("leaf01", p, q) for p in ports for q in range(8)}
    assert _facts(analysis, "ecn_enabled", 1) == {("leaf01", p, 3) for p in ports}
    assert _where(analysis) == {("leaf01", p, 3) for p in ports}


@pytest.mark.parametrize(("mode", "fires"), [("ecn_all", True), ("ecn_none", False)])
def test_sonic_fires_on_a_marking_profile_and_not_on_a_drop_only_one(mode: str, fires: bool, tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    pod.switch.kmax, pod.switch.ecn_mode = KMAX, mode
    analysis = _analysis(pod, tmp_path / mode)
    kmax = analysis.facts[analysis.facts["metric"] == "ecn_max_threshold_bytes"]
    assert list(kmax["value"]) == [KMAX]  # the profile's Kmax is read either way
    assert _where(analysis) == ({("leaf01", "AZURE_LOSSLESS", None)} if fires else set())
