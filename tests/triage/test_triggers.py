"""One trigger per triage rule (playbooks/35-triage.yaml) on the hand-made healthy pod (tests/pods/bundle.py), and
the triage's own arithmetic: NIC utilisation against the link rate, the class table of docs/tuning.md §6.3.

The pod's GPU nodes run busy GPUs (93 %) on a busy network (their RoCE port at 0.8 of line rate): compute and
communication overlapped, no class. A case changes one host's GPUs or traffic and the rule must fire there only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from rdmatool import bundle as bundle_io
from rdmatool.commands import NVIDIA_SMI_QUERY
from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.model import Severity
from rdmatool.rules import engine, playbook
from rdmatool.rules.command_failures import with_command_failures
from rdmatool.table.analysis import analyse_bundle
from rdmatool.table.triage import classify
from tests.pods import bundle as _pod
from tests.pods.bundle import WINDOW_S, Pod, bump

RULES = {r.id: r for r in playbook.load_dir(default_playbooks())}
TRIAGE_RULES = sorted(r.id for r in RULES.values() if Path(str(r.source)).name.startswith("35-triage"))


def quiet_network(pod: Pod, host: str) -> None:
    """The host's RDMA ports move 4·10^8 bytes in the window: 0.16 % of the 200G port's line rate."""
    for port in pod.host(host).ports:
        port.pma["port_xmit_data"][1] = port.pma["port_rcv_data"][1] = 10**8  # 4-octet words


def gpus(pod: Pod, host: str, **fields) -> None:
    for name, value in fields.items():
        setattr(pod.host(host), name, value)


def starved_and_quiet(pod: Pod) -> None:
    gpus(pod, "gpu02", gpu_util=12.0)
    quiet_network(pod, "gpu02")


def communication_bound_with_errors(pod: Pod) -> None:
    gpus(pod, "gpu03", gpu_util=20.0)
    bump(pod.host("gpu03").port("mlx5_0").pma, "symbol_error", 40)
    bump(pod.host("gpu03").port("mlx5_1").hw, "out_of_sequence", 2)


@dataclass(frozen=True)
class Trigger:
    rule: str
    mutate: Callable[[Pod], None]
    hits: tuple[tuple[str, str | None], ...]
    observed: object
    words: tuple[str, ...] = ()  # the first finding's symptom must hold each


TRIGGERS = [
    Trigger("triage_compute_bound", lambda p: quiet_network(p, "gpu01"), (("gpu01", "host"),), 93.0,
            ("compute-bound", "93 % over 4 GPUs", "0.0016 of line rate", "mlx5_1/1")),
    Trigger("triage_communication_bound", lambda p: gpus(p, "gpu02", gpu_util=20.0), (("gpu02", "host"),), 20.0,
            ("communication-bound", "20 % over 4 GPUs", "85 % of their memory", "0.8 of line rate on mlx5_1/1")),
    Trigger("triage_communication_bound_network_errors", communication_bound_with_errors, (("gpu03", "host"),), 42,
            ("grew by 42 in 10 s",)),
    Trigger("triage_data_loading", starved_and_quiet, (("gpu02", "host"),), 12.0,
            ("waits for data or for the scheduler", "12 % over 4 GPUs", "0.0016 of line rate")),
    Trigger("gpu_monitoring_gap", lambda p: gpus(p, "gpu03", gpu_util=None), (("gpu03", None),),
            "absent: gpu_utilization_pct", ("compute host gpu03",)),
    Trigger("gpu_tool_could_not_read", lambda p: gpus(p, "gpu01", gpu_error="No devices were found"),
            (("gpu01", "host"),), "No devices were found", ("No devices were found",)),
    # nvidia-smi hung until its timeout: a failed command of the collection, a fact in a diagnosis
    Trigger("gpu_tool_hung", lambda p: p.host("gpu02").failing.update(nvidia_smi=124), (("gpu02", None),),
            f"nvidia-smi --query-gpu={NVIDIA_SMI_QUERY} --format=csv,noheader,nounits timed out on gpu02",
            ("did not finish on gpu02",)),
]


def analyse(pod: Pod, path: Path):
    analysis = analyse_bundle(bundle_io.read(_pod.write(pod, path)))
    assert analysis.table.parse_failures == [], [f.message for f in analysis.table.parse_failures]
    return analysis


def verdicts(analysis) -> dict[str, str]:
    facts = analysis.facts
    rows = facts[facts["metric"] == "triage_verdict"]
    return dict(zip(rows["target"], rows["text"]))


@pytest.mark.parametrize("trigger", TRIGGERS, ids=lambda t: t.rule)
def test_the_trigger_fires_its_rule_on_that_host_only(trigger: Trigger, tmp_path: Path) -> None:
    rule = RULES[trigger.rule]
    pod = _pod.healthy_pod()
    trigger.mutate(pod)
    # the collection's failed commands as facts, as a diagnosis adds them
    found = engine.evaluate(with_command_failures(analyse(pod, tmp_path / "bundle")), [rule])
    assert sorted((f.target, f.entity) for f in found) == sorted(trigger.hits), [f.symptom for f in found]
    first = found[0]
    for f in found:
        assert f.rule == rule.id and f.severity is rule.severity
        assert "{" not in f.symptom + f.cause + f.check + f.fix, f.symptom
    observed = first.evidence["observed"]
    if isinstance(trigger.observed, float):
        assert observed == pytest.approx(trigger.observed)
    else:
        assert observed == trigger.observed
    for word in trigger.words:
        assert word in first.symptom, (word, first.symptom)


def test_every_triage_rule_has_a_trigger() -> None:
    assert sorted(t.rule for t in TRIGGERS) == TRIAGE_RULES


def test_only_the_network_errors_case_is_above_info() -> None:
    above = {r for r in TRIAGE_RULES if RULES[r].severity is not Severity.INFO}
    assert above == {"triage_communication_bound_network_errors"}


def test_the_healthy_pod_is_overlapped_and_silent(tmp_path: Path) -> None:
    analysis = analyse(_pod.healthy_pod(), tmp_path / "bundle")
    assert verdicts(analysis) == {"gpu01": "overlapped", "gpu02": "overlapped", "gpu03": "overlapped"}
    assert engine.evaluate(analysis, [RULES[r] for r in TRIAGE_RULES]) == []


def test_the_record_holds_each_gpu_and_port_and_the_thresholds(tmp_path: Path) -> None:
    pod = _pod.healthy_pod()
    gpus(pod, "gpu02", gpu_util=20.0)
    found = engine.evaluate(analyse(pod, tmp_path / "bundle"), [RULES["triage_communication_bound"]])
    record = found[0].evidence["details"]
    assert record["verdict"] == "communication_bound"
    # each GPU read 21 % and 19 % in the two snapshots: the mean of the readings
    assert record["gpus"] == {f"gpu{g}": {"utilization_pct": 20.0, "memory_used_pct": pytest.approx(85.0, abs=0.01)}
                              for g in range(4)}
    # 5·10^10 words · 4 bytes · 8 bits over 10 s against 400 and 200 Gb/s
    assert record["ports"] == {"mlx5_0/1": pytest.approx(0.4), "mlx5_1/1": pytest.approx(0.8)}
    assert record["thresholds"]["network_busy"] == 0.6 and record["network_errors"] == 0


def test_idle_gpus_are_not_data_loading(tmp_path: Path) -> None:
    pod = _pod.healthy_pod()
    gpus(pod, "gpu01", gpu_util=1.0, gpu_memory_pct=0.5)
    quiet_network(pod, "gpu01")
    analysis = analyse(pod, tmp_path / "bundle")
    assert verdicts(analysis)["gpu01"] == "idle"
    assert engine.evaluate(analysis, [RULES[r] for r in TRIAGE_RULES]) == []


def test_nic_utilization_reads_active_ports_against_their_own_rate(tmp_path: Path) -> None:
    pod = _pod.healthy_pod()
    pod.host("gpu02").port("mlx5_0").state = "1: DOWN"
    analysis = analyse(pod, tmp_path / "bundle")
    facts = analysis.facts
    util = facts[facts["metric"] == "nic_utilization"]
    got = {(t, e): v for t, e, v in zip(util["target"], util["entity"], util["value"])}
    assert ("gpu02", "mlx5_0/1") not in got  # a port that is not Active carries nothing worth a fraction
    assert got[("gpu01", "mlx5_0/1")] == pytest.approx(5 * 10**10 * 4 * 8 / (WINDOW_S * 400e9))
    assert got[("stor01", "mlx5_0/1")] == pytest.approx(0.8)
    assert set(util["window_s"]) == {WINDOW_S}


@pytest.mark.parametrize(("gpu", "memory", "network", "verdict"), [
    (95, 90, 0.05, "compute_bound"),
    (95, 90, 0.7, "overlapped"),
    (95, 90, 0.4, "unclassified"),
    (80, 90, 0.19, "compute_bound"),  # the thresholds are inclusive on the busy side
    (30, 90, 0.6, "communication_bound"),
    (30, 90, 0.1, "data_loading"),
    (30, 90, 0.4, "unclassified"),
    (65, 90, 0.1, "unclassified"),
    (30, 5, 0.1, "idle"),
    (30, float("nan"), 0.9, "idle"),  # no memory figure: no evidence of a job
    (30, 90, float("nan"), "unclassified"),  # no network figure (one snapshot): no class
])
def test_the_class_table_of_the_tuning_reference(gpu, memory, network, verdict) -> None:
    assert classify(gpu, memory, network) == verdict


def test_the_record_is_json_of_the_verdict(tmp_path: Path) -> None:
    analysis = analyse(_pod.healthy_pod(), tmp_path / "bundle")
    facts = analysis.facts
    records = facts[facts["metric"] == "triage_record"]
    assert len(records) == 3
    assert {json.loads(t)["verdict"] for t in records["text"]} == {"overlapped"}
