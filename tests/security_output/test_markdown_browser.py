"""The Markdown of a hostile diagnosis rendered as a ticket system would: a CommonMark renderer that lets raw HTML
through (markdown-it-py, with tables), in Debian's headless Chromium. A device's `<img onerror=…>`, `<script>` or
`javascript:` link shows as text and runs nothing; a control page built from the same text unescaped proves the
observer: there, the handler runs."""

from __future__ import annotations

import dataclasses
import html
from pathlib import Path

import pytest

from rdmatool.diagnose.pipeline import diagnose_bundle
from rdmatool.model import Severity
from rdmatool.report import markdown
from tests.helpers import REPO
from tests.report.browser import browser

DEMO = REPO / "examples" / "demo-bundle"
HANDLER = "document.title='owned'"
HOSTILE = (f"<img src=x onerror=\"{HANDLER}\"> <script>{HANDLER}</script> [click](javascript:{HANDLER}) "
           "*em* `code` \x1b]52;c;eA==\x07")
COUNT = "document.querySelectorAll('img,script,iframe,object,a[href^=\"javascript\"]').length"


def _page(body: str, where: Path) -> Path:
    where.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>ticket</title></head><body>{body}"
                     "</body></html>", encoding="utf-8")
    return where


def _commonmark(text: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table").render(text)


@pytest.fixture(scope="module")
def hostile_markdown() -> str:
    result = diagnose_bundle(DEMO)
    findings = [dataclasses.replace(f, entity=f"{f.entity} {HOSTILE}", symptom=f"{f.symptom} {HOSTILE}")
                for f in result.findings]
    failures = [*result.failures, {"target": "gpu12", "kind": "connection", "error": HOSTILE}]
    return markdown.render(dataclasses.replace(result, findings=findings, failures=failures), Severity.INFO)


def test_the_markdown_renders_device_html_as_text(hostile_markdown: str, tmp_path: Path) -> None:
    page = _page(_commonmark(hostile_markdown), tmp_path / "ticket.html")
    control = _page(_commonmark(f"neighbour {HOSTILE}"), tmp_path / "control.html")
    with browser() as chrome:
        seen_control = chrome.load(control)
        assert chrome.evaluate("document.title") == "owned", seen_control.text  # the observer is live
        seen = chrome.load(page)
        assert chrome.evaluate("document.title") == "ticket"
        assert chrome.evaluate(COUNT) == 0
        assert chrome.evaluate("document.querySelectorAll('table').length") > 0  # the findings' tables render
    assert f"<img src=x onerror=\"{HANDLER}\">" in seen.text and "[click](javascript:" in seen.text
    assert "*em* `code`" in seen.text and "\\e]52;c;eA==\\a" in seen.text
    assert html.escape("<img") not in seen.text  # escaped once: shown as the device wrote it, not as entities
