"""Analysis benchmark: diagnose a 1,000-host bundle (2 ports per host, every metric, 2 snapshots) with a 30-night
baseline. Goal: the whole diagnosis under 3 s on the 2-core benchmark machine.

    python benchmarks/analysis.py            # 1,000 hosts, 3 runs per stage, cProfile of every stage over 3 s
    python benchmarks/analysis.py --quick    # 100 hosts, 1 run (< 1 min)
    python benchmarks/analysis.py --keep DIR # keep the generated bundle and baseline in DIR

The bundle is synthetic but its raw outputs are exactly what `rdmatool collect` records from the simulated fabric:
each host is a compute node of tests/fabric (`scenario.build(N, n_storage=0)`: mlx5_0 400G NDR InfiniBand +
mlx5_1 200G RoCE, counters varied per port by the simulator's seeded profiles), and every section of the host
script is rendered in-process by the simulator's own tool shims (ibstat, ibv_devinfo -v, perfquery -x, ethtool
-S/-i, mlnx_qos, show_gids, lldpctl) or, for the kernel files, in the simulator's sysfs / procfs formats
(`grep -H -r .` of the device and port files with every PMA and hw counter, the ECN/DCQCN tree, /proc/loadavg,
/proc/pressure): the formats of tests/fixtures/parsers/<parser>/*.txt. Snapshot 1 is 10 s after snapshot 0 and
re-reads the counter sections only, as the collector does. Injected faults (a few hosts): flapping cable, PFC storm,
PFC mismatch, firmware outlier, width downgrade, MTU 1024, DCQCN RP disabled, port down. Written with BundleWriter.

Baseline: a healthy bundle of the same fleet, reduced to a night by rdmatool.baseline.night_from_bundle, then 30
nights of it with every figure jittered (+-3 %, seeded), written in the store's documented format
(baseline.rebuild + baseline.write_document under the store lock, as `baseline save` writes it: the baseline
file and its rule view): 30 nights of 1,000 hosts each.

The bundle carries its parsed samples (`samples.npz`, written at commit as `rdmatool collect` does); the
"afresh" figures are the same bundle without it (a hand-written bundle, one copied without its modification times,
or the first read after an rdmatool upgrade changed the parsers).

Stages timed (in-process, same interpreter, warm imports; median [min-max] of the runs):
  load      frame.load with the stored samples (checks every raw output and side data file against the store)   (a)
  afresh    frame.load without a store: read every raw output, parse it (on every core)             (a')
  analyse   analysis.analyse (latest values, rates, derived facts)
  baseline  baseline.stats_for_rules (the CLI's --baseline load)
  rules     playbook.load_dir + engine.evaluate with the shipped playbooks, the baseline and the suggesters
                                                                           (b) = analyse + baseline + rules
  cli       `python -m rdmatool diagnose BUNDLE --baseline FILE --format json` as a subprocess, wall and CPU of the
            process tree (c); (c') the same with the store removed first (the CLI parses and writes it back)
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import io
import json
import os
import pstats
import random
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import _common
from _common import REPO, fmt_ms, median_spread, timed, without_store

GOAL_S = 3.0
FAULTS = (  # (kind, host index, nic, extra)
    ("flapping_cable", 17, "mlx5_0", {}),
    ("flapping_cable", 18, "mlx5_1", {}),
    ("pfc_storm", 123, "mlx5_1", {"priority": 3}),
    ("pfc_mismatch", 200, "mlx5_1", {"value": 4}),
    ("firmware_outlier", 311, "mlx5_0", {}),
    ("width_downgrade", 404, "mlx5_0", {}),
    ("mtu_1024", 555, "mlx5_1", {}),
    ("dcqcn_rp_disabled", 777, "mlx5_1", {}),
    ("port_down", 901, "mlx5_1", {}),
)


# ------------------------------------------------------------------------------------------------ the bundle


def host_sections(spec: dict, now: float, full: bool) -> list[tuple[str, str | None, str, str, int]]:
    """(parser, qualifier, command, stdout, exit code) of one host-script run, as the simulated host answers."""
    from tests.fabric import counters as C
    from tests.fabric import render
    from tests.fabric.fastpath import capture
    from tests.fabric.shims._base import Ctx

    ctx = Ctx("", spec["address"], spec, "", now)
    out: list[tuple[str, str | None, str, str, int]] = []

    def tool(parser: str, qualifier: str | None, argv: list[str]) -> None:
        stdout, _err, rc = capture(argv[0], ctx, argv[1:])
        out.append((parser, qualifier, " ".join(argv), stdout, rc))

    if full:
        tool("ibstat", None, ["ibstat"])
        tool("ibv_devinfo", None, ["ibv_devinfo", "-v"])
    netdevs = []
    for nic in spec["nics"]:
        d = nic["device"]
        root = f"/sys/class/infiniband/{d}"
        lines = [f"{root}/fw_ver:{nic['firmware']}", f"{root}/board_id:{nic['board_id']}",
                 f"{root}/hca_type:{nic['hca_type']}"]
        files = [f"{root}/fw_ver", f"{root}/board_id", f"{root}/hca_type"]
        for p in nic["ports"]:
            pr = f"{root}/ports/{p['num']}"
            lines += [f"{pr}/state:{render.STATE_NUM[p['state']]}: {p['state'].upper()}",
                      f"{pr}/phys_state:{render.PHYS_NUM[p['phys_state']]}: {p['phys_state']}",
                      f"{pr}/rate:{render.sys_rate(p)}", f"{pr}/link_layer:{nic['link_layer']}"]
            for sub, names, ns in (("counters", C.IB_COUNTERS, "ib"), ("hw_counters", C.HW_COUNTERS, "hw")):
                lines += [f"{pr}/{sub}/{n}:{ctx.val(p['counters'][ns], n)}" for n in names]
            files += [f"{pr}/{x}" for x in ("state", "phys_state", "rate", "link_layer", "counters", "hw_counters")]
        out.append(("sysfs_counters", d, "grep -H -r . " + " ".join(files), "\n".join(lines) + "\n", 0))
        for p in nic["ports"]:
            if nic["link_layer"] == "InfiniBand":
                tool("perfquery", f"{d}.{p['num']}", ["perfquery", "-x", "-C", d, "-P", str(p["num"])])
        netdevs.append(nic)
    for nic in netdevs:
        n = nic["netdev"]
        tool("ethtool_stats", n, ["ethtool", "-S", n])
        if not full:
            continue
        if nic["link_layer"] == "Ethernet":
            q = nic["qos"]
            ecn = f"/sys/class/net/{n}/ecn"
            lines = [f"{ecn}/{side}/enable/{prio}:{1 if prio in enabled else 0}"
                     for side, enabled in (("roce_np", q["np_enable"]), ("roce_rp", q["rp_enable"]))
                     for prio in range(8)]
            lines += [f"{ecn}/roce_np/cnp_dscp:{q['cnp_dscp']}", f"{ecn}/roce_np/cnp_802p_prio:{q['cnp_prio']}",
                      f"{ecn}/roce_np/min_time_between_cnps:4"]
            rp = {"clamp_tgt_rate": 0, "clamp_tgt_rate_after_time_inc": 1, "dce_tcp_g": 1019, "dce_tcp_rtt": 1,
                  "initial_alpha_value": 1023, "rate_reduce_monitor_period": 4, "rate_to_set_on_first_cnp": 0,
                  "rpg_ai_rate": 5, "rpg_byte_reset": 32767, "rpg_gd": 11, "rpg_hai_rate": 50, "rpg_max_rate": 0,
                  "rpg_min_dec_fac": 50, "rpg_min_rate": 1, "rpg_threshold": 1, "rpg_time_reset": 300}
            lines += [f"{ecn}/roce_rp/{k}:{v}" for k, v in rp.items()]
            out.append(("dcqcn_sysfs", n, f"grep -H -r . {ecn}", "\n".join(lines) + "\n", 0))
        tool("ethtool_info", n, ["ethtool", "-i", n])
        tool("mlnx_qos", n, ["mlnx_qos", "-i", n])
    if full:
        tool("show_gids", None, ["show_gids"])
        tool("lldpctl", None, ["lldpctl", "-f", "json"])
    up = now - spec["epoch"]
    l1, l5, l15 = spec["load"]
    out.append(("loadavg", None, "cat /proc/loadavg",
                f"{l1:.2f} {l5:.2f} {l15:.2f} 2/{412 + int(up) % 37} {40000 + int(up * 3)}\n", 0))
    psi = []
    for name, avg in (("io", spec["psi_io"]), ("cpu", spec["psi_cpu"])):
        total = int(1_000_000 + avg * 10_000 * up)
        psi += [f"/proc/pressure/{name}:some avg10={avg:.2f} avg60={avg * 0.9:.2f} avg300={avg * 0.8:.2f} total={total}",
                f"/proc/pressure/{name}:full avg10={avg / 2:.2f} avg60={avg * 0.45:.2f} avg300={avg * 0.4:.2f} "
                f"total={total // 2}"]
    out.append(("psi", None, "grep -H . /proc/pressure/io /proc/pressure/cpu", "\n".join(psi) + "\n", 0))
    if spec.get("gpu", {}).get("count"):  # the GPU hosts' nvidia-smi query, as the host script runs it
        from rdmatool.commands import NVIDIA_SMI_QUERY

        argv = [f"--query-gpu={NVIDIA_SMI_QUERY}", "--format=csv,noheader,nounits"]
        stdout, _err, rc = capture("nvidia_smi", ctx, argv)
        out.append(("nvidia_smi", None, " ".join(["nvidia-smi", *argv]), stdout, rc))
    return out


def write_bundle(path: Path, hosts: int, faults: bool, seed: int, interval_s: float = 10.0,
                 names: list[str] | None = None, t0: float | None = None) -> Path:
    """`names`: the hosts' names (gpu0001... by default; benchmarks/merge.py gives each shard its own); `t0`: when
    snapshot 0 started (a minute ago by default; the shards of one collection share it)."""
    from rdmatool.bundle import BundleWriter
    from rdmatool.model import CommandResult, Platform, Target, TargetKind
    from rdmatool.table import samples_store
    from tests.fabric import scenario

    rng = random.Random(seed)
    names = names or [f"gpu{i + 1:04d}" for i in range(hosts)]
    fault_list = [{"kind": k, "target": names[i], "nic": nic, **extra}
                  for k, i, nic, extra in FAULTS if faults and i < hosts]
    sc = scenario.build(hosts, n_storage=0, platforms=(), faults=fault_list, name=f"bench-analysis-{hosts}")
    for h, name in zip(sc.hosts, names):  # 4-digit names for 1,000 hosts; load varies per host
        h.name = name
        h.load = [round(rng.uniform(0.2, 4.0), 2) for _ in range(3)]
        h.psi_io = round(rng.uniform(0.0, 2.0), 2)
    eff = sc.effective()
    epoch = time.time() - 86400 * 30
    t0 = time.time() - 60 if t0 is None else t0
    writer = BundleWriter(path)
    targets = []
    for spec in eff["targets"].values():
        spec["epoch"] = epoch
        targets.append(Target(name=spec["name"], address=spec["address"], kind=TargetKind.HOST,
                              platform=Platform.LINUX, role="compute", user="root"))
        start = t0 + rng.uniform(0, 2.0)
        for snapshot, now in ((0, start), (1, start + interval_s)):
            for k, (parser, qualifier, command, stdout, rc) in enumerate(host_sections(spec, now, snapshot == 0)):
                when = datetime.fromtimestamp(now + 0.01 * k, tz=timezone.utc).isoformat(timespec="microseconds")
                writer.add(snapshot, CommandResult(
                    target=spec["name"], parser=parser, command=command, stdout=stdout, exit_code=rc, stderr="",
                    qualifier=qualifier, started=when, duration_s=0.4, error=None))
    snapshots = [{"index": 0, "started": datetime.fromtimestamp(t0, tz=timezone.utc).isoformat(), "finished": None},
                 {"index": 1, "started": datetime.fromtimestamp(t0 + interval_s, tz=timezone.utc).isoformat(),
                  "finished": None}]
    # Parsed at commit, as `rdmatool collect` does: the bundle carries its samples store.
    return writer.commit(targets, snapshots, [], interval_s, before_commit=samples_store.write_for)


def write_baseline(path: Path, healthy_bundle: Path, nights: int, seed: int) -> Path:
    from rdmatool import baseline

    rng = random.Random(seed)
    night = baseline.night_from_bundle(healthy_bundle)
    kept = []
    for i in range(nights):
        n = copy.deepcopy(night)
        created = datetime.fromtimestamp(time.time() - 86400 * (nights - i), tz=timezone.utc).isoformat(
            timespec="seconds")
        n.update(id=f"{created}|{healthy_bundle}#{i}", created=created, saved=created)
        for group in n["values"]:
            group["values"] = sorted(v * rng.uniform(0.97, 1.03) for v in group["values"])
        kept.append(n)
    doc = {"format": baseline.FORMAT, "name": path.stem, "keep": nights, "updated": kept[-1]["saved"],
           "nights": kept}
    baseline.rebuild(doc)
    with baseline.locked(path.parent):
        baseline.write_document(path, doc)
    return path


# ------------------------------------------------------------------------------------------------ the stages


def stages(bundle_path: Path, baseline_path: Path) -> tuple[dict[str, float], dict]:
    from rdmatool import baseline
    from rdmatool.diagnose.pipeline import default_playbooks
    from rdmatool.rules import engine, playbook
    from rdmatool.table import frame
    from rdmatool.table.analysis import analyse
    from rdmatool.tune import SUGGESTERS

    t: dict[str, float] = {}
    marks = [(time.perf_counter(), time.process_time())]

    def mark(name: str) -> None:
        marks.append((time.perf_counter(), time.process_time()))
        t[name] = marks[-1][0] - marks[-2][0]
        t[name + "_cpu"] = marks[-1][1] - marks[-2][1]

    with without_store(bundle_path):
        marks.append((time.perf_counter(), time.process_time()))
        afresh = frame.load(bundle_path, write_store=False)
        mark("afresh")
    marks.append((time.perf_counter(), time.process_time()))
    table = frame.load(bundle_path)
    mark("load")
    analysis = analyse(table)
    mark("analyse")
    stats = baseline.stats_for_rules(baseline_path)
    mark("baseline")
    rules = playbook.load_dir(default_playbooks())
    findings = engine.evaluate(analysis, rules, baseline=stats, suggesters=SUGGESTERS)
    mark("rules")
    if len(afresh.frame) != len(table.frame) or afresh.parse_failures != table.parse_failures:
        raise SystemExit("the stored samples and a fresh parse disagree: benchmark invalid")
    by_rule: dict[str, int] = {}
    for f in findings:
        by_rule[f.rule] = by_rule.get(f.rule, 0) + 1
    facts = {"samples": len(table.frame), "facts": len(analysis.facts),
             "parse_failures": len(table.parse_failures), "rules": len(rules), "findings": len(findings),
             "by_rule": dict(sorted(by_rule.items())), "targets_with_findings": sorted({f.target for f in findings})}
    return t, facts


def profile(label: str, fn, top: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf).strip_dirs().sort_stats("cumulative")
    stats.print_stats(top)
    buf.write("\n--- by own time ---\n")
    stats.sort_stats("tottime").print_stats(top)
    return f"== cProfile: {label} ==\n" + buf.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="100 hosts, 1 run, no profile")
    ap.add_argument("--hosts", type=int, default=None, help="hosts (default 1000; --quick 100)")
    ap.add_argument("--nights", type=int, default=30)
    ap.add_argument("--runs", type=int, default=None, help="runs per stage (default 3; --quick 1)")
    ap.add_argument("--keep", help="generate into (or reuse from) this directory and keep it")
    ap.add_argument("--top", type=int, default=25, help="cProfile entries shown per miss")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--json", help="also write the raw figures to this file")
    args = ap.parse_args()
    hosts = args.hosts or (100 if args.quick else 1000)
    runs = args.runs or (1 if args.quick else 3)

    info = _common.machine()
    _common.print_machine(info)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="rdmatool-bench-analysis-"))
    bundle_path = work / f"bundle-{hosts}"
    baseline_path = work / f"baseline-{hosts}x{args.nights}.json"
    try:
        g0 = time.perf_counter()
        if not (bundle_path / "manifest.json").is_file():
            write_bundle(bundle_path, hosts, faults=True, seed=1)
        if not baseline_path.is_file():
            healthy = write_bundle(work / f"healthy-{hosts}", hosts, faults=False, seed=2)
            write_baseline(baseline_path, healthy, args.nights, seed=3)
            shutil.rmtree(healthy, ignore_errors=True)
        from rdmatool import bundle as bundle_io

        files = len(bundle_io.list_outputs(bundle_path))
        size = sum(p.stat().st_size for p in bundle_path.rglob("*") if p.is_file())
        print(f"data: {hosts} hosts x 2 ports, 2 snapshots: {files} raw outputs, {size / 1e6:.1f} MB on disk; "
              f"baseline {args.nights} nights: {baseline_path.stat().st_size / 1e6:.1f} MB "
              f"(generated in {time.perf_counter() - g0:.0f} s)")

        stage_names = ("load", "afresh", "analyse", "baseline", "rules")
        times: dict[str, list[float]] = {k + cpu: [] for k in stage_names for cpu in ("", "_cpu")}
        cli_wall, cli_cpu, cold_wall, cold_cpu = [], [], [], []
        facts = {}
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        cli = [sys.executable, "-m", "rdmatool", "diagnose", str(bundle_path), "--baseline", str(baseline_path),
               "--format", "json"]
        for i in range(runs):  # in-process stages and the CLI alternate
            t, facts = stages(bundle_path, baseline_path)
            for k, v in t.items():
                times[k].append(v)
            out = work / "diagnose.json"
            r = timed(cli, env=env, cwd=str(REPO), stdout=str(out))
            cli_wall.append(r.wall_s)
            cli_cpu.append(r.cpu_s)
            with without_store(bundle_path):
                cold = timed(cli, env=env, cwd=str(REPO), stdout=str(work / "diagnose-afresh.json"))
            cold_wall.append(cold.wall_s)
            cold_cpu.append(cold.cpu_s)
            if (work / "diagnose-afresh.json").read_bytes() != out.read_bytes():
                raise SystemExit("diagnose with and without the stored samples disagree: benchmark invalid")
            print(f"run {i + 1}/{runs} (wall/cpu s): " + "  ".join(f"{k} {t[k]:.2f}/{t[k + '_cpu']:.2f}" for k in
                                                                   stage_names)
                  + f"  | cli wall {r.wall_s:.2f} cpu {r.cpu_s:.2f} exit {r.returncode}"
                  + f"  | cli afresh wall {cold.wall_s:.2f} cpu {cold.cpu_s:.2f}", flush=True)
        try:
            verdict = json.loads(out.read_text()).get("verdict")
        except ValueError:
            verdict = "unparsable output"
        print(f"samples {facts['samples']}, facts {facts['facts']}, parse failures {facts['parse_failures']}, "
              f"{facts['rules']} rules, {facts['findings']} findings, CLI verdict {verdict}")
        print(f"findings per rule: {facts['by_rule']}")
        print(f"targets with findings ({len(facts['targets_with_findings'])}): "
              f"{', '.join(facts['targets_with_findings'][:20])}")

        def total(*keys: str, cpu: bool = False) -> list[float]:
            return [sum(vals) for vals in zip(*(times[k + ("_cpu" if cpu else "")] for k in keys))]

        print()
        print(f"{hosts} hosts, {runs} run(s), seconds, median [min-max]; goal: diagnose under {GOAL_S:g} s "
              f"(load average now {' '.join(f'{x:.1f}' for x in os.getloadavg())})")
        print(f"  {'stage':40s} {'wall':>26s} {'CPU (process_time / wait4)':>28s}")
        rows = [("(a) load (stored samples)", ("load",)), ("(a') load afresh (parse, no store)", ("afresh",)),
                ("analyse (analysis.analyse)", ("analyse",)),
                ("baseline (stats_for_rules)", ("baseline",)), ("rules + suggestions (engine.evaluate)", ("rules",)),
                ("(b) analyse + baseline + rules", ("analyse", "baseline", "rules"))]
        for label, keys in rows:
            wall, cpu = total(*keys), total(*keys, cpu=True)
            goal = "" if label[0] != "(" else \
                ("  under goal" if median_spread(wall)[0] < GOAL_S else "  OVER GOAL")
            print(f"  {label:40s} {fmt_ms(wall):>26s} {fmt_ms(cpu):>28s}{goal}")
        goal = "  under goal" if median_spread(cli_wall)[0] < GOAL_S else "  OVER GOAL"
        print(f"  {'(c) CLI diagnose --format json':40s} {fmt_ms(cli_wall):>26s} {fmt_ms(cli_cpu):>28s}{goal}")
        goal = "  under goal" if median_spread(cold_wall)[0] < GOAL_S else "  OVER GOAL"
        label = "(c') the same, no stored samples"
        print(f"  {label:40s} {fmt_ms(cold_wall):>26s} {fmt_ms(cold_cpu):>28s}{goal}")

        if not args.quick and not args.no_profile and median_spread(cli_wall)[0] >= GOAL_S:
            from rdmatool import baseline
            from rdmatool.diagnose.pipeline import default_playbooks
            from rdmatool.rules import engine, playbook
            from rdmatool.table import frame
            from rdmatool.table.analysis import analyse
            from rdmatool.tune import SUGGESTERS

            table = frame.load(bundle_path)
            analysis = analyse(table)
            stats = baseline.stats_for_rules(baseline_path)
            rules = playbook.load_dir(default_playbooks())
            print()
            for label, fn, value in (
                ("(a) frame.load", lambda: frame.load(bundle_path), times["load"]),
                ("(b) analysis.analyse", lambda: analyse(table), times["analyse"]),
                ("(b) baseline.stats_for_rules", lambda: baseline.stats_for_rules(baseline_path), times["baseline"]),
                ("(b) engine.evaluate", lambda: engine.evaluate(analysis, rules, baseline=stats,
                                                                suggesters=SUGGESTERS), times["rules"]),
            ):
                if median_spread(value)[0] >= 0.5:  # only the stages that matter against the 3 s goal
                    print(profile(label, fn, args.top))
        if args.json:
            Path(args.json).write_text(json.dumps({"machine": info, "hosts": hosts, "runs": runs, "times": times,
                                                   "cli_wall": cli_wall, "cli_cpu": cli_cpu,
                                                   "cli_afresh_wall": cold_wall, "cli_afresh_cpu": cold_cpu,
                                                   "facts": facts},
                                                  indent=1))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
