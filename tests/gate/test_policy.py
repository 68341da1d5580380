"""The gate's pure decisions: who is drained and why, when a failure may exit 1, and what no data says."""

from __future__ import annotations

from rdmatool.gate import policy
from rdmatool.model import Finding, Severity, Verdict
from rdmatool.outcome.verdict import no_data

HOSTS = {"gpu01", "gpu02", "gpu03"}


def finding(target: str, severity: Severity = Severity.ERROR, rule: str = "port_not_active",
            entity: str | None = "mlx5_0/1") -> Finding:
    return Finding(rule=rule, severity=severity, target=target, entity=entity, symptom=f"{rule} on {target}",
                   cause="c", check="k", fix="f")


def test_every_condemnation_is_listed_with_its_stage() -> None:
    state = policy.StageResult("state", "failed", findings=[finding("gpu01"), finding("leaf01"),
                                                            finding("gpu02", Severity.WARNING)])
    bandwidth = policy.StageResult("bandwidth", "failed", findings=[finding("gpu03", rule="perf_bad_node", entity=None)])
    reasons = policy.drain_reasons([state, bandwidth], HOSTS, {"bandwidth": ("gpu03", "gpu02")})
    assert [(c.node, c.stage, c.rule) for c in reasons] == [
        ("gpu01", "state", "port_not_active"),
        ("gpu02", "bandwidth", "perf_attribution"),  # named by the attribution alone (its rule skipped)
        ("gpu03", "bandwidth", "perf_bad_node"),  # not listed twice: the rule already said it
    ]
    assert policy.drain_list(reasons) == ["gpu01", "gpu02", "gpu03"]  # never the switch, never a warning


def test_condemned_hosts_are_the_hard_ones() -> None:
    assert policy.condemned([finding("gpu01"), finding("gpu02", Severity.WARNING), finding("leaf01")], HOSTS) == {
        "gpu01"}


def test_a_failure_exits_1_only_when_it_is_named() -> None:
    passed = [policy.StageResult("state", "passed")]
    host_failure = [finding("gpu01")]
    assert policy.gate_verdict(host_failure, passed, [], 0, ["gpu01"], HOSTS) is Verdict.FAIL
    assert policy.gate_verdict([finding("fabric", entity="gpu01<->gpu02")], passed, [], 0, [], HOSTS) is Verdict.FAIL
    # a hard finding that names neither a node to drain nor the fabric: fail closed, not 1
    assert policy.gate_verdict(host_failure, passed, [], 0, [], HOSTS) is Verdict.INCONCLUSIVE


def test_a_broken_stage_is_never_a_pass() -> None:
    broken = policy.StageResult("bandwidth", "error", detail=policy.crashed(TypeError("'str' object\n cannot")))
    assert broken.detail == "stage crashed: TypeError: 'str' object cannot"
    assert policy.gate_verdict([], [policy.StageResult("state", "passed"), broken], [], 0, [], HOSTS) is \
        Verdict.INCONCLUSIVE


def test_no_data_is_one_line_naming_the_first_failure() -> None:
    failures = [{"target": f"gpu{i:02d}", "error": f"gpu{i:02d} (10.0.0.{i}:22): connection refused"}
                for i in range(1, 1001)]
    line = no_data(1000, False, failures)
    assert line == ("no data: none of the 1000 targets answered (gpu01 (10.0.0.1:22): connection refused; and 999 "
                    "more failures)")
    assert no_data(1000, True, failures) is None
    assert no_data(0, False) == "no data: no target to check"
    assert no_data(1, False) == "no data: the one target did not answer"
