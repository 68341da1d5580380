"""The pre-training fabric health gate: staged checks within a budget, the verdict and the nodes to drain.

Stages: 1 state (one snapshot) and 2 counters (a second snapshot `counters_window_s` later) come from one
collection; 3 bandwidth (perftest pairs with bad-node / bad-link attribution) and 4 latency (optional) use the perf
engine. A hard failure stops the later stages: no point measuring bandwidth on a fabric already known to be broken.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rdmatool import bundle as bundle_io
from rdmatool.capture.facts import analyse_with_captures
from rdmatool.collect import CollectOptions, collect_to_bundle
from rdmatool.diagnose import default_playbooks, failures_of
from rdmatool.gate import policy
from rdmatool.gate.judge import judge
from rdmatool.gate.profile import GateProfile
from rdmatool.model import Finding, Target, TargetKind, Verdict
from rdmatool.rules import engine, playbook
from rdmatool.verdict import verdict


@dataclass
class GateResult:
    verdict: Verdict
    stages: list[policy.StageResult]
    findings: list[Finding]
    failures: list[dict]
    drain: list[str]
    bad_links: list[tuple[str, str]] = field(default_factory=list)
    bundle: str | None = None
    elapsed_s: float = 0.0


def replay_gate(bundle_path: str, profile: GateProfile, playbooks_dir: str | None = None) -> GateResult:
    """The gate's verdict recomputed offline from a saved gate bundle (state, counters and the recorded perftest
    results): why did last night's gate drain gpu05?"""
    from rdmatool.bundle import replay
    from rdmatool.perf.model import Attribution, PairResult

    start = time.monotonic()
    # The manifest and the perf records are all the replay reads itself; the outputs come through the analysis.
    loaded = bundle_io.Bundle(Path(bundle_path), bundle_io.read_manifest(Path(bundle_path)))
    targets = replay.targets(loaded)
    rules = [r for r in playbook.load_dir(playbooks_dir or default_playbooks()) if r.id not in profile.skip_rules]
    analysis = analyse_with_captures(bundle_path)
    stages, findings, failures, missing = _state_and_counters(analysis, rules, targets, 0.0, out_of_budget=False,
                                                              counters_possible=analysis.window_s is not None,
                                                              window=analysis.window_s or 0.0)
    bad_nodes: tuple[str, ...] = ()
    bad_links: list[tuple[str, str]] = []
    records = replay.perf_records(loaded)
    if records is None:
        stages.append(policy.StageResult("bandwidth", "skipped", 0.0, [], "no perftest results in this bundle"))
    else:
        raw_results, raw_attribution = records
        results = [PairResult.from_record(r) for r in raw_results]
        attribution = Attribution.from_record(raw_attribution)
        perf = judge(results, attribution, rules, "bandwidth", profile.bandwidth.min_fraction_of_line_rate)
        stages.append(policy.StageResult("bandwidth", policy.stage_status(perf), 0.0, perf,
                                         f"{len(results)} recorded pair runs"))
        findings += perf
        bad_nodes, bad_links = attribution.bad_nodes, list(attribution.bad_links)
    hosts = {t.name for t in targets if t.kind is TargetKind.HOST}
    return _result(stages, findings, failures, missing, profile, hosts, bad_nodes, bad_links, bundle_path, start)


def _result(stages, findings, failures, missing, profile, hosts, bad_nodes, bad_links, bundle, start) -> GateResult:
    """The verdict, the findings in report order and the drain list: the same conclusion live and replayed."""
    unfinished = any(s.status in policy.UNFINISHED for s in stages)
    return GateResult(
        verdict=verdict(findings, missing, profile.allow_missing, unfinished=unfinished), stages=stages,
        findings=sorted(findings, key=engine.order), failures=failures,
        drain=policy.drain_list(findings, hosts, bad_nodes), bad_links=bad_links, bundle=bundle,
        elapsed_s=time.monotonic() - start,
    )


def _state_and_counters(analysis, rules, targets, collected_s, out_of_budget, counters_possible, window):
    """Stages 1 and 2 from one analysed bundle: the rules of these stages, findings split by the stage of their rule
    (the bandwidth and latency rules are judged after their stage, on its own results)."""
    stage_for_rule = {r.id: policy.stage_of(r) for r in rules}
    all_findings = engine.evaluate(analysis, [r for r in rules if stage_for_rule[r.id] in ("state", "counters")])
    by_stage: dict[str, list[Finding]] = {"state": [], "counters": []}
    for f in all_findings:
        by_stage[stage_for_rule[f.rule]].append(f)
    failures = failures_of(analysis)
    missing = sorted({f["target"] for f in failures if not f.get("parser")})
    read = f"{len(targets) - len(missing)}/{len(targets)} targets read"
    stages = []
    if out_of_budget:  # whatever was read is still reported, but the gate cannot vouch for the rest
        stages.append(policy.StageResult("state", "timeout", collected_s, by_stage["state"],
                                         f"budget exhausted during collection; {read}"))
        stages.append(policy.StageResult("counters", "timeout", 0.0, by_stage["counters"], "budget exhausted"))
    else:
        stages.append(policy.StageResult("state", policy.stage_status(by_stage["state"]), collected_s,
                                         by_stage["state"], read))
        if counters_possible:
            stages.append(policy.StageResult("counters", policy.stage_status(by_stage["counters"]), 0.0,
                                             by_stage["counters"], f"window {window:g} s"))
        else:
            stages.append(policy.StageResult("counters", "timeout", 0.0, [],
                                             "budget too short for the counter window"))
    return stages, by_stage["state"] + by_stage["counters"], failures, missing


def run_gate(
    targets: list[Target], profile: GateProfile, collect_options: CollectOptions, budget_s: float,
    save: str | None = None, playbooks_dir: str | None = None, perf_options: dict | None = None,
) -> GateResult:
    start = time.monotonic()
    deadline = start + budget_s
    rules = [r for r in playbook.load_dir(playbooks_dir or default_playbooks()) if r.id not in profile.skip_rules]
    hosts = {t.name for t in targets if t.kind is TargetKind.HOST}

    # Stages 1 and 2: one collection, two snapshots a window apart (the window is skipped if the budget is short).
    window = profile.counters_window_s
    remaining = deadline - time.monotonic()
    counters_possible = remaining > window + 5
    per_target = min(profile.deadlines_s["state"], max(5.0, remaining))
    options = CollectOptions(
        interval_s=window if counters_possible else 0.0, forks=collect_options.forks,
        connect_timeout=min(collect_options.connect_timeout, per_target), command_timeout=collect_options.command_timeout,
        target_deadline=per_target, accept_new_host_keys=collect_options.accept_new_host_keys,
        known_hosts=collect_options.known_hosts,
    )
    workdir = None if save else tempfile.TemporaryDirectory(prefix="rdmatool-gate-")
    path = save or str(Path(workdir.name) / "bundle")
    t0 = time.monotonic()
    # A temporary bundle lives until the end: the perf stage adds its matrix to it.
    _, path = collect_to_bundle(targets, options, path)
    analysis = analyse_with_captures(path)
    collected_s = time.monotonic() - t0
    stages, findings, failures, missing = _state_and_counters(
        analysis, rules, targets, collected_s, out_of_budget=time.monotonic() > deadline,
        counters_possible=counters_possible, window=window)
    hard = any(f.severity in policy.HARD for f in findings)
    bad_nodes: tuple[str, ...] = ()
    bad_links: list[tuple[str, str]] = []

    # Stage 3: bandwidth between pairs of reachable, healthy hosts.
    if not profile.bandwidth.enabled:
        stages.append(policy.StageResult("bandwidth", "skipped", 0.0, [], "disabled in the profile"))
    elif time.monotonic() > deadline:
        stages.append(policy.StageResult("bandwidth", "timeout", 0.0, [], "budget exhausted before this stage"))
    elif hard:
        stages.append(policy.StageResult("bandwidth", "skipped", 0.0, [], "hard failure in an earlier stage"))
    else:
        stage, perf_findings, bad_nodes, bad_links = _bandwidth_stage(
            targets, rules, profile, collect_options, deadline, missing, perf_options or {}, path)
        stages.append(stage)
        findings += perf_findings
    if profile.latency.enabled:
        if any(f.severity in policy.HARD for f in findings):
            stages.append(policy.StageResult("latency", "skipped", 0.0, [], "hard failure in an earlier stage"))
        elif time.monotonic() > deadline:
            stages.append(policy.StageResult("latency", "timeout", 0.0, [], "budget exhausted before this stage"))
        else:
            stage, latency_findings = _latency_stage(targets, rules, profile, collect_options, deadline, missing,
                                                     perf_options or {}, path)
            stages.append(stage)
            findings += latency_findings
    if workdir is not None:
        workdir.cleanup()
    return _result(stages, findings, failures, missing, profile, hosts, bad_nodes, bad_links, save, start)


def _bandwidth_stage(targets, rules, profile, collect_options, deadline, missing, perf_options, bundle_path):
    from rdmatool.perf import engine as perf_engine
    from rdmatool.perf import output as perf_output
    from rdmatool.perf.model import PerfOptions

    t0 = time.monotonic()
    hosts = [t for t in targets if t.kind is TargetKind.HOST and t.name not in missing]
    if len(hosts) < 2:
        return policy.StageResult("bandwidth", "inconclusive", 0.0, [], "fewer than two reachable hosts"), [], (), []
    # The engine judges a pair against `threshold` × the line rate of the port it actually tests on (it discovers
    # that port itself: a GPU node's RoCE NIC may be slower than its InfiniBand one), so no rates are passed in.
    fraction = profile.bandwidth.min_fraction_of_line_rate
    options = PerfOptions(
        test=profile.bandwidth.test, duration_s=profile.bandwidth.duration_s, size_bytes=profile.bandwidth.size_bytes,
        qps=profile.bandwidth.qps, known_hosts=collect_options.known_hosts,
        accept_new_host_keys=collect_options.accept_new_host_keys, **perf_options,
    )
    stage_deadline = min(deadline, time.monotonic() + profile.deadlines_s["bandwidth"])
    results, attribution = perf_engine.run_gate_perf(
        hosts, options, None, rounds=profile.bandwidth.rounds, deadline=stage_deadline, threshold=fraction)
    perf_output.write_results(results, attribution, Path(bundle_path) / "perf")
    findings = judge(results, attribution, rules, "bandwidth", fraction)
    duration = time.monotonic() - t0
    if time.monotonic() > stage_deadline:
        return (policy.StageResult("bandwidth", "timeout", duration, findings, "budget exceeded; partial results"),
                findings, attribution.bad_nodes, list(attribution.bad_links))
    untested = _untested(hosts, results)
    status = policy.stage_status(findings)
    detail = f"{len(results)} pair runs"
    if untested and status == "passed":
        status, detail = "inconclusive", f"{detail}; no successful pair for {', '.join(untested)}"
    return (policy.StageResult("bandwidth", status, duration, findings, detail), findings,
            attribution.bad_nodes, list(attribution.bad_links))


def _latency_stage(targets, rules, profile, collect_options, deadline, missing, perf_options, bundle_path):
    """ib_send_lat / ib_write_lat pairs: p99 against the profile's ceiling, p99.9 over typical as jitter, and the
    attribution's bad nodes judged by the latency verdict rules."""
    from rdmatool.perf import engine as perf_engine
    from rdmatool.perf import output as perf_output
    from rdmatool.perf.model import PerfOptions

    t0 = time.monotonic()
    hosts = [t for t in targets if t.kind is TargetKind.HOST and t.name not in missing]
    if len(hosts) < 2:
        return policy.StageResult("latency", "inconclusive", 0.0, [], "fewer than two reachable hosts"), []
    options = PerfOptions(test=profile.latency.test, known_hosts=collect_options.known_hosts,
                          accept_new_host_keys=collect_options.accept_new_host_keys, **perf_options)
    stage_deadline = min(deadline, time.monotonic() + profile.deadlines_s["latency"])
    results, attribution = perf_engine.run_gate_perf(hosts, options, None, rounds=1, deadline=stage_deadline)
    perf_output.write_results(results, attribution, Path(bundle_path) / "perf-latency")
    findings = judge(results, attribution, rules, "latency", latency=profile.latency)
    duration = time.monotonic() - t0
    if time.monotonic() > stage_deadline:
        return policy.StageResult("latency", "timeout", duration, findings, "budget exceeded; partial results"), \
            findings
    measured = [r for r in results if r.ok and r.lat]
    status = policy.stage_status(findings) if measured else "inconclusive"
    return policy.StageResult("latency", status, duration, findings, f"{len(measured)} pairs measured"), findings


def _untested(hosts: list[Target], results) -> list[str]:
    ok = {r.server for r in results if r.error is None} | {r.client for r in results if r.error is None}
    return sorted(h.name for h in hosts if h.name not in ok)
