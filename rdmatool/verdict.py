"""Findings and collection failures → one verdict and its exit code (diagnose and gate share this)."""

from __future__ import annotations

from rdmatool.model import Finding, Severity, Verdict

EXIT_CODES = {Verdict.PASS: 0, Verdict.WARN: 0, Verdict.FAIL: 1, Verdict.INCONCLUSIVE: 3}


def verdict(findings: list[Finding], failures: list[dict], allow_missing: int = 0) -> Verdict:
    """Fail on any error or critical finding; otherwise missing data is never a pass (fail closed)."""
    if any(f.severity in (Severity.ERROR, Severity.CRITICAL) for f in findings):
        return Verdict.FAIL
    if len(failures) > allow_missing:
        return Verdict.INCONCLUSIVE
    if any(f.severity is Severity.WARNING for f in findings):
        return Verdict.WARN
    return Verdict.PASS
