"""Markdown report: for tickets and chat, in the order of the table view (rdmatool.report.text), with the evidence
of every finding and each suggestion once, with the findings it answers and its target."""

from __future__ import annotations

from rdmatool.model import Severity
from rdmatool.report import view as views
from rdmatool.report.hostsets import folded, grouped_failures
from rdmatool.result import DiagnoseResult


def render(result: DiagnoseResult, minimum: Severity = Severity.INFO) -> str:
    shown = views.select(result, minimum)
    lines = [f"# rdmatool diagnosis: {result.verdict.value.upper()}", ""]
    if result.source:
        lines += [f"Source: `{result.source}`", ""]
    if result.drain:
        lines += [f"**Drain ({len(result.drain)}):** `{folded(result.drain)}`", ""]
    unreachable = [f for f in result.failures if f.get("kind") == "connection"]
    if unreachable:
        lines += [f"**Unreachable ({len(result.unreachable)}):** `{folded(result.unreachable)}`", ""]
        lines += [f"- {targets}: {error}" for targets, _, error in grouped_failures(unreachable)] + [""]
    hard = shown.of(*views.HARD)
    if hard:
        lines += [f"## Critical and error ({len(hard)})", ""] + _table(hard)
    if shown.suggestions:
        lines += ["## Suggested changes (not applied)", ""]
        for suggestion, findings in shown.suggestions:
            target = suggestion.target or findings[0].target
            lines += [f"### {target}: {suggestion.setting}: {views.change_text(suggestion.current)} → "
                      f"{views.change_text(suggestion.proposed)}", "", f"For {views.reason(findings)}.", "",
                      suggestion.rationale, ""]
            for platform, commands in suggestion.commands.items():
                lines += [f"{views.platform_label(suggestion, platform)}:", "```", *commands, "```", ""]
    for severity in (Severity.WARNING, Severity.INFO):
        group = shown.of(severity)
        if group:
            lines += [f"## {severity.value.capitalize()} ({len(group)})", ""] + _table(group)
    others = [f for f in result.failures if f.get("kind") != "connection"]
    if others:
        lines += ["## Command and parse failures", ""]
        lines += [f"- {targets}: {what}: {error}" for targets, what, error in grouped_failures(others)] + [""]
    if result.notes:
        lines += ["## Notes", ""] + [f"- {note}" for note in result.notes] + [""]
    hidden = views.hidden_line(shown, "`--all` or `--severity info` lists them")
    if hidden:
        lines += [f"_{hidden}_", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _table(findings: list) -> list[str]:
    lines = ["| where | symptom | cause | check | fix | evidence |", "|---|---|---|---|---|---|"]
    for f in findings:
        cells = [views.where(f), f.symptom, f.cause, f"`{f.check}`", f.fix, views.evidence_text(f)]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", "<br>") for c in cells) + " |")
    return [*lines, ""]
