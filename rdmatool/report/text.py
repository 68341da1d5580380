"""The on-call view: findings grouped by severity, then by rule, each with cause / check / fix and the evidence,
then the suggested changes. Blocks rather than a wide table, so it stays readable in an 80-column terminal."""

from __future__ import annotations

from itertools import groupby

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from rdmatool.model import Finding, Severity
from rdmatool.report.hostsets import folded, grouped_failures
from rdmatool.result import DiagnoseResult

_STYLE = {Severity.CRITICAL: "bold red", Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_MARK = {Severity.CRITICAL: "!!", Severity.ERROR: "x", Severity.WARNING: "!", Severity.INFO: "i"}
_VERDICT_STYLE = {"pass": "bold green", "warn": "bold yellow", "fail": "bold red", "inconclusive": "bold magenta"}
PER_RULE = 6  # places shown per rule before "and N more": one bad setting fleet-wide must not bury the rest


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
        console.rule(Text(f"{severity.value.upper()} ({len(group)})", style=_STYLE[severity]), align="left")
        for _, same_rule in groupby(group, key=lambda f: f.rule):
            _render_rule(list(same_rule), severity, console)
    _render_suggestions(result, console)
    if result.failures:
        console.rule(Text(f"COLLECTION / PARSE FAILURES ({len(result.failures)})", style="magenta"), align="left")
        for targets, what, error in grouped_failures(result.failures):
            console.print(f"  {escape(targets)} [{escape(what)}]: {escape(error)}", highlight=False)
    if result.notes:
        console.rule(Text(f"NOTES ({len(result.notes)})", style="dim"), align="left")
        for note in result.notes:
            console.print(f"  {escape(note)}", highlight=False)


def _render_rule(findings: list[Finding], severity: Severity, console: Console) -> None:
    first = findings[0]
    for f in findings[:PER_RULE]:
        where = f.target + (f" {f.entity}" if f.entity else "")
        if f.evidence.get("priority") is not None:
            where += f" prio {f.evidence['priority']}"
        console.print(Text.assemble((f" {_MARK[severity]} ", _STYLE[severity]), (where, "bold"), "  ", f.symptom,
                                    (f"  [{f.rule}]", "dim")))
        console.print(Text(f"     evidence: {_evidence_text(f.evidence)}", style="dim"))
    if len(findings) > PER_RULE:
        rest = folded(f.target for f in findings[PER_RULE:])
        console.print(Text(f"     … and {len(findings) - PER_RULE} more like this on {rest} (--format json lists "
                           "all)", style="dim"))
    for label, value in (("cause", first.cause), ("check", first.check), ("fix", first.fix)):
        console.print(Text.assemble((f"     {label}: ", "bold"), value))
    console.print()


def _render_suggestions(result: DiagnoseResult, console: Console) -> None:
    seen: set[tuple] = set()
    pending = []
    for f in result.findings:
        for s in f.suggestions:
            key = (s.setting, s.proposed, tuple((p, tuple(c)) for p, c in sorted(s.commands.items())))
            if key not in seen:
                seen.add(key)
                pending.append((f, s))
    if not pending:
        return
    console.rule(Text(f"SUGGESTED CHANGES ({len(pending)}) — printed, never applied", style="bold"), align="left")
    for f, s in pending:
        console.print(Text.assemble((f" {s.setting}", "bold"), f" ({f.target}): ", (s.current or "?", "red"), " → ",
                                    (s.proposed, "green")))
        console.print(Text(f"     {s.rationale}"))
        for platform, commands in s.commands.items():
            console.print(Text(f"     {platform}:", style="dim"))
            for command in commands:
                console.print(Text(f"       {command}"), highlight=False)
        console.print()


def _evidence_text(evidence: dict) -> str:
    parts = []
    for key in ("metric", "observed", "expected", "baseline", "window_s"):
        value = evidence.get(key)
        if value is None:
            continue
        if isinstance(value, float):
            value = f"{value:.4g}"
        parts.append(f"{key} {value}")
    return ", ".join(parts)
