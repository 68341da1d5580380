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
from rdmatool.diagnose import diagnose_bundle
from rdmatool.model import Severity
from rdmatool.report import commands as commands_report
from rdmatool.report import markdown, text
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
    marks = [line.split()[0] for line in lines[hard + 1:suggestions] if line.startswith(" !! ") or
             line.startswith(" x ")]
    assert marks == sorted(marks, key=lambda m: m != "!!") and marks.count("!!") == 2
    assert sum(1 for line in lines[hard:suggestions] if "[host_pfc_priority_not_3]" in line) == 1
    assert any(line.startswith(" x gpu03 (2 places)") for line in lines[hard:suggestions])


def test_info_is_hidden_with_a_count_and_all_shows_it(demo_json: dict) -> None:
    info = demo_json["counts"]["info"]
    assert info > 0
    default = diagnose().stdout
    assert "INFO (" not in default and "ecn_kmax_above_pfc_trigger]" not in default
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
    onyx = out.stdout.split("onyx commands", 1)[0].rsplit("\n", 1)[1]
    assert onyx.startswith("!")  # an IOS-like CLI takes `!` as a comment, not `#`
    assert commands_report.render(result, Severity.CRITICAL) == ""  # no suggestion answers a critical finding


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
        assert sum(1 for h in headings if h.startswith(f"### {s['target']}: {s['setting']}:")) == 1
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
