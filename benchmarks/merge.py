"""Scale-out benchmark: 10 shard bundles of 1,000 simulated hosts each (what `collect --shard K/10` on ten machines
writes), merged by `rdmatool bundle merge` and diagnosed by `rdmatool diagnose`. Goal: 10,000 hosts merged and
diagnosed within 10 s and 4 GB of peak RSS on the 2-core benchmark machine, and how both grow from 1,000 hosts.

    python benchmarks/merge.py --keep /tmp/merge_bench     # 10 shards x 1,000 hosts; steps 1, 2, 5, 10 shards
    python benchmarks/merge.py --quick                      # 3 shards x 100 hosts; steps 1, 3 (< 2 min)
    python benchmarks/merge.py --keep DIR --profile         # also cProfile the merge and the diagnosis of the last step

The shards are the analysis benchmark's synthetic bundles (benchmarks/analysis.py: every section of the host script
rendered by the simulated fabric's tool shims, 2 ports per host, 2 snapshots, 23 raw outputs per host, the parsed
samples stored at commit as `rdmatool collect` stores them), each with its own host names (shard k holds
gpu{(k-1)*1000+1:05d}...) and its own seed, so its counters differ; the analysis benchmark's faults sit at the same
positions in every shard. The shards share the collection's start (`t0`), spread over 3 s (the tasks of one job array do not start in the
same second).

Per step (the first 1, 2, 5, 10 shards), each a subprocess timed by wait4 (wall, user+sys CPU and peak RSS of the
process tree — ru_maxrss is the largest single process):
  merge     `python -m rdmatool bundle merge SHARD... -o ALL` (hard links: the shards and ALL on one filesystem)
  diagnose  `python -m rdmatool diagnose ALL --format json`
Every step checks that the diagnosis read the merged store without parsing or rewriting it (samples.npz keeps its
inode and mtime), that every shard's faulty hosts are named, and at step 1 that `diagnose ALL` prints the findings
of `diagnose SHARD` itself.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

import _common
from _common import REPO

GOAL_S = 10.0
GOAL_RSS_GIB = 4.0
# The analysis benchmark's injected faults: host positions (within a shard) that a diagnosis must name.
FAULTY_POSITIONS = (17, 18, 123, 200, 311, 404, 555, 777, 901)


def shard_names(k: int, hosts: int) -> list[str]:
    return [f"gpu{(k - 1) * hosts + i + 1:05d}" for i in range(hosts)]


def make_shards(work: Path, shards: int, hosts: int) -> list[Path]:
    import analysis

    t0 = time.time() - 120
    paths = []
    for k in range(1, shards + 1):
        path = work / f"shard-{k}"
        if not (path / "manifest.json").is_file():
            g0 = time.perf_counter()
            analysis.write_bundle(path, hosts, faults=True, seed=100 + k, names=shard_names(k, hosts),
                                  t0=t0 + 3.0 * (k - 1) / max(1, shards - 1))
            print(f"  shard {k}/{shards}: {hosts} hosts generated in {time.perf_counter() - g0:.0f} s", flush=True)
        paths.append(path)
    from rdmatool.table import samples_store

    for path in paths:
        # The store names a digest of the parsers: after a change to them every reader parses once, as after an
        # upgrade. Shards are measured as `rdmatool collect` of this code writes them: with a current store.
        if samples_store.load(path) is None:
            g0 = time.perf_counter()
            samples_store.load_or_parse(path)
            print(f"  {path.name}: stored samples rewritten for this code in {time.perf_counter() - g0:.0f} s",
                  flush=True)
    return paths


def timed(argv: list[str], out: Path | None = None) -> dict:
    """Wall, CPU and peak RSS of one command (os.wait4 on the child: its own and its waited-for descendants')."""
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    sink = open(out or os.devnull, "wb")  # noqa: SIM115 - closed below
    err = tempfile.TemporaryFile()  # noqa: SIM115 - closed below
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=sink, stderr=err, env=env, cwd=str(REPO))
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    finally:
        sink.close()
        err.close()
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "sys_s": usage.ru_stime,
            "rss_mib": usage.ru_maxrss / 1024,
            "exit": proc.returncode, "stderr": stderr[-2000:], "load": os.getloadavg()[0]}


def findings(path: Path) -> list[tuple]:
    doc = json.loads(path.read_text())
    return sorted((f["rule"], f["target"], str(f.get("entity")), f["severity"]) for f in doc["findings"])


def step(shards: list[Path], work: Path, hosts: int) -> dict:
    from rdmatool import bundle as bundle_io

    n = len(shards)
    merged = work / f"all-{n}"
    m = timed([sys.executable, "-m", "rdmatool", "bundle", "merge", *map(str, shards), "-o", str(merged)])
    if m["exit"] != 0:
        raise SystemExit(f"merge of {n} shards: exit {m['exit']}: {m['stderr']}")
    store = merged / "samples.npz"
    before = os.stat(store)
    out = work / f"diagnose-{n}.json"
    d = timed([sys.executable, "-m", "rdmatool", "diagnose", str(merged), "--format", "json"], out)
    if d["exit"] not in (0, 1):
        raise SystemExit(f"diagnose of {n} shards: exit {d['exit']}: {d['stderr']}")
    after = os.stat(store)
    if (after.st_ino, after.st_mtime_ns) != (before.st_ino, before.st_mtime_ns):
        raise SystemExit("diagnose rewrote the merged store (it had to parse or regather): benchmark invalid")
    named = {f[1] for f in findings(out)}
    for k in range(1, n + 1):
        names = shard_names(k, hosts)
        missing = [names[i] for i in FAULTY_POSITIONS if i < hosts and names[i] not in named]
        if missing:
            raise SystemExit(f"the diagnosis of {n} shards does not name shard {k}'s faulty hosts {missing}")
    if n == 1:
        alone = work / "diagnose-shard-1.json"
        timed([sys.executable, "-m", "rdmatool", "diagnose", str(shards[0]), "--format", "json"], alone)
        if findings(alone) != findings(out):
            raise SystemExit("diagnose of a merge of one shard differs from diagnose of the shard: benchmark invalid")
    doc = json.loads(out.read_text())
    return {"shards": n, "hosts": n * hosts, "merge": m, "diagnose": d, "findings": len(doc["findings"]),
            "verdict": doc["verdict"], "outputs": len(bundle_io.list_outputs(merged)) if n == 1 else None}


def profile(shards: list[Path], work: Path, top: int) -> str:
    """cProfile of the merge and of the diagnosis (in this process) of all the shards."""
    from rdmatool.bundle_ops.merge import merge
    from rdmatool.diagnose.pipeline import diagnose_bundle

    text = []
    merged = work / "all-profile"
    for label, fn in (("bundle merge", lambda: merge(shards, merged)),
                      ("diagnose", lambda: diagnose_bundle(merged))):
        prof = cProfile.Profile()
        prof.enable()
        fn()
        prof.disable()
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf).strip_dirs().sort_stats("cumulative")
        stats.print_stats(top)
        buf.write("\n--- by own time ---\n")
        stats.sort_stats("tottime").print_stats(top)
        text.append(f"== cProfile: {label} of {len(shards)} shards ==\n{buf.getvalue()}")
    shutil.rmtree(merged, ignore_errors=True)
    return "\n".join(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 shards x 100 hosts, steps 1 and 3")
    ap.add_argument("--shards", type=int, default=None, help="shard bundles (default 10; --quick 3)")
    ap.add_argument("--hosts", type=int, default=None, help="hosts per shard (default 1000; --quick 100)")
    ap.add_argument("--steps", default=None, help="shard counts measured, e.g. 1,2,5,10 (default: 1,2,5,10 capped)")
    ap.add_argument("--runs", type=int, default=1, help="runs per step (the median is reported)")
    ap.add_argument("--keep", help="generate into (or reuse from) this directory and keep it")
    ap.add_argument("--profile", action="store_true", help="cProfile the merge and diagnosis of all shards")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--json", help="also write the raw figures to this file")
    args = ap.parse_args()
    shards_n = args.shards or (3 if args.quick else 10)
    hosts = args.hosts or (100 if args.quick else 1000)
    steps = [int(s) for s in args.steps.split(",")] if args.steps else \
        sorted({s for s in (1, 2, 5, 10, shards_n) if s <= shards_n})

    info = _common.machine()
    _common.print_machine(info)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="rdmatool-bench-merge-"))
    work.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        print(f"shards: {shards_n} x {hosts} hosts in {work}", flush=True)
        shards = make_shards(work, shards_n, hosts)
        for n in steps:
            runs = []
            for _ in range(args.runs):
                for old in (work / f"all-{n}",):
                    shutil.rmtree(old, ignore_errors=True)
                runs.append(step(shards[:n], work, hosts))
            runs.sort(key=lambda r: r["merge"]["wall_s"] + r["diagnose"]["wall_s"])
            r = dict(runs[len(runs) // 2])
            r["runs"] = runs  # (a copy holds them: no cycle for --json)
            results.append(r)
            m, d = r["merge"], r["diagnose"]
            print(f"{r['hosts']:>6} hosts ({n:>2} shards): merge {m['wall_s']:6.2f} s wall {m['cpu_s']:6.2f} s CPU "
                  f"({m['sys_s']:.1f} sys) {m['rss_mib']:7.0f} MiB | diagnose {d['wall_s']:6.2f} s wall "
                  f"{d['cpu_s']:6.2f} s CPU ({d['sys_s']:.1f} sys) "
                  f"{d['rss_mib']:7.0f} MiB | total {m['wall_s'] + d['wall_s']:6.2f} s | {r['findings']} findings, "
                  f"{r['verdict']} | load {m['load']:.1f}/{d['load']:.1f}", flush=True)
        base = results[0]
        print()
        print(f"{'hosts':>6} {'merge s':>8} {'diag s':>8} {'total s':>8} {'x total':>8} {'merge MiB':>10} "
              f"{'diag MiB':>9} {'x RSS':>6}")
        for r in results:
            total = r["merge"]["wall_s"] + r["diagnose"]["wall_s"]
            base_total = base["merge"]["wall_s"] + base["diagnose"]["wall_s"]
            rss = max(r["merge"]["rss_mib"], r["diagnose"]["rss_mib"])
            base_rss = max(base["merge"]["rss_mib"], base["diagnose"]["rss_mib"])
            print(f"{r['hosts']:>6} {r['merge']['wall_s']:>8.2f} {r['diagnose']['wall_s']:>8.2f} {total:>8.2f} "
                  f"{total / base_total:>8.2f} {r['merge']['rss_mib']:>10.0f} {r['diagnose']['rss_mib']:>9.0f} "
                  f"{rss / base_rss:>6.2f}")
        last = results[-1]
        total = last["merge"]["wall_s"] + last["diagnose"]["wall_s"]
        rss = max(last["merge"]["rss_mib"], last["diagnose"]["rss_mib"]) / 1024
        print(f"goal at {last['hosts']} hosts: merge + diagnose {total:.2f} s (goal {GOAL_S:g} s: "
              f"{'met' if total <= GOAL_S else 'MISSED'}), peak RSS {rss:.2f} GiB (goal {GOAL_RSS_GIB:g} GiB: "
              f"{'met' if rss <= GOAL_RSS_GIB else 'MISSED'}); load average now "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        if args.profile:
            print()
            print(profile(shards, work, args.top))
        if args.json:
            Path(args.json).write_text(json.dumps({"machine": info, "hosts_per_shard": hosts, "results": results},
                                                  indent=1, default=str))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
