"""The on-call view: findings grouped by severity with symptom / cause / check / fix and evidence, then suggestions."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from rdmatool.model import Severity
from rdmatool.report.result import DiagnoseResult

_STYLE = {Severity.CRITICAL: "bold red", Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_VERDICT_STYLE = {"pass": "bold green", "warn": "bold yellow", "fail": "bold red", "inconclusive": "bold magenta"}


def render(result: DiagnoseResult, console: Console) -> None:
    verdict = result.verdict.value
    counts = {s: sum(1 for f in result.findings if f.severity is s) for s in Severity}
    summary = ", ".join(f"{n} {s.value}" for s, n in counts.items() if n) or "no findings"
    window = f", window {result.window_s:.0f} s" if result.window_s else ""
    console.print(Text.assemble(("verdict: ", "bold"), (verdict.upper(), _VERDICT_STYLE[verdict]),
                                f"  ({summary}{window})  {result.source}"))
    for severity in (Severity.CRITICAL, Severity.ERROR, Severity.WARNING, Severity.INFO):
        group = [f for f in result.findings if f.severity is severity]
        if not group:
            continue
        table = Table(title=f"{severity.value.upper()} ({len(group)})", title_style=_STYLE[severity],
                      show_lines=True, expand=True)
        table.add_column("where", ratio=2, overflow="fold")
        table.add_column("symptom / cause", ratio=4, overflow="fold")
        table.add_column("check", ratio=3, overflow="fold")
        table.add_column("fix", ratio=3, overflow="fold")
        table.add_column("evidence", ratio=3, overflow="fold")
        for f in group:
            where = f.target + (f"\n{f.entity}" if f.entity else "")
            if f.evidence.get("priority") is not None:
                where += f"\nprio {f.evidence['priority']}"
            table.add_row(where, f"[bold]{f.symptom}[/bold]\n{f.cause}\n[dim]{f.rule}[/dim]", f.check, f.fix,
                          _evidence_text(f.evidence))
        console.print(table)
    suggestions = [(f, s) for f in result.findings for s in f.suggestions]
    if suggestions:
        console.print(Text("Suggested changes (printed, never applied)", style="bold"))
        seen = set()
        for f, s in suggestions:
            key = (f.target, s.setting, s.proposed)
            if key in seen:
                continue
            seen.add(key)
            lines = [f"[bold]{s.setting}[/bold] on {f.target}: {s.current or '?'} → {s.proposed}", s.rationale]
            for platform, commands in s.commands.items():
                lines.append(f"[dim]{platform}:[/dim]")
                lines.extend(f"  {c}" for c in commands)
            console.print(Panel(Group(*[Text.from_markup(x) if i == 0 else Text(x) for i, x in enumerate(lines)]),
                                expand=True))
    if result.failures:
        table = Table(title=f"collection / parse failures ({len(result.failures)})", title_style="magenta")
        table.add_column("target")
        table.add_column("what")
        table.add_column("error", overflow="fold")
        for failure in result.failures:
            table.add_row(str(failure.get("target", "")), str(failure.get("parser") or "connection"),
                          str(failure.get("error", "")))
        console.print(table)


def _evidence_text(evidence: dict) -> str:
    parts = []
    for key in ("metric", "observed", "expected", "baseline", "window_s"):
        value = evidence.get(key)
        if value is None:
            continue
        if isinstance(value, float):
            value = f"{value:.4g}"
        parts.append(f"{key}: {value}")
    return "\n".join(parts)
