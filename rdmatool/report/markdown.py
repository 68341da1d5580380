"""Markdown report: for tickets and chat, in the order of the table view (rdmatool.report.text), with the evidence
of every finding and each suggestion once, with the findings it answers and its target."""

from __future__ import annotations

from rdmatool.model import Severity
from rdmatool.outcome.result import DiagnoseResult
from rdmatool.report import view as views
from rdmatool.report.hostsets import folded, grouped_failures
from rdmatool.report.shown import code_span, fence, markdown


def render(result: DiagnoseResult, minimum: Severity = Severity.INFO) -> str:
    # Every text is escaped (rdmatool.report.shown): a device's `<img onerror=…>` renders as those characters.
    shown = views.select(result, minimum)
    lines = [f"# rdmatool diagnosis: {result.verdict.value.upper()}", ""]
    if result.source:
        lines += [f"Source: {code_span(result.source)}", ""]
    if result.drain:
        lines += [f"**Drain ({len(result.drain)}):** {code_span(folded(result.drain))}", ""]
    unreachable = [f for f in result.failures if f.get("kind") == "connection"]
    if unreachable:
        lines += [f"**Unreachable ({len(result.unreachable)}):** {code_span(folded(result.unreachable))}", ""]
        lines += [f"- {markdown(targets)}: {markdown(error)}" for targets, _, error in grouped_failures(unreachable)] + [""]
    hard = shown.of(*views.HARD)
    if hard:
        lines += [f"## Critical and error ({len(hard)})", ""] + _table(hard)
    if shown.suggestions:
        lines += ["## Suggested changes (not applied)", ""]
        for suggestion, findings in shown.suggestions:
            target = suggestion.target or findings[0].target
            lines += ["### " + markdown(f"{target}: {suggestion.setting}: {views.change_text(suggestion.current)} → "
                                        f"{views.change_text(suggestion.proposed)}"), "",
                      markdown(f"For {views.reason(findings)}."), "", _prose(suggestion.rationale), ""]
            for platform, commands in suggestion.commands.items():
                lines += [markdown(f"{views.platform_label(suggestion, platform)}:"), *fence(commands), ""]
    for severity in (Severity.WARNING, Severity.INFO):
        group = shown.of(severity)
        if group:
            lines += [f"## {severity.value.capitalize()} ({len(group)})", ""] + _table(group)
    others = [f for f in result.failures if f.get("kind") != "connection"]
    if others:
        lines += ["## Command and parse failures", ""]
        lines += [f"- {markdown(targets)}: {markdown(what)}: {markdown(error)}" for targets, what, error in grouped_failures(others)] + [""]
    if result.notes:
        lines += ["## Notes", ""] + [f"- {markdown(note)}" for note in result.notes] + [""]
    hidden = views.hidden_line(shown, "`--all` or `--severity info` lists them")
    if hidden:
        lines += [f"_{markdown(hidden)}_", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _table(findings: list) -> list[str]:
    lines = ["| where | symptom | cause | check | fix | evidence |", "|---|---|---|---|---|---|"]
    for f in findings:
        cells = [_cell(views.where(f)), _cell(f.symptom), _cell(f.cause), code_span(f.check).replace("|", "\\|"),
                 _cell(f.fix), _cell(views.evidence_text(f))]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def _cell(text: str) -> str:
    """A table cell: escaped, its line breaks as `<br>` (the one tag the report writes itself)."""
    return "<br>".join(markdown(line) for line in str(text).split("\n"))


def _prose(text: str) -> str:
    """A paragraph of several lines: each escaped, the breaks kept."""
    return "\n".join(markdown(line) for line in str(text).split("\n"))
