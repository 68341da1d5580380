"""Gate benchmark: the gate's bandwidth stage (3 seeded rounds + a confirmation round) against all-pairs, on a
simulated fabric with one bad node and one bad link. Goal: the bad node found in at most 3 rounds (all-pairs
needs n-1 = 63 rounds for 64 nodes).

    python benchmarks/gate.py            # 64 hosts (48 GPU + 16 storage), 2 alternated runs of each (~10-20 min)
    python benchmarks/gate.py --quick    # 8 hosts, 1 run of each (< 1 min on an idle machine)

Needs root and openssh-server (the simulated fabric of tests/fabric). Faults: `slow_node` on gpu17 (x0.5 with
everyone) and `slow_link` gpu05<->gpu40 (x0.3 between those two only); --quick: gpu03 and gpu01<->gpu05.
The fabric has no switches (host-to-host perftest only). Bounds are widened (server ready wait 10 s, slack 10 s):
they only cap waits, and on a loaded 2-core machine the 3 s defaults time out perftest shims that are merely
slow to start, which would be load noise, not fabric faults.
perftest durations are scaled down by the simulator's shim (0.05 s per simulated second): the gate profile's
defaults are kept (ib_write_bw, -D 5, 1 MiB, 2 QPs, threshold 0.9 x line rate) with a 3 s slack.

Measured per run: rounds run (sub-rounds of a split confirmation round counted separately), pair runs, wall time
(discovery included; one SSH session per host for the whole run), the attribution's bad nodes and bad links, and
- replaying the attribution over the first k rounds of the recorded results - the round after which the bad node
(and the bad link) is first attributed.

Engines: gate = rdmatool.perf.engine.run_gate_perf(rounds=3, seed=0); all-pairs =
run_schedule(schedule.all_pairs(hosts)) + attribution.attribute.

Schedules against a model of the fabric (no sshd, seconds):

    python benchmarks/gate.py --model                  # 64 hosts on 4 and on 16 leaves, 2 rails, 200 trials
    python benchmarks/gate.py --model --trials 20 --leaves 4

The model (tests/perf/fabric_model.py): hosts spread evenly over the leaves, NIC k of every host on the host's
leaf; a healthy pair measures 96.5 % of line rate +-2 %, a pair crossing the fault 40 % +-2 %. Per schedule -
topology (schedule.rail_plan: 3 rounds per rail, more if the leaf pairs need them), random (the gate's
schedule.gate_rounds, 3 rounds per rail, each rail its own seed) and all-pairs (63 rounds per rail) - rails side
by side, each followed by its confirmation round (topology-aware for all three: without the cabling nothing can
name an inter-leaf link): the exposure computed from the plan (rdmatool.perf.exposure, averaged over the trials'
schedule seeds) and, over seeded trials, the measured detection rate: one fault of each kind placed at random, the
plan run on the model, attributed and localised; detected when the fault is named as what it is.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import _common
from _common import fmt_ms, median_spread


def first_round_found(results, expected, node: str, link: tuple[str, str]) -> tuple[int | None, int | None]:
    """(rounds needed to attribute `node` as bad, rounds needed to attribute `link` as bad), replaying the results
    round by round; None if never."""
    from rdmatool.perf.attribution import attribute

    rounds = sorted({r.round for r in results})
    node_at = link_at = None
    for k, last in enumerate(rounds, start=1):
        att = attribute([r for r in results if r.round <= last], expected, 0.9)
        if node_at is None and node in att.bad_nodes:
            node_at = k
        if link_at is None and tuple(sorted(link)) in att.bad_links:
            link_at = k
        if node_at and link_at:
            break
    return node_at, link_at


def coverage(nodes: list[str], link: tuple[str, str], rounds: int, seeds: int) -> tuple[bool, float, float]:
    """(is the link among gate_rounds(seed=0)'s pairs, share of all pairs those rounds cover, share of seeds
    0..seeds-1 whose rounds pair the link's two ends)."""
    from rdmatool.perf.schedule import gate_rounds

    def pairs(seed: int) -> set[frozenset]:
        return {frozenset(p) for r in gate_rounds(nodes, rounds=rounds, seed=seed) for p in r}

    chosen = pairs(0)
    n = len(nodes)
    hit = sum(frozenset(link) in pairs(s) for s in range(seeds))
    return frozenset(link) in chosen, len(chosen) / (n * (n - 1) / 2), hit / seeds


def main() -> int:
    if "--model" in sys.argv[1:]:
        return model_main([a for a in sys.argv[1:] if a != "--model"])
    return fabric_main()


def fabric_main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="store_true", help="schedules against a model of the fabric (no sshd)")
    ap.add_argument("--quick", action="store_true", help="8 hosts, 1 run of each")
    ap.add_argument("--hosts", type=int, default=None, help="hosts (default 64; --quick 8)")
    ap.add_argument("--runs", type=int, default=None, help="alternated runs of each engine (default 2; --quick 1)")
    ap.add_argument("--rounds", type=int, default=3, help="the gate's rounds (profile default 3)")
    ap.add_argument("--json", help="also write the raw figures to this file")
    args = ap.parse_args()
    hosts = args.hosts or (8 if args.quick else 64)
    runs = args.runs or (1 if args.quick else 2)

    from rdmatool import inventory
    from rdmatool.model import TargetKind
    from rdmatool.perf import engine
    from rdmatool.perf.attribution import attribute
    from rdmatool.perf.model import PerfOptions
    from rdmatool.perf.schedule import all_pairs, split_conflicts
    from tests.fabric import scenario
    from tests.fabric.fixtures import missing_prerequisite
    from tests.fabric.server import start

    reason = missing_prerequisite()
    if reason:
        print(f"gate benchmark: the simulated fabric cannot run here: {reason}", file=sys.stderr)
        return 2
    info = _common.machine()
    _common.print_machine(info)
    bad_node = "gpu03" if hosts <= 16 else "gpu17"
    bad_link = ("gpu01", "gpu05") if hosts <= 16 else ("gpu05", "gpu40")
    faults = [{"kind": "slow_node", "target": bad_node, "value": 0.5},
              {"kind": "slow_link", "target": bad_link[0], "peer": bad_link[1], "value": 0.3}]
    sc = scenario.build(hosts, faults=faults, platforms=(), name=f"bench-gate-{hosts}")
    names = [h.name for h in sc.hosts]
    fabric = start(sc)
    results_by_engine: dict[str, list[dict]] = {"gate": [], "all-pairs": []}
    try:
        targets = [t for t in inventory.select(inventory.load(fabric.inventory_path))
                   if t.kind is TargetKind.HOST]
        options = PerfOptions(duration_s=5, size_bytes=1048576, qps=2, slack_s=10.0, server_ready_s=10.0,
                              known_hosts=str(fabric.known_hosts), forks=64)
        print(f"         {hosts} hosts; bad node {bad_node} (slow_node x0.5), bad link {bad_link[0]}<->{bad_link[1]} "
              f"(slow_link x0.3); ib_write_bw -D 5 (scaled to 0.25 s), 1 MiB, 2 QPs; {runs} run(s) of each")

        def run_gate() -> dict:
            t0 = time.perf_counter()
            results, att = engine.run_gate_perf(targets, options, None, rounds=args.rounds, threshold=0.9, seed=0)
            wall = time.perf_counter() - t0
            with engine.PerfSession(targets, options) as s:  # the rates the gate judged against (discovery only)
                expected = s.expected_gbps()
            return summarise("gate", results, att, expected, wall)

        def run_all_pairs() -> dict:
            t0 = time.perf_counter()
            with engine.PerfSession(targets, options) as session:
                results = engine.run_schedule(targets, all_pairs([t.name for t in targets]), options,
                                              session=session)
                expected = session.expected_gbps()
            att = attribute(results, expected, 0.9)
            wall = time.perf_counter() - t0
            return summarise("all-pairs", results, att, expected, wall)

        def summarise(name: str, results, att, expected, wall: float) -> dict:
            errors = sorted({r.error.split(":")[0] + ": " + r.error.split(":", 1)[-1][:80] for r in results if r.error})
            for e in errors[:3]:
                print(f"    {name} pair error: {e}")
            runs_of_round: dict[int, int] = {}
            for r in results:
                runs_of_round[r.round] = runs_of_round.get(r.round, 0) + 1
            # sub-rounds: a round in which a node appears twice ran as several conflict-free sub-rounds
            sub_rounds = 0
            for rnd in sorted(runs_of_round):
                sub_rounds += len(split_conflicts([(r.server, r.client) for r in results if r.round == rnd]))
            node_at, link_at = first_round_found(results, expected, bad_node, bad_link)
            return {
                "engine": name, "wall_s": wall, "rounds": len(runs_of_round), "sub_rounds": sub_rounds,
                "pair_runs": len(results), "errors": sum(1 for r in results if r.error),
                "bad_nodes": list(att.bad_nodes), "bad_links": [list(x) for x in att.bad_links],
                "suspects": list(att.suspects), "node_found": bad_node in att.bad_nodes,
                "link_found": tuple(sorted(bad_link)) in att.bad_links, "node_after_rounds": node_at,
                "link_after_rounds": link_at,
            }

        for index in range(runs):
            order = [("gate", run_gate), ("all-pairs", run_all_pairs)]
            if index % 2:
                order.reverse()
            for name, fn in order:
                fig = fn()
                results_by_engine[name].append(fig)
                print(f"run {index + 1}/{runs} {name:9s} wall {fig['wall_s']:7.1f} s  rounds {fig['rounds']} "
                      f"(sub-rounds {fig['sub_rounds']})  pair runs {fig['pair_runs']}  errors {fig['errors']}  "
                      f"bad nodes {fig['bad_nodes']}  bad links {fig['bad_links']}  suspects {fig['suspects']}  "
                      f"node after {fig['node_after_rounds']} round(s), link after {fig['link_after_rounds']}",
                      flush=True)
    finally:
        fabric.stop()

    covered, share, by_seed = coverage(names, bad_link, args.rounds, 2000)
    print()
    print(f"{hosts} hosts, median [min-max] of {runs} run(s)")
    print(f"{'engine':10s} {'rounds':>7s} {'sub':>4s} {'pair runs':>9s} {'wall s':>26s}  node found (after k rounds)"
          f"  link found (after k rounds)")
    for name, figs in results_by_engine.items():
        f0 = figs[0]
        print(f"{name:10s} {f0['rounds']:7d} {f0['sub_rounds']:4d} {f0['pair_runs']:9d} "
              f"{fmt_ms([f['wall_s'] for f in figs]):>26s}  "
              f"{'/'.join('yes' if f['node_found'] else 'no' for f in figs)} ({f0['node_after_rounds']})"
              f"{'':14s}{'/'.join('yes' if f['link_found'] else 'no' for f in figs)} ({f0['link_after_rounds']})")
    g, a = results_by_engine["gate"], results_by_engine["all-pairs"]
    ratio = median_spread([f["wall_s"] for f in g])[0] / median_spread([f["wall_s"] for f in a])[0]
    node_at = g[0]["node_after_rounds"]
    print(f"gate / all-pairs wall: {ratio:.3f}; pair runs {g[0]['pair_runs']} vs {a[0]['pair_runs']}")
    print(f"goal (bad node attributed within 3 rounds): {'met' if node_at is not None and node_at <= 3 else 'MISSED'}"
          f" - gate after {node_at} round(s), all-pairs after {a[0]['node_after_rounds']} of {a[0]['rounds']}")
    print(f"bad link {bad_link[0]}<->{bad_link[1]}: paired by the gate's {args.rounds} rounds (seed 0): "
          f"{'yes' if covered else 'no'}; those rounds cover {share:.1%} of the {hosts * (hosts - 1) // 2} pairs; "
          f"over seeds 0..1999 the link is paired in {by_seed:.1%} of gate runs "
          f"(expected {args.rounds}/{hosts - 1 if hosts % 2 == 0 else hosts} = "
          f"{args.rounds / (hosts - 1 if hosts % 2 == 0 else hosts):.1%})")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": info, "hosts": hosts, "runs": runs,
                                               "results": results_by_engine, "link_covered": covered,
                                               "pair_share": share, "link_hit_rate": by_seed}, indent=1))
    return 0


# ------------------------------------------------------------------------------------- schedules on a model

PLAN_ROUNDS = 3


def plans(kind: str, fabric: dict, seed: int) -> dict:
    """rail -> rounds of one schedule kind, for one trial's seed."""
    from rdmatool.perf import schedule

    if kind == "topology":
        return {rail: schedule.topology_rounds(leaf_of, PLAN_ROUNDS, seed * 31 + i)
                for i, (rail, leaf_of) in enumerate(fabric.items())}
    if kind == "random":
        return {rail: schedule.gate_rounds(list(leaf_of), PLAN_ROUNDS, seed * 31 + i)
                for i, (rail, leaf_of) in enumerate(fabric.items())}
    return {rail: schedule.all_pairs(sorted(leaf_of)) for rail, leaf_of in fabric.items()}


def rounds_to(plan: dict, fabric: dict, goal: float = 0.99) -> dict:
    """Per fault kind: the fewest rounds of this plan (prefix, + the confirmation) whose computed exposure reaches
    `goal`; None when the whole plan does not."""
    from rdmatool.perf import exposure

    out: dict = dict.fromkeys(exposure.KINDS)
    longest = max(len(r) for r in plan.values())
    for k in range(1, longest + 1):
        figures = exposure.exposure({rail: rounds[:k] for rail, rounds in plan.items()}, fabric)
        for kind in exposure.KINDS:
            p = figures[kind]["probability"]
            if out[kind] is None and p is not None and p >= goal:
                out[kind] = k
        if all(out[kind] is not None or figures[kind]["probability"] is None for kind in exposure.KINDS):
            break
    return out


def model_case(hosts: int, leaves: int, rails: int, trials: int, seed: int) -> list[dict]:
    import random

    from rdmatool.perf import exposure, schedule
    from rdmatool.perf.localise import localise
    from rdmatool.topology import placement
    from tests.perf import fabric_model

    fabric = schedule.rails(placement(fabric_model.links(hosts, leaves, rails)))
    candidates = exposure.candidates(fabric)
    rows = []
    for kind in ("topology", "random", "all-pairs"):
        n = trials if kind != "all-pairs" else min(trials, 20)  # all-pairs is one fixed plan; 20 trials say it
        rng = random.Random(seed)
        computed = {k: [] for k in exposure.KINDS}
        detected = {k: 0 for k in exposure.KINDS}
        confirm_runs: list[int] = []
        rounds = pair_runs = 0
        t0 = time.perf_counter()
        for trial in range(n):
            plan = plans(kind, fabric, seed + trial)
            figures = exposure.exposure(plan, fabric)
            rounds, pair_runs = figures["rounds"], figures["pair_runs"]
            for fault_kind in exposure.KINDS:
                if not candidates[fault_kind]:
                    continue
                computed[fault_kind].append(figures[fault_kind]["probability"])
                fault = rng.choice(candidates[fault_kind])
                runs, confirmed = fabric_model.run_plan(plan, fabric, fault_kind, fault, rng)
                confirm_runs.append(confirmed)
                detected[fault_kind] += fabric_model.named(fault_kind, fault,
                                                           localise(runs, fabric))
        wall = time.perf_counter() - t0
        rows.append({
            "hosts": hosts, "leaves": leaves, "rails": rails, "schedule": kind, "trials": n,
            "rounds": rounds, "pair_runs": pair_runs,
            "confirmation_pair_runs_mean": round(sum(confirm_runs) / len(confirm_runs), 1),
            "computed": {k: round(sum(v) / len(v), 4) if v else None for k, v in computed.items()},
            "measured": {k: round(detected[k] / n, 4) if computed[k] else None for k in exposure.KINDS},
            "rounds_to_99": rounds_to(plans(kind, fabric, seed), fabric), "wall_s": round(wall, 2),
        })
    return rows


def model_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="pair schedules against a model of the fabric (no sshd)")
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--leaves", default="4,16", help="comma-separated leaf counts, one table row group each")
    ap.add_argument("--rails", type=int, default=2, help="NICs per host (rail k of every host on its leaf)")
    ap.add_argument("--trials", type=int, default=200, help="seeded trials per schedule (all-pairs: at most 20)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the raw figures to this file")
    args = ap.parse_args(argv)
    if args.trials < 20:
        print("gate benchmark: --trials below 20 says too little about a detection rate", file=sys.stderr)
        return 2
    info = _common.machine(("rdmatool", "pandas", "numpy"))
    _common.print_machine(info)
    rows = []
    for leaves in (int(x) for x in args.leaves.split(",")):
        rows += model_case(args.hosts, leaves, args.rails, args.trials, args.seed)
    kinds = (("bad_node", "node"), ("bad_inter_leaf_link", "inter-leaf link"), ("bad_rail_nic", "rail NIC"))
    print()
    print(f"{'fabric':22s} {'schedule':9s} {'rounds':>6s} {'pair runs':>13s} "
          + " ".join(f"{label + ' computed/measured (rounds to 99%)':>44s}" for _, label in kinds))
    for row in rows:
        fabric = f"{row['hosts']} hosts/{row['leaves']} leaves/{row['rails']} rails"
        cells = []
        for kind, _ in kinds:
            c, m, r = row["computed"][kind], row["measured"][kind], row["rounds_to_99"][kind]
            cells.append(f"{'-' if c is None else f'{c:.1%}'} / {'-' if m is None else f'{m:.1%}'} "
                         f"({'never' if r is None else r})")
        print(f"{fabric:22s} {row['schedule']:9s} {row['rounds']:4d}+1 "
              f"{row['pair_runs']:6d}+{row['confirmation_pair_runs_mean']:<6g} "
              + " ".join(f"{cell:>44s}" for cell in cells) + f"   [{row['trials']} trials, {row['wall_s']} s]")
    goal = [r for r in rows if r["schedule"] == "topology" and r["leaves"] == 4]
    if goal:
        g = goal[0]
        met = g["rounds"] <= PLAN_ROUNDS and all((g["computed"][k] or 0) >= 0.99 and (g["measured"][k] or 0) >= 0.99
                                                  for k in ("bad_node", "bad_inter_leaf_link"))
        print(f"goal (>= 99 % for one bad node and one bad inter-leaf link within {PLAN_ROUNDS} rounds + a "
              f"confirmation round, {g['hosts']} hosts on 4 leaves): {'met' if met else 'MISSED'}")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": info, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
