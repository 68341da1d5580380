"""PFC / ECN / CNP figures, end to end on hand-built pods (tests/pods): ECN after PFC per port and priority, the
switch CNP counters kept out of the hosts' CNP balance, one ECN suggestion per switch configuration object with
its target, DCQCN commands with the real netdev and priority, no `<placeholder>` in a command the tool could fill,
check commands in the tools' own syntax, and the note on platforms whose syntax is not verified."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from rdmatool.diagnose.pipeline import diagnose_analysis, diagnose_bundle
from rdmatool.model import Severity
from rdmatool.report import text as text_report
from rdmatool.table.analysis import analyse_path
from rdmatool.tune import commands as cmd
from tests.e2e.helpers import REPO, collect
from tests.fabric.fixtures import fabric_fixture
from tests.pods import bundle as pods
from tests.pods.bundle import WINDOW_S

BAD = (Severity.WARNING, Severity.ERROR, Severity.CRITICAL)
PLACEHOLDER = re.compile(r"<[A-Za-z_ -]+>")


def diagnose(pod: pods.Pod, tmp_path: Path):
    return diagnose_analysis(analyse_path(pods.write(pod, tmp_path / "bundle")))


def late_port(platform: str, paused: float = 0.6, marks: int = 1_000) -> pods.Pod:
    """A pod behind one leaf of `platform` whose first port is paused `paused` of the window on priority 3 while
    marking `marks` of its 10^7 packets there; every other port marks 0.1 % (10^4) and is hardly paused."""
    pod = pods.healthy_pod((platform,))
    port = pod.switch.ports[0]
    port.rx_pause_us["3"][1] = int(paused * WINDOW_S * 1e6)
    port.ecn_marks["3"][1] = marks
    return pod


def of(result, rule: str) -> list:
    return [f for f in result.findings if f.rule == rule]


def current_figures(current: str) -> tuple[float, float, float]:
    """(Kmin, Kmax, Pmax) of a suggestion's `current`, e.g. `Kmin 153600 B, Kmax 1499464 B, Pmax 10 %`."""
    m = re.fullmatch(r"Kmin (\d+) B, Kmax (\d+) B, Pmax (\d+) %", current or "")
    assert m, current
    return float(m[1]), float(m[2]), float(m[3])


def ecn_suggestions(result) -> dict:
    """The distinct ECN suggestions of a diagnosis (a suggestion holds dicts: keyed by its JSON)."""
    found = {}
    for f in result.findings:
        for s in f.suggestions:
            if s.setting.startswith("ECN thresholds"):
                found[json.dumps(s.__dict__, sort_keys=True)] = s
    return found


# --- ECN after PFC, per port and priority ----------------------------------------------------------------------


@pytest.mark.parametrize("platform", ["cumulus", "onyx"])  # the NOSes that report pause durations per priority
def test_one_late_port_on_a_switch_that_marks_elsewhere(platform: str, tmp_path: Path) -> None:
    pod = late_port(platform)
    port = pod.switch.ports[0].name
    result = diagnose(pod, tmp_path)
    per_port = of(result, "ecn_after_pfc")
    assert [(f.target, f.entity, f.evidence["priority"]) for f in per_port] == [("leaf01", port, 3)]
    assert per_port[0].evidence["observed"] == pytest.approx(0.6, rel=1e-3)
    assert per_port[0].evidence["baseline"] == pytest.approx(1e-4, rel=1e-2)  # 10^3 marks / 10^7 packets
    assert f"port {port}" in per_port[0].symptom and "priority 3" in per_port[0].symptom
    # the switch whose thresholds cause it: a finding of its own, warning or worse, with the suggestion
    on_switch = of(result, "switch_ecn_fires_after_pfc")
    assert [(f.target, f.entity) for f in on_switch] == [("leaf01", None)]
    assert on_switch[0].severity in BAD and port in on_switch[0].symptom
    assert on_switch[0].suggestions and on_switch[0].suggestions[0].target == "leaf01"
    # the rule of a whole switch marking nothing cannot see it: this switch marks on its other ports
    assert of(result, "pfc_without_ecn_marks") == []


def far_end_late_port(platform: str, paused: float = 0.6, marks: int = 1_000) -> tuple[pods.Pod, str, str]:
    """A pod behind one leaf of `platform` (which counts no pause time) whose first port's host keeps it paused
    `paused` of the window on priority 3 (the host's tx_prio3_pause_duration) while the port marks `marks` of the
    10^7 packets the host receives there. → (pod, host, netdev)."""
    pod = pods.healthy_pod((platform,))
    port = pod.switch.ports[0]
    host = pod.host(port.host)
    nic = next(p for p in host.ports if p.netdev == port.netdev)
    nic.ethtool["tx_prio3_pause_duration"][1] = int(paused * WINDOW_S * 1e6)
    port.ecn_marks["3"][1] = marks
    return pod, host.name, nic.netdev


@pytest.mark.parametrize("platform", ["sonic", "eos", "nxos"])  # pause frames only: the time comes from the host
def test_a_late_port_is_judged_from_the_far_end_of_its_cable(platform: str, tmp_path: Path) -> None:
    pod, host, netdev = far_end_late_port(platform)
    port = pod.switch.ports[0].name
    result = diagnose(pod, tmp_path)
    per_port = of(result, "ecn_after_pfc")
    assert [(f.target, f.evidence["priority"]) for f in per_port] == [("leaf01", 3)]
    assert per_port[0].entity.lower().endswith(port.lower().removeprefix("ethernet").removeprefix("eth"))
    assert per_port[0].evidence["observed"] == pytest.approx(0.6, rel=1e-3)
    # 10^3 marks over the window against the 10^7 packets the host received over its own
    assert per_port[0].evidence["baseline"] == pytest.approx(1e-4, rel=2e-2)
    assert of(result, "switch_ecn_fires_after_pfc")[0].severity in BAD
    # the figure says where it was read, in the finding's evidence and in the stated fact
    assert per_port[0].evidence["details"] == {"pause_read_at": f"far end {host} {netdev}: tx_pause_duration_us"}
    analysis = analyse_path(tmp_path / "bundle")
    from rdmatool.topology.far_end import far_end_facts
    stated = far_end_facts(analysis)
    paused = stated[(stated["metric"] == "rx_pause_fraction") & (stated["priority"] == 3)
                    & (stated["entity"] == per_port[0].entity)]
    assert list(paused["raw_key"]) == [f"far end {host} {netdev}: tx_pause_duration_us"]


@pytest.mark.parametrize("platform", ["sonic", "eos", "nxos"])
def test_a_far_end_paused_port_that_marks_enough_is_not_late(platform: str, tmp_path: Path) -> None:
    pod, _, _ = far_end_late_port(platform, marks=50_000)  # 0.5 % marked while paused 60 %
    assert of(diagnose(pod, tmp_path), "ecn_after_pfc") == []


@pytest.mark.parametrize("platform", ["cumulus", "onyx"])
def test_a_switch_that_counts_pause_time_is_not_second_guessed_by_the_far_end(platform: str, tmp_path: Path) -> None:
    pod, _, _ = far_end_late_port(platform)  # the host says 60 %, the switch's own duration counters 0.1 %
    from rdmatool.topology.far_end import far_end_facts
    stated = far_end_facts(analyse_path(pods.write(pod, tmp_path / "bundle")))
    assert stated[stated["metric"] == "rx_pause_fraction"].empty
    assert of(diagnose_analysis(analyse_path(tmp_path / "bundle")), "ecn_after_pfc") == []


def test_a_paused_port_that_marks_enough_is_not_late(tmp_path: Path) -> None:
    result = diagnose(late_port("cumulus", paused=0.6, marks=50_000), tmp_path)  # 0.5 % marked while paused
    assert of(result, "ecn_after_pfc") == [] and of(result, "switch_ecn_fires_after_pfc") == []
    result = diagnose(late_port("cumulus", paused=0.03, marks=1_000), tmp_path / "short")  # paused 3 %: not judged
    assert of(result, "ecn_after_pfc") == []


# --- CNPs: the switch's are not the hosts' --------------------------------------------------------------------


def test_switch_cnp_counters_are_not_in_the_host_cnp_balance(tmp_path: Path) -> None:
    pod = pods.healthy_pod(("cumulus",))
    for port in pod.switch.ports:
        port.cnp[1] = 5_000_000  # the leaf forwards far more CNPs than the hosts send (a spine's, say)
    analysis = analyse_path(pods.write(pod, tmp_path / "bundle"))
    facts = analysis.facts
    switch_rows = facts[facts["kind"] == "switch"]
    assert "switch_cnp_tx_packets_per_s" in set(switch_rows["metric"])
    assert not switch_rows["metric"].isin(["cnp_sent", "cnp_sent_per_s", "cnp_handled"]).any()
    result = diagnose_analysis(analysis)
    assert of(result, "cnps_not_handled") == []  # hosts: every CNP sent was handled
    bad = [(f.rule, f.target) for f in result.findings if f.severity in BAD]
    assert bad == []


def test_host_cnps_not_handled_still_found_beside_switch_cnps(tmp_path: Path) -> None:
    pod = pods.healthy_pod(("cumulus",))
    for host in pod.hosts:
        for port in host.ports:
            if port.roce:
                port.hw["rp_cnp_handled"][1] = 5_000  # a tenth of the 50,000 sent
    result = diagnose(pod, tmp_path)
    found = of(result, "cnps_not_handled")
    assert len(found) == 1 and found[0].evidence["observed"] == pytest.approx(0.1)


# --- ECN suggestions: per configuration object, deduplicated, with a target -----------------------------------


def test_cumulus_global_profile_is_one_block_for_every_finding(tmp_path: Path) -> None:
    pod = late_port("cumulus")
    second = pod.switch.ports[1]
    second.rx_pause_us["3"][1], second.ecn_marks["3"][1] = int(0.5 * WINDOW_S * 1e6), 100
    pod.switch.kmax = 1_499_136  # and its Kmax is above 1 MB: the info rule asks for the same profile
    result = diagnose(pod, tmp_path)
    ecn = [(f, s) for f in result.findings for s in f.suggestions if s.setting.startswith("ECN thresholds")]
    asking = {f.rule for f, _ in ecn}
    assert {"ecn_after_pfc", "switch_ecn_fires_after_pfc", "ecn_kmax_above_pfc_trigger_tc"} <= asking
    assert len({f.entity for f, _ in ecn}) >= 3  # several findings, several places ...
    distinct = ecn_suggestions(result)
    assert len(distinct) == 1, distinct  # ... one suggestion: the switch's one global profile
    (s,) = distinct.values()
    assert s.target == "leaf01" and "congestion-control profile default-global" in s.setting
    lines = s.commands["cumulus"]
    assert sum("nv set qos congestion-control default-global" in line for line in lines) == 1
    assert lines[-1] == "nv config apply"
    # from the switch's own `nv show qos roce` (which shows sizes rounded: 150 KB, 1.43 MB)
    assert current_figures(s.current) == pytest.approx((153_600, 1_499_136, 10), rel=1e-3)
    console = Console(record=True, width=200)
    text_report.render(result, console)
    assert console.export_text().count("ECN thresholds of TC 3") == 1


def test_per_port_platform_gets_one_block_per_port(tmp_path: Path) -> None:
    pod = late_port("onyx")
    pod.switch.kmax = 1_499_136  # the info rule then asks for every port
    result = diagnose(pod, tmp_path)
    ecn = ecn_suggestions(result).values()
    assert {s.setting for s in ecn} == {f"ECN thresholds of TC 3 (leaf01 Eth1/{i})" for i in range(1, 5)}
    for s in ecn:
        assert s.target == "leaf01"
        assert current_figures(s.current) == pytest.approx((153_600, 1_499_136, 10), rel=1e-3)
        assert "onyx commands: syntax not verified against the vendor's documentation" in s.rationale


def test_suggestion_json_names_its_target(tmp_path: Path) -> None:
    pod = late_port("cumulus")
    pod.host("gpu03").port("mlx5_1").np_enabled[3] = 0
    out = diagnose(pod, tmp_path).as_json()
    suggestions = [(f["rule"], s) for f in out["findings"] for s in f["suggestions"]]
    assert suggestions and all("target" in s and s["target"] for _, s in suggestions)
    assert {s["target"] for rule, s in suggestions if rule == "switch_ecn_fires_after_pfc"} == {"leaf01"}
    assert {s["target"] for rule, s in suggestions if rule == "dcqcn_np_disabled"} == {"gpu03"}
    json.dumps(out)  # the shape stays JSON


# --- DCQCN commands with the real netdev and priority ----------------------------------------------------------


def test_np_disabled_gets_the_echo_for_its_netdev_and_priority(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    pod.host("stor01").port("mlx5_0").np_enabled[3] = 0
    gpu = pod.host("gpu02").port("mlx5_1")
    gpu.np_enabled[3], gpu.hw["np_cnp_sent"][1] = 0, 0  # marks received, no CNP sent (entity mlx5_1/1)
    result = diagnose(pod, tmp_path)
    np_off = {f.target: f for f in of(result, "dcqcn_np_disabled")}
    assert [s.commands for s in np_off["stor01"].suggestions] == [
        {"host": ["echo 1 > /sys/class/net/ens2f0np0/ecn/roce_np/enable/3"]}]
    assert np_off["stor01"].suggestions[0].target == "stor01"
    (silent,) = of(result, "ecn_marks_without_cnp")
    assert silent.entity == "mlx5_1/1"  # an RDMA port: its netdev comes from the GID table
    assert [s.commands for s in silent.suggestions] == [
        {"host": ["echo 1 > /sys/class/net/ens1f0np0/ecn/roce_np/enable/3"]}]


def test_np_command_without_a_gid_table_uses_the_netdev_that_is_off(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    host = pod.host("gpu02")
    host.omit.add("show_gids")
    host.port("mlx5_1").np_enabled[3] = 0
    host.port("mlx5_1").hw["np_cnp_sent"][1] = 0
    result = diagnose(pod, tmp_path)
    (silent,) = of(result, "ecn_marks_without_cnp")
    assert [s.commands for s in silent.suggestions] == [
        {"host": ["echo 1 > /sys/class/net/ens1f0np0/ecn/roce_np/enable/3"]}]


# --- no placeholders where the tool knows the value; real syntax; the unverified note -------------------------


def _all_commands(findings) -> list[str]:
    return [line for f in findings for s in f.suggestions for lines in s.commands.values() for line in lines]


def test_no_placeholder_in_any_suggested_command_of_the_demo_bundle() -> None:
    result = diagnose_bundle(REPO / "examples" / "demo-bundle")
    lines = _all_commands(result.findings)
    assert len(lines) > 20
    assert [line for line in lines if PLACEHOLDER.search(line)] == []
    assert [line for line in lines if re.search(r"mlx5_\d+/\d+", line)] == []  # an RDMA port is no argument


def test_no_placeholder_in_any_suggested_command_of_a_pod_with_many_faults(tmp_path: Path) -> None:
    pod = late_port("cumulus")
    host = pod.host("gpu02").port("mlx5_1")
    host.np_enabled[3], host.rp_enabled[3], host.trust, host.pfc = 0, 0, "pcp", (3, 4)
    pod.host("gpu01").port("mlx5_1").hw["np_cnp_sent"][1] = 0
    result = diagnose(pod, tmp_path)
    lines = _all_commands(result.findings)
    assert len(lines) > 5
    assert [line for line in lines if PLACEHOLDER.search(line)] == []


# `ibstat mlx5_0 1`, never `ibstat mlx5_0/1`; a netdev tool never given an RDMA port.
WRONG_SYNTAX = re.compile(r"\b(?:ibstat|perfquery|mlnx_qos -i|ethtool -S|ethtool|ip link show)\s+mlx5_\d+/\d+"
                          r"|/sys/class/net/mlx5_\d+/\d+")


def test_check_commands_of_the_congestion_and_fleet_rules_use_real_syntax(tmp_path: Path) -> None:
    result = diagnose_bundle(REPO / "examples" / "demo-bundle")
    pod = late_port("cumulus")
    pod.host("gpu02").port("mlx5_1").hw["np_cnp_sent"][1] = 0
    pod.host("gpu01").port("mlx5_1").hw["rp_cnp_ignored"][1] = 5_000
    findings = [*result.findings, *diagnose(pod, tmp_path).findings]
    from rdmatool.diagnose.pipeline import default_playbooks
    from rdmatool.rules import playbook
    mine = {r.id for name in ("20-roce-congestion.yaml", "30-fleet-and-pitfalls.yaml")
            for r in playbook.load_file(default_playbooks() / name)}
    checked = [f for f in findings if f.rule in mine]
    assert {"ecn_marks_without_cnp", "cnp_ignored", "ecn_after_pfc"} <= {f.rule for f in checked}
    wrong = [(f.rule, text) for f in checked for text in (f.check, f.fix) if WRONG_SYNTAX.search(text)]
    assert wrong == []
    for f in checked:
        if f.rule in ("ecn_marks_without_cnp", "cnp_ignored"):
            assert f"rdma statistic show link {f.entity}" in f.check  # iproute2 takes DEV/PORT


def test_unverified_platform_note_is_in_the_output_and_only_there() -> None:
    result = diagnose_bundle(REPO / "examples" / "demo-bundle")
    seen = set()
    for f in result.findings:
        for s in f.suggestions:
            for platform in s.commands:
                seen.add(platform)
                note = f"{platform} commands: syntax not verified against the vendor's documentation"
                assert (note in s.rationale) is (platform not in cmd.VERIFIED_SYNTAX), (platform, s.rationale)
    assert {"onyx", "cumulus", "host"} <= seen  # both kinds are exercised
    doc = (REPO / "docs" / "tuning.md").read_text().split("## 9.", 1)[1]
    for platform in cmd.VERIFIED_SYNTAX:
        assert f"| {platform}" in doc  # the verified list, with its sources, in one place of the docs
    for platform in cmd.VENDOR_DOCUMENTS:
        assert f"**{platform}**" in doc


# --- end to end: the degraded simulated fabric, collected over real SSH -----------------------------------------

degraded_fabric = fabric_fixture("degraded", scope="module")


@pytest.mark.e2e
def test_no_placeholder_in_any_suggested_command_of_the_degraded_fabric(degraded_fabric, tmp_path: Path) -> None:
    out = tmp_path / "degraded"
    # gpu11's ethtool hangs by design (six calls over the two snapshots, each costing the per-command timeout): the
    # short timeout lets the collection finish in seconds (exit 3: something failed)
    done = collect(degraded_fabric, out, "--interval", "3", "--timeout", "4")
    assert done.returncode in (0, 3), done.stderr
    result = diagnose_bundle(out)
    lines = _all_commands(result.findings)
    assert len(lines) > 20
    assert [line for line in lines if PLACEHOLDER.search(line)] == []
    targets = {s.target for f in result.findings for s in f.suggestions}
    assert None not in targets and {"leaf02", "gpu04"} <= targets  # ECN above XOFF on leaf02; RP off on gpu04
