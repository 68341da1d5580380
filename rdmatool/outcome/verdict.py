"""Findings and what could not be read → one verdict and its exit code: diagnose and the gate both decide here."""

from __future__ import annotations

from collections.abc import Sequence, Sized

from rdmatool.model import Finding, Severity, Verdict

EXIT_CODES = {Verdict.PASS: 0, Verdict.WARN: 0, Verdict.FAIL: 1, Verdict.INCONCLUSIVE: 3}
HARD = (Severity.ERROR, Severity.CRITICAL)


def verdict(findings: list[Finding], failures: Sized = (), allow_missing: int = 0, unfinished: bool = False,
            gaps: Sized = ()) -> Verdict:
    """Fail on any error or critical finding; otherwise missing data is never a pass (fail closed): more
    `failures` than `allow_missing` (diagnose: the collection and parse failures; the gate: the targets it could not
    read), or a check that did not finish (`unfinished`: a gate stage timed out or was inconclusive), is
    inconclusive. Warnings alone warn, and so do `gaps`: the tools missing on a target (rdmatool.outcome.failures.tool_gaps,
    which the callers keep out of `failures`). A missing tool is a lasting fact of the host, not an unknown: holding
    every job on it as inconclusive would hold them until someone installs a package, while a warning names it and
    judges the rest the host said."""
    if any(f.severity in HARD for f in findings):
        return Verdict.FAIL
    if len(failures) > allow_missing or unfinished:
        return Verdict.INCONCLUSIVE
    if any(f.severity is Severity.WARNING for f in findings) or len(gaps):
        return Verdict.WARN
    return Verdict.PASS


def no_data(targets: int, answered: bool, failures: Sequence[dict] = ()) -> str | None:
    """Why there is nothing to judge, as one line, or None when there is. `targets`: how many were to be read;
    `answered`: whether any of them gave output. Nothing to judge is inconclusive whatever `allow_missing`
    tolerates: zero read of twenty, all twenty tolerated, would otherwise pass. The line quotes the first failure
    (the usual cause: a key, a port, a network) and counts the rest, so a thousand unreachable nodes stay one line."""
    if answered:
        return None
    if not targets:
        return "no data: no target to check"
    errors = [str(f.get("error")) for f in failures if f.get("error")]
    line = f"no data: none of the {targets} targets answered" if targets > 1 else "no data: the one target did not answer"
    if errors:
        line += f" ({errors[0]}" + (f"; and {len(errors) - 1} more failures)" if len(errors) > 1 else ")")
    return line
