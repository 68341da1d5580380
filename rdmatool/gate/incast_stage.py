"""The gate's incast stage (optional; profile key `incast: {fan_in: 4, duration_s: 10}`): PFC and ECN validated
under load, which a quiet fabric never shows.

Within its own deadline (`deadlines_s.incast`, inside the budget): discover the hosts' test ports, plan one group per
leaf from the cabling the state stage read (rdmatool.perf.incast), read the group's hosts and leaves once (the
ordinary collection, one snapshot), run every group's load at once, read them again, and judge the figures
(rdmatool.perf.incast_figures) with the incast rules of the playbooks (playbooks/45-incast.yaml). The two reads and
the load results are kept in the gate's bundle under `incast/`. A stage that cannot fit its load and both reads in
what is left of the budget is not started: `timeout`, so the gate is inconclusive rather than failed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd

from rdmatool import files
from rdmatool.collect import CollectOptions
from rdmatool.gate import policy
from rdmatool.model import Target, TargetKind
from rdmatool.perf import incast, load_reads
from rdmatool.perf import incast_figures as figures_of
from rdmatool.rules import engine
from rdmatool.table.analysis import Analysis, analyse_path, grown_by
from rdmatool.table.facts import plain
from rdmatool.topology.observed import links_from_analysis
from rdmatool.tune import SUGGESTERS

STAGE = "incast"
# One read of the group's targets is given twice what the state stage's read took (the load's sessions are still
# closing when the second read starts), at least _MIN_READ_S, at most the state stage's own deadline.
_MIN_READ_S = 15.0


def incast_stage(targets: list[Target], rules, profile, collect_options: CollectOptions, deadline: float,
                 excluded: set[str], perf_options: dict, bundle_path: str, analysis: Analysis,
                 read_s: float) -> policy.StageResult:
    """The stage's result; `analysis` is the state stage's (its cabling), `read_s` how long that read took."""
    from rdmatool.perf.engine import PerfSession
    from rdmatool.perf.model import PerfOptions

    t0 = time.monotonic()
    wanted = profile.incast
    hosts = [t for t in targets if t.kind is TargetKind.HOST and t.name not in excluded]
    left_out = sorted(t.name for t in targets if t.kind is TargetKind.HOST and t.name in excluded)
    if len(hosts) < 2:
        return policy.StageResult(STAGE, "inconclusive", 0.0, [], "fewer than two hosts to load", left_out)
    options = PerfOptions(test=wanted.test, duration_s=wanted.duration_s, size_bytes=wanted.size_bytes,
                          qps=wanted.qps, known_hosts=collect_options.known_hosts,
                          accept_new_host_keys=collect_options.accept_new_host_keys, **perf_options)
    stage_deadline = min(deadline, t0 + profile.deadlines_s[STAGE])
    read = min(float(profile.deadlines_s["state"]), max(_MIN_READ_S, 2 * read_s))
    need = 2 * read + incast.needed_s(options)
    if t0 + need > stage_deadline:
        return policy.StageResult(STAGE, "timeout", 0.0, [], f"budget too short for the incast stage (needs about "
                                  f"{need:.0f} s, {max(0.0, stage_deadline - t0):.0f} s left)", left_out)
    with PerfSession(hosts, options) as session:
        infos = {name: state.info for name, state in session.hosts.items() if state.info is not None}
        unusable = sorted(f"{n} ({s.error or s.unusable})" for n, s in session.hosts.items() if s.info is None)
        groups = incast.plan(sorted(infos), incast.cabling_of(links_from_analysis(analysis), infos), wanted.fan_in)
        if not groups:
            return policy.StageResult(STAGE, "inconclusive", time.monotonic() - t0, [], "no leaf with two hosts to "
                                      "load" + (f"; not loaded: {', '.join(unusable)}" if unusable else ""), left_out)
        names = {n for g in groups for n in g.members} | {g.switch for g in groups if g.switch}
        members = [t for t in targets if t.name in names]
        out = Path(bundle_path) / "incast"
        read_options = load_reads.options(collect_options, read)
        before = load_reads.read(members, read_options, out / "before")
        results = incast.run(session, groups, stage_deadline - read)
        after = load_reads.read(members, read_options, out / "after")
    first, last = analyse_path(before), analyse_path(after)
    figures = [figures_of.group_figures(g, results, infos, first, last, float(options.duration_s)) for g in groups]
    findings = _judge(figures, last, rules)
    files.write_atomic(out / "results.json", json.dumps(
        {"groups": figures, "results": [r.as_dict() for r in results]}, indent=1, default=str).encode())
    duration = time.monotonic() - t0
    detail = "; ".join(_summary(f) for f in figures) + (f"; not loaded: {', '.join(unusable)}" if unusable else "")
    if time.monotonic() > stage_deadline:
        status, detail = "timeout", f"budget exceeded; partial results: {detail}"
    else:
        status = policy.stage_status(findings)
        unmeasured = sorted(r.client for r in results if not r.ok)
        if unmeasured and status == "passed":
            status, detail = "inconclusive", f"{detail}; no goodput from {', '.join(unmeasured)}"
    return policy.StageResult(STAGE, status, duration, findings, detail, left_out, figures={"groups": figures})


def _judge(figures: list[dict], last: Analysis, rules) -> list:
    """The incast rules over the figures' facts, beside the after-load read (for the suggesters)."""
    meta = {t: (k, p, r) for t, k, p, r in plain(last.facts[["target", "kind", "platform", "role"]]
            .drop_duplicates("target")).itertuples(index=False)}
    rows = figures_of.facts(figures, meta)
    return engine.evaluate(_with(last, rows), [r for r in rules if policy.stage_of(r) == STAGE],
                           suggesters=SUGGESTERS)


_GROUP_KEYS = {"name", "receiver", "switch", "port", "duration_s", "fan_in", "goodput_gbps", "goodput_efficiency",
               "fairness", "pause_fraction", "ecn_mark_ratio", "cnp_sent", "cnp_handled", "cnp_ignored",
               "receiver_figures", "sender_figures"}


def replay_incast(bundle_path: str, rules) -> policy.StageResult | None:
    """The incast stage judged again from a saved gate bundle (`incast/results.json` and the after-load read);
    None when the bundle holds no incast. A record of the wrong shape is a BundleError naming the file."""

    root = Path(bundle_path) / STAGE
    groups = incast.saved_groups(root / "results.json", _GROUP_KEYS)
    if groups is None:
        return None
    findings = _judge(groups, analyse_path(root / "after"), rules)
    return policy.StageResult(STAGE, policy.stage_status(findings), 0.0, findings,
                              "; ".join(_summary(g) for g in groups) + " (recorded)", figures={"groups": groups})


def _with(analysis: Analysis, rows: list[dict]) -> Analysis:
    """The after-load analysis plus the incast facts: the rules read the figures, the suggesters the settings and
    the cabling around them."""
    extra = pd.DataFrame(rows, columns=analysis.facts.columns).astype(
        {"value": float, "window_s": float, "delta": float, "priority": "Int64", "size_bytes": "Int64"})
    return grown_by(analysis, extra)


def _summary(g: dict) -> str:
    def pct(value) -> str:
        return "-" if value is None else f"{100 * value:.1f} %"

    gbps = "-" if g["goodput_gbps"] is None else f"{g['goodput_gbps']:.1f} Gb/s"
    return (f"{g['name']} fan-in {g['fan_in']}: {gbps}, fairness "
            f"{'-' if g['fairness'] is None else format(g['fairness'], '.3f')}, paused {pct(g['pause_fraction'])}, "
            f"marked {pct(g['ecn_mark_ratio'])}")
