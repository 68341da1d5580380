"""The one verdict of diagnose and the gate: fail on a hard finding, never pass on missing or unfinished work."""

from __future__ import annotations

import pytest

from rdmatool.model import Finding, Severity, Verdict
from rdmatool.outcome.verdict import EXIT_CODES, verdict


def finding(severity: Severity) -> Finding:
    return Finding(rule="r", severity=severity, target="t", entity=None, symptom="s", cause="c", check="k", fix="f")


@pytest.mark.parametrize(("severities", "failures", "allow", "unfinished", "expected"), [
    ((), [], 0, False, Verdict.PASS),
    ((Severity.INFO,), [], 0, False, Verdict.PASS),
    ((Severity.WARNING,), [], 0, False, Verdict.WARN),
    ((Severity.ERROR,), [], 0, False, Verdict.FAIL),
    ((Severity.CRITICAL, Severity.WARNING), ["gpu01"], 0, True, Verdict.FAIL),  # a hard finding outranks the rest
    ((Severity.WARNING,), [{"target": "gpu01"}], 0, False, Verdict.INCONCLUSIVE),  # diagnose: collection failures
    ((Severity.WARNING,), ["gpu01"], 1, False, Verdict.WARN),  # the gate: a tolerated unreachable target
    ((), ["gpu01", "gpu02"], 1, False, Verdict.INCONCLUSIVE),
    ((), [], 0, True, Verdict.INCONCLUSIVE),  # a gate stage that timed out or was inconclusive
])
def test_verdict(severities, failures, allow, unfinished, expected) -> None:
    got = verdict([finding(s) for s in severities], failures, allow_missing=allow, unfinished=unfinished)
    assert got is expected


def test_exit_codes() -> None:
    assert EXIT_CODES == {Verdict.PASS: 0, Verdict.WARN: 0, Verdict.FAIL: 1, Verdict.INCONCLUSIVE: 3}
