"""What a report shows of a diagnosis, decided once for the table, the Markdown and the commands: the findings at or
above a severity (the rest counted, never silently dropped), each suggestion once with the findings it answers,
findings grouped by cause, places folded, numbers in human units (rdmatool.present.units; the JSON keeps the exact ones).

The table also folds one physical story into one block (`blocks`): a finding another one explains on the same
target and port (its `explained_by`, from the playbook's `explains`) is one `also:` line under it, and a fix that
a suggested change says exactly is a reference to that change (`fix_refs`)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from rdmatool.metrics import GLOSSARY
from rdmatool.model import Finding, Severity, Suggestion
from rdmatool.outcome.result import DiagnoseResult, finding_ids, unique_suggestions
from rdmatool.present.units import SHARE, duration, human, size, unit_for
from rdmatool.report.hostsets import folded

ORDER = (Severity.CRITICAL, Severity.ERROR, Severity.WARNING, Severity.INFO)
RANK = {s: i for i, s in enumerate(reversed(ORDER))}  # info 0 … critical 3
HARD = (Severity.CRITICAL, Severity.ERROR)


@dataclass(frozen=True)
class View:
    findings: list[Finding]  # shown, in the engine's order (severity, rule, place)
    hidden: Counter  # severity → findings below the threshold
    suggestions: list[tuple[Suggestion, list[Finding]]]  # shown: those answering a shown finding
    hidden_suggestions: int  # answering only hidden findings
    # id() of a finding → the finding that explains it (its `explained_by`), among all the findings of the result
    explainer: dict[int, Finding] = field(default_factory=dict)

    def of(self, *severities: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity in severities]


@dataclass(frozen=True)
class Block:
    """One cause as the table prints it: the findings of one rule (its places), and the findings of other rules they
    explain on the same target and port, folded into one `also:` line."""

    findings: list[Finding]
    also: list[Finding] = field(default_factory=list)


def parse_severity(name: str) -> Severity:
    """`--severity NAME` → the lowest severity shown; ValueError names the choices."""
    try:
        return Severity(name.strip().lower())
    except ValueError:
        raise ValueError(f"--severity {name!r}: one of {', '.join(s.value for s in ORDER)}") from None


def select(result: DiagnoseResult, minimum: Severity = Severity.WARNING) -> View:
    """The findings at `minimum` or above, and the suggestions that answer at least one of them."""
    shown = [f for f in result.findings if RANK[f.severity] >= RANK[minimum]]
    hidden = Counter(f.severity for f in result.findings if RANK[f.severity] < RANK[minimum])
    visible = {id(f) for f in shown}
    by_id = dict(zip(finding_ids(result.findings), result.findings))
    suggestions, dropped = [], 0
    for suggestion, answered in unique_suggestions(result.findings):
        findings = [by_id[i] for i in answered]
        if any(id(f) in visible for f in findings):
            suggestions.append((suggestion, findings))
        else:
            dropped += 1
    explainer = {id(f): by_id[f.explained_by] for f in result.findings
                 if f.explained_by in by_id and by_id[f.explained_by] is not f}
    return View(shown, hidden, suggestions, dropped, explainer)


def causes(findings: list[Finding]) -> list[list[Finding]]:
    """One group per cause (per rule: the rule states the cause), in the order first met."""
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.rule, []).append(f)
    return list(groups.values())


def blocks(view: View, findings: list[Finding]) -> list[Block]:
    """The blocks of one section of the table: one per cause (`causes`), each with the findings its own explain among
    `findings`. A finding whose explaining finding is not among them (hidden, or in another section) is a cause of
    its own: folding never hides a finding."""
    among = {id(f) for f in findings}
    lead = {id(f): id(view.explainer[id(f)]) for f in findings
            if id(f) in view.explainer and id(view.explainer[id(f)]) in among}
    out = []
    for group in causes([f for f in findings if id(f) not in lead]):
        mine = {id(f) for f in group}
        out.append(Block(group, [f for f in findings if lead.get(id(f)) in mine]))
    return out


def figure(f: Finding) -> str:
    """The key figure of a finding, for its `also:` line: what was observed in human units, at which priority, and
    the healthy side when it says more than the rule id does (`100 Gb/s vs fleet median 400 ±1%`, not `vs <= 0`)."""
    ev = f.evidence
    metric = ev.get("metric")
    unit = unit_for(metric, GLOSSARY[metric].unit) if metric in GLOSSARY else ""
    text = human(ev.get("observed"), unit) if ev.get("observed") is not None else ""
    if ev.get("priority") is not None:
        text = f"prio {ev['priority']}" + (f": {text}" if text else "")
    expected = ev.get("expected")
    # An operator expression (`<= 0`, `== Active`) only restates the rule; a long one would not fit the line.
    if isinstance(expected, str) and expected and not _OPERATOR.match(expected) and len(expected) <= _SHORT:
        text += f" vs {expected}"
    return text


_OPERATOR = re.compile(r"(<|>|=|!|not in |in |count )")
_SHORT = 32


def also_text(block: Block) -> str:
    """`ib_link_error_recovery_growing 1, ib_symbol_errors_growing 77`: the folded findings by rule with their key
    figures; with places on several targets, where each rule was found; across a cable (`explains_far_end`), the
    port at the other end, said once when it is one (`at the far end, leaf02 swp1: ecn_after_pfc prio 3: 95.7 %`)."""
    leads = {f.target for f in block.findings}
    several = len(leads) > 1
    far = {id(f): f"{f.target} {f.entity}" if f.entity else f.target for f in block.also if f.target not in leads}
    one_far_end = not several and len(set(far.values())) == 1 and len(far) == len(block.also)
    parts = []
    for group in causes(block.also):
        figures = [x for x in dict.fromkeys(figure(f) for f in group) if x]
        text = group[0].rule + (f" {', '.join(figures)}" if figures else "")
        if several:
            text += f" on {folded(f.target for f in group)}"
        elif not one_far_end and any(id(f) in far for f in group):
            text += " on " + ", ".join(dict.fromkeys(far.get(id(f), f.target) for f in group))
        parts.append(text)
    return (f"at the far end, {next(iter(far.values()))}: " if one_far_end else "") + "; ".join(parts)


def explained_elsewhere(view: View, findings: list[Finding]) -> str:
    """`pfc_storm on gpu02 ens1f0np0`: the finding that explains every one of these, when it leads a block of another
    section (a warning that a critical storm explains is still printed with the warnings). Empty when any of them is
    a cause of its own."""
    leads = [view.explainer.get(id(f)) for f in findings]
    if not leads or any(lead is None for lead in leads):
        return ""
    return "; ".join(dict.fromkeys(f"{x.rule} on {x.target}" + (f" {x.entity}" if x.entity else "") for x in leads))


def fix_refs(view: View, findings: list[Finding]) -> list[int]:
    """The numbers (1-based, in the order printed) of the shown suggestions answering these findings, when every one
    of them is answered: the change then says the fix exactly, with its commands. Empty otherwise."""
    numbers: dict[int, None] = {}
    for f in findings:
        mine = [i for i, (_, answered) in enumerate(view.suggestions, 1) if any(a is f for a in answered)]
        if not mine:
            return []
        numbers.update(dict.fromkeys(mine))
    return sorted(numbers)


def headline(findings: list[Finding]) -> tuple[str, list[str]]:
    """The symptoms of several places of one cause, with the headline they share (the text before `: `, the row of
    the troubleshooting table) said once: ("RDMA bandwidth far below expected", ["PFC on … is 0", ...]); ("", the
    symptoms) when they share none."""
    heads = {f.symptom.split(": ", 1)[0] for f in findings if ": " in f.symptom}
    if len(heads) == 1 and all(": " in f.symptom for f in findings):
        return heads.pop(), [f.symptom.split(": ", 1)[1] for f in findings]
    return "", [f.symptom for f in findings]


def setting_text(suggestion: Suggestion, target: str) -> str:
    """A suggestion's setting without its target repeated: `DCQCN RP on priority 3 (ens1f0np0)` under `gpu04`."""
    return suggestion.setting.replace(f"({target} ", "(")


def where(f: Finding) -> str:
    """The place of one finding: `gpu02 ens1f0np0 prio 3`."""
    text = f.target + (f" {f.entity}" if f.entity else "")
    if f.evidence.get("priority") is not None:
        text += f" prio {f.evidence['priority']}"
    return text


def places(findings: list[Finding]) -> str:
    """The targets of a group as a folded host set, and how many places (ports, priorities) when more than one."""
    targets = folded(f.target for f in findings)
    return targets if len(findings) == 1 else f"{targets} ({len(findings)} places)"


def worst(findings: list[Finding]) -> Severity:
    return max((f.severity for f in findings), key=RANK.__getitem__)


def reason(findings: list[Finding], places: bool = True, shown: View | None = None) -> str:
    """Why a suggestion is there: the rules it answers with their severity (and how many places), and with
    `places` where each was found. With the `shown` view, the severity is named for the findings it hides only
    (`ecn_kmax_above_pfc_trigger (info ×8, hidden)`): the others are printed above with theirs."""
    visible = {id(f) for f in shown.findings} if shown is not None else None
    parts: list[list[str]] = []  # [text, what explains it ("" when nothing does)]
    for group in causes(findings):
        count = f" ×{len(group)}" if len(group) > 1 else ""
        if visible is None:
            text = f"{group[0].rule} ({worst(group).value}{count})"
        elif any(id(f) in visible for f in group):
            text = f"{group[0].rule}{count}"
        else:
            text = f"{group[0].rule} ({worst(group).value}{count}, hidden)"
        if places:
            text += " on " + ", ".join(dict.fromkeys(where(f) for f in group))
        # A reason that is another finding's consequence (the far end of a storming host's cable) says so: the
        # change answers a symptom there, and the cause is fixed elsewhere first.
        by = _explained_by(group, shown, findings) if shown is not None else ""
        if parts and by and parts[-1][1] == by:
            parts[-1][0] += f", {text}"
        else:
            parts.append([text, by])
    return "; ".join(text + (f" (explained by {by})" if by else "") for text, by in parts)


def _explained_by(group: list[Finding], shown: View, answered: list[Finding]) -> str:
    """`pfc_storm on gpu02` when one finding explains every finding of the group and is not itself among the
    findings the change answers (`answered`: then it is named as a reason already), else ""."""
    explainers = [shown.explainer.get(id(f)) for f in group]
    cause = explainers[0]
    if cause is None or any(e is not cause for e in explainers) or any(f is cause for f in answered):
        return ""
    return f"{cause.rule} on {cause.target}"


def evidence_text(f: Finding) -> str:
    """The evidence in human units: `metric tx_pause_fraction, observed 98.6 % of 4.12 s, expected <= 0.5`."""
    ev = f.evidence
    metric = ev.get("metric")
    unit = unit_for(metric, GLOSSARY[metric].unit) if metric in GLOSSARY else ""
    parts = [f"metric {metric}"] if metric else []
    observed = ev.get("observed")
    if observed is not None:
        text = human(observed, unit)
        if unit == SHARE and ev.get("window_s"):  # a share of the window: of how long
            text += f" of {duration(ev['window_s'])}"
        parts.append(f"observed {text}")
    if ev.get("expected") is not None:
        parts.append(f"expected {human(ev['expected'], unit)}")
    if ev.get("baseline") is not None:
        parts.append(f"baseline {human(ev['baseline'], unit)}")
    if ev.get("window_s") and unit != SHARE:
        parts.append(f"window {duration(ev['window_s'])}")
    return ", ".join(parts)


_BYTES = re.compile(r"\b(\d{4,}) B\b")


def platform_label(suggestion, platform: str) -> str:
    """The heading of one platform's commands of a suggestion: `onyx`, or `onyx (on leaf03)` for a cable peer's."""
    device = suggestion.devices.get(platform)
    return f"{platform} (on {device})" if device else platform


def change_text(text: str | None) -> str:
    """A setting's value as people read it: `Kmax 1499136 B` → `Kmax 1.43 MiB` (the commands keep the bytes)."""
    if text is None:
        return "?"
    return _BYTES.sub(lambda m: size(int(m.group(1))), text)


def hidden_line(view: View, hint: str = "--all shows them") -> str | None:
    """`36 info findings and 7 suggestions hidden (--all shows them)`, or None when nothing is hidden."""
    parts = [f"{n} {s.value}" for s, n in sorted(view.hidden.items(), key=lambda kv: -RANK[kv[0]])]
    if not parts and not view.hidden_suggestions:
        return None
    text = (", ".join(parts) + (" findings" if parts else ""))
    if view.hidden_suggestions:
        text += (" and " if parts else "") + f"{view.hidden_suggestions} suggestion(s) answering only those"
    return f"{text} hidden ({hint})"
