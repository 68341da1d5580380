"""The pre-training fabric health gate: staged checks within a budget, the verdict and the nodes to drain.

Stages: 1 state (one snapshot) and 2 counters (a second snapshot `counters_window_s` later) come from one
collection; 3 bandwidth (perftest pairs with bad-node / bad-link attribution) and 4 latency (optional) use the perf
engine. A node that fails hard in a stage is on the drain list and left out of the later stages, which still run on
the rest within the budget: one run names every node to drain, each with the stage and finding that condemned it.

A stage whose own code breaks is `error` (the gate exits 4, rdmatool failed), never a pass and never a drain; no target answering at all
is `no_data` (inconclusive, one line), whatever `allow_missing` tolerates.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rdmatool import bundle as bundle_io
from rdmatool.capture.facts import analyse_with_captures
from rdmatool.collect import CollectOptions, collect_to_bundle
from rdmatool.diagnose.judges import with_judges
from rdmatool.diagnose.pipeline import default_playbooks, failures_of, nothing_to_judge
from rdmatool.errors import RdmatoolError
from rdmatool.gate import policy
from rdmatool.gate.judge import inter_leaf, judge
from rdmatool.gate.profile import GateProfile
from rdmatool.model import Finding, Target, TargetKind, Verdict
from rdmatool.outcome.failures import tool_gaps, unread_targets
from rdmatool.rules import engine, playbook
from rdmatool.tune import SUGGESTERS


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
    drain_reasons: list[policy.Condemnation] = field(default_factory=list)  # every node: stage + finding
    no_data: str | None = None  # why there was nothing to judge (one line), when no target answered

    def as_json(self) -> dict:
        """The gate's JSON (schema `gate`): the counts, the unreachable targets, the findings (with their ids) and the
        suggestions as a diagnosis has them (rdmatool.outcome.result), plus the drain list, its reasons and the stages."""
        from rdmatool.outcome.result import judged_json
        from rdmatool.schemas import tag

        judged = judged_json(self.findings, self.failures)
        return {
            "schema": tag("gate"),
            "verdict": self.verdict.value,
            "counts": judged["counts"],
            "findings": judged["findings"],
            "suggestions": judged["suggestions"],
            "failures": self.failures,
            "unreachable": judged["unreachable"],
            "drain": self.drain,
            "drain_reasons": [c.as_json() for c in self.drain_reasons],
            "bad_links": [list(link) for link in self.bad_links],
            "stages": [s.as_json() for s in self.stages],
            "elapsed_s": round(self.elapsed_s, 3),
        }


@dataclass
class _StageOutcome:
    """A later stage's result and what its attribution said (its findings are `stage.findings`)."""

    stage: policy.StageResult
    bad_nodes: tuple[str, ...] = ()
    bad_links: list[tuple[str, str]] = field(default_factory=list)


def _guarded(name: str, run, *args) -> _StageOutcome:
    """One stage, whose own breakage is the stage's `error` status rather than the end of the gate: the stages
    before it stand, and an exit code of 1 would tell the scheduler to drain nodes for a bug. Bad input
    (RdmatoolError) is still the caller's: one line and exit 2."""
    t0 = time.monotonic()
    try:
        return run(*args)
    except RdmatoolError:
        raise
    except Exception as exc:  # noqa: BLE001 - any breakage of the check itself, reported as the stage's status
        return _StageOutcome(policy.StageResult(name, "error", time.monotonic() - t0, [], policy.crashed(exc)))


def replay_gate(bundle_path: str, profile: GateProfile, playbooks_dir: str | None = None,
                site: dict | None = None) -> GateResult:
    """The gate's verdict recomputed offline from a saved gate bundle (state, counters and the recorded perftest
    results): why did last night's gate drain gpu05? `site`: the site profile (RoCE / CNP class) judged against."""
    from rdmatool.bundle import replay
    from rdmatool.gate import schedule_choice
    from rdmatool.perf.model import Attribution, PairResult

    start = time.monotonic()
    # The manifest and the perf records are all the replay reads itself; the outputs come through the analysis.
    loaded = bundle_io.Bundle(Path(bundle_path), bundle_io.read_manifest(Path(bundle_path)))
    targets = replay.targets(loaded)
    rules = [r for r in playbook.load_dir(playbooks_dir or default_playbooks(), site=site)
             if r.id not in profile.skip_rules]
    analysis = analyse_with_captures(bundle_path, site)
    hosts = {t.name for t in targets if t.kind is TargetKind.HOST}
    stages, findings, failures, missing = _state_and_counters(analysis, rules, targets, 0.0, out_of_budget=False,
                                                              counters_possible=analysis.window_s is not None,
                                                              window=analysis.window_s or 0.0,
                                                              no_window=_NO_WINDOW_READ)
    nothing = nothing_to_judge(analysis)
    if nothing:
        return _result(stages, findings, failures, missing, profile, hosts, {}, [], bundle_path, start, nothing)
    records = replay.perf_records(loaded)
    outcome = _StageOutcome(policy.StageResult("bandwidth", "skipped", 0.0, [], "no perftest results in this bundle"))

    def judged_again() -> _StageOutcome:
        raw_results, raw_attribution = records
        results = [PairResult.from_record(r) for r in raw_results]
        attribution = Attribution.from_record(raw_attribution)
        # the path classes, on the tested NICs' leaves the live run saved
        cabling = schedule_choice.stage_cabling(schedule_choice.saved_leaves(bundle_path),
                                                schedule_choice.saved_rail_leaves(bundle_path), analysis)
        perf = judge(results, attribution, rules, "bandwidth", profile.bandwidth.min_fraction_of_line_rate,
                     cabling=cabling)
        fraction = profile.bandwidth.min_fraction_of_line_rate
        return _StageOutcome(policy.StageResult("bandwidth", policy.stage_status(perf), 0.0, perf,
                                                f"{len(results)} recorded pair runs"),
                             tuple(attribution.bad_nodes),
                             list(inter_leaf(results, attribution, fraction, cabling)[0].bad_links))

    if records is not None:
        outcome = _guarded("bandwidth", judged_again)
    stages.append(outcome.stage)
    findings += outcome.stage.findings
    from rdmatool.gate.incast_stage import replay_incast  # the incast stage, when the gate ran one

    incast = _guarded("incast", lambda: _StageOutcome(replay_incast(bundle_path, rules)))
    if incast.stage is not None:
        stages.append(incast.stage)
        findings += incast.stage.findings
    from rdmatool.gate.storage_stage import replay_storage  # the storage stage, when the gate ran one

    stored = _guarded("storage", lambda: _StageOutcome(replay_storage(bundle_path, rules)))
    if stored.stage is not None:
        stages.append(stored.stage)
        findings += stored.stage.findings
    from rdmatool.gate.nccl_stage import replay_nccl  # the nccl stage, when the gate ran one

    nccl = _guarded("nccl", lambda: _StageOutcome(replay_nccl(bundle_path, rules, analysis)))
    if nccl.stage is not None:
        stages.append(nccl.stage)
        findings += nccl.stage.findings
    return _result(stages, findings, failures, missing, profile, hosts, {"bandwidth": outcome.bad_nodes},
                   outcome.bad_links, bundle_path, start)


def _result(stages, findings, failures, missing, profile, hosts, bad_nodes, bad_links, bundle, start,
            nothing: str | None = None) -> GateResult:
    """The verdict, the findings in report order and the drain list with its reasons: the same conclusion live and
    replayed. `bad_nodes`: the attribution's, by stage."""
    reasons = policy.drain_reasons(stages, hosts, bad_nodes)
    drain = policy.drain_list(reasons)
    decided = Verdict.INCONCLUSIVE if nothing else policy.gate_verdict(
        findings, stages, missing, profile.allow_missing, drain, hosts, gaps=tool_gaps(failures))
    return GateResult(
        verdict=decided, stages=stages, findings=sorted(findings, key=engine.order), failures=failures,
        drain=drain, bad_links=bad_links, bundle=bundle, elapsed_s=time.monotonic() - start, drain_reasons=reasons,
        no_data=nothing,
    )


# Why a gate has no counter stage: live, its budget left no room for the window; replayed, its bundle holds no two
# readings of a counter (one snapshot, or the second one's files gone).
_NO_WINDOW_LIVE = ("timeout", "budget too short for the counter window")
_NO_WINDOW_READ = ("inconclusive", "no counter window in this bundle: no two snapshots read")


def _state_and_counters(analysis, rules, targets, collected_s, out_of_budget, counters_possible, window,
                        no_window: tuple[str, str] = _NO_WINDOW_LIVE):
    """Stages 1 and 2 from one analysed bundle: the rules of these stages, findings split by the stage of their rule
    (the bandwidth and latency rules are judged after their stage, on its own results)."""
    stage_for_rule = {r.id: policy.stage_of(r) for r in rules}
    # The judges of a diagnosis that the gate runs too (rdmatool.diagnose.judges): link errors per cable, the far end's
    # pauses, failed commands.
    cabled = with_judges(analysis, gate=True)
    # With the suggesters, as a diagnosis: a gate that fails on a setting prints the exact commands that change it.
    all_findings = engine.evaluate(cabled, [r for r in rules if stage_for_rule[r.id] in ("state", "counters")],
                                   suggesters=SUGGESTERS)
    by_stage: dict[str, list[Finding]] = {"state": [], "counters": []}
    for f in all_findings:
        by_stage[stage_for_rule[f.rule]].append(f)
    failures = failures_of(analysis)
    missing = unread_targets(failures)  # a switch whose counters its deadline left unread is not vouched for
    read = f"{len(targets) - len(missing)}/{len(targets)} targets read"
    hosts = {t.name for t in targets if t.kind is TargetKind.HOST}
    stages = []
    if hosts and hosts <= set(missing):  # switches alone say nothing of the nodes the job will run on
        state = "failed" if policy.stage_status(by_stage["state"]) == "failed" else "inconclusive"
        stages.append(policy.StageResult("state", state, collected_s, by_stage["state"], f"{read}; no host answered"))
        counters = policy.stage_status(by_stage["counters"]) if by_stage["counters"] else "skipped"
        stages.append(policy.StageResult("counters", counters, 0.0, by_stage["counters"], "no host answered"))
    elif out_of_budget:  # whatever was read is still reported, but the gate cannot vouch for the rest
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
            stages.append(policy.StageResult("counters", no_window[0], 0.0, [], no_window[1]))
    return stages, by_stage["state"] + by_stage["counters"], failures, missing


def run_gate(
    targets: list[Target], profile: GateProfile, collect_options: CollectOptions, budget_s: float,
    save: str | None = None, playbooks_dir: str | None = None, perf_options: dict | None = None,
    site: dict | None = None,
) -> GateResult:
    start = time.monotonic()
    deadline = start + budget_s
    # The rules read for the site's RoCE / CNP class; their findings' suggestions take the same profile (Rule.site).
    rules = [r for r in playbook.load_dir(playbooks_dir or default_playbooks(), site=site)
             if r.id not in profile.skip_rules]

    # Stages 1 and 2: one collection, two snapshots a window apart (the window is skipped if the budget is short).
    window = profile.counters_window_s
    remaining = deadline - time.monotonic()
    counters_possible = remaining > window + 5
    per_target = min(profile.deadlines_s["state"], max(5.0, remaining))
    options = CollectOptions(
        interval_s=window if counters_possible else 0.0, forks=collect_options.forks,
        connect_timeout=min(collect_options.connect_timeout, per_target), command_timeout=collect_options.command_timeout,
        target_deadline=per_target, accept_new_host_keys=collect_options.accept_new_host_keys,
        known_hosts=collect_options.known_hosts, local=collect_options.local,
    )
    with _bundle_dir(save) as path:  # a temporary bundle lives until the end: the perf stages add their matrices
        return _staged(targets, rules, profile, options, collect_options, deadline, path, perf_options or {}, save,
                       start)


@contextlib.contextmanager
def _bundle_dir(save: str | None):
    """Where the gate's bundle goes: `save`, or a temporary directory removed at the end whatever happens."""
    if save:
        yield save
        return
    with tempfile.TemporaryDirectory(prefix="rdmatool-gate-") as workdir:
        yield str(Path(workdir) / "bundle")


def _staged(targets, rules, profile, options, collect_options, deadline, path, perf_options, save, start,
            ) -> GateResult:
    """The stages in order, each within what is left of the budget."""
    hosts = {t.name for t in targets if t.kind is TargetKind.HOST}
    t0 = time.monotonic()
    try:
        _, path = collect_to_bundle(targets, options, path)
        analysis = analyse_with_captures(path, playbook.site_of(rules))
    except RdmatoolError:
        raise
    except Exception as exc:  # noqa: BLE001 - with nothing read there is nothing to judge: inconclusive
        failed = [policy.StageResult("state", "error", time.monotonic() - t0, [], policy.crashed(exc)),
                  policy.StageResult("counters", "skipped", 0.0, [], "the state stage did not finish")]
        return _result(failed, [], [], [], profile, hosts, {}, [], save, start)
    collected_s = time.monotonic() - t0
    stages, findings, failures, missing = _state_and_counters(
        analysis, rules, targets, collected_s, out_of_budget=time.monotonic() > deadline,
        counters_possible=options.interval_s > 0, window=profile.counters_window_s)
    nothing = nothing_to_judge(analysis)
    if nothing:
        return _result(stages, findings, failures, missing, profile, hosts, {}, [], save, start, nothing)
    # A node condemned (or unread) so far is left out of what follows; the rest are still measured, so that one
    # run yields the whole drain list.
    excluded = set(missing) | policy.condemned(findings, hosts)
    bad_nodes: dict[str, tuple[str, ...]] = {}
    bad_links: list[tuple[str, str]] = []

    # Stage 3: bandwidth between pairs of the hosts still standing.
    if not profile.bandwidth.enabled:
        stages.append(policy.StageResult("bandwidth", "skipped", 0.0, [], "disabled in the profile"))
    elif time.monotonic() > deadline:
        stages.append(policy.StageResult("bandwidth", "timeout", 0.0, [], "budget exhausted before this stage"))
    else:
        outcome = _guarded("bandwidth", _bandwidth_stage, targets, rules, profile, collect_options, deadline,
                           excluded, perf_options, path, analysis)
        stages.append(outcome.stage)
        findings += outcome.stage.findings
        bad_nodes["bandwidth"], bad_links = outcome.bad_nodes, outcome.bad_links
        excluded |= policy.condemned(outcome.stage.findings, hosts) | set(outcome.bad_nodes)
    if profile.latency.enabled:
        if time.monotonic() > deadline:
            stages.append(policy.StageResult("latency", "timeout", 0.0, [], "budget exhausted before this stage"))
        else:
            outcome = _guarded("latency", _latency_stage, targets, rules, profile, collect_options, deadline,
                               excluded, perf_options, path)
            stages.append(outcome.stage)
            findings += outcome.stage.findings
    if profile.incast.enabled:  # stage 5, optional: PFC / ECN under an N-to-1 load (rdmatool.gate.incast_stage)
        from rdmatool.gate.incast_stage import incast_stage

        outcome = _guarded("incast", lambda *args: _StageOutcome(incast_stage(*args)), targets, rules, profile,
                           collect_options, deadline, excluded | policy.condemned(findings, hosts), perf_options,
                           path, analysis, max(0.0, collected_s - options.interval_s))
        stages.append(outcome.stage)
        findings += outcome.stage.findings
    if profile.nccl.enabled:  # stage 6, optional: an all_reduce with the NCCL recipe (rdmatool.gate.nccl_stage)
        from rdmatool.gate.nccl_stage import nccl_stage

        outcome = _guarded("nccl", lambda *args: _StageOutcome(nccl_stage(*args)), targets, rules, profile,
                           collect_options, deadline, excluded | policy.condemned(findings, hosts), path, analysis)
        stages.append(outcome.stage)
        findings += outcome.stage.findings
    if profile.storage.enabled:  # optional: the storage plane read many-to-one (rdmatool.gate.storage_stage)
        from rdmatool.gate.storage_stage import storage_stage

        outcome = _guarded("storage", lambda *args: _StageOutcome(storage_stage(*args)), targets, rules, profile,
                           collect_options, deadline, excluded | policy.condemned(findings, hosts), perf_options,
                           path, analysis, max(0.0, collected_s - options.interval_s))
        stages.append(outcome.stage)
        findings += outcome.stage.findings
    return _result(stages, findings, failures, missing, profile, hosts, bad_nodes, bad_links, save, start)


def _left_out(targets: list[Target], excluded: set[str]) -> tuple[list[Target], list[str], str]:
    """The hosts a perftest stage measures, the ones it leaves out, and the detail that says so."""
    hosts = [t for t in targets if t.kind is TargetKind.HOST]
    left_out = sorted(t.name for t in hosts if t.name in excluded)
    return ([t for t in hosts if t.name not in excluded], left_out,
            f"; left out {len(left_out)} unread or condemned earlier" if left_out else "")


def _bandwidth_stage(targets, rules, profile, collect_options, deadline, excluded, perf_options, bundle_path,
                     analysis=None) -> _StageOutcome:
    from rdmatool.gate import schedule_choice
    from rdmatool.perf import engine as perf_engine
    from rdmatool.perf import output as perf_output
    from rdmatool.perf.model import PerfOptions
    from rdmatool.topology.observed import links_from_analysis

    t0 = time.monotonic()
    hosts, left_out, note = _left_out(targets, excluded)
    if len(hosts) < 2:
        return _StageOutcome(policy.StageResult("bandwidth", "inconclusive", 0.0, [],
                                                f"fewer than two hosts to pair{note}", left_out))
    # The engine judges a pair against `threshold` × the line rate of the port it actually tests on (it discovers
    # that port itself: a GPU node's RoCE NIC may be slower than its InfiniBand one), so no rates are passed in.
    fraction = profile.bandwidth.min_fraction_of_line_rate
    options = PerfOptions(
        test=profile.bandwidth.test, duration_s=profile.bandwidth.duration_s, size_bytes=profile.bandwidth.size_bytes,
        qps=profile.bandwidth.qps, known_hosts=collect_options.known_hosts,
        accept_new_host_keys=collect_options.accept_new_host_keys, **perf_options,
    )
    stage_deadline = min(deadline, time.monotonic() + profile.deadlines_s["bandwidth"])
    # The schedule follows the cabling when it is known (a topology file, else what stage 1 saw), each host on the
    # leaf of the NIC its discovery picks, or rail by rail on multi-rail hosts (NIC k against NIC k); what the
    # schedule could find is reported with its results.
    with perf_engine.PerfSession(hosts, options) as session:
        choice = schedule_choice.choose(profile.bandwidth.schedule, profile.topology, [h.name for h in hosts],
                                        profile.bandwidth.rounds, options.device, devices=session.devices,
                                        observed=links_from_analysis(analysis) if analysis is not None else None,
                                        rails=session.rails)
        results, attribution = perf_engine.run_gate_perf(
            hosts, options, None, rounds=profile.bandwidth.rounds, deadline=stage_deadline, threshold=fraction,
            session=session, **choice.engine_args())
        untested_nics = session.untested(rail_aligned=bool(choice.rail_leaves))
    perf_output.write_results(results, attribution, Path(bundle_path) / "perf")
    # Which device/port each host's pairs ran on, and every RDMA NIC of a host the stage did not test, with why.
    figures = {"schedule": choice.figures(results, attribution, fraction), "nics": perf_output.nics_of(results),
               "untested_nics": untested_nics}
    schedule_choice.save(choice, figures["schedule"], Path(bundle_path) / "perf")
    cabling = schedule_choice.stage_cabling(choice.tested_leaf, choice.tested_rails(), analysis)
    findings = judge(results, attribution, rules, "bandwidth", fraction, cabling=cabling)
    duration = time.monotonic() - t0
    # the bad links a slow inter-leaf path explains are the path's finding, not links of their own
    bad = (tuple(attribution.bad_nodes), list(inter_leaf(results, attribution, fraction, cabling)[0].bad_links))
    if time.monotonic() > stage_deadline:
        return _StageOutcome(policy.StageResult("bandwidth", "timeout", duration, findings,
                                                f"budget exceeded; partial results{note}", left_out, figures), *bad)
    untested = _untested(hosts, results)
    status = policy.stage_status(findings)
    detail = f"{len(results)} pair runs" + perf_output.nics_detail(figures["nics"], untested_nics)
    if untested and status == "passed":
        status, detail = "inconclusive", f"{detail}; no successful pair for {', '.join(untested)}"
    return _StageOutcome(policy.StageResult("bandwidth", status, duration, findings, detail + note, left_out,
                                            figures), *bad)


def _latency_stage(targets, rules, profile, collect_options, deadline, excluded, perf_options, bundle_path,
                   ) -> _StageOutcome:
    """ib_send_lat / ib_write_lat pairs: p99 against the profile's ceiling, p99.9 over typical as jitter, and the
    attribution's bad nodes judged by the latency verdict rules."""
    from rdmatool.perf import engine as perf_engine
    from rdmatool.perf import output as perf_output
    from rdmatool.perf.model import PerfOptions

    t0 = time.monotonic()
    hosts, left_out, note = _left_out(targets, excluded)
    if len(hosts) < 2:
        return _StageOutcome(policy.StageResult("latency", "inconclusive", 0.0, [], f"fewer than two hosts to pair{note}",
                                                left_out))
    options = PerfOptions(test=profile.latency.test, known_hosts=collect_options.known_hosts,
                          accept_new_host_keys=collect_options.accept_new_host_keys, **perf_options)
    stage_deadline = min(deadline, time.monotonic() + profile.deadlines_s["latency"])
    results, attribution = perf_engine.run_gate_perf(hosts, options, None, rounds=1, deadline=stage_deadline)
    perf_output.write_results(results, attribution, Path(bundle_path) / "perf-latency")
    findings = judge(results, attribution, rules, "latency", latency=profile.latency)
    duration = time.monotonic() - t0
    if time.monotonic() > stage_deadline:
        return _StageOutcome(policy.StageResult("latency", "timeout", duration, findings,
                                                f"budget exceeded; partial results{note}", left_out))
    measured = [r for r in results if r.ok and r.lat]
    status = policy.stage_status(findings) if measured else "inconclusive"
    return _StageOutcome(policy.StageResult("latency", status, duration, findings,
                                            f"{len(measured)} pairs measured{note}", left_out))


def _untested(hosts: list[Target], results) -> list[str]:
    ok = {r.server for r in results if r.error is None} | {r.client for r in results if r.error is None}
    return sorted(h.name for h in hosts if h.name not in ok)
