"""Markdown report: for tickets and chat, the same content as the table view."""

from __future__ import annotations

from rdmatool.model import Severity
from rdmatool.report.hostsets import grouped_failures
from rdmatool.result import DiagnoseResult


def render(result: DiagnoseResult) -> str:
    lines = [f"# rdmatool diagnosis: {result.verdict.value.upper()}", ""]
    if result.source:
        lines += [f"Source: `{result.source}`", ""]
    for severity in (Severity.CRITICAL, Severity.ERROR, Severity.WARNING, Severity.INFO):
        group = [f for f in result.findings if f.severity is severity]
        if not group:
            continue
        lines += [f"## {severity.value.capitalize()} ({len(group)})", ""]
        lines += ["| where | symptom | cause | check | fix | evidence |", "|---|---|---|---|---|---|"]
        for f in group:
            where = f.target + (f" {f.entity}" if f.entity else "")
            if f.evidence.get("priority") is not None:
                where += f" prio {f.evidence['priority']}"
            evidence = "; ".join(f"{k}: {v}" for k, v in f.evidence.items() if v is not None and k not in
                                 ("target", "entity", "priority"))
            cells = [where, f.symptom, f.cause, f"`{f.check}`", f.fix, evidence]
            lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", "<br>") for c in cells) + " |")
        lines.append("")
    suggestions = [(f, s) for f in result.findings for s in f.suggestions]
    if suggestions:
        lines += ["## Suggested changes (not applied)", ""]
        for f, s in suggestions:
            lines += [f"### {s.setting} on {f.target}: {s.current or '?'} → {s.proposed}", "", s.rationale, ""]
            for platform, commands in s.commands.items():
                lines += [f"{platform}:", "```", *commands, "```", ""]
    if result.failures:
        lines += ["## Collection and parse failures", ""]
        lines += [f"- {targets}: {what}: {error}" for targets, what, error in grouped_failures(result.failures)]
    if result.notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in result.notes]
    return "\n".join(lines) + "\n"
