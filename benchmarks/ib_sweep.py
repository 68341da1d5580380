"""The InfiniBand sweep benchmark: parse and judge one host's sweep of a 2,000-node fat tree (150 switches: 100 leaves
of 20 hosts and 20 uplinks, 50 spines; 64 ports each, 9,600 switch ports and 2,000 host ports; two snapshots 10 s
apart), side by side with the diagnosis of the same fabric without the sweep. Goal: the sweep's parse and judgement
within 5 s and 1 GB of peak RSS on the 2-core benchmark machine.

    python benchmarks/ib_sweep.py              # 2,000 hosts, 3 runs per bundle
    python benchmarks/ib_sweep.py --quick      # 200 hosts, 1 run
    python benchmarks/ib_sweep.py --keep DIR   # generate into (or reuse from) DIR

Bundles (each written with BundleWriter, its samples store parsed at commit as `rdmatool collect` writes it):
  hosts    the 2,000 hosts' own outputs (benchmarks/analysis.py's synthetic hosts, named as the tree's hosts)
  hosts+sweep   the same, plus the sweep (ibnetdiscover -p, iblinkinfo, ibqueryerrors, sminfo in
           tests/topology/ib_fat_tree.py's layouts) on the first host: a few faults (a flapping uplink, symbol
           errors, a cable gone, a narrow uplink, a congested spine port, two master SMs)
  sweep    the sweep alone, on its host (with that host's ibstat)
Each is diagnosed by `python -m rdmatool diagnose BUNDLE --format json` as a subprocess timed by wait4 (wall,
user+sys CPU, peak RSS of the largest process); `sweep` also afresh (its store removed: every output parsed). The
sweep's cost is `hosts+sweep` minus `hosts`, and `sweep` alone. The findings of the sweep are checked named.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common
from _common import REPO

GOAL_S, GOAL_RSS_MIB = 5.0, 1024.0
EXPECTED = {"ib_switch_link_downed", "ib_cable_gone", "ib_switch_link_below_fabric", "ib_uplink_congested",
            "ib_several_master_sms"}


def tree_and_faults(hosts: int):
    from tests.topology.ib_fat_tree import Faults, fat_tree

    per_leaf, uplinks = 20, 20
    spines = max(2, hosts // 40)
    tree = fat_tree(hosts, per_leaf, uplinks, spines, seed=11)
    leaf, other, spine = tree.leaves[1], tree.leaves[2], tree.spines[0]
    up = per_leaf + 1
    before = Faults(counters={(leaf, up): {"SymbolErrorCounter": 3}})
    after = Faults(counters={(leaf, up): {"SymbolErrorCounter": 90, "LinkDownedCounter": 2},
                             (other, up + 1): {"SymbolErrorCounter": 12},
                             (spine, 2): {"PortXmitWait": 900_000_000}},
                   gone={(other, up + 2)}, narrow={(tree.leaves[3], up): "2x"}, sms=(3, 3))
    return tree, [before, after]


def sweep_sections(tree, faults) -> list[tuple[str, str, str, str, int]]:
    from tests.topology.ib_fat_tree import TOOLS

    return [(parser, "mlx5_0.1", parser, render(tree, faults), 0) for parser, render in TOOLS.items()]


def write_hosts(path: Path, tree, snapshots, with_sweep: bool) -> Path:
    """benchmarks/analysis.py's bundle of the tree's hosts; the sweep on the first host's sections when asked."""
    import analysis

    original = analysis.host_sections

    def sections(spec: dict, now: float, full: bool):
        out = original(spec, now, full)
        if with_sweep and spec["name"] == tree.hosts[0]:
            out += sweep_sections(tree, snapshots[0 if full else 1])
        return out

    analysis.host_sections = sections
    try:
        return analysis.write_bundle(path, len(tree.hosts), faults=False, seed=5, names=list(tree.hosts))
    finally:
        analysis.host_sections = original


def write_sweep(path: Path, tree, snapshots) -> Path:
    from rdmatool.table import samples_store
    from tests.topology import ib_fat_tree

    ibstat = (REPO / "tests/fixtures/parsers/ibstat/healthy.txt").read_text().split("CA 'mlx5_bond_0'")[0]
    return ib_fat_tree.write_bundle(path, tree, snapshots, extra={(tree.hosts[0], "ibstat"): [ibstat] * 2},
                                    before_commit=samples_store.write_for)


def diagnosed(bundle: Path, out: Path) -> dict:
    """Wall, CPU and peak RSS of `rdmatool diagnose BUNDLE --format json` (os.wait4 on the child)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(out, "wb") as sink, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "rdmatool", "diagnose", str(bundle), "--format", "json"],
                                stdout=sink, stderr=err, env=env, cwd=str(REPO))
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"diagnose {bundle} exited {code}: {stderr[-2000:]}")
    rules = {f["rule"] for f in json.loads(out.read_text())["findings"]}
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024,
            "rules": rules}


def stages(bundle: Path) -> dict[str, float]:
    """In-process: the sweep bundle's load, analysis, the sweep's judge, the rules (warm imports)."""
    from rdmatool.diagnose.judges import with_judges
    from rdmatool.diagnose.pipeline import default_playbooks
    from rdmatool.rules import engine, playbook
    from rdmatool.table import frame
    from rdmatool.table.analysis import analyse
    from rdmatool.topology.ib_fabric import with_ib_fabric

    rules = playbook.load_dir(default_playbooks())
    out, t = {}, time.perf_counter()
    table = frame.load(bundle, write_store=False)
    out["load"], t = time.perf_counter() - t, time.perf_counter()
    analysis = analyse(table)
    out["analyse"], t = time.perf_counter() - t, time.perf_counter()
    judged = with_ib_fabric(analysis)
    out["ib judge"], t = time.perf_counter() - t, time.perf_counter()
    judged = with_judges(judged)
    out["other judges"], t = time.perf_counter() - t, time.perf_counter()
    engine.evaluate(judged, rules)
    out["rules"] = time.perf_counter() - t
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="200 hosts, 1 run")
    ap.add_argument("--hosts", type=int, default=None)
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--keep", help="generate into (or reuse from) this directory and keep it")
    ap.add_argument("--generate", action="store_true", help="only write the bundles (into --keep)")
    args = ap.parse_args()
    hosts = args.hosts or (200 if args.quick else 2000)
    runs = args.runs or (1 if args.quick else 3)
    if not args.generate:
        _common.print_machine(_common.machine())
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ib-sweep-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    tree, snapshots = tree_and_faults(hosts)
    ports = (len(tree.leaves) + len(tree.spines)) * tree.ports
    print(f"fat tree: {hosts} hosts, {len(tree.leaves)} leaves + {len(tree.spines)} spines x {tree.ports} ports "
          f"= {ports} switch ports + {hosts} host ports, {len(tree.cables)} cables; two snapshots 10 s apart")
    writers = {"hosts": lambda p: write_hosts(p, tree, snapshots, False),
               "hosts+sweep": lambda p: write_hosts(p, tree, snapshots, True),
               "sweep": lambda p: write_sweep(p, tree, snapshots)}
    bundles = {name: work / name.replace("+", "_") for name in writers}
    if args.generate:
        for name, path in bundles.items():
            if not (path / "manifest.json").exists():
                t = time.perf_counter()
                shutil.rmtree(path, ignore_errors=True)
                writers[name](path)
                print(f"  wrote {name} in {time.perf_counter() - t:.1f} s")
        return 0
    if not all((path / "manifest.json").exists() for path in bundles.values()):
        # written by a child: a child forked from this process would count its pages in the peak RSS measured
        subprocess.run([sys.executable, __file__, "--generate", "--keep", str(work), "--hosts", str(hosts)],
                       check=True)
    figures: dict[str, list[dict]] = {}
    for _ in range(runs):  # alternated, so that the machine's load falls on each alike
        for name, path in bundles.items():
            figures.setdefault(name, []).append(diagnosed(path, work / f"{name}.json"))
        with _common.without_store(bundles["sweep"]):
            figures.setdefault("sweep afresh", []).append(diagnosed(bundles["sweep"], work / "afresh.json"))

    def med(name: str, key: str) -> float:
        return sorted(r[key] for r in figures[name])[len(figures[name]) // 2]

    print(f"\n{'bundle':<14} {'wall s':>16} {'CPU s':>7} {'peak RSS MiB':>13}")
    for name, rows in figures.items():
        walls = [r["wall_s"] for r in rows]
        print(f"{name:<14} {_common.fmt_ms(walls):>16} {med(name, 'cpu_s'):7.2f} {med(name, 'rss_mib'):13.0f}")
    extra_s = med("hosts+sweep", "wall_s") - med("hosts", "wall_s")
    extra_mib = med("hosts+sweep", "rss_mib") - med("hosts", "rss_mib")
    print(f"\nthe sweep's cost in the fleet's diagnosis: +{extra_s:.2f} s wall, "
          f"+{med('hosts+sweep', 'cpu_s') - med('hosts', 'cpu_s'):.2f} s CPU, {extra_mib:+.0f} MiB peak RSS")
    print("stages of the sweep alone (in-process, warm): "
          + ", ".join(f"{k} {v:.2f} s" for k, v in stages(bundles["sweep"]).items()))
    missing = EXPECTED - figures["hosts+sweep"][0]["rules"]
    print(f"findings of the sweep named: {'all' if not missing else 'MISSING ' + ', '.join(sorted(missing))}")
    worst_s = max(med("sweep afresh", "wall_s"), extra_s)
    worst_mib = max(med("sweep afresh", "rss_mib"), med("sweep", "rss_mib"))
    met = worst_s <= GOAL_S and worst_mib <= GOAL_RSS_MIB and not missing
    print(f"goal (<= {GOAL_S:g} s, <= {GOAL_RSS_MIB:.0f} MiB): {'met' if met else 'MISSED'} "
          f"({worst_s:.2f} s, {worst_mib:.0f} MiB)")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
