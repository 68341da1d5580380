"""What a report shows of a diagnosis, decided once for the table, the Markdown and the commands: the findings at or
above a severity (the rest counted, never silently dropped), each suggestion once with the findings it answers,
findings grouped by cause, places folded, numbers in human units (rdmatool.units; the JSON keeps the exact ones)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from rdmatool.metrics import GLOSSARY
from rdmatool.model import Finding, Severity, Suggestion
from rdmatool.report.hostsets import folded
from rdmatool.result import DiagnoseResult, finding_ids, unique_suggestions
from rdmatool.units import SHARE, duration, human, size, unit_for

ORDER = (Severity.CRITICAL, Severity.ERROR, Severity.WARNING, Severity.INFO)
RANK = {s: i for i, s in enumerate(reversed(ORDER))}  # info 0 … critical 3
HARD = (Severity.CRITICAL, Severity.ERROR)


@dataclass(frozen=True)
class View:
    findings: list[Finding]  # shown, in the engine's order (severity, rule, place)
    hidden: Counter  # severity → findings below the threshold
    suggestions: list[tuple[Suggestion, list[Finding]]]  # shown: those answering a shown finding
    hidden_suggestions: int  # answering only hidden findings

    def of(self, *severities: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity in severities]


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
    return View(shown, hidden, suggestions, dropped)


def causes(findings: list[Finding]) -> list[list[Finding]]:
    """One group per cause (per rule: the rule states the cause), in the order first met."""
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.rule, []).append(f)
    return list(groups.values())


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


def reason(findings: list[Finding], places: bool = True) -> str:
    """Why a suggestion is there: the rules it answers with their severity (and how many places), and with
    `places` where each was found."""
    parts = []
    for group in causes(findings):
        text = f"{group[0].rule} ({worst(group).value}{f' ×{len(group)}' if len(group) > 1 else ''})"
        if places:
            text += " on " + ", ".join(dict.fromkeys(where(f) for f in group))
        parts.append(text)
    return "; ".join(parts)


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
