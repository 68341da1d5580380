"""A night's verdict, and whether the night is in the statistics the baseline rules compare with.

`rdmatool baseline save` diagnoses the bundle it saves and records the verdict on the night (`diagnosis`); the
diagnosis itself runs in the command line, since rdmatool.diagnose.pipeline sits above this package. It is the diagnosis
*without* a baseline: the rules that compare with the baseline never judge the nights the baseline is made of. Were
they to, a lasting change of the fabric (a firmware rollout, faster NICs) would fail every night after it for
drifting from the nights before, every such night would be kept out, and the baseline would never learn the new
normal: a failure that feeds itself. The baseline follows such a change over the nights (`diagnose --baseline`
reports the drift meanwhile), and only what the absolute rules find keeps a night out.

What counts (docs/baseline.md):
- FAIL: out. An error or critical finding means the night's figures may be the fault's (a port at a quarter of its
  rate, a pause storm), and the deviation rules would learn it as normal and stop seeing it.
- WARN: in. Warnings (an optional counter missing, a tool not installed, a figure near its threshold) describe how
  most fleets normally run; keeping such nights out would leave many sites with no baseline at all, and a
  degradation that matters is an error, not a warning.
- INCONCLUSIVE: in. Some targets or outputs were not read, and no rule failed on the rest: the figures that were
  read are of a night without a fault, and the missing ones add nothing.
- PASS: in.
- No verdict (a night saved by an older rdmatool, or through the library without one): in, as it always was.
- An operator may count a failing night anyway (`baseline save --include-failed`): it is then marked
  `included_by_hand` and listed so.
"""

from __future__ import annotations

from rdmatool.model import Severity
from rdmatool.outcome.result import DiagnoseResult

VERDICTS = ("pass", "warn", "fail", "inconclusive")  # rdmatool.model.Verdict's values, as diagnose --json has them
EXCLUDED = frozenset({"fail"})
SEVERITIES = tuple(s.value for s in Severity)  # info, warning, error, critical


def record(result: DiagnoseResult) -> dict:
    """A night's `diagnosis`: the verdict, the findings per severity and how many things were not read."""
    return {"verdict": result.verdict.value,
            "counts": {s.value: sum(1 for f in result.findings if f.severity is s) for s in Severity},
            "failures": len(result.failures)}


def judged(night: dict, diagnosis: dict | None, include_failed: bool = False) -> dict:
    """The night with its diagnosis recorded; `include_failed` marks a night that would be out as counted by hand
    (a night that counts anyway is not marked: there is nothing to override)."""
    night = {k: v for k, v in night.items() if k not in ("diagnosis", "included_by_hand")}
    if diagnosis is not None:
        night["diagnosis"] = diagnosis
    if include_failed and _verdict(night) in EXCLUDED:
        night["included_by_hand"] = True
    return night


def _verdict(night: dict) -> str | None:
    diagnosis = night.get("diagnosis")
    return diagnosis.get("verdict") if isinstance(diagnosis, dict) else None


def counted(night: dict) -> bool:
    """Whether the night is in the statistics (module docstring)."""
    return night.get("included_by_hand") is True or _verdict(night) not in EXCLUDED


def status(night: dict) -> str:
    """The night's place in the statistics, as `baseline list` shows it."""
    verdict = _verdict(night)
    if verdict in EXCLUDED:
        if night.get("included_by_hand") is True:
            return f"included by hand: {verdict.upper()}"
        return f"excluded: {verdict.upper()}"
    return "yes" if verdict else "yes (no verdict recorded)"


def trim(nights: list[dict], keep: int) -> list[dict]:
    """The newest `keep` nights that count and the newest `keep` that do not, in their order: a bad week never
    pushes the healthy nights out of the statistics, and the failing nights stay listed (and countable by hand)
    without growing the file past twice `keep`."""
    kept = [n for n in nights if counted(n)][-keep:] + [n for n in nights if not counted(n)][-keep:]
    chosen = {id(n) for n in kept}
    return [n for n in nights if id(n) in chosen]


def summary(night: dict) -> dict:
    """One night as `baseline list` and `baseline show` print it (and their JSON)."""
    diagnosis = night.get("diagnosis") if isinstance(night.get("diagnosis"), dict) else {}
    return {"created": night.get("created"), "bundle": night.get("bundle"), "targets": night.get("targets"),
            "saved": night.get("saved"), "verdict": diagnosis.get("verdict"), "counts": diagnosis.get("counts"),
            "failures": diagnosis.get("failures"), "counted": counted(night),
            "included_by_hand": night.get("included_by_hand") is True, "status": status(night)}


def findings_text(counts: dict | None) -> str:
    """`2 error, 3 warning`: the non-zero counts, the most severe first; empty without a diagnosis."""
    if not counts:
        return ""
    parts = [f"{counts[s]} {s}" for s in reversed(SEVERITIES) if counts.get(s)]
    return ", ".join(parts) or "none"
