"""The gate's nccl stage (optional; profile key `nccl: {nodes: 2, size_bytes: ...}`): does a collective reach the
fabric's line rate with the environment `rdmatool nccl env` computes, and does NCCL really use what that
environment names?

Within its own deadline (`deadlines_s.nccl`, inside the budget): the recipe of the hosts still standing, from the
state stage's facts (rdmatool.nccl.recipe); the first `nodes` of them with one; a read-only probe on each for the
nccl-tests binary and, on the first, mpirun (nccl-tests runs on several nodes only under MPI); then one short
`all_reduce_perf` started there, one process per node with that node's environment (rdmatool.commands), its output
judged by rdmatool.nccl.bench. Missing nccl-tests or MPI is `inconclusive` with the reason, never a failure of the
nodes. The run's output and figures are kept in the gate's bundle under `nccl/`.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rdmatool import commands, files
from rdmatool.collect import CollectOptions
from rdmatool.gate import policy
from rdmatool.model import Target, TargetKind
from rdmatool.table.analysis import Analysis

STAGE = "nccl"
_PROBE_S = 20.0
_SLACK_S = 10.0  # beyond the run's own bound: the SSH channel's start and the output's arrival


def nccl_stage(targets: list[Target], rules, profile, collect_options: CollectOptions, deadline: float,
               excluded: set[str], bundle_path: str, analysis: Analysis) -> policy.StageResult:
    from rdmatool.nccl import bench, recipe
    from rdmatool.rules import playbook

    t0 = time.monotonic()
    wanted = profile.nccl
    hosts = [t for t in targets if t.kind is TargetKind.HOST and t.name not in excluded]
    left_out = sorted(t.name for t in targets if t.kind is TargetKind.HOST and t.name in excluded)
    if collect_options.local:
        return policy.StageResult(STAGE, "skipped", 0.0, [], "local mode: the nccl stage reaches its nodes over SSH",
                                  left_out)
    site = playbook.site_of(rules)
    built = recipe.build(analysis.facts, analysis.targets, analysis.links, site=site, only={t.name for t in hosts})
    nodes, passed = bench.pick(built, analysis.facts, [(t.name, t.address) for t in hosts], wanted.nodes, wanted.env)
    if len(nodes) < 2:
        why = "; ".join(f"{n}: {w}" for n, w in sorted(passed.items())[:4])
        return policy.StageResult(STAGE, "inconclusive", time.monotonic() - t0, [], "fewer than two nodes with an "
                                  f"NCCL recipe{' (' + why + ')' if why else ''}", left_out)
    stage_deadline = min(deadline, t0 + profile.deadlines_s[STAGE])
    by_name = {t.name: t for t in hosts}
    remotes = _connect([by_name[n.name] for n in nodes], collect_options)
    try:
        missing = _probe(remotes, wanted.binary, nodes[0].name)
        if missing:
            return policy.StageResult(STAGE, "inconclusive", time.monotonic() - t0, [], missing, left_out,
                                      figures=_figures(nodes, None, wanted))
        limit = int(stage_deadline - time.monotonic() - _SLACK_S)
        if limit < 5:
            return policy.StageResult(STAGE, "timeout", time.monotonic() - t0, [],
                                      "budget too short for the nccl stage's run", left_out)
        command = commands.nccl_tests_command([(n.address, n.env) for n in nodes], wanted.binary, wanted.size_bytes,
                                              wanted.gpus_per_node, wanted.iterations, wanted.warmup, limit)
        ran = remotes[nodes[0].name].run(command, timeout=limit + _SLACK_S)
    finally:
        for remote in remotes.values():
            if hasattr(remote, "close"):
                remote.close()
    text = ran.stdout + ("\n" + ran.stderr if ran.stderr.strip() else "")
    outcome = bench.read(text)
    if ran.timed_out:
        outcome.errors.append(f"no answer within {limit} s")
    findings = bench.judge(nodes, built, outcome, rules, site)
    figures = _figures(nodes, outcome, wanted)
    _save(bundle_path, text, figures)
    detail = bench.summary(nodes, outcome)
    status = policy.stage_status(findings)
    if status == "passed" and outcome.busbw_gbps is None:
        status = "inconclusive"  # a run that measured nothing vouches for nothing (its errors are in the detail)
    elif status == "passed" and bench.line_gbps(nodes) is None:
        status, detail = "inconclusive", f"{detail}; no rail rate read to judge it against"
    return policy.StageResult(STAGE, status, time.monotonic() - t0, findings, detail, left_out, figures)


def _connect(nodes: list[Target], options: CollectOptions) -> dict:
    """node → its Remote, or the one-line reason it could not be reached."""
    from rdmatool.perf.remote import Remote
    from rdmatool.transport.hostkeys import KnownHosts
    from rdmatool.transport.jump import JumpHosts
    from rdmatool.transport.ssh import describe_connect_error

    known, jumps = KnownHosts(options.known_hosts, options.accept_new_host_keys), JumpHosts()

    def one(target: Target):
        try:
            return Remote(target, known, options.connect_timeout, jumps)
        except Exception as exc:  # noqa: BLE001 - an unreachable node is the stage's reason, not its crash
            return describe_connect_error(target, exc)

    with ThreadPoolExecutor(max_workers=len(nodes)) as pool:
        return dict(zip((t.name for t in nodes), pool.map(one, nodes), strict=True))


def _probe(remotes: dict, binary: str, launcher: str) -> str | None:
    """Why the run cannot start (a node unreachable, nccl-tests or mpirun missing), or None."""
    probe = commands.nccl_tests_probe_command(binary)
    problems = []
    for name, remote in remotes.items():
        if isinstance(remote, str):
            problems.append(remote)
            continue
        answer = remote.run(probe, timeout=_PROBE_S)
        found = {line.split(" ", 1)[1] for line in answer.stdout.splitlines() if line.startswith("found ")}
        if answer.timed_out:
            problems.append(f"{name}: the nccl-tests probe did not answer within {_PROBE_S:g} s")
            continue
        if binary not in found:
            problems.append(f"{name}: {binary} (nccl-tests) not installed")
        if name == launcher and "mpirun" not in found:
            problems.append(f"{name}: mpirun not installed (nccl-tests runs on several nodes only under MPI)")
    return "; ".join(problems) or None


def _figures(nodes, outcome, wanted) -> dict:
    """What the stage ran and measured, for --json: the recipe each node ran with is named there."""
    from rdmatool.nccl import bench

    out = {"run": bench.run_name(nodes), "launcher": nodes[0].name, "nodes": [n.as_json() for n in nodes],
           "recipe": bench.recipe_text(nodes), "overrides": dict(wanted.env), "size_bytes": wanted.size_bytes,
           "gpus_per_node": wanted.gpus_per_node, "line_gbps": bench.line_gbps(nodes)}
    if outcome is not None:
        line = out["line_gbps"]
        out.update(busbw_gbps=outcome.busbw_gbps, avg_busbw_gbps=outcome.avg_busbw_gbps,
                   efficiency=round(outcome.busbw_gbps / line, 4) if outcome.busbw_gbps is not None and line else None,
                   errors=list(dict.fromkeys(outcome.errors)),
                   processes=[{"host": p.host, "network": p.net, "transport": p.transport, "devices": p.devices,
                               "gid_indexes": sorted(p.gid_indexes)} for p in outcome.processes])
    return out


def _save(bundle_path: str, text: str, figures: dict) -> None:
    out = Path(bundle_path) / STAGE
    out.mkdir(parents=True, exist_ok=True)
    files.write_atomic(out / "all_reduce_perf.txt", text.encode())
    files.write_atomic(out / "run.json", json.dumps(figures, indent=1, default=str).encode())


def replay_nccl(bundle_path: str, rules, analysis: Analysis) -> policy.StageResult | None:
    """The nccl stage judged again from a saved gate bundle (`nccl/run.json` and the run's output, against the
    recipe the bundle's facts give); None when the gate ran none. A record of the wrong shape is a BundleError
    naming the file."""
    from rdmatool.errors import BundleError
    from rdmatool.nccl import bench, recipe
    from rdmatool.rules import playbook

    root = Path(bundle_path) / STAGE
    record_path, output_path = root / "run.json", root / "all_reduce_perf.txt"
    if not record_path.is_file():
        return None
    try:
        record = json.loads(files.read_regular_text(record_path, errors="strict"))
        text = files.read_regular_text(output_path, errors="replace")
        ran = [(n["host"], {str(k): str(v) for k, v in n["env"].items()}, n["line_gbps"]) for n in record["nodes"]]
    except files.UnsafeFileError as exc:
        raise BundleError(f"{root}: {exc.reason}; not read") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise BundleError(f"{record_path}: unreadable nccl run record ({type(exc).__name__})") from None
    site = playbook.site_of(rules)
    built = recipe.build(analysis.facts, analysis.targets, analysis.links, site=site, only={n for n, _, _ in ran})
    recipes = {h.name: h for h in built.hosts}
    nodes = [bench.Node(name, "", recipes[name], env, line) for name, env, line in ran if name in recipes]
    if len(nodes) < max(2, len(ran)):
        return policy.StageResult(STAGE, "inconclusive", 0.0, [], "the bundle gives no NCCL recipe for "
                                  + ", ".join(n for n, _, _ in ran if n not in recipes) + " (recorded)")
    outcome = bench.read(text)
    findings = bench.judge(nodes, built, outcome, rules, site)
    status = policy.stage_status(findings)
    if status == "passed" and (outcome.busbw_gbps is None or bench.line_gbps(nodes) is None):
        status = "inconclusive"
    return policy.StageResult(STAGE, status, 0.0, findings, bench.summary(nodes, outcome) + " (recorded)",
                              figures=_figures(nodes, outcome, _Recorded(record)))


class _Recorded:
    """The profile values a recorded run kept, as `_figures` reads them from the live profile."""

    def __init__(self, record: dict) -> None:
        self.env = record.get("overrides") or {}
        self.size_bytes, self.gpus_per_node = record.get("size_bytes"), record.get("gpus_per_node")
