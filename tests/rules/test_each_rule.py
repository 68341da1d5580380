"""Each shipped rule: a scenario that triggers it, and the healthy scenario in which it stays silent.

The trigger cases are table-driven: the healthy pod of `tests/pods/bundle.py` (three GPU nodes, a storage node, a SONiC leaf, raw
outputs in the real tool formats, two snapshots WINDOW_S apart) plus one mutation, written with BundleWriter and
diagnosed; the rule must fire exactly where the mutation is, with its own severity and the mutated value as
evidence. A guard keeps the table and the shipped playbooks in step. Silence is checked on the hand-built healthy
pod (against its own baseline too) and end to end on the simulated healthy fabric collected over real SSH; the
shipped demo bundle must show its faults; a diagnosis is deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from rdmatool import baseline as baselines
from rdmatool import bundle as bundle_io
from rdmatool.diagnose.pipeline import default_playbooks, diagnose_analysis
from rdmatool.model import Finding, Severity, Verdict
from rdmatool.outcome.verdict import verdict
from rdmatool.rules import engine, playbook
from rdmatool.rules.command_failures import with_command_failures
from rdmatool.table.analysis import analyse_bundle
from tests.capture.test_triggers import TRIGGERS as CAPTURE_TRIGGERS
from tests.e2e.helpers import REPO, collect, rdmatool
from tests.fabric.fixtures import fabric_fixture
from tests.nccl.test_triggers import TRIGGERS as NCCL_TRIGGERS
from tests.perf.test_incast import TRIGGERS as INCAST_TRIGGERS
from tests.perf.test_perftest_rules import TRIGGERS as PERFTEST_TRIGGERS
from tests.perf.test_storage_findings import TRIGGERS as STORAGE_TRIGGERS
from tests.pods import bundle as _pod
from tests.pods.bundle import WINDOW_S, Pod, bump
from tests.rules.test_switch_pauses_senders import TRIGGERS as SWITCH_PAUSE_TRIGGERS
from tests.topology.test_ib_fabric import TRIGGERS as IB_FABRIC_TRIGGERS
from tests.topology.test_link_errors import TRIGGERS as LINK_ERROR_TRIGGERS
from tests.topology.test_triggers import TRIGGERS as TOPOLOGY_TRIGGERS
from tests.transport.test_verbs_rules import TRIGGERS as VERBS_TRIGGERS
from tests.triage.test_triggers import TRIGGERS as TRIAGE_TRIGGERS
from tests.watch.test_judge import TRIGGERS as WATCH_TRIGGERS

RULES = {r.id: r for r in playbook.load_dir(default_playbooks())}
BAD = (Severity.WARNING, Severity.ERROR, Severity.CRITICAL)
EXPECTED_VERDICT = {Severity.CRITICAL: Verdict.FAIL, Severity.ERROR: Verdict.FAIL, Severity.WARNING: Verdict.WARN,
                    Severity.INFO: Verdict.PASS}


# --- mutations of the healthy pod ---------------------------------------------------------------------------------


def ib(pod: Pod, host: str) -> _pod.Port:
    return pod.host(host).port("mlx5_0")


def roce(pod: Pod, host: str) -> _pod.Port:
    return next(p for p in pod.host(host).ports if p.roce)


def leaf(pod: Pod, port: str) -> _pod.SwitchPort:
    return pod.switch.port(port)


def put(obj, **fields) -> None:
    for name, new in fields.items():
        assert hasattr(obj, name), name
        setattr(obj, name, new)


def grow(counters: _pod.Counters, name: str, growth: int) -> None:
    """Set how much a counter grows between the snapshots."""
    counters[name][1] = growth


def every_roce_port(pod: Pod, change: Callable[[_pod.Port], None]) -> None:
    for host in pod.hosts:
        for port in host.ports:
            if port.roce:
                change(port)


def reset_rcv_packets(pod: Pod) -> None:
    counter = ib(pod, "gpu01").pma["port_rcv_packets"]
    counter[1] = 1_000 - counter[0]  # reads 1000 in the second snapshot: counters cleared (or a reboot)


def ecn_silenced_and_pausing(pod: Pod) -> None:
    for port in pod.switch.ports:
        grow(port.ecn_marks, "3", 0)
        grow(port.ecn_marks, "4", 0)
    grow(leaf(pod, "Ethernet0").tx_pfc, "3", 20_000)


def cumulus_port_paused_unmarked(pod: Pod) -> None:
    """The pod behind a Cumulus leaf (it reports pause durations), swp1 paused 60 % of the window on priority 3
    while marking 0.01 % of its packets; the other ports go on marking 0.1 %."""
    cumulus = _pod.healthy_pod(("cumulus",))
    pod.hosts[:], pod.switches[:] = cumulus.hosts, cumulus.switches
    grow(leaf(pod, "swp1").rx_pause_us, "3", int(0.6 * WINDOW_S * 1e6))
    grow(leaf(pod, "swp1").ecn_marks, "3", 1_000)  # of 10^7 packets


def platform_pod(platform: str, change: Callable[[Pod], None]) -> Callable[[Pod], None]:
    """The pod behind one leaf of `platform` instead of the default SONiC one, then `change`."""
    def mutate(pod: Pod) -> None:
        other = _pod.healthy_pod((platform,))
        pod.hosts[:], pod.switches[:] = other.hosts, other.switches
        change(pod)

    return mutate


def cumulus_pod(change: Callable[[Pod], None]) -> Callable[[Pod], None]:
    """The pod behind a Cumulus leaf (it counts RoCE no-buffer discards and egress tail drops), then `change`."""
    return platform_pod("cumulus", change)


def eos_pod(change: Callable[[Pod], None]) -> Callable[[Pod], None]:
    """The pod behind an Arista EOS leaf (it prints its ECN thresholds per transmit queue), then `change`."""
    return platform_pod("eos", change)


def watchdog_storms(pod: Pod) -> None:
    leaf(pod, "Ethernet8").wd_storms[1] = 2  # two storms detected (and restored) on queue 3 during the window


def no_hw_counters(pod: Pod) -> None:
    for port in pod.host("gpu01").ports:
        port.hw = {}


# --- the table ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    rule: str
    mutate: Callable[[Pod], None]
    hits: tuple[tuple[str, str | None, int | None], ...]  # (target, entity, priority): where it fires, only there
    observed: object  # the evidence's observed value on the first hit (numbers compared approximately)
    baseline: bool = False  # judged against the healthy pod's baseline
    evidence: tuple[tuple[str, object], ...] = ()  # more evidence fields of the first hit, checked like `observed`
    alone: bool = False  # the mutation rebuilds the pod (another switch OS): not combined with the others


GPU2_IB = (("gpu02", "mlx5_0/1", None),)
CASES: list[Case] = [
    # --- 10-links ---
    Case("port_not_active", lambda p: put(ib(p, "gpu02"), state="1: DOWN", phys="2: Polling"), GPU2_IB, "Down"),
    Case("port_phys_not_linkup", lambda p: put(ib(p, "gpu02"), state="1: DOWN", phys="2: Polling"), GPU2_IB,
         "Polling"),
    Case("port_disabled_while_peers_active", lambda p: put(ib(p, "gpu02"), state="1: DOWN", phys="3: Disabled"),
         GPU2_IB, "Disabled", evidence=(("baseline", "LinkUp"),)),
    Case("port_width_degraded", lambda p: put(ib(p, "gpu03"), lanes=1, rate=100), (("gpu03", "mlx5_0/1", None),), 1),
    Case("port_speed_below_fleet", lambda p: put(ib(p, "gpu01"), rate=200, speed="HDR"),
         (("gpu01", "mlx5_0/1", None),), 200, evidence=(("baseline", 400),)),
    Case("active_mtu_below_max", lambda p: put(roce(p, "gpu02"), active_mtu=1024), (("gpu02", "mlx5_1/1", None),),
         1024, evidence=(("expected", "max_mtu 4096"),)),
    Case("ib_link_flapping", lambda p: bump(ib(p, "gpu02").pma, "link_downed", 1), GPU2_IB, 1),
    Case("eth_link_flapping", lambda p: bump(roce(p, "gpu02").ethtool, "link_down_events_phy", 2),
         (("gpu02", "ens1f0np0", None),), 2),
    Case("ib_symbol_errors_growing", lambda p: bump(ib(p, "gpu01").pma, "symbol_error", 77),
         (("gpu01", "mlx5_0/1", None),), 77),
    Case("ib_link_error_recovery_growing", lambda p: bump(ib(p, "gpu01").pma, "link_error_recovery", 3),
         (("gpu01", "mlx5_0/1", None),), 3),
    Case("ib_rcv_errors_growing", lambda p: bump(ib(p, "gpu03").pma, "port_rcv_errors", 24),
         (("gpu03", "mlx5_0/1", None),), 24),
    Case("ib_xmit_discards", lambda p: bump(ib(p, "gpu02").pma, "port_xmit_discards", 500), GPU2_IB, 500),
    Case("ib_buffer_overrun", lambda p: bump(ib(p, "gpu02").pma, "excessive_buffer_overrun_errors", 12), GPU2_IB,
         12),
    Case("ib_xmit_wait_high", lambda p: bump(ib(p, "gpu03").pma, "port_xmit_wait", 200_000_000),
         (("gpu03", "mlx5_0/1", None),), (20_000 + 200_000_000) / WINDOW_S),
    Case("eth_crc_errors_growing", lambda p: bump(roce(p, "gpu01").ethtool, "rx_crc_errors_phy", 13),
         (("gpu01", "ens1f0np0", None),), 13),
    Case("fec_uncorrectable_growing", lambda p: bump(roce(p, "stor01").ethtool, "rx_fec_uncorrectable_blocks_phy", 5),
         (("stor01", "ens2f0np0", None),), 5),
    Case("counter_saturated", lambda p: ib(p, "gpu03").pma.update(symbol_error=[65535, 0]),
         (("gpu03", "mlx5_0/1", None),), 1),
    Case("counter_went_backwards", reset_rcv_packets, (("gpu01", "mlx5_0/1", None),), "port_rcv_packets"),
    # --- 20-roce-congestion ---
    Case("host_pfc_not_roce_priority", lambda p: put(roce(p, "gpu02"), pfc=(4,)),
         (("gpu02", "ens1f0np0", 3), ("gpu02", "ens1f0np0", 4)), 0),
    Case("pfc_priority_mismatch_host_switch", lambda p: put(leaf(p, "Ethernet4"), lossless=(4,)),
         (("gpu02", "ens1f0np0", 3),), 1, evidence=(("expected", "0 on leaf01 Ethernet4"),)),
    Case("switch_pfc_not_roce_priority", lambda p: put(leaf(p, "Ethernet4"), lossless=(4,)),
         (("leaf01", "Ethernet4", 3),), 0),
    Case("host_trust_not_dscp", lambda p: put(roce(p, "gpu03"), trust="pcp"), (("gpu03", "ens1f0np0", None),), "pcp"),
    Case("host_dscp_not_roce_priority", lambda p: put(roce(p, "gpu01"), dscp26_priority=0),
         (("gpu01", "ens1f0np0", None),), 0),
    Case("dcqcn_np_disabled", lambda p: roce(p, "gpu03").np_enabled.update({3: 0}), (("gpu03", "ens1f0np0", 3),), 0),
    Case("dcqcn_rp_disabled", lambda p: roce(p, "gpu01").rp_enabled.update({3: 0}), (("gpu01", "ens1f0np0", 3),), 0),
    Case("ecn_marks_without_cnp", lambda p: grow(roce(p, "gpu02").hw, "np_cnp_sent", 0),
         (("gpu02", "mlx5_1/1", None),), 50_000),
    Case("cnps_not_handled", lambda p: every_roce_port(p, lambda port: grow(port.hw, "rp_cnp_handled", 5_000)),
         (("fabric", None, None),), 0.1),
    Case("cnp_ignored", lambda p: bump(roce(p, "gpu01").hw, "rp_cnp_ignored", 300), (("gpu01", "mlx5_1/1", None),),
         (1 + 300) / WINDOW_S),
    Case("wred_drops_without_marks",
         lambda p: (bump(leaf(p, "Ethernet8").wred_drops, "3", 2_000), grow(leaf(p, "Ethernet8").ecn_marks, "3", 0)),
         (("leaf01", "Ethernet8", 3),), 2_000),
    Case("pfc_without_ecn_marks", ecn_silenced_and_pausing, (("leaf01", "Ethernet0", 3),), 20_000 / WINDOW_S),
    Case("ecn_after_pfc", cumulus_port_paused_unmarked, (("leaf01", "swp1", 3),), 0.6,
         evidence=(("baseline", 1e-4),), alone=True),
    Case("switch_ecn_fires_after_pfc", cumulus_port_paused_unmarked, (("leaf01", None, None),), 0.6,
         evidence=(("baseline", "1 port(s): swp1 priority 3 (paused 0.6, marked 0.0001)"),), alone=True),
    Case("ecn_kmax_above_pfc_trigger", lambda p: put(p.switch, kmax=1_499_136), (("leaf01", "AZURE_LOSSLESS", None),),
         1_499_136),
    Case("ecn_kmax_above_pfc_trigger_tc", eos_pod(lambda p: put(p.switch, kmax=1_499_136)),
         tuple(("leaf01", f"Ethernet{n}", 3) for n in (1, 2, 3, 4)), 1_499_136, alone=True),
    Case("ecn_too_aggressive", lambda p: grow(leaf(p, "Ethernet4").ecn_marks, "3", 2_000_000),
         (("leaf01", "Ethernet4", 3),), 0.2),
    Case("host_paused_heavily", lambda p: grow(roce(p, "gpu02").ethtool, "rx_prio3_pause_duration", 2_000_000),
         (("gpu02", "ens1f0np0", 3),), 0.2),
    Case("pfc_storm", lambda p: grow(roce(p, "gpu03").ethtool, "tx_prio3_pause_duration", 9_000_000),
         (("gpu03", "ens1f0np0", 3),), 0.9),
    Case("host_pause_storm_rate", lambda p: grow(roce(p, "gpu01").ethtool, "tx_prio3_pause", 400_000),
         (("gpu01", "ens1f0np0", 3),), 40_000),
    Case("host_pause_storm_rate_total", lambda p: grow(roce(p, "gpu01").ethtool, "tx_pause_ctrl_phy", 400_000),
         (("gpu01", "ens1f0np0", None),), 40_000),
    Case("pfc_watchdog_storm", watchdog_storms, (("leaf01", "Ethernet8", 3),), 2),
    Case("pfc_watchdog_stormed_now", lambda p: put(leaf(p, "Ethernet0"), wd_status="stormed"),
         (("leaf01", "Ethernet0", 3),), "stormed"),
    Case("lossless_pg_drops", lambda p: bump(leaf(p, "Ethernet4").pg_drops, "3", 300), (("leaf01", "Ethernet4", 3),),
         300),
    Case("roce_rx_no_buffer_drops", cumulus_pod(lambda p: bump(leaf(p, "swp2").pg_drops, "3", 300)),
         (("leaf01", "swp2", None),), 300, alone=True),
    Case("roce_tx_no_buffer_drops", cumulus_pod(lambda p: bump(leaf(p, "swp1").uc_drops, "3", 500)),
         (("leaf01", "swp1", None),), 500, alone=True),
    Case("lossless_queue_tail_drops", cumulus_pod(lambda p: bump(leaf(p, "swp1").uc_drops, "3", 500)),
         (("leaf01", "swp1", 3),), 500_000, alone=True),
    Case("host_rx_discards_lossless", lambda p: bump(roce(p, "gpu03").ethtool, "rx_prio3_discards", 40),
         (("gpu03", "ens1f0np0", 3),), 40),
    Case("rx_out_of_buffer", lambda p: bump(roce(p, "gpu01").ethtool, "rx_out_of_buffer", 900),
         (("gpu01", "ens1f0np0", None),), 900),
    Case("lossless_packet_loss", lambda p: bump(roce(p, "gpu02").hw, "out_of_sequence", 31),
         (("gpu02", "mlx5_1/1", None),), 31),
    Case("retransmission_timeouts", lambda p: bump(roce(p, "gpu03").hw, "local_ack_timeout_err", 7),
         (("gpu03", "mlx5_1/1", None),), 7),
    Case("nak_sequence_errors", lambda p: bump(roce(p, "gpu01").hw, "packet_seq_err", 9),
         (("gpu01", "mlx5_1/1", None),), 9),
    Case("several_lossless_priorities", lambda p: put(roce(p, "gpu03"), pfc=(3, 4)),
         (("gpu03", "ens1f0np0", None),), 2),
    # --- 30-fleet-and-pitfalls ---
    Case("bandwidth_below_line_rate", lambda p: put(p.host("gpu02"), bw={65536: 196.0, 1048576: 196.0}),
         (("gpu02", "ib_write_bw", None),), 0.49),
    # perftest prints two complaints; they share one fact key, and the analysis keeps both, the cause first
    Case("perftest_failed",
         lambda p: put(p.host("gpu01"), bw=None, perftest_error="Couldn't connect to 10.0.0.2:18515"),
         (("gpu01", "perftest", None),),
         "Couldn't connect to 10.0.0.2:18515 | "
         "Unable to open file descriptor for socket connection Unable to init the socket connection"),
    Case("latency_jitter", lambda p: put(p.host("gpu03"), lat=[(2, 1.05, 1.21), (4096, 2.31, 9.5)]),
         (("gpu03", "ib_write_lat", None),), 9.5 / 2.31),
    Case("storage_node_overloaded", lambda p: put(p.host("stor01"), psi_io=41.9), (("stor01", "host", None),), 41.9),
    Case("storage_node_cpu_starved", lambda p: put(p.host("stor01"), psi_cpu=55.0), (("stor01", "host", None),), 55.0),
    Case("firmware_drift", lambda p: put(ib(p, "gpu03"), fw="28.35.1012"), (("gpu03", "mlx5_0", None),), "28.35.1012",
         evidence=(("baseline", "28.39.1002"),)),
    Case("training_storage_share_lossless_priority", lambda p: put(roce(p, "stor01"), pfc=(3,)),
         (("stor01", "ens2f0np0", 3),), None, evidence=(("baseline", "compute uses [3]"),)),
    Case("missing_port_state", lambda p: p.host("gpu02").omit.update({"sysfs_counters", "ibv_devinfo"}),
         (("gpu02", None, None),), "absent: port_state"),
    Case("rdma_device_missing_vs_peers", lambda p: p.host("gpu02").omit.update({"sysfs_counters", "ibv_devinfo"}),
         (("gpu02", None, None),), "absent: port_state"),
    Case("missing_roce_cc_counters", no_hw_counters, (("gpu01", None, None),), "absent: cnp_sent, cnp_handled"),
    Case("roce_cc_counters_read_hung", lambda p: p.host("stor01").failing.update(sysfs_counters=124),
         (("stor01", None, None),), "grep -H -r . /sys/class/infiniband/mlx5_0/ports timed out on stor01"),
    Case("missing_pause_counters", lambda p: p.host("gpu03").omit.add("ethtool_stats"), (("gpu03", None, None),),
         "absent: rx_pause_frames, tx_pause_frames"),
    Case("pause_counters_ethtool_hung", lambda p: p.host("gpu01").failing.update(ethtool_stats=124),
         (("gpu01", None, None),), "ethtool -S ens1f0np0 timed out on gpu01"),
    Case("pause_counters_ethtool_missing", lambda p: p.host("stor01").failing.update(ethtool_stats=127),
         (("stor01", None, None),), "ethtool not installed on stor01"),
    Case("missing_qos_config", lambda p: p.host("stor01").omit.add("mlnx_qos"), (("stor01", None, None),),
         "absent: pfc_enabled, trust_mode"),
    Case("qos_config_mlnx_qos_hung", lambda p: p.host("gpu03").failing.update(mlnx_qos=124),
         (("gpu03", None, None),), "mlnx_qos -i ens1f0np0 timed out on gpu03"),
    Case("bandwidth_below_baseline", lambda p: put(p.host("gpu01"), bw={65536: 388.5, 1048576: 375.0}),
         (("gpu01", "ib_write_bw", None),), 375.0, baseline=True, evidence=(("baseline", 391.2),)),
    Case("pause_rate_above_baseline", lambda p: grow(roce(p, "gpu02").ethtool, "rx_prio3_pause", 60_000),
         (("gpu02", "ens1f0np0", 3),), 6_000, baseline=True, evidence=(("baseline", 100),)),
    Case("pause_rate_above_baseline_total", lambda p: grow(roce(p, "gpu02").ethtool, "rx_pause_ctrl_phy", 60_000),
         (("gpu02", "ens1f0np0", None),), 6_000, baseline=True, evidence=(("baseline", 0),)),
]


# --- shared steps -------------------------------------------------------------------------------------------------


def analyse(pod: Pod, path: Path):
    analysis = analyse_bundle(bundle_io.read(_pod.write(pod, path)))
    assert analysis.table.parse_failures == [], [f.message for f in analysis.table.parse_failures]
    assert analysis.window_s == pytest.approx(WINDOW_S)
    return analysis


def where(findings: list[Finding]) -> list[tuple]:
    return [(f.target, f.entity, f.evidence["priority"]) for f in findings]


@pytest.fixture(scope="module")
def healthy_baseline(tmp_path_factory) -> pd.DataFrame:
    """The rule statistics of a baseline saved from the healthy pod (one night: 3 GPU nodes per group)."""
    root = tmp_path_factory.mktemp("baseline")
    path = _pod.write(_pod.healthy_pod(), root / "healthy-night")
    baselines.save(path, store=root / "store", name="healthy")
    return baselines.stats_for_rules(baselines.resolve("healthy", root / "store"))


@pytest.fixture(scope="module")
def healthy_result(tmp_path_factory, healthy_baseline):
    analysis = analyse(_pod.healthy_pod(), tmp_path_factory.mktemp("healthy") / "bundle")
    return diagnose_analysis(analysis, baseline=healthy_baseline)


# --- 1. a trigger case for every rule -----------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.rule for c in CASES])
def test_rule_fires_where_the_fault_is(case: Case, tmp_path: Path, healthy_baseline: pd.DataFrame) -> None:
    rule = RULES[case.rule]
    pod = _pod.healthy_pod()
    case.mutate(pod)
    # the collection's failed commands as facts, as a diagnosis adds them
    analysis = with_command_failures(analyse(pod, tmp_path / "bundle"))
    found = engine.evaluate(analysis, [rule], baseline=healthy_baseline if case.baseline else None)

    assert sorted(where(found), key=str) == sorted(case.hits, key=str), f"{rule.id} fired at {where(found)}"
    first = next(f for f in found if (f.target, f.entity, f.evidence["priority"]) == case.hits[0])
    for f in found:
        assert f.rule == rule.id and f.severity is rule.severity
        assert "{" not in f.symptom + f.cause + f.check + f.fix, f.symptom  # every placeholder filled
    assert verdict(found, []) is EXPECTED_VERDICT[rule.severity]
    for key, wanted in (("observed", case.observed), *case.evidence):
        got = first.evidence[key]
        if isinstance(wanted, (int, float)) and not isinstance(wanted, bool):
            assert got == pytest.approx(wanted, rel=1e-4), (key, first.evidence)
        elif wanted is not None:
            assert got == wanted, (key, first.evidence)
    if rule.kind == "rate" and rule.params.get("field") == "delta":
        assert first.evidence["window_s"] == pytest.approx(WINDOW_S)
    if case.baseline:
        assert first.evidence["baseline"] is not None, first.evidence


# --- 2. the guard: no shipped rule without a case -----------------------------------------------------------------


def test_every_shipped_rule_has_exactly_one_trigger_case() -> None:
    # The gate's verdict rules fire on the perftest attribution's facts, the capture rules on packet captures and the
    # topology rules on a rail-optimised pod (tests/topology/pod.py), not on this pod: their cases live with them.
    ids = [c.rule for c in CASES] + [t.rule for t in PERFTEST_TRIGGERS] + [t.rule for t in CAPTURE_TRIGGERS]
    ids += [t.rule for t in TOPOLOGY_TRIGGERS]
    ids += [t.rule for t in LINK_ERROR_TRIGGERS]  # physical errors paired per cable (rdmatool.topology.link_errors)
    ids += [t.rule for t in INCAST_TRIGGERS]  # the gate's incast stage facts (tests/perf/test_incast.py)
    ids += [t.rule for t in STORAGE_TRIGGERS]  # perf run --mode storage's facts (tests/perf/test_storage_findings.py)
    ids += [t.rule for t in TRIAGE_TRIGGERS]  # compute or communication (tests/triage/test_triggers.py)
    ids += [t.rule for t in VERBS_TRIGGERS]  # local mode's verbs view (tests/transport/test_verbs_rules.py)
    ids += [t.rule for t in SWITCH_PAUSE_TRIGGERS]  # a switch pausing its senders (tests/rules/test_switch_pauses_senders.py)
    ids += [t.rule for t in NCCL_TRIGGERS]  # the NCCL recipe's and log check's problems (tests/nccl/test_triggers.py)
    ids += [t.rule for t in WATCH_TRIGGERS]  # a watch's judgement over time (tests/watch/test_judge.py)
    ids += [t.rule for t in IB_FABRIC_TRIGGERS]  # the InfiniBand subnet's sweep (tests/topology/test_ib_fabric.py)
    assert len(ids) == len(set(ids)), "a rule with two cases"
    assert set(ids) == set(RULES), (f"rules without a trigger case: {sorted(set(RULES) - set(ids))}; "
                                    f"cases for no shipped rule: {sorted(set(ids) - set(RULES))}")


# --- 3a. silence on the hand-built healthy pod --------------------------------------------------------------------


def test_healthy_pod_has_no_warning_or_worse(healthy_result) -> None:
    bad = [(f.rule, f.target, f.entity) for f in healthy_result.findings if f.severity in BAD]
    assert bad == []
    assert healthy_result.verdict is Verdict.PASS and healthy_result.failures == []


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_rule_is_silent_on_the_healthy_pod(rule_id: str, healthy_result) -> None:
    assert [f.evidence for f in healthy_result.findings if f.rule == rule_id] == []


def test_pod_counters_are_independent() -> None:
    """A mutation must change one counter only: no two counters of the pod may share one list."""
    pod = _pod.healthy_pod()
    groups = [c for h in pod.hosts for p in h.ports for c in (p.pma, p.hw, p.ethtool)]
    groups += [c for sp in pod.switch.ports for c in (sp.rx_pfc, sp.tx_pfc, sp.uc_packets, sp.uc_drops,
                                                     sp.wred_drops, sp.ecn_marks, sp.pg_drops)]
    counters = [c for group in groups for c in group.values()] + [sp.wd_storms for sp in pod.switch.ports]
    assert len({id(c) for c in counters}) == len(counters)


def test_healthy_baseline_covers_the_deviation_rules(healthy_baseline: pd.DataFrame) -> None:
    """Otherwise the deviation cases and the silence above would pass for want of statistics."""
    for metric in ("bw_avg_gbps", "rx_pause_frames_per_s"):
        rows = healthy_baseline[(healthy_baseline["metric"] == metric) & (healthy_baseline["role"] == "compute")]
        assert (rows["n"] >= 3).any(), metric


# --- 3b. end to end: the simulated healthy fabric, and the shipped demo -------------------------------------------

healthy_fabric = fabric_fixture("healthy", scope="module")
DEMO = REPO / "examples" / "demo-bundle"
# The demo's simulated faults and the rules that name them (either rule counts).
DEMO_FAULTS = {
    "flapping cable": {"ib_link_flapping", "eth_link_flapping"},
    "PFC priority mismatch host-switch": {"pfc_priority_mismatch_host_switch", "host_pfc_not_roce_priority"},
    "PFC storm": {"pfc_storm", "host_pause_storm_rate", "host_pause_storm_rate_total", "pfc_watchdog_storm",
                  "pfc_watchdog_stormed_now"},
    "DCQCN RP disabled": {"dcqcn_rp_disabled"},
    "firmware outlier": {"firmware_drift"},
    "port down": {"port_not_active", "port_phys_not_linkup"},
    "width downgrade": {"port_width_degraded", "port_speed_below_fleet"},
    "MTU 1024": {"active_mtu_below_max"},
}


@pytest.fixture(scope="module")
def healthy_fabric_bundle(healthy_fabric, tmp_path_factory) -> Path:
    # A roomier per-command timeout than the helper's 4 s, and one more try when a target could not be collected
    # (exit 3): on an overloaded machine netmiko can miss a switch prompt, which says nothing about the diagnosis.
    for attempt in (1, 2):
        out = tmp_path_factory.mktemp("collect") / f"healthy-{attempt}"
        result = collect(healthy_fabric, out, "--interval", "3", "--timeout", "20")
        if result.returncode != 3:
            break
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


@pytest.mark.e2e
def test_simulated_healthy_fabric_diagnoses_clean(healthy_fabric_bundle: Path) -> None:
    result = rdmatool("diagnose", str(healthy_fabric_bundle), "--format", "json")
    report = json.loads(result.stdout)
    bad = [(f["severity"], f["rule"], f["target"], f["entity"]) for f in report["findings"]
           if f["severity"] in ("warning", "error", "critical")]
    assert bad == []
    assert report["failures"] == [] and report["verdict"] == "pass"
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def demo_runs() -> list:
    """The demo diagnosed twice, in two processes with different hash seeds (set and dict order must not leak)."""
    return [rdmatool("diagnose", str(DEMO), "--format", "json", env={"PYTHONHASHSEED": seed}) for seed in ("1", "2")]


def test_demo_bundle_shows_its_faults(demo_runs: list) -> None:
    result = demo_runs[0]
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    fired = {f["rule"] for f in report["findings"]}
    seen = {fault for fault, rules in DEMO_FAULTS.items() if rules & fired}
    assert len(seen) >= 6, f"faults found: {sorted(seen)}; missing: {sorted(set(DEMO_FAULTS) - seen)}"
    assert report["verdict"] == "fail"


# --- 4. determinism -----------------------------------------------------------------------------------------------


def test_demo_diagnosis_is_identical_across_runs(demo_runs: list) -> None:
    first, second = demo_runs
    assert first.stdout == second.stdout
    assert first.stdout.strip()


def test_many_faults_diagnose_identically_twice(tmp_path: Path, healthy_baseline: pd.DataFrame) -> None:
    pod = _pod.healthy_pod()
    for case in CASES:
        if not case.alone:
            case.mutate(pod)
    path = _pod.write(pod, tmp_path / "faults")
    runs = [json.dumps(diagnose_analysis(analyse_bundle(bundle_io.read(path)), baseline=healthy_baseline).as_json())
            for _ in range(2)]
    assert runs[0] == runs[1]
    findings = json.loads(runs[0])["findings"]
    assert len({f["rule"] for f in findings}) > 30  # a rich diagnosis, not an empty one compared with itself
    order = [(["critical", "error", "warning", "info"].index(f["severity"]), f["rule"], f["target"], f["entity"] or "")
             for f in findings]
    assert order == sorted(order)
