"""Attribution across the cable (rdmatool.topology.link_errors and the cable rules of playbooks/10-links.yaml), on the
hand-made pods of tests/pods/bundle.py written as real bundles: growing CRC / input errors on a switch port are a
finding naming the switch, the port and the host cabled to it; a host port's physical errors name its switch port;
errors on both ends of one cable are one finding naming both ends, never that plus one per end. Also: a rail
disabled while its peers' is up fails the gate and drains the node, and every check command of 10-links is in the
tool's own syntax."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from rdmatool import commands as audited
from rdmatool.diagnose.pipeline import default_playbooks, diagnose_analysis
from rdmatool.errors import PlaybookError
from rdmatool.gate import policy
from rdmatool.gate.profile import GateProfile
from rdmatool.gate.run import replay_gate
from rdmatool.model import Platform, Severity
from rdmatool.rules import engine, playbook
from rdmatool.table.analysis import analyse_path
from rdmatool.topology.link_errors import with_link_errors
from tests.fabric.scenario import switch_port_name
from tests.pods import bundle as pods

RULES = {r.id: r for r in playbook.load_dir(default_playbooks())}
# (the InfiniBand switch ports' wording of it is triggered by a subnet sweep: tests/topology/test_ib_fabric.py)
LINK_RULES = sorted(r for r in RULES if RULES[r].params.get("verdict") == "link_error_verdict"
                    and "17-ib-fabric" not in RULES[r].source)
BAD = (Severity.WARNING, Severity.ERROR, Severity.CRITICAL)
HOST_PHYSICAL = ("ib_symbol_errors_growing", "ib_link_error_recovery_growing", "eth_crc_errors_growing",
                 "fec_uncorrectable_growing")


def roce(pod: pods.Pod, host: str) -> pods.Port:
    return next(p for p in pod.host(host).ports if p.roce)


def cabled_switch_port(pod: pods.Pod, host: str) -> pods.SwitchPort:
    port = roce(pod, host)
    return next(s for s in pod.switches if s.name == port.switch).port(port.switch_port)


def analysed(pod: pods.Pod, tmp: Path):
    analysis = analyse_path(pods.write(pod, tmp / "bundle"))
    assert analysis.table.parse_failures == [], [f.message for f in analysis.table.parse_failures]
    return analysis


def both_ends(platform: str = "sonic") -> pods.Pod:
    """gpu01's RoCE port counts symbol errors, and the switch port it is cabled to receive errors."""
    pod = pods.healthy_pod((platform,))
    pods.bump(roce(pod, "gpu01").pma, "symbol_error", 77)
    cabled_switch_port(pod, "gpu01").rx_errors[1] = 40
    return pod


def host_end() -> pods.Pod:
    pod = pods.healthy_pod()
    pods.bump(roce(pod, "gpu02").ethtool, "rx_crc_errors_phy", 13)
    return pod


def switch_end(platform: str = "nxos") -> pods.Pod:
    pod = pods.healthy_pod((platform,))
    cabled_switch_port(pod, "gpu01").rx_errors[1] = 40
    return pod


@dataclass(frozen=True)
class Trigger:
    rule: str
    build: Callable[[], pods.Pod]
    hits: tuple[tuple[str, str], ...]  # (target, entity) of every finding
    names: tuple[str, ...] = ()  # what the first finding's symptom must say


TRIGGERS = [
    Trigger("cable_errors_both_ends", both_ends, (("gpu01", "mlx5_1/1"),),
            ("gpu01 mlx5_1/1", "symbol_errors +77", "leaf01 Ethernet0", "rx_errors +40")),
    Trigger("cable_errors_host_end", host_end, (("gpu02", "mlx5_1/1"),),
            ("gpu02 mlx5_1/1", "rx_crc_errors +13", "leaf01 Ethernet4", "its errors: none")),
    Trigger("switch_port_errors_growing", switch_end, (("leaf01", "Ethernet1/1"),),
            ("leaf01 Ethernet1/1", "rx_crc_errors +40", "the far end of its cable: gpu01 mlx5_1/1")),
]


@pytest.mark.parametrize("trigger", TRIGGERS, ids=lambda t: t.rule)
def test_the_trigger_fires_its_rule_on_that_cable(trigger: Trigger, tmp_path: Path) -> None:
    rule = RULES[trigger.rule]
    found = engine.evaluate(with_link_errors(analysed(trigger.build(), tmp_path)), [rule])
    assert [(f.target, f.entity) for f in found] == list(trigger.hits), [f.symptom for f in found]
    for f in found:
        assert f.severity is rule.severity and "{" not in f.symptom + f.cause + f.check + f.fix, f.symptom
    for words in trigger.names:
        assert words in found[0].symptom, (words, found[0].symptom)
    assert policy.stage_of(rule) == "counters"  # growth over the window: the gate's second stage


def test_every_cable_rule_has_a_trigger() -> None:
    assert sorted(t.rule for t in TRIGGERS) == LINK_RULES


def _bad(findings) -> list[tuple]:
    return [(f.rule, f.target, f.entity) for f in findings if f.severity in BAD]


# --- switch ports: every NOS reports receive errors ----------------------------------------------------------------

# What each NOS's error counters say of 40 frames received with a bad FCS (tests/fabric/shims render them): SONiC's
# RX_ERR alone; NX-OS CRC and input errors; Cumulus `counters errors`, Onyx `counters` and EOS `counters errors`
# FCS and total receive errors.
RX_ERRORS_40 = {"sonic": "rx_errors +40", "nxos": "rx_crc_errors +40, rx_errors +40",
                "cumulus": "rx_crc_errors +40, rx_errors +40", "onyx": "rx_crc_errors +40, rx_errors +40",
                "eos": "rx_crc_errors +40, rx_errors +40"}
# The parser of each NOS's error counters (rdmatool.commands.SWITCH_COMMANDS).
ERROR_PARSER = {"sonic": "sonic_portstat", "nxos": "nxos_interface", "cumulus": "cumulus_counters_errors",
                "onyx": "onyx_interface_counters", "eos": "eos_interface_errors"}
SYMBOL_COUNTING = ("cumulus", "onyx", "eos")  # the NOSes whose error view counts PHY symbol errors


def test_every_nos_has_its_error_counters_in_the_plan() -> None:
    assert sorted(RX_ERRORS_40) == sorted(ERROR_PARSER) == sorted(pods.PLATFORMS)
    for platform, parser in ERROR_PARSER.items():
        ports = [switch_port_name(platform, 0)]
        planned = {c.parser for c in audited.switch_plan(Platform(platform), ports, audited.SNAPSHOT_COUNTERS)}
        assert parser in planned, (platform, parser)  # re-read in the second snapshot: growth is what is judged


@pytest.mark.parametrize("platform", pods.PLATFORMS)
def test_growing_errors_on_a_switch_port_name_the_switch_the_port_and_the_host(platform, tmp_path) -> None:
    counters = RX_ERRORS_40[platform]
    pod = switch_end(platform)
    port = cabled_switch_port(pod, "gpu01").name
    result = diagnose_analysis(analysed(pod, tmp_path))
    assert _bad(result.findings) == [("switch_port_errors_growing", "leaf01", port)]
    (finding,) = result.findings
    assert f"leaf01 {port} ({counters})" in finding.symptom and "gpu01 mlx5_1/1" in finding.symptom
    assert finding.evidence["observed"] == 40  # FCS and input errors together: the larger count, never the sum


@pytest.mark.parametrize("platform", SYMBOL_COUNTING)
def test_growing_symbol_errors_on_a_switch_port_are_its_errors_too(platform: str, tmp_path: Path) -> None:
    pod = pods.healthy_pod((platform,))
    port = cabled_switch_port(pod, "gpu02")
    port.rx_symbol_errors[1] = 30  # the PHY sees bad symbols, no frame is dropped for a bad FCS (yet)
    result = diagnose_analysis(analysed(pod, tmp_path))
    assert _bad(result.findings) == [("switch_port_errors_growing", "leaf01", port.name)]
    (finding,) = result.findings
    assert f"leaf01 {port.name} (rx_symbol_errors +30)" in finding.symptom, finding.symptom
    assert "the far end of its cable: gpu02 mlx5_1/1" in finding.symptom
    assert finding.evidence["observed"] == 30


def test_a_switch_port_whose_cable_is_unknown_still_names_its_errors(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    cabled_switch_port(pod, "gpu03").rx_errors[1] = 9
    for host in pod.hosts:
        host.omit.add("lldpctl")  # SONiC's own LLDP table is not collected either: no cable known at all
    result = diagnose_analysis(analysed(pod, tmp_path))
    (finding,) = [f for f in result.findings if f.severity in BAD]
    assert (finding.rule, finding.target, finding.entity) == ("switch_port_errors_growing", "leaf01", "Ethernet8")
    assert finding.symptom.endswith("(rx_errors +9); the far end of its cable: not known (no LLDP neighbour in the "
                                    "bundle)"), finding.symptom


# --- one cable, both ends: one finding ----------------------------------------------------------------------------


@pytest.mark.parametrize("platform", pods.PLATFORMS)
def test_errors_on_both_ends_of_one_cable_are_one_link_finding(platform: str, tmp_path: Path) -> None:
    pod = both_ends(platform)
    port = cabled_switch_port(pod, "gpu01").name
    result = diagnose_analysis(analysed(pod, tmp_path))
    assert _bad(result.findings) == [("cable_errors_both_ends", "gpu01", "mlx5_1/1")]
    (finding,) = result.findings
    assert f"leaf01 {port}" in finding.symptom and "gpu01 mlx5_1/1 (symbol_errors +77)" in finding.symptom
    assert f"between gpu01 mlx5_1/1 and leaf01 {port}" in finding.fix
    assert "perfquery -x -C mlx5_1 -P 1" in finding.check and "mlxlink -d mlx5_1 -p 1 -c -m" in finding.check


def test_the_same_errors_without_the_switch_side_are_each_ends_own_findings(tmp_path: Path) -> None:
    """The control: with the cabling unknown, nothing can pair the ends, so each counter speaks for itself."""
    pod = both_ends()
    for host in pod.hosts:
        host.omit.add("lldpctl")
    found = _bad(diagnose_analysis(analysed(pod, tmp_path)).findings)
    assert ("ib_symbol_errors_growing", "gpu01", "mlx5_1/1") in found
    assert ("switch_port_errors_growing", "leaf01", "Ethernet0") in found
    assert not [f for f in found if f[0].startswith("cable_errors")]


def test_a_host_side_finding_names_its_switch_port_and_replaces_the_counter_rule(tmp_path: Path) -> None:
    result = diagnose_analysis(analysed(host_end(), tmp_path))
    assert _bad(result.findings) == [("cable_errors_host_end", "gpu02", "mlx5_1/1")]
    (finding,) = result.findings
    assert "cabled to leaf01 Ethernet4" in finding.symptom and "of leaf01" in finding.fix
    # the per-counter rule saw the netdev (ethtool): the same port, so it is replaced, not repeated
    alone = engine.evaluate(analysed(host_end(), tmp_path / "again"), [RULES["eth_crc_errors_growing"]])
    assert [(f.target, f.entity) for f in alone] == [("gpu02", "ens1f0np0")]


@pytest.mark.parametrize("platform", pods.PLATFORMS)
def test_a_switch_that_reports_no_error_counter_is_said_so(platform: str, tmp_path: Path) -> None:
    pod = pods.healthy_pod((platform,))
    pod.switch.omit.add(ERROR_PARSER[platform])  # the error counters were not read (older NOS, refused command)
    pods.bump(roce(pod, "gpu02").ethtool, "rx_crc_errors_phy", 13)
    result = diagnose_analysis(analysed(pod, tmp_path))
    (finding,) = [f for f in result.findings if f.severity in BAD]
    assert finding.rule == "cable_errors_host_end"
    assert "(its errors: not reported by leaf01)" in finding.symptom


def test_replaces_must_name_rules_of_the_directory(tmp_path: Path) -> None:
    rule = ("rules:\n  - {id: a, kind: threshold, metric: port_state, op: '!=', value: Active, severity: error,\n"
            "     symptom: s, cause: c, check: k, fix: f, replaces: [%s]}\n")
    (tmp_path / "a.yaml").write_text(rule % "no_such_rule")
    with pytest.raises(PlaybookError, match=r"a\.yaml:2: rule a: `replaces` names no rule .*no_such_rule"):
        playbook.load_dir(tmp_path)
    (tmp_path / "a.yaml").write_text(rule % "a")
    with pytest.raises(PlaybookError, match="replaces"):
        playbook.load_dir(tmp_path)


# --- a rail disabled while its peers' is up ---------------------------------------------------------------------


def test_a_disabled_rail_fails_the_gate_and_drains_its_node(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    port = roce(pod, "gpu03")
    port.state, port.phys = "1: DOWN", "3: Disabled"
    path = pods.write(pod, tmp_path / "bundle")
    result = replay_gate(str(path), GateProfile())
    assert result.drain == ["gpu03"]
    (reason,) = result.drain_reasons
    assert (reason.node, reason.stage, reason.rule, reason.entity) == (
        "gpu03", "state", "port_disabled_while_peers_active", "mlx5_1/1")
    assert "LinkUp on its peers" in reason.symptom
    assert result.verdict.value == "fail"


def test_a_rail_disabled_on_every_node_alike_is_no_outlier(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    for host in pod.hosts[:3]:
        port = roce(pod, host.name)
        port.state, port.phys = "1: DOWN", "3: Disabled"
    found = engine.evaluate(analysed(pod, tmp_path), [RULES["port_disabled_while_peers_active"]])
    assert found == []


# --- check commands in the tools' own syntax ----------------------------------------------------------------------

LINKS = playbook.load_file(default_playbooks() / "10-links.yaml")
PLACEHOLDER = re.compile(r"<[A-Za-z_][A-Za-z _-]*>")
SLASHED = re.compile(r"\b(?:ibstat|perfquery(?: -[a-zA-Z])*|mlxlink -d|ethtool(?: -S)?|ip(?: -s)? link show|"
                     r"ibv_devinfo -d)\s+(?:\{entity\}|mlx5_\d+/\d+)")


def test_no_check_text_of_10_links_uses_device_port_syntax_or_a_placeholder() -> None:
    assert len(LINKS) > 15
    for rule in LINKS:
        for text in (rule.check, rule.fix):
            assert not PLACEHOLDER.search(text), (rule.id, text)
            assert not SLASHED.search(text), (rule.id, text)
        for tool in ("perfquery", "mlxlink", "ibstat"):
            for use in re.findall(rf"\b{tool} [-{{][^;,(]*", rule.check):  # a command, not prose about the tool
                assert "{device}" in use and "{port}" in use, (rule.id, use)


def test_filled_check_commands_carry_the_real_device_port_and_netdev(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    for host in pod.hosts:
        host.omit.add("lldpctl")  # the per-counter rules speak (no cable to pair with)
    pods.bump(pod.host("gpu01").port("mlx5_0").pma, "symbol_error", 5)
    pods.bump(pod.host("gpu02").port("mlx5_0").pma, "link_downed", 1)
    pods.bump(roce(pod, "gpu03").ethtool, "rx_crc_errors_phy", 3)
    found = {f.rule: f for f in engine.evaluate(analysed(pod, tmp_path), LINKS)}
    assert "perfquery -x -C mlx5_0 -P 1 (SymbolErrorCounter" in found["ib_symbol_errors_growing"].check
    assert "ibstat mlx5_0 1;" in found["ib_link_flapping"].check
    crc = found["eth_crc_errors_growing"]
    assert crc.check == "ethtool -S ens1f0np0 | grep -E 'crc|symbol|fec'; mlxlink -d mlx5_1 -p 1 -c"
    assert (crc.evidence["device"], crc.evidence["port"], crc.evidence["netdev"]) == ("mlx5_1", 1, "ens1f0np0")
    for f in found.values():
        assert not PLACEHOLDER.search(f.check) and not SLASHED.search(f.check), (f.rule, f.check)
