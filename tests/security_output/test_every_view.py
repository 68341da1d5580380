"""A device's hostile text (escape sequences, OSC 52, BEL, a lone surrogate, HTML, a link, mathtext) goes through
every human view as characters: no raw control byte, no crash, no raw HTML in the Markdown."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from rdmatool.diagnose.pipeline import diagnose_bundle
from rdmatool.gate.policy import StageResult
from rdmatool.model import Severity
from rdmatool.report import bundle_diff, junit, markdown, plots, text
from rdmatool.report import commands as commands_report
from tests.helpers import REPO

DEMO = REPO / "examples" / "demo-bundle"
HOSTILE = "sw\x1b[2J\x1b]52;c;cm0gLXJm\x07\x15\ud800<img src=x onerror=alert(1)>[x](javascript:alert(1))$x$"
# every C0 control but the line break, DEL, C1, and the lone surrogates
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
RAW_BYTES = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")
# A code span or a fenced block shows its text literally (CommonMark: no markup, no HTML inside)
CODE = re.compile(r"^(`{3,})\n.*?^\1$|(`+).*?\2", re.S | re.M)


def outside_code(md: str) -> str:
    return CODE.sub("", md)


@pytest.fixture(scope="module")
def hostile_result():
    """The demo bundle's diagnosis with a hostile neighbour name in every finding's place and symptom, a failure's
    error and a note."""
    result = diagnose_bundle(DEMO)
    findings = [dataclasses.replace(f, entity=f"{f.entity} {HOSTILE}", symptom=f"{f.symptom} {HOSTILE}",
                                    evidence={**f.evidence, "neighbour": HOSTILE}) for f in result.findings]
    failures = [*result.failures, {"target": "gpu12", "kind": "connection", "error": HOSTILE}]
    return dataclasses.replace(result, findings=findings, failures=failures, notes=[*result.notes, HOSTILE])


def test_the_table_and_the_gate_table(hostile_result) -> None:
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=False, color_system=None)
    text.render(hostile_result, console, Severity.INFO, show_all=True)
    shown = out.getvalue()
    assert "\\e]52;c;cm0gLXJm\\a\\x15\ufffd" in shown
    assert not RAW.search(shown)


def test_markdown_has_no_raw_html_and_no_link(hostile_result) -> None:
    md = markdown.render(hostile_result, Severity.INFO)
    assert "&lt;img src=x onerror=alert(1)&gt;" in md and "\\[x\\](javascript:alert(1))" in md
    assert not re.search(r"<(?!br>)", outside_code(md))  # the one tag is the report's own line break in a table cell
    assert not RAW.search(md)


def test_commands_comments_are_printable(hostile_result) -> None:
    out = commands_report.render(hostile_result, Severity.INFO)
    assert out.strip() and all(line.isprintable() for line in out.splitlines())


def test_junit_is_xml_without_controls(hostile_result) -> None:
    from xml.etree import ElementTree as ET

    stage = StageResult(name="state", status="failed", findings=hostile_result.findings, detail=HOSTILE)
    xml = junit.render([stage], [*hostile_result.hosts, HOSTILE], [HOSTILE])
    assert not RAW.search(xml)
    assert ET.fromstring(xml.encode()).find(".//failure") is not None  # well-formed: a parser reads it back


def test_plots_never_read_device_text_as_tex() -> None:
    points = [{"label": f"pause {HOSTILE}", "night": f"2026-12-01T00:00 {HOSTILE}", "median": 1.0, "p90": 2.0,
               "max": 3.0},
              {"label": f"pause {HOSTILE}", "night": "this bundle", "median": 1.0, "p90": 2.0, "max": 4.0}]
    png = plots.trend(points)
    assert png and png.startswith(b"\x89PNG")


def test_perftest_heatmaps_draw_names_as_text_never_tex(monkeypatch) -> None:
    """The perftest heatmap (perf/output.py, also in the report) is saved through the same figure encoder: a name
    or a test holding `$\\frac` or an escape sequence is drawn as its characters, and the texts drawn are visible."""
    from matplotlib.figure import Figure

    from rdmatool.perf import output

    drawn: list[str] = []
    real = Figure.savefig

    def record(figure, *args, **kwargs):
        from matplotlib.text import Text

        drawn.extend(t.get_text() for t in figure.findobj(Text))
        return real(figure, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", record)
    nodes = [f"gpu01{HOSTILE}", "gpu$\\frac{1}{0}$02"]
    png = output.heatmap_png([["-", 91.0], [92.5, "-"]], nodes, lambda v, i, j: 1.0, f"ib_write_bw {HOSTILE}",
                             "share of the pass line $\\alpha$")
    assert png.startswith(b"\x89PNG")
    assert any("gpu$\\frac{1}{0}$02" in t for t in drawn)  # the characters, not a fraction
    assert any("\\e]52;" in t for t in drawn) and not any(RAW.search(t) for t in drawn)


def test_bundle_diff_table_and_markdown() -> None:
    row = {"target": HOSTILE, "entity": HOSTILE, "setting": HOSTILE, "before": HOSTILE, "after": "[bold]x"}
    diff = {"changes": 2, "a": HOSTILE, "b": "b", "created_a": HOSTILE, "created_b": "t",
            "targets": {"added": [HOSTILE], "removed": [], "recovered": [], "still_unreachable": [],
                        "unreachable": [{"target": HOSTILE, "error": HOSTILE}]},
            "config": [row], "cabling": [{**row, "port": HOSTILE}], "rates": [], "tolerance": 0.1}
    out = io.StringIO()
    bundle_diff.render_text(diff, Console(file=out, width=200, color_system=None))
    assert "\\e]52;" in out.getvalue() and "[bold]x" in out.getvalue() and not RAW.search(out.getvalue())
    md = bundle_diff.render_markdown(diff)
    assert "&lt;img" in md and "<img" not in outside_code(md) and not RAW.search(md)


@pytest.fixture
def hostile_bundle(tmp_path: Path) -> Path:
    """The demo bundle whose manifest holds a hostile error for its unreachable target."""
    bundle = tmp_path / "bundle"
    shutil.copytree(DEMO, bundle)
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["failures"][0]["error"] = f"gpu12: {HOSTILE}"
    (bundle / "manifest.json").write_text(json.dumps(manifest))  # ensure_ascii: the lone surrogate as \ud800
    return bundle


@pytest.mark.parametrize("args", [["bundle", "show"], ["diagnose"], ["diagnose", "--format", "markdown"]],
                         ids=["bundle-show", "diagnose-table", "diagnose-markdown"])
def test_the_commands_show_a_manifest_s_hostile_error(hostile_bundle: Path, args: list[str]) -> None:
    run = subprocess.run([sys.executable, "-m", "rdmatool", *args, str(hostile_bundle)], capture_output=True,
                         timeout=300, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    said = run.stdout + run.stderr
    assert run.returncode in (0, 1), said.decode(errors="replace")
    assert b"Traceback" not in said and b"internal error" not in said
    assert not RAW_BYTES.search(said.replace(b"\n", b""))
    if "markdown" in args:
        assert b"&lt;img" in run.stdout and "<img" not in outside_code(run.stdout.decode())
    else:
        assert b"\\e]52;" in said


def test_prometheus_labels_hold_a_lone_surrogate_as_text(hostile_result) -> None:
    import pandas as pd

    from rdmatool.report import prometheus

    hostile = dataclasses.replace(hostile_result, findings=[dataclasses.replace(f, target=f"gpu01{HOSTILE}")
                                                            for f in hostile_result.findings])
    exposition = prometheus.render(pd.DataFrame(columns=["metric"]), hostile)
    exposition.encode("utf-8")  # a lone surrogate would raise here, where the file is written
    assert 'target="gpu01sw\\\\e[2J' in exposition and not RAW.search(exposition.replace("\n", ""))
