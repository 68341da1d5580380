"""Findings and what could not be read → one verdict and its exit code: diagnose and the gate both decide here."""

from __future__ import annotations

from collections.abc import Sized

from rdmatool.model import Finding, Severity, Verdict

EXIT_CODES = {Verdict.PASS: 0, Verdict.WARN: 0, Verdict.FAIL: 1, Verdict.INCONCLUSIVE: 3}
HARD = (Severity.ERROR, Severity.CRITICAL)


def verdict(findings: list[Finding], failures: Sized = (), allow_missing: int = 0, unfinished: bool = False) -> Verdict:
    """Fail on any error or critical finding; otherwise missing data is never a pass (fail closed): more
    `failures` than `allow_missing` (diagnose: the collection and parse failures; the gate: the targets it could not
    read), or a check that did not finish (`unfinished`: a gate stage timed out or was inconclusive), is
    inconclusive. Warnings alone warn."""
    if any(f.severity in HARD for f in findings):
        return Verdict.FAIL
    if len(failures) > allow_missing or unfinished:
        return Verdict.INCONCLUSIVE
    if any(f.severity is Severity.WARNING for f in findings):
        return Verdict.WARN
    return Verdict.PASS
