"""The on-call view, in the order a person acts on it at 3 am: the verdict; the nodes to drain and the targets that
could not be reached; the critical and error findings, one block per cause naming its places as a folded host set;
the suggested changes; the warnings; the info findings only when asked (a count says how many were hidden); then
the other collection failures and the notes. `render` shows a diagnosis, `render_gate` the gate's verdict in the
same order and through the same view (rdmatool.report.view), with its stages and each drained node's reasons.

One physical story is one block: the findings a finding explains on the same port (the playbook's `explains`) are
one `also:` line under it, with their key figures (the JSON and the Markdown keep each finding whole). A cause that
suggested changes answer leaves its fix to them: each change names the rules it answers and carries the commands
(`--all` prints the fix too, with the number of its change).

Prose wraps to the terminal (with a hanging indent); commands never do: they are printed with soft wrap, so a
terminal folds them visually and a log or a ticket keeps each one on one line, ready to paste."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from rdmatool.model import Severity
from rdmatool.outcome.result import DiagnoseResult, finding_ids
from rdmatool.present.units import duration
from rdmatool.report import view as views
from rdmatool.report.hostsets import folded, grouped_failures
from rdmatool.report.shown import cleaned

if TYPE_CHECKING:
    from rdmatool.gate.run import GateResult

_STYLE = {Severity.CRITICAL: "bold red", Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
# Each mark takes three columns, so that every cause's text starts in the column its fix and its places do.
_MARK = {Severity.CRITICAL: "!! ", Severity.ERROR: " x ", Severity.WARNING: " ! ", Severity.INFO: " i "}
_VERDICT_STYLE = {"pass": "bold green", "warn": "bold yellow", "fail": "bold red", "inconclusive": "bold magenta"}
PER_CAUSE = 3  # symptoms shown per cause before "and N more": one bad setting fleet-wide must not bury the rest
INDENT = 3


def render(result: DiagnoseResult, console: Console, minimum: Severity = Severity.WARNING,
           show_all: bool = False) -> None:
    """`minimum`: the lowest severity shown (info is hidden by default, and counted); `show_all`: every finding of
    those, with its evidence, and each suggestion's rationale."""
    result = cleaned(result)  # what a device said reaches the terminal as text (rdmatool.report.shown)
    shown = views.select(result, minimum)
    window = f", window {duration(result.window_s)}" if result.window_s else ""
    _verdict("verdict: ", result, f"{window}  ", (result.source, "dim"), console)
    drain = result.drain
    if drain:
        console.print(Text.assemble((f"drain ({len(drain)}): ", "bold red"), folded(drain)), soft_wrap=True)
    _unreachable(result, console)
    _body(result, shown, console, show_all, "--all shows them")


def render_gate(gate: GateResult, console: Console, minimum: Severity = Severity.WARNING,
                show_all: bool = False) -> None:
    """The gate's table: its verdict with the stages it is made of; the nodes to drain, each with the stages and
    rules that condemned it, the bad links and the unreachable targets; then the findings as a diagnosis shows
    them. The info findings are counted, and listed by `--json`."""
    gate = cleaned(gate)
    result = DiagnoseResult(verdict=gate.verdict, findings=gate.findings, failures=gate.failures,
                            source=gate.bundle or "")
    shown = views.select(result, minimum)
    _verdict("gate: ", result, f"  in {gate.elapsed_s:.1f} s", "", console)
    stages = "; ".join(f"{s.name} {s.status}" + (f" ({s.detail})" if s.detail else "") for s in gate.stages)
    if stages:
        _prose(console, Text.assemble(("stages: ", "bold"), stages), indent=2, hanging=4)
    if gate.drain or result.verdict.value == "fail":
        names = folded(gate.drain) if gate.drain else "none: a fabric-level failure (below)"
        console.print(Text.assemble((f"drain ({len(gate.drain)}): ", "bold red"), names), soft_wrap=True)
        for nodes, why in _reasons(gate):
            _prose(console, Text.assemble((nodes, "bold"), f": {why}"), indent=2, hanging=4)
    if gate.bad_links:
        _prose(console, Text.assemble(("bad links: ", "bold red"), ", ".join(f"{a}<->{b}" for a, b in gate.bad_links)),
               indent=0, hanging=2)
    _unreachable(result, console)
    _body(result, shown, console, show_all, "--json lists them")


def _reasons(gate: GateResult) -> list[tuple[str, str]]:
    """Why each node is drained, one line per set of nodes condemned alike: `gpu[06-07]: state: port_phys_not_linkup
    mlx5_0/1` (the findings themselves follow, one block per cause). A finding another finding condemning the same
    node explains is said in that one's block, not here again."""
    by_id = dict(zip(finding_ids(gate.findings), gate.findings))
    told = {(f.target, f.rule, f.entity) for f in gate.findings
            if f.explained_by in by_id and by_id[f.explained_by].severity in views.HARD
            and by_id[f.explained_by].target == f.target}
    per_node: dict[str, dict[str, list[str]]] = {}
    for c in gate.drain_reasons:
        rules = per_node.setdefault(c.node, {}).setdefault(c.stage, [])
        named = c.rule + (f" {c.entity}" if c.entity else "")
        if (c.node, c.rule, c.entity) not in told and named not in rules:
            rules.append(named)
    alike: dict[str, list[str]] = {}
    for node, stages in per_node.items():
        why = "; ".join(f"{stage}: {', '.join(rules)}" for stage, rules in stages.items() if rules)
        alike.setdefault(why, []).append(node)
    return [(folded(nodes), why) for why, nodes in alike.items()]


def _verdict(label: str, result: DiagnoseResult, after: str, source, console: Console) -> None:
    verdict = result.verdict.value
    counts = [(s, sum(1 for f in result.findings if f.severity is s)) for s in views.ORDER]
    summary = ", ".join(f"{n} {s.value}" for s, n in counts if n) or "no findings"
    _prose(console, Text.assemble((label, "bold"), (verdict.upper(), _VERDICT_STYLE[verdict]), f"  {summary}{after}",
                                  source), indent=0, hanging=2)


def _unreachable(result: DiagnoseResult, console: Console) -> None:
    """The targets not reached, folded; with one reason for all, on the same line (an error that names its target
    first is not prefixed with it again)."""
    unreachable = [f for f in result.failures if f.get("kind") == "connection"]
    if not unreachable:
        return
    names = result.unreachable
    head = (f"unreachable ({len(names)}): ", "bold magenta")
    groups = grouped_failures(unreachable)
    if len(groups) == 1:
        targets, _, error = groups[0]
        said = error if error.startswith(f"{targets} ") or error.startswith(f"{targets}:") else f"{targets}: {error}"
        _prose(console, Text.assemble(head, said), indent=0, hanging=2)
        return
    console.print(Text.assemble(head, folded(names)), soft_wrap=True)
    for targets, _, error in groups:
        _prose(console, Text(f"{targets}: {error}", style="dim"), indent=2)


def _body(result: DiagnoseResult, shown: views.View, console: Console, show_all: bool, hint: str) -> None:
    """What follows the verdict and the drain list, for a diagnosis and the gate alike."""
    hard = shown.of(*views.HARD)
    if hard:
        blocks = views.blocks(shown, hard)
        causes = f"{len(blocks)} cause{'s' if len(blocks) != 1 else ''}"
        _rule(console, f"CRITICAL / ERROR ({len(hard)}, {causes})", "bold red")
        for block in blocks:
            _cause(block, shown, console, show_all)
    _suggestions(shown, console, show_all)
    for severity in (Severity.WARNING, Severity.INFO):
        group = shown.of(severity)
        if group:
            _rule(console, f"{severity.value.upper()} ({len(group)})", _STYLE[severity])
            for block in views.blocks(shown, group):
                _cause(block, shown, console, show_all)
    others = [f for f in result.failures if f.get("kind") != "connection"]
    if others:
        _rule(console, f"COMMAND / PARSE FAILURES ({len(others)})", "magenta")
        for targets, what, error in grouped_failures(others):
            _prose(console, Text.assemble((targets, "bold"), f" {what}: {error}"), indent=2, hanging=4)
    if result.notes:
        _rule(console, f"NOTES ({len(result.notes)})", "dim")
        for note in result.notes:
            _prose(console, Text(note), indent=2, hanging=4)
    line = views.hidden_line(shown, hint)
    if line:
        _prose(console, Text(line, style="dim"), indent=0)


def _cause(block: views.Block, shown: views.View, console: Console, show_all: bool) -> None:
    """One block per cause (a rule states one): the symptom, or the folded places and their symptoms (the headline
    they share said once); what it explains, on one `also:` line; the fix, unless suggested changes say it. The
    evidence, the cause and the check with --all (and always in the Markdown and the JSON).

    The rule id closes the block's first line, or (but with --all) its last one when only that has room: a tag
    that would take a line of its own says nothing more than where it sits."""
    group = block.findings
    first = group[0]
    severity = views.worst(group)
    mark = (_MARK[severity], _STYLE[severity])
    if len(group) == 1:
        heading = Text.assemble(mark, first.symptom)
        lines: list[str] = []
    else:
        head, lines = views.headline(group)
        heading = Text.assemble(mark, (views.places(group), "bold"), f": {head}" if head else "")
    top = _lines(console, heading, 0, INDENT)
    body: list[Text] = []
    if len(group) == 1 and show_all:
        body += _lines(console, Text(f"evidence: {views.evidence_text(first)}", style="dim"), INDENT + 2)
    limit = len(group) if show_all else PER_CAUSE
    for f, line in list(zip(group, lines))[:limit]:
        body += _lines(console, Text(line), INDENT, INDENT + 2)
        if show_all:
            body += _lines(console, Text(f"evidence: {views.evidence_text(f)}", style="dim"), INDENT + 2)
    if len(lines) > limit:
        rest = group[limit:]
        body += _lines(console, Text(f"… and {len(rest)} more on {folded(f.target for f in rest)} (--all or "
                                     "--format json lists them)", style="dim"), INDENT)
    if block.also:
        body += _lines(console, Text.assemble(("also: ", "bold"), views.also_text(block)), INDENT, INDENT + 2)
        for f in block.also if show_all else ():
            body += _lines(console, Text.assemble(f.symptom, (f"  [{f.rule}]", "dim")), INDENT + 2, INDENT + 4)
            body += _lines(console, Text(f"evidence: {views.evidence_text(f)}", style="dim"), INDENT + 4)
    explained = views.explained_elsewhere(shown, group)
    if explained:
        body += _lines(console, Text.assemble(("explained by: ", "bold"), explained), INDENT, INDENT + 2)
    if show_all:
        body += _lines(console, Text.assemble(("cause: ", "bold"), first.cause), INDENT, INDENT + 2)
        body += _lines(console, Text.assemble(("check: ", "bold"), first.check), INDENT, INDENT + 2)
    # A fix the suggested changes say exactly, with their commands, is theirs to say (each names the rules it
    # answers); --all says it here too, with the change that does it.
    refs = views.fix_refs(shown, group)
    if show_all or not refs:
        changes = f" (suggested change{'s' if len(refs) > 1 else ''} {', '.join(map(str, refs))})" if refs else ""
        body += _lines(console, Text.assemble(("fix: ", "bold"), first.fix + changes), INDENT, INDENT + 2)
    tag = Text(f" [{first.rule}]", style="dim")
    if top[-1].cell_len + tag.cell_len <= console.width:
        top[-1].append_text(tag)
    elif body and not show_all and body[-1].cell_len + tag.cell_len <= console.width:  # --all: by its symptom
        body[-1].append_text(tag)
    else:
        top = _lines(console, heading + tag, 0, INDENT)
    for line in top + body:
        console.print(line, soft_wrap=True, highlight=False)


def _suggestions(shown: views.View, console: Console, show_all: bool) -> None:
    if not shown.suggestions:
        return
    _rule(console, f"SUGGESTED CHANGES ({len(shown.suggestions)}) — printed, never applied", "bold")
    for number, (suggestion, findings) in enumerate(shown.suggestions, 1):
        target = suggestion.target or findings[0].target
        heading = _lines(console, Text.assemble(
            f"{number}. ", (target, "bold"), f" · {views.setting_text(suggestion, target)}: ",
            (views.change_text(suggestion.current), "red"), " → ", (views.change_text(suggestion.proposed), "green")),
            0, INDENT)
        why = views.reason(findings, places=True) if show_all else views.reason(findings, False, shown)
        # what it answers closes the heading when there is room, as a cause's rule id does
        beside = Text(f"  for {why}", style="dim")
        if not show_all and heading[-1].cell_len + beside.cell_len <= console.width:
            heading[-1].append_text(beside)
            for line in heading:
                console.print(line, soft_wrap=True, highlight=False)
        else:
            for line in heading:
                console.print(line, soft_wrap=True, highlight=False)
            _prose(console, Text(f"for {why}", style="dim"), hanging=INDENT + 2)
        if show_all:
            _prose(console, Text(suggestion.rationale))
        for platform, commands in suggestion.commands.items():
            if len(suggestion.commands) > 1 or show_all:
                console.print(Text(f"{' ' * INDENT}{views.platform_label(suggestion, platform)}:", style="dim"))
            for command in commands:
                # soft_wrap: never broken by rich, whatever the width; markup and highlighting off (verbatim)
                console.print(Text(f"{' ' * (INDENT + 2)}{command}"), soft_wrap=True, highlight=False)


def _prose(console: Console, text: Text, indent: int = INDENT, hanging: int | None = None) -> None:
    """Prose wrapped to the console's width: the first line at `indent`, the others at `hanging` (default the
    same), no trailing blanks (a log keeps what is written)."""
    for line in _lines(console, text, indent, hanging):
        console.print(line, soft_wrap=True, highlight=False)


def _lines(console: Console, text: Text, indent: int, hanging: int | None = None) -> list[Text]:
    """`text` wrapped and indented: the first line at `indent` using the whole width left of it, the others at
    `hanging` (default the same); no trailing blanks."""
    hanging = indent if hanging is None else hanging
    first, other = max(20, console.width - indent), max(20, console.width - hanging)
    wrapped = list(text.wrap(console, first))
    if len(wrapped) > 1 and first != other:
        # the rest re-wrapped at its own width: the wrap keeps the text as written up to a break
        head = wrapped[0].plain.rstrip()
        plain = text.plain
        if plain.startswith(head):
            offset = len(head) + len(plain[len(head):]) - len(plain[len(head):].lstrip(" "))
            wrapped = [wrapped[0], *text.divide([offset])[1].wrap(console, other)]
        else:
            wrapped = list(text.wrap(console, min(first, other)))
    out = []
    for i, line in enumerate(wrapped):
        line.rstrip()
        out.append(Text(" " * (indent if i == 0 else hanging)) + line)
    return out


def _rule(console: Console, title: str, style: str) -> None:
    console.rule(Text(title, style=style), align="left")
