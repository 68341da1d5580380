"""The gate's storage stage (optional; profile key `storage: {clients_per_node: 4, duration_s: 10}`): the storage
plane read at the rate the fabric promises, and what those reads do to the compute class.

Within its own deadline (`deadlines_s.storage`, inside the budget): the compute hosts (role compute) read each
storage node (role storage) many-to-one, `clients_per_node` at once, rotating from round to round, through every
NIC of the node (`test`: ib_read_bw, ib_write_bw for the write path); the storage nodes, their clients and their
switches are read before and after (rdmatool.perf.storage_run, as `perf run --mode storage` does). Judged by the
storage rules of the playbooks (playbooks/80-storage.yaml): a slow storage node (below `slow_share_of_median` of
the fleet's median share of line rate), the fleet below the reference line, the compute class paused during the
reads. The reads and the figures are kept in the gate's bundle under `storage/`. A stage that cannot fit its rounds
and both reads in what is left of the budget is not started: `timeout`, inconclusive rather than failed. A saved
gate bundle's storage stage is judged again from the facts it recorded (`replay_storage`).
"""

from __future__ import annotations

import time
from pathlib import Path

from rdmatool.gate import policy
from rdmatool.model import Target, TargetKind
from rdmatool.perf import incast, load_reads, storage, storage_run
from rdmatool.rules import playbook
from rdmatool.table.analysis import Analysis
from rdmatool.topology.observed import links_from_analysis

STAGE = "storage"
_MIN_READ_S = 15.0  # one read of the loaded targets: as the incast stage gives it (twice the state read, at least)


def storage_stage(targets: list[Target], rules, profile, collect_options, deadline: float, excluded: set[str],
                  perf_options: dict, bundle_path: str, analysis: Analysis, read_s: float) -> policy.StageResult:
    """The stage's result; `analysis` is the state stage's (its cabling), `read_s` how long that read took."""
    from rdmatool.perf.engine import PerfSession
    from rdmatool.perf.model import PerfOptions

    t0 = time.monotonic()
    wanted = profile.storage
    hosts = [t for t in targets if t.kind is TargetKind.HOST and t.name not in excluded]
    left_out = sorted(t.name for t in targets if t.kind is TargetKind.HOST and t.name in excluded)
    nodes = [t.name for t in hosts if t.role == "storage"]
    clients = [t.name for t in hosts if t.role == "compute"]
    try:
        rounds = storage.plan(nodes, clients, wanted.clients_per_node)
    except ValueError as exc:
        return policy.StageResult(STAGE, "inconclusive", 0.0, [], f"{exc} (the inventory's role: storage and role: "
                                  "compute name them)", left_out)
    options = PerfOptions(test=wanted.test, duration_s=wanted.duration_s, size_bytes=wanted.size_bytes,
                          qps=wanted.qps, known_hosts=collect_options.known_hosts,
                          accept_new_host_keys=collect_options.accept_new_host_keys, **perf_options)
    stage_deadline = min(deadline, t0 + profile.deadlines_s[STAGE])
    read = min(float(profile.deadlines_s["state"]), max(_MIN_READ_S, 2 * read_s))
    need = 2 * read + len(rounds) * incast.needed_s(options)
    if t0 + need > stage_deadline:
        return policy.StageResult(STAGE, "timeout", 0.0, [], f"budget too short for the storage stage (needs about "
                                  f"{need:.0f} s, {max(0.0, stage_deadline - t0):.0f} s left)", left_out)
    loaded = {n for r in rounds for g in r for n in g.members}
    out = Path(bundle_path) / STAGE
    with PerfSession([t for t in hosts if t.name in loaded], options) as session:
        done = storage_run.measure(
            session, rounds, targets=targets, links=links_from_analysis(analysis),
            read_options=load_reads.options(collect_options, read), folder=out,
            priority=int(playbook.site_of(rules)["roce_priority"]), reference=_reference(rules),
            slow_share=wanted.slow_share_of_median, roles={t.name: t.role for t in targets},
            deadline=stage_deadline - read)
    done.write(out / "results.json")
    findings = storage.findings(done.rows, [r for r in rules if policy.stage_of(r) == "bandwidth"])
    detail = _summary(done)
    if time.monotonic() > stage_deadline:
        return policy.StageResult(STAGE, "timeout", time.monotonic() - t0, findings,
                                  f"budget exceeded; partial results: {detail}", left_out, figures=_figures(done))
    status = policy.stage_status(findings)
    unmeasured = sorted(n["node"] for n in done.figures["nodes"] if not n["complete"])
    if unmeasured and status == "passed":
        status, detail = "inconclusive", f"{detail}; not measured in full: {', '.join(unmeasured)}"
    return policy.StageResult(STAGE, status, time.monotonic() - t0, findings, detail, left_out,
                              figures=_figures(done))


def replay_storage(bundle_path: str, rules) -> policy.StageResult | None:
    """The storage stage judged again from a saved gate bundle (`storage/results.json`: the facts the live stage
    judged, with the rules given now); None when the bundle holds no storage run. A record that cannot be read or
    holds no list of facts is a BundleError naming the file."""
    import json

    from rdmatool import files
    from rdmatool.errors import BundleError

    path = Path(bundle_path) / STAGE / "results.json"
    if not path.is_file():
        return None
    try:
        record = json.loads(files.read_regular_text(path, errors="strict"))
        rows, figures = record["facts"], record["figures"]
        if not isinstance(rows, list) or not all(isinstance(r, dict) and "metric" in r for r in rows):
            raise ValueError("facts")
    except (OSError, ValueError, KeyError, TypeError, files.UnsafeFileError) as exc:
        raise BundleError(f"{path}: unreadable storage results ({type(exc).__name__})") from None
    findings = storage.findings(rows, [r for r in rules if policy.stage_of(r) == "bandwidth"])
    done = storage_run.StorageRun([], [], figures, record.get("pauses"), rows)
    return policy.StageResult(STAGE, policy.stage_status(findings), 0.0, findings, _summary(done) + " (recorded)",
                              figures=_figures(done))


def _reference(rules) -> float | None:
    """The fleet's reference efficiency as the playbooks state it (storage_fleet_below_reference's value)."""
    rule = next((r for r in rules if r.id == "storage_fleet_below_reference"), None)
    value = rule.params.get("value") if rule is not None else None
    return float(value) if isinstance(value, (int, float)) else None


def _figures(done: storage_run.StorageRun) -> dict:
    return {"nodes": done.figures["nodes"], "fleet": done.figures["fleet"], "pauses": done.pauses}


def _summary(done: storage_run.StorageRun) -> str:
    def node(n: dict) -> str:
        share = "-" if n["share"] is None else f"{100 * n['share']:.0f} %"
        return f"{n['node']} {share}" + (" SLOW" if n["slow"] else "")

    fleet = done.figures["fleet"]
    said = ", ".join(node(n) for n in done.figures["nodes"])
    if fleet["efficiency"] is not None:
        said += f"; fleet {100 * fleet['efficiency']:.1f} % of line rate"
    if done.pauses is not None:
        paused = done.pauses["paused"]
        said += (f"; compute class (priority {done.pauses['priority']}) paused on {len(paused)} port(s)" if paused
                 else f"; compute class (priority {done.pauses['priority']}) not paused")
    return said
