"""The on-call view of the demo bundle: blocks in the order a person acts on them, info hidden and counted, the
severity filter, commands never broken across lines, `--format commands`, human units with exact JSON, and the
Markdown listing each suggestion once."""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console
from typer.testing import CliRunner

from rdmatool.cli import app
from rdmatool.diagnose.pipeline import diagnose_bundle
from rdmatool.model import Severity
from rdmatool.report import commands as commands_report
from rdmatool.report import markdown, text
from rdmatool.report.shown import markdown as escaped
from rdmatool.report.view import select
from tests.helpers import REPO

DEMO = REPO / "examples" / "demo-bundle"
BASELINE = REPO / "baselines" / "demo-healthy.json"
runner = CliRunner()


def diagnose(*args: str, columns: int = 80):
    return runner.invoke(app, ["diagnose", str(DEMO), "--baseline", str(BASELINE), *args],
                         env={"COLUMNS": str(columns)})


@pytest.fixture(scope="module")
def result():
    from rdmatool.baseline import resolve, stats_for_rules

    return diagnose_bundle(DEMO, baseline=stats_for_rules(resolve(str(BASELINE), "baselines")))


@pytest.fixture(scope="module")
def demo_json() -> dict:
    out = diagnose("--format", "json")
    assert out.exit_code == 1, out.output
    return json.loads(out.stdout)


def rendered(result, width: int = 80, **kwargs) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None, highlight=False)
    text.render(result, console, **kwargs)
    return console.file.getvalue()


def line_of(lines: list[str], pattern: str) -> int:
    return next(i for i, line in enumerate(lines) if re.search(pattern, line))


def test_the_blocks_come_in_the_order_one_acts_on_them(demo_json: dict) -> None:
    out = diagnose()
    assert out.exit_code == 1
    lines = out.stdout.splitlines()
    assert lines[0].startswith("verdict: FAIL")
    drain, unreachable = line_of(lines, r"^drain \(\d+\): "), line_of(lines, r"^unreachable \(\d+\): ")
    hard, suggestions = line_of(lines, r"^CRITICAL / ERROR \("), line_of(lines, r"^SUGGESTED CHANGES \(")
    warnings, failures = line_of(lines, r"^WARNING \("), line_of(lines, r"^COMMAND / PARSE FAILURES")
    assert drain < unreachable < hard < suggestions < warnings < failures
    # the drain list is the JSON's, folded: gpu01 … gpu07 with the healthy gpu05 left out
    assert demo_json["drain"] and lines[drain] == f"drain ({len(demo_json['drain'])}): gpu[01-04,06-07]"
    assert "gpu12" in lines[unreachable] and demo_json["unreachable"] == ["gpu12"]
    # every critical finding comes before every error block, and a cause is one block naming its places folded
    marks = [line.split()[0] for line in lines[hard + 1:suggestions] if line.startswith("!! ") or
             line.startswith(" x ")]
    assert marks == sorted(marks, key=lambda m: m != "!!") and marks.count("!!") == 2
    assert sum(1 for line in lines[hard:suggestions] if "[host_pfc_not_roce_priority]" in line) == 1
    # the headline the places share is said once, in the block's heading
    assert any(line.startswith(" x gpu03 (2 places): RDMA bandwidth far below expected")
               for line in lines[hard:suggestions])
    assert not any("RDMA bandwidth far below expected" in line for line in lines[hard:suggestions]
                   if line.startswith("   PFC on"))


def test_info_is_hidden_with_a_count_and_all_shows_it(demo_json: dict) -> None:
    info = demo_json["counts"]["info"]
    assert info > 0
    default = diagnose().stdout
    assert "INFO (" not in default and "ecn_kmax_above_pfc_trigger_tc]" not in default
    assert f"{info} info findings" in default.splitlines()[-2] + default.splitlines()[-1]
    everything = diagnose("--all").stdout
    assert f"INFO ({info})" in everything and "hidden" not in everything
    assert "evidence: metric" in everything and "check: " in everything and "cause: " in everything


def test_severity_filters_what_is_shown(demo_json: dict) -> None:
    errors = diagnose("--severity", "error").stdout
    assert "WARNING (" not in errors and "CRITICAL / ERROR" in errors
    assert f"{demo_json['counts']['warning']} warning, {demo_json['counts']['info']} info findings" in errors
    critical = diagnose("--severity", "critical").stdout
    assert "[pfc_storm]" in critical and "[port_not_active]" not in critical
    shown = diagnose("--severity", "info").stdout
    assert "INFO (" in shown
    bad = diagnose("--severity", "loud")
    assert bad.exit_code == 2 and "--severity 'loud'" in bad.output and "Traceback" not in bad.output


@pytest.mark.parametrize("show_all", [False, True])
def test_no_command_is_broken_across_lines_at_80_columns(result, show_all: bool) -> None:
    out = rendered(result, 80, minimum=Severity.INFO if show_all else Severity.WARNING, show_all=show_all)
    lines = {line.strip() for line in out.splitlines()}
    minimum = Severity.INFO if show_all else Severity.WARNING
    shown = [c for s, _ in select(result, minimum).suggestions for cmds in s.commands.values() for c in cmds]
    assert [c for c in shown if len(c) > 80], "no command is longer than the width: the test would prove nothing"
    for command in shown:
        assert command in lines, f"broken across lines: {command}"
    # prose does wrap: no other line is wider than the console
    assert all(len(line) <= 80 for line in out.splitlines() if line.strip() not in shown)


def test_format_commands_is_comments_and_verbatim_commands_only(result, demo_json: dict) -> None:
    out = diagnose("--format", "commands")
    assert out.exit_code == 1
    blocks = out.stdout.strip("\n").split("\n\n")
    listed = [s for s in demo_json["suggestions"]
              if any(f["severity"] != "info" for f in demo_json["findings"] if f["id"] in s["findings"])]
    assert len(blocks) == len({s["target"] for s in listed})  # one block per target
    expected_commands = [c for s in listed for cmds in s["commands"].values() for c in cmds]
    commands = [line for line in out.stdout.splitlines() if line and line[0] not in "#!"]
    assert commands == expected_commands  # verbatim, in order, nothing else
    for block in blocks:
        head = block.splitlines()[0]
        assert head[0] in "#!"
        target = head[2:].split(":", 1)[0]
        mine = [s for s in listed if s["target"] == target]
        assert mine, head
        rules = {f["rule"] for f in demo_json["findings"] if f["id"] in mine[0]["findings"]}
        assert any(rule in head for rule in rules)  # the reason: the rule it answers
    assert commands_report.render(result, Severity.CRITICAL) == ""  # no suggestion answers a critical finding


def test_a_hosts_suggestion_names_the_switch_its_switch_commands_run_on() -> None:
    from rdmatool.model import Finding, Suggestion, Verdict
    from rdmatool.outcome.result import DiagnoseResult

    change = Suggestion("PFC enabled priorities (gpu03 ens1f0np0)", "0,0,0,0,1,0,0,0", "0,0,0,1,0,0,0,0", "why",
                        {"host": ["mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0"],
                         "onyx": ["configure terminal", "exit"]}, target="gpu03", devices={"onyx": "leaf03"})
    finding = Finding("host_pfc_not_roce_priority", Severity.ERROR, "gpu03", "ens1f0np0", "s", "c", "k", "f",
                      suggestions=(change,))
    out = commands_report.render(DiagnoseResult(Verdict.FAIL, [finding], [], hosts=["gpu03"]))
    # where each platform's lines are pasted, by name; an IOS-like CLI takes `!` as a comment, not `#`
    assert "\n! onyx commands, on leaf03 (cabled to gpu03):\nconfigure terminal\nexit" in out, out
    assert "# host commands, on gpu03:" in out
    assert "onyx (on leaf03):\n```\nconfigure terminal" in markdown.render(DiagnoseResult(Verdict.FAIL, [finding], []))


def test_human_units_in_the_texts_and_exact_values_in_the_json(demo_json: dict) -> None:
    storm = next(f for f in demo_json["findings"] if f["rule"] == "pfc_storm")
    observed = storm["evidence"]["observed"]
    assert 0.9 < observed < 1 and f"{observed * 100:.1f} %" in storm["symptom"]
    kmax = next(f for f in demo_json["findings"] if f["rule"] == "ecn_kmax_above_pfc_trigger"
                and f["target"] == "leaf01")
    assert kmax["evidence"]["observed"] == 1499136 and kmax["symptom"].endswith("is 1.43 MiB")
    speed = next(f for f in demo_json["findings"] if f["rule"] == "port_speed_below_fleet")
    assert "100 Gb/s" in speed["symptom"] and speed["evidence"]["observed"] == 100
    flap = next(f for f in demo_json["findings"] if f["rule"] == "ib_link_flapping")
    window = flap["evidence"]["window_s"]
    assert flap["symptom"].endswith(f"in {window:.2f} s") and f"{window:.2f}" != str(window)  # exact in JSON
    table = diagnose("--all").stdout
    assert "e+0" not in table  # no exponent anywhere a person reads
    shown = re.escape(f"{observed * 100:.1f} %")
    assert re.search(rf"observed {shown} of \d\.\d+ s", table)  # "paused 98.6 % of 4.12 s"


def test_markdown_lists_each_suggestion_once_with_its_target_and_findings(result, demo_json: dict) -> None:
    md = markdown.render(result, Severity.INFO)
    headings = [line for line in md.splitlines() if line.startswith("### ")]
    assert len(headings) == len(demo_json["suggestions"])
    for s in demo_json["suggestions"]:
        # the heading is escaped Markdown (rdmatool.report.shown): `cma\_roce\_tos` renders as `cma_roce_tos`
        assert sum(1 for h in headings if h.startswith("### " + escaped(f"{s['target']}: {s['setting']}:"))) == 1
        for cmds in s["commands"].values():
            block = "```\n" + "\n".join(cmds) + "\n```"
            alike = sum(1 for t in demo_json["suggestions"] for c in t["commands"].values() if c == cmds)
            assert md.count(block) == alike  # once per suggestion, not once per finding it answers
    assert md.index("## Critical and error") < md.index("## Suggested changes") < md.index("## Warning")
    # the JSON lists each once too, and each finding keeps its own list (compatibility)
    keys = [(s["target"], s["setting"], s["proposed"]) for s in demo_json["suggestions"]]
    assert len(keys) == len(set(keys))
    per_finding = sum(len(f["suggestions"]) for f in demo_json["findings"])
    assert per_finding > len(keys)  # the demo repeats suggestions across findings: the dedup is tested
    ids = {f["id"] for f in demo_json["findings"]}
    assert all(set(s["findings"]) <= ids and s["target"] for s in demo_json["suggestions"])


# --- one physical story, one block (the playbook's `explains`) ---------------------------------------------------


def hard_part(out: str) -> list[str]:
    lines = out.splitlines()
    return lines[line_of(lines, r"^CRITICAL / ERROR \("):line_of(lines, r"^SUGGESTED CHANGES \(")]


def block_of(lines: list[str], rule: str) -> list[str]:
    """The lines of the cause block whose heading or last line carries `[rule]`."""
    starts = [i for i, line in enumerate(lines) if line[:3] in ("!! ", " x ", " ! ", " i ")] + [len(lines)]
    for start, end in zip(starts, starts[1:]):
        if any(f"[{rule}]" in line for line in lines[start:end]):
            return lines[start:end]
    raise AssertionError(f"no block of {rule}")


def observed(demo_json: dict, rule: str) -> object:
    (f,) = [f for f in demo_json["findings"] if f["rule"] == rule]
    return f["evidence"]["observed"]


def test_a_port_down_is_one_block_led_by_the_physical_link(demo_json: dict) -> None:
    hard = hard_part(diagnose().stdout)
    phys = block_of(hard, "port_phys_not_linkup")
    assert phys[0].startswith(" x Physical link of mlx5_0/1 on gpu06 is Polling")
    assert "   also: port_not_active Down" in phys  # the consequence, with its figure, folded in
    assert not any("[port_not_active]" in line for line in hard)  # no block of its own
    width = block_of(hard, "port_width_degraded")
    assert "   also: port_speed_below_fleet 100 Gb/s vs fleet median 400 ±1%" in width
    cable = block_of(hard, "ib_link_flapping")
    assert (f"   also: ib_link_error_recovery_growing {observed(demo_json, 'ib_link_error_recovery_growing'):.0f}; "
            f"ib_symbol_errors_growing {observed(demo_json, 'ib_symbol_errors_growing'):.0f}") in cable
    assert not any("[ib_symbol_errors_growing]" in line or "[port_speed_below_fleet]" in line for line in hard)
    # gpu02's PFC storm, and what it did to the switch port at the other end of its cable, in one block
    storm = block_of(hard, "pfc_storm")
    assert " ".join(line.strip() for line in storm if not line.lstrip().startswith("fix:")).count("also:") == 1
    folded_storm = " ".join(line.strip() for line in storm)
    assert "also: at the far end, leaf02 swp1: ecn_after_pfc prio 3: " in folded_storm
    assert "roce_tx_no_buffer_drops" in folded_storm and "lossless_queue_tail_drops prio 3" in folded_storm
    assert not any(f"[{rule}]" in line for line in hard
                   for rule in ("ecn_after_pfc", "roce_tx_no_buffer_drops", "lossless_queue_tail_drops"))
    # 15 critical and error findings, each said: 6 blocks where there were 14
    assert hard[0].startswith(f"CRITICAL / ERROR ({demo_json['counts']['critical'] + demo_json['counts']['error']}, "
                              "6 causes)")


def test_an_unrelated_finding_on_the_same_port_keeps_its_own_block() -> None:
    out = diagnose().stdout
    warnings = out.splitlines()[line_of(out.splitlines(), r"^WARNING \("):]
    # gpu01 mlx5_0/1 also counts receive errors: no rule says the flap explains them, so they stay a warning
    rcv = block_of(warnings, "ib_rcv_errors_growing")
    assert "Receive errors on mlx5_0/1 of gpu01" in rcv[0]
    assert not any("ib_rcv_errors_growing" in line for line in block_of(hard_part(out), "ib_link_flapping"))


def test_the_json_and_the_markdown_keep_every_finding_and_name_what_explains_it(result, demo_json: dict) -> None:
    findings = {f["id"]: f for f in demo_json["findings"]}
    assert len(findings) == sum(demo_json["counts"].values()) == len(result.findings)
    explained = {i: f["explained_by"] for i, f in findings.items() if "explained_by" in f}
    assert explained == {
        "ib_link_error_recovery_growing:gpu01:mlx5_0/1": "ib_link_flapping:gpu01:mlx5_0/1",
        "ib_symbol_errors_growing:gpu01:mlx5_0/1": "ib_link_flapping:gpu01:mlx5_0/1",
        "pfc_priority_mismatch_host_switch:gpu03:ens1f0np0:4": "host_pfc_not_roce_priority:gpu03:ens1f0np0:4",
        "port_not_active:gpu06:mlx5_0/1": "port_phys_not_linkup:gpu06:mlx5_0/1",
        "port_speed_below_fleet:gpu07:mlx5_0/1": "port_width_degraded:gpu07:mlx5_0/1",
        # gpu02's storm explains the switch port cabled to it (explains_far_end); the tail drops, which the transmit
        # drops explain on that port, fold into the first rule of the chain
        "ecn_after_pfc:leaf02:swp1:3": "pfc_storm:gpu02:ens1f0np0:3",
        "roce_tx_no_buffer_drops:leaf02:swp1": "pfc_storm:gpu02:ens1f0np0:3",
        "lossless_queue_tail_drops:leaf02:swp1:3": "pfc_storm:gpu02:ens1f0np0:3",
        "pause_rate_above_baseline:leaf02:swp1:3": "pfc_storm:gpu02:ens1f0np0:3",
        # leaf02 is late only on swp1, the storm's far end: its switch-wide ECN finding is the storm's too
        "switch_ecn_fires_after_pfc:leaf02": "pfc_storm:gpu02:ens1f0np0:3",
    }
    assert all(by in findings for by in explained.values())  # each names a finding of the same output
    assert "explained_by" not in findings["ib_rcv_errors_growing:gpu01:mlx5_0/1"]
    md = markdown.render(result, Severity.INFO)
    for f in demo_json["findings"]:
        assert escaped(f["symptom"]) in md  # folded in the table only
    # the drain list is the findings', folding or not: gpu06 and gpu07 are drained for the explaining finding too
    assert {"gpu06", "gpu07", "gpu01", "gpu03"} <= set(demo_json["drain"])


def test_folding_never_hides_a_finding_whose_explainer_is_not_shown() -> None:
    from rdmatool.model import Finding, Verdict
    from rdmatool.outcome.result import DiagnoseResult
    from rdmatool.report import view

    def finding(rule: str, severity: Severity, **kw) -> Finding:
        return Finding(rule=rule, severity=severity, target="gpu01", entity="mlx5_0/1", symptom=f"{rule} seen",
                       cause="c", check="k", fix=f"fix {rule}", evidence={"observed": 5}, **kw)

    lead = finding("lead", Severity.CRITICAL)
    told = finding("told", Severity.ERROR, explained_by="lead:gpu01:mlx5_0/1")
    other = finding("other", Severity.ERROR)  # same port, no relation
    lower = finding("lower", Severity.WARNING, explained_by="lead:gpu01:mlx5_0/1")  # another section
    result = DiagnoseResult(verdict=Verdict.FAIL, findings=[lead, told, other, lower], failures=[], source="b")
    shown = view.select(result)
    blocks = view.blocks(shown, shown.of(*view.HARD))
    assert [([f.rule for f in b.findings], [f.rule for f in b.also]) for b in blocks] == [
        (["lead"], ["told"]), (["other"], [])]
    assert [b.findings[0].rule for b in view.blocks(shown, shown.of(Severity.WARNING))] == ["lower"]
    # the explaining finding hidden by the severity filter: the explained one is a cause of its own
    errors_only = view.select(DiagnoseResult(verdict=Verdict.FAIL, findings=[told, other], failures=[]))
    assert [b.findings[0].rule for b in view.blocks(errors_only, errors_only.findings)] == ["told", "other"]
    out = rendered(result)
    assert "also: told 5" in out and "[told]" not in out and "[lower]" in out and "[other]" in out


def test_a_fix_the_suggested_changes_say_is_left_to_them(demo_json: dict) -> None:
    out = diagnose().stdout
    lines = out.splitlines()
    changes = [line for line in lines[line_of(lines, r"^SUGGESTED CHANGES"):line_of(lines, r"^WARNING \(")]
               if re.match(r"\d+\. ", line)]
    assert [c.split(" · ")[0] for c in changes] == ["1. gpu04", "2. leaf02", "3. gpu03"]
    hard = hard_part(out)
    # answered by a change: no fix line (the command is printed once, in its change), the rule id kept
    for rule in ("dcqcn_rp_disabled", "host_pfc_not_roce_priority"):
        assert not any(line.lstrip().startswith("fix:") for line in block_of(hard, rule)), rule
    assert not any("echo 1 >" in line for line in hard)
    # a finding no change answers keeps its own fix
    assert any(line.startswith("   fix: Isolate the host") for line in block_of(hard, "pfc_storm"))
    # each change names what it answers: the rules of the blocks above, the hidden ones with their severity
    assert changes[0].endswith("  for dcqcn_rp_disabled")  # beside its heading, where there is room
    at = line_of(lines, r"^3\. gpu03 · ")
    assert lines[at + 2].strip() == "for host_pfc_not_roce_priority ×2; pfc_priority_mismatch_host_switch"
    (ecn,) = [c for c in demo_json["suggestions"] if c["target"] == "leaf02"]
    kmax = sum(1 for i in ecn["findings"] if i.startswith("ecn_kmax_above_pfc_trigger_tc:"))
    assert f"ecn_kmax_above_pfc_trigger_tc (info ×{kmax}, hidden)" in " ".join(line.strip() for line in lines)
    # with --all the fix is said in full, with the change that makes it
    everything = diagnose("--all").stdout
    assert "fix: echo 1 > /sys/class/net/ens1f0np0/ecn/roce_rp/enable/3 (suggested change 1)" in \
        " ".join(line.strip() for line in everything.splitlines())
    assert "for dcqcn_rp_disabled (error) on gpu04 ens1f0np0 prio 3" in everything


def test_what_matters_fits_one_screen_page_and_notes_are_said_once() -> None:
    out = diagnose()  # CliRunner: stdout and stderr apart
    lines = out.stdout.splitlines()
    matters = line_of(lines, r"^WARNING \(")  # the verdict through the end of the suggested changes
    assert matters <= 50, "\n".join(lines[:matters])  # one screen page at 80 columns
    assert out.stdout.endswith("\n") and not out.stdout.endswith("\n\n")
    notes = lines[line_of(lines, r"^NOTES \(") + 1:]
    assert any("skipped 8 line(s) of recognised noise" in line for line in notes)
    assert "note:" not in out.stderr  # the table says them in its NOTES block, once
    as_json = diagnose("--format", "json")
    assert json.loads(as_json.stdout)["notes"] and "rdmatool: note: " in as_json.stderr  # a log keeps them
    # one reason for every unreachable target: on the unreachable line, the target not said twice
    assert lines[line_of(lines, r"^unreachable")] .startswith("unreachable (1): gpu12 (") and \
        "gpu12: gpu12" not in out.stdout
