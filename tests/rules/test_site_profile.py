"""The site profile is authoritative: the RoCE / CNP class of every rule and suggestion is the site's.

Two sites, the default one (RoCE DSCP 26 on priority 3) and one whose RoCE class is DSCP 34 on priority 4: a pod of
the per-rule tests (tests/pods) set up on the site's class, with one GPU node (gpu02) left on the other site's class,
is written as a real bundle and diagnosed with that site's profile. The hosts on the site's class are right (no
finding), gpu02 is named, and every suggested command moves it to the site's class. A second guard reads the
playbooks and the rules' code for a class written as a number.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rdmatool import bundle as bundle_io
from rdmatool.diagnose.pipeline import default_playbooks, diagnose_analysis
from rdmatool.errors import PlaybookError
from rdmatool.model import Severity
from rdmatool.rules import engine, playbook
from rdmatool.table.analysis import analyse_bundle
from tests.helpers import REPO
from tests.pods import bundle as pods

SITES = {"default": (3, 26), "dscp34": (4, 34)}  # (RoCE priority, RoCE DSCP)
CLASS_RULES = {"host_pfc_not_roce_priority", "host_dscp_not_roce_priority", "pfc_priority_mismatch_host_switch",
               "switch_pfc_not_roce_priority"}
WRONG = "gpu02"


def _on_class(port: pods.Port, prio: int, dscp: int) -> None:
    """A GPU node's RoCE port lossless on `prio`, its RoCE DSCP `dscp` mapped there, its traffic counted there."""
    port.pfc, port.dscp26_priority, port.ethtool = (prio,), prio, pods.ethtool_counters(prio)
    port.roce_dscp = dscp


def site_pod(site: tuple[int, int], other: tuple[int, int], platform: str = "sonic") -> pods.Pod:
    """The healthy pod on the site's class; gpu02 lossless on the other site's priority, the site's RoCE DSCP mapped
    there. The storage node keeps its own lossless priority, 5 (neither site's), and the leaf is lossless on all three
    (it is not what is judged)."""
    pod = pods.healthy_pod((platform,))
    for host in pod.hosts:
        for port in host.ports:
            if port.roce and host.role == "compute":
                _on_class(port, other[0] if host.name == WRONG else site[0], site[1])
            elif port.roce:
                port.pfc, port.ethtool = (5,), pods.ethtool_counters(5)
    for i, sp in enumerate(pod.switch.ports):
        busy = next(p.pfc[0] for h in pod.hosts for p in h.ports if p.switch_port == sp.name)
        fresh = pods.switch_port(sp.name, sp.host, sp.netdev, busy=busy)
        fresh.speed_gbps, fresh.lossless = sp.speed_gbps, (3, 4, 5)
        pod.switch.ports[i] = fresh
    return pod


def diagnosed(site: tuple[int, int], other: tuple[int, int], folder: Path, platform: str = "sonic") -> list:
    """The findings of the site's pod (behind a leaf of `platform`) diagnosed with the site's profile."""
    path = pods.write(site_pod(site, other, platform), folder / "bundle")
    profile = {"roce_priority": site[0], "roce_dscp": site[1]}
    return diagnose_analysis(analyse_bundle(bundle_io.read(path)), profile=profile).findings


@pytest.fixture(scope="module", params=sorted(SITES))
def judged(request, tmp_path_factory):
    """(site, other site, findings) of the site's pod diagnosed with the site's profile."""
    site = SITES[request.param]
    other = next(v for v in SITES.values() if v != site)
    return site, other, diagnosed(site, other, tmp_path_factory.mktemp(request.param))


def test_the_hosts_on_the_sites_class_are_right_and_the_other_is_named(judged) -> None:
    (prio, dscp), (wrong_prio, wrong_dscp), findings = judged
    named = {f.target for f in findings if f.rule in CLASS_RULES}
    assert named == {WRONG}, [(f.rule, f.target, f.symptom) for f in findings if f.rule in CLASS_RULES]
    bad = [f for f in findings if f.severity in (Severity.WARNING, Severity.ERROR, Severity.CRITICAL)]
    assert {f.target for f in bad} == {WRONG}, [(f.rule, f.target, f.symptom) for f in bad]
    pfc = {f.evidence["priority"]: f for f in findings if f.rule == "host_pfc_not_roce_priority"}
    assert sorted(pfc) == sorted({prio, wrong_prio})  # lossless on the wrong one, not on the site's
    assert pfc[prio].evidence["observed"] == 0 and pfc[wrong_prio].evidence["observed"] == 1
    [mapped] = [f for f in findings if f.rule == "host_dscp_not_roce_priority"]
    assert mapped.evidence["observed"] == wrong_prio
    assert mapped.symptom == f"DSCP {dscp} maps to priority {wrong_prio} on ens1f0np0 of {WRONG}"
    assert mapped.fix == f"mlnx_qos -i ens1f0np0 --dscp2prio set,{dscp},{prio}"
    for f in findings:
        if f.rule in CLASS_RULES:
            assert f"priority {prio}" in f.cause + f.fix, (f.rule, f.cause, f.fix)
            assert f"priority {wrong_prio} only" not in f.fix and f"DSCP {wrong_dscp}" not in f.cause + f.fix


def test_every_suggested_command_moves_the_host_to_the_sites_class(judged) -> None:
    (prio, dscp), (wrong_prio, _), findings = judged
    vector = ",".join("1" if p == prio else "0" for p in range(8))
    commands = [line for f in findings for s in f.suggestions for lines in s.commands.values() for line in lines]
    host = [line for f in findings for s in f.suggestions for line in s.commands.get("host", [])]
    assert f"mlnx_qos -i ens1f0np0 --pfc {vector}" in host
    assert f"mlnx_qos -i ens1f0np0 --dscp2prio set,{dscp},{prio}" in host
    assert not any(f"--dscp2prio set,{dscp},{wrong_prio}" in line for line in commands)
    for line in commands:
        if line.startswith("mlnx_qos") and "--pfc" in line:
            assert line.endswith(vector), line
        if line.startswith("config interface pfc priority") and line.endswith(" on"):
            assert line.split()[-2] == str(prio), line  # the switch port: PFC on the site's class only
    assert any(line.startswith("config interface pfc priority") and line.endswith(f" {prio} on") for line in commands)
    proposed = [s.proposed for f in findings for s in f.suggestions if s.setting.startswith("PFC enabled")]
    assert proposed and all(str(p) == f"{vector} (priority {prio} only)" for p in proposed)


# Per switch OS, at the DSCP 34 / priority 4 site: a line that makes priority 4 lossless, one that maps DSCP 34 to
# priority 4 (Onyx renders none: its default DSCP>>3 map already does, and the rationale says so), and the shape of
# a line that would make priority 3 lossless, which no suggestion may print.
NOS_LINES = {
    "sonic": (r"^config interface pfc priority Ethernet\d+ 4 on$", r"^sonic-db-cli CONFIG_DB HSET 'DSCP_TO_TC_MAP\|AZURE' 34 4$",
              r" 3 on$"),
    "cumulus": (r"^nv set qos pfc default-global switch-priority 4$",
                r"^nv set qos mapping default-global dscp 34 switch-priority 4$", r"pfc .*switch-priority 3\b"),
    "onyx": (r"^dcb priority-flow-control priority 4 enable$", None, r"^dcb priority-flow-control priority 3 enable$"),
    "eos": (r"^priority-flow-control priority 4 no-drop$", r"^qos map dscp 34 to traffic-class 4$",
            r"^priority-flow-control priority 3 no-drop$"),
    "nxos": (r"^pause pfc-cos 4$", r"^set qos-group 4$", r"^pause pfc-cos 3$"),
}


@pytest.mark.parametrize("platform", sorted(NOS_LINES))
def test_the_switch_commands_of_each_nos_move_the_port_to_the_sites_class(platform: str, tmp_path: Path) -> None:
    findings = diagnosed((4, 34), (3, 26), tmp_path, platform)
    suggestions = [s for f in findings if f.target == WRONG for s in f.suggestions]
    lines = [line for s in suggestions for line in s.commands.get(platform, [])]
    pfc_on, mapped, wrong = NOS_LINES[platform]
    assert any(re.search(pfc_on, line) for line in lines), lines
    assert mapped is None or any(re.search(mapped, line) for line in lines), lines
    assert not any(re.search(wrong, line) for line in lines), lines
    if platform == "onyx":
        notes = [s.rationale for s in suggestions if s.setting.startswith("RoCE DSCP 34")]
        assert notes and all("default DSCP>>3 map already sends 34→4" in note for note in notes), notes


def test_rules_loaded_for_one_site_are_evaluated_for_the_profile_given(tmp_path: Path) -> None:
    # engine.evaluate fills the rules' templates again from the profile it is handed: a caller with rules loaded
    # for the defaults still judges the site it names.
    rules = [r for r in playbook.load_dir(default_playbooks()) if r.id == "host_dscp_not_roce_priority"]
    assert rules[0].where["raw_key"] == "dscp26" and rules[0].params["expected"] == 3
    pod = site_pod((4, 34), (3, 26))
    analysis = analyse_bundle(bundle_io.read(pods.write(pod, tmp_path / "bundle")))
    found = engine.evaluate(analysis, rules, profile={"roce_priority": 4, "roce_dscp": 34})
    assert [(f.target, f.evidence["observed"], f.fix) for f in found] == [
        (WRONG, 3, "mlnx_qos -i ens1f0np0 --dscp2prio set,34,4")]
    with pytest.raises(Exception, match="site.roce_priority takes a whole number from 0 to 7, not 9"):
        engine.evaluate(analysis, rules, profile={"roce_priority": 9})


# --- templates are checked when the playbook loads -----------------------------------------------------------------


def _playbook(tmp_path: Path, fix: str, where: str = "{kind: host}") -> Path:
    folder = tmp_path / "pb"
    folder.mkdir(exist_ok=True)
    (folder / "site.yaml").write_text(
        "rules:\n"
        "  - id: roce_dscp_map\n"
        "    kind: mismatch\n"
        "    metric: dscp_to_priority\n"
        f"    where: {where}\n"
        '    expected: "{site.roce_priority}"\n'
        "    severity: error\n"
        '    symptom: "DSCP {site.roce_dscp} maps to {observed}"\n'
        '    cause: "not the RoCE class"\n'
        '    check: "mlnx_qos -i {entity}"\n'
        f'    fix: "{fix}"\n')
    return folder


def test_an_unknown_site_key_is_an_error_at_its_line(tmp_path: Path) -> None:
    folder = _playbook(tmp_path, "mlnx_qos --dscp2prio set,{site.roce_dscp},{site.roce_prio}")
    with pytest.raises(PlaybookError) as caught:
        playbook.load_dir(folder)
    message = str(caught.value)
    assert message.startswith(f"{folder / 'site.yaml'}:11: rule roce_dscp_map: unknown site value "
                              "{site.roce_prio} (one of {site.rtt_us}, {site.roce_priority}"), message


def test_a_site_value_that_cannot_fill_its_place_is_refused_at_load(tmp_path: Path) -> None:
    # a DSCP (26 by default) where a priority (0-7) is filtered on: refused as any bad priority is
    folder = _playbook(tmp_path, "fix it", where='{kind: host, priority: "{site.roce_dscp}"}')
    with pytest.raises(PlaybookError, match=r"site\.yaml:5: rule roce_dscp_map: `where` key `priority` takes an "
                                            r"integer 0-7"):
        playbook.load_dir(folder)


def test_a_template_fills_numbers_where_a_number_is_compared(tmp_path: Path) -> None:
    folder = _playbook(tmp_path, "set,{site.roce_dscp},{site.roce_priority}",
                       where='{kind: host, raw_key: "dscp{site.roce_dscp}", priority: "{site.cnp_priority}"}')
    [rule] = playbook.load_dir(folder, site={"roce_priority": 5, "roce_dscp": 40, "cnp_priority": 7})
    assert rule.where == {"kind": "host", "raw_key": "dscp40", "priority": 7}
    assert rule.params["expected"] == 5 and rule.fix == "set,40,5" and rule.symptom == "DSCP 40 maps to {observed}"
    [default] = playbook.load_dir(folder)
    assert default.where["raw_key"] == "dscp26" and default.params["expected"] == 3 and default.fix == "set,26,3"


def test_the_cli_says_a_bad_template_in_one_line_with_exit_2(tmp_path: Path) -> None:
    import subprocess
    import sys

    folder = _playbook(tmp_path, "{site.roce}")
    result = subprocess.run([sys.executable, "-m", "rdmatool", "diagnose", str(REPO / "examples" / "demo-bundle"),
                             "--playbooks", str(folder)], capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin", "RDMATOOL_CONFIG": ""})
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"rdmatool: {folder / 'site.yaml'}:11: rule roce_dscp_map: "
                                                   "unknown site value {site.roce}"), result.stderr


# --- no class written as a number ----------------------------------------------------------------------------------

# A RoCE / CNP class written as a number: the default class (3 / 26, CNP 6 / 48) and the ToS bytes derived from it.
LITERAL_CLASS = [re.compile(p) for p in (
    r"priority:\s*\[?\s*[36]\s*[\],}]",  # a where filter on one priority
    r"expected:\s*(?:\{\s*)?[36]\s*(?:$|[:,}])",  # a setting expected per priority, or a priority expected
    r"(?i)\bdscp\s*(?:26|48)\b", r"\bdscp(?:26|48)\b", r"set,\s*(?:26|48)\b",
    r"(?i)\bpriority (?:group )?[36]\b", r"(?i)\bprio ?[36]\b", r"\bprio[36]_", r"(?i)\b(?:queue|pg|tc) ?3\b",
    r"/enable/[36]\b", r"(?i)\bto[sS]\s+(?:104|106)\b", r"\b(?:104|106)\b", r"_not_3\b", r"priority3\b",
    r"\b26\s*(?:→|->)\s*3\b", r"\b48\s*(?:→|->)\s*6\b",
)]
RULE_SOURCES = [*sorted((REPO / "playbooks").glob("*.yaml")), *sorted((REPO / "rdmatool" / "rules").glob("*.py")),
                *sorted((REPO / "rdmatool" / "tune" / "suggest").glob("*.py"))]


def literal_classes(text: str) -> list[tuple[int, str]]:
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)
            if any(p.search(line) for p in LITERAL_CLASS)]


def test_the_guard_finds_a_class_written_as_a_number() -> None:
    # the shapes the playbooks had before they named the site's values
    for line in ("where: {kind: host, priority: 3}", "expected: {3: 1, default: 0}", "expected: 3",
                 'fix: "mlnx_qos -i {entity} --dscp2prio set,26,3"', 'symptom: "DSCP 26 maps"',
                 "raw_key: dscp26", 'check: "cat /sys/class/net/{entity}/ecn/roce_np/enable/3"',
                 'fix: "Mark ECT on the hosts (ToS 106)"', "- id: host_pfc_priority_not_3",
                 '"Enable PFC on priority 3 only"', "lossless queue 3", "raw_key: PG3", "grep prio3_pause"):
        assert literal_classes(line), line
    for line in ('where: {priority: "{site.roce_priority}"}', "where: {priority: [0, 1, 2, 3, 4, 5, 6, 7]}",
                 "value: 3", "min_group: 3", "(docs/tuning.md rows 1, 2, 3)", "    min_baseline_n: 3"):
        assert not literal_classes(line), line


@pytest.mark.parametrize("path", RULE_SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_playbook_or_rule_writes_the_roce_class_as_a_number(path: Path) -> None:
    assert literal_classes(path.read_text()) == [], f"{path}: name the site's value ({{site.roce_priority}} ...)"


def test_onyx_is_told_to_map_a_dscp_its_default_map_sends_elsewhere(tmp_path: Path) -> None:
    # DSCP 24 >> 3 is 3: at a site whose RoCE class is DSCP 24 on priority 4, Onyx's default map is wrong
    findings = diagnosed((4, 24), (3, 26), tmp_path, "onyx")
    notes = [s.rationale for f in findings for s in f.suggestions if s.setting.startswith("RoCE DSCP 24")]
    assert notes and all("default DSCP>>3 map sends 24 to priority 3, not 4: map DSCP 24 to priority 4 on the "
                         "switch by hand" in note for note in notes), notes
