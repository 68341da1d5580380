"""The on-call view, in the order a person acts on it at 3 am: the verdict; the nodes to drain and the targets that
could not be reached; the critical and error findings, one block per cause naming its places as a folded host set;
the suggested changes; the warnings; the info findings only when asked (a count says how many were hidden); then
the other collection failures and the notes.

Prose wraps to the terminal (with a hanging indent); commands never do: they are printed with soft wrap, so a
terminal folds them visually and a log or a ticket keeps each one on one line, ready to paste."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from rdmatool.model import Finding, Severity
from rdmatool.report import view as views
from rdmatool.report.hostsets import folded, grouped_failures
from rdmatool.result import DiagnoseResult
from rdmatool.units import duration

_STYLE = {Severity.CRITICAL: "bold red", Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_MARK = {Severity.CRITICAL: "!!", Severity.ERROR: "x", Severity.WARNING: "!", Severity.INFO: "i"}
_VERDICT_STYLE = {"pass": "bold green", "warn": "bold yellow", "fail": "bold red", "inconclusive": "bold magenta"}
PER_CAUSE = 3  # symptoms shown per cause before "and N more": one bad setting fleet-wide must not bury the rest
INDENT = 4


def render(result: DiagnoseResult, console: Console, minimum: Severity = Severity.WARNING,
           show_all: bool = False) -> None:
    """`minimum`: the lowest severity shown (info is hidden by default, and counted); `show_all`: every finding of
    those, with its evidence, and each suggestion's rationale."""
    shown = views.select(result, minimum)
    _verdict(result, shown, console)
    _drain_and_unreachable(result, console)
    hard = shown.of(*views.HARD)
    if hard:
        _rule(console, f"CRITICAL / ERROR ({len(hard)}, {len(views.causes(hard))} causes)", "bold red")
        for group in views.causes(hard):
            _cause(group, console, show_all)
    _suggestions(shown, console, show_all)
    for severity in (Severity.WARNING, Severity.INFO):
        group = shown.of(severity)
        if group:
            _rule(console, f"{severity.value.upper()} ({len(group)})", _STYLE[severity])
            for same in views.causes(group):
                _cause(same, console, show_all)
    others = [f for f in result.failures if f.get("kind") != "connection"]
    if others:
        _rule(console, f"COMMAND / PARSE FAILURES ({len(others)})", "magenta")
        for targets, what, error in grouped_failures(others):
            _prose(console, Text.assemble((targets, "bold"), f" {what}: {error}"), indent=2)
    if result.notes:
        _rule(console, f"NOTES ({len(result.notes)})", "dim")
        for note in result.notes:
            _prose(console, Text(note), indent=2)
    line = views.hidden_line(shown)
    if line:
        _prose(console, Text(line, style="dim"), indent=0)


def _verdict(result: DiagnoseResult, shown: views.View, console: Console) -> None:
    verdict = result.verdict.value
    counts = [(s, sum(1 for f in result.findings if f.severity is s)) for s in views.ORDER]
    summary = ", ".join(f"{n} {s.value}" for s, n in counts if n) or "no findings"
    window = f", window {duration(result.window_s)}" if result.window_s else ""
    _prose(console, Text.assemble(("verdict: ", "bold"), (verdict.upper(), _VERDICT_STYLE[verdict]),
                                  f"  {summary}{window}  ", (result.source, "dim")), indent=0, hanging=2)


def _drain_and_unreachable(result: DiagnoseResult, console: Console) -> None:
    drain = result.drain
    if drain:
        console.print(Text.assemble((f"drain ({len(drain)}): ", "bold red"), folded(drain)), soft_wrap=True)
    unreachable = [f for f in result.failures if f.get("kind") == "connection"]
    if unreachable:
        names = result.unreachable
        console.print(Text.assemble((f"unreachable ({len(names)}): ", "bold magenta"), folded(names)), soft_wrap=True)
        for targets, _, error in grouped_failures(unreachable):
            _prose(console, Text(f"{targets}: {error}", style="dim"), indent=2)


def _cause(group: list[Finding], console: Console, show_all: bool) -> None:
    """One block per cause (a rule states one): the symptom, or the folded places and their symptoms; the fix. The
    evidence, the cause and the check with --all (and always in the Markdown and the JSON)."""
    first = group[0]
    severity = views.worst(group)
    mark = (f"{_MARK[severity]} ", _STYLE[severity])
    rule = (f"  [{first.rule}]", "dim")
    if len(group) == 1:
        _prose(console, Text.assemble(mark, first.symptom, rule), indent=1, hanging=INDENT)
    else:
        _prose(console, Text.assemble(mark, (views.places(group), "bold"), rule), indent=1, hanging=INDENT)
    limit = len(group) if show_all else PER_CAUSE
    for f in group[:limit] if len(group) > 1 or show_all else ():
        if len(group) > 1:
            _prose(console, Text(f.symptom), hanging=INDENT + 2)
        if show_all:
            _prose(console, Text(f"evidence: {views.evidence_text(f)}", style="dim"), indent=INDENT + 2)
    if len(group) > limit:
        rest = group[limit:]
        _prose(console, Text(f"… and {len(rest)} more on {folded(f.target for f in rest)} (--all or --format json "
                             "lists them)", style="dim"))
    if show_all:
        _prose(console, Text.assemble(("cause: ", "bold"), first.cause), hanging=INDENT + 2)
        _prose(console, Text.assemble(("check: ", "bold"), first.check), hanging=INDENT + 2)
    _prose(console, Text.assemble(("fix: ", "bold"), first.fix), hanging=INDENT + 2)


def _suggestions(shown: views.View, console: Console, show_all: bool) -> None:
    if not shown.suggestions:
        return
    _rule(console, f"SUGGESTED CHANGES ({len(shown.suggestions)}) — printed, never applied", "bold")
    for suggestion, findings in shown.suggestions:
        _prose(console, Text.assemble(
            (suggestion.target or findings[0].target, "bold"), f" · {suggestion.setting}: ",
            (views.change_text(suggestion.current), "red"), " → ", (views.change_text(suggestion.proposed), "green")),
            indent=1, hanging=INDENT)
        _prose(console, Text(f"for {views.reason(findings, places=show_all)}", style="dim"), hanging=INDENT + 2)
        if show_all:
            _prose(console, Text(suggestion.rationale))
        for platform, commands in suggestion.commands.items():
            if len(suggestion.commands) > 1 or show_all:
                console.print(Text(f"{' ' * INDENT}{platform}:", style="dim"))
            for command in commands:
                # soft_wrap: never broken by rich, whatever the width; markup and highlighting off (verbatim)
                console.print(Text(f"{' ' * (INDENT + 2)}{command}"), soft_wrap=True, highlight=False)


def _prose(console: Console, text: Text, indent: int = INDENT, hanging: int | None = None) -> None:
    """Prose wrapped to the console's width: the first line at `indent`, the others at `hanging` (default the
    same), no trailing blanks (a log keeps what is written)."""
    hanging = indent if hanging is None else hanging
    width = max(20, console.width - max(indent, hanging))
    for i, line in enumerate(text.wrap(console, width)):
        line.rstrip()
        console.print(Text(" " * (indent if i == 0 else hanging)) + line, soft_wrap=True, highlight=False)


def _rule(console: Console, title: str, style: str) -> None:
    console.rule(Text(title, style=style), align="left")
