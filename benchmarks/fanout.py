"""Fan-out benchmark: `rdmatool collect --interval 0` against `clush` (ClusterShell) over the same sshd.

    python benchmarks/fanout.py            # 128 simulated hosts: 3 alternated runs of rdmatool and clush-script*,
                                           # clush-commands* in the first run only (--commands-runs); ~30 min
    python benchmarks/fanout.py --quick    # 8 hosts, rdmatool and clush-script*, 1 run each (< 1 min)

Needs root, openssh-server (the simulated fabric of tests/fabric) and ClusterShell for the comparison:
`pip install ClusterShell` (a benchmark dependency only, deliberately not in pyproject.toml). Without it only the
rdmatool figures are printed.

Variants (all against one simulated fabric of N hosts, the same sshd, key, port and known_hosts, --forks/--fanout F):
- `rdmatool`: `python -m rdmatool collect -i INV -o BUNDLE --interval 0 --forks F` (paramiko, one exec per host
  running commands.HOST_SCRIPT).
- `clush-commands`: the raw commands the host script runs, one clush invocation per logical command, as a fleet
  tool user would run them: the command lines are taken from the warm-up bundle's side data (`ibstat`,
  `ibv_devinfo -v`, `grep -H -r . <sysfs files>` per device, `perfquery -x -C dev -P port`, `ethtool -S/-i` per
  netdev, `grep -H -r . /sys/class/net/<nd>/ecn`, `mlnx_qos -i`, `show_gids`, `lldpctl -f json`,
  `cat /proc/loadavg`, `grep -H . /proc/pressure/io /proc/pressure/cpu`), each sent to exactly the hosts that ran it.
- `clush-script`: clush running the very same batched script once per host (`sh -s -- 20 full`, script on stdin):
  the transport-only comparison.
- `asyncssh-script`: the same batched script over asyncssh (`benchmarks/asyncssh_script.py`: one thread, one
  asyncio loop, curve25519-sha256, the same key, known_hosts and concurrency): the event-loop alternative to
  paramiko's thread per session, measured; needs `pip install asyncssh` (a benchmark dependency only).
- `...-x25519`: the same with `-o KexAlgorithms=curve25519-sha256`. OpenSSH 9.2's default key exchange,
  sntrup761x25519-sha512, costs the ssh client ~0.1 s of CPU per connection here; paramiko negotiates
  curve25519-sha256 with this sshd, so the x25519 variants compare like with like.

Client CPU = user+sys of the whole client process tree (os.wait4 on the child: clush and every ssh it forked;
rdmatool and its threads). Server-side work (sshd, the fabric's wrapper, the tools) is not in it but shares the two
cores, so it weighs on every wall time alike. Each run also records the whole machine's CPU over its wall time
(/proc/stat): busy core-seconds (client and simulated hosts together) and idle core-seconds. When the idle part is a
fraction of a second, the wall is the machine's work divided by its cores, and a client that costs less CPU can only
gain what it saves. Where a cgroup can be made (root), the simulated hosts' own CPU is recorded per run as well
(`FabricCpu`: the sshd and every session it forks). Variant order rotates from run to run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from statistics import geometric_mean

import _common
from _common import REPO, fmt_ms, median_spread, timed

ALL_VARIANTS = ("rdmatool", "clush-commands", "clush-script", "clush-commands-x25519", "clush-script-x25519",
                "asyncssh-script")
# What each side gets per host for the whole script: rdmatool's --deadline (its default) and clush's -u, alike.
DEADLINE_S = 120


def machine_cpu() -> tuple[float, float] | None:
    """(busy, idle) core-seconds of the whole machine since boot, from /proc/stat's first line (iowait counts as
    idle: a core waiting for the disk is free for other work); None where there is no /proc/stat."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]
    return (sum(fields) - idle) / tick, idle / tick


def cgroup_root(mounts: str) -> tuple[Path, str] | None:
    """Where a cgroup that counts CPU can be made, from /proc/self/mounts' text: the cgroup2 hierarchy (its cpu.stat
    counts without the cpu controller) or, failing that, cgroup v1's cpuacct; None when neither is mounted."""
    v1 = None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        if fields[2] == "cgroup2":
            return Path(fields[1]), "v2"
        if fields[2] == "cgroup" and "cpuacct" in fields[3].split(",") and v1 is None:
            v1 = Path(fields[1]), "v1"
    return v1


def cgroup_core_seconds(path: Path, kind: str) -> float:
    """CPU used so far by everything that ran in the cgroup at `path` (OSError/ValueError when unreadable)."""
    if kind == "v2":
        usage = dict(line.split() for line in (path / "cpu.stat").read_text().splitlines())
        return int(usage["usage_usec"]) / 1e6
    return int((path / "cpuacct.usage").read_text()) / 1e9


class FabricCpu:
    """The simulated hosts' CPU: the fabric's sshd moved into a cgroup of its own, with every session it forks from
    then on (sshd, the fabric's wrapper, the script and its tools). Both variants run the same script on the same
    fabric, so a difference between them here is not work the client asked for: it is the machine's speed moving, or
    how many sessions shared the two cores at once (more at once, each a little dearer). `core_seconds` is None where
    no cgroup can be made (not root, no cgroup file system)."""

    def __init__(self, pid: int) -> None:
        self.path: Path | None = None
        try:
            found = cgroup_root(Path("/proc/self/mounts").read_text())
        except OSError:
            found = None
        if found is None:
            return
        root, self.kind = found
        path = root / f"rdmatool-bench-fabric-{os.getpid()}"
        try:
            path.mkdir()
            (path / "cgroup.procs").write_text(str(pid))
            cgroup_core_seconds(path, self.kind)
        except (OSError, ValueError, KeyError):
            with contextlib.suppress(OSError):
                path.rmdir()
            return
        self.path = path

    def core_seconds(self) -> float | None:
        if self.path is None:
            return None
        try:
            return cgroup_core_seconds(self.path, self.kind)
        except (OSError, ValueError, KeyError):
            return None

    def close(self) -> None:
        """Remove the cgroup once the fabric has stopped (a cgroup goes only when empty: wait a little for the last
        sessions to exit)."""
        if self.path is None:
            return
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)


class SessionCounter:
    """How many simulated sessions are running a command at once: the fabric's wrapper keeps one pid file per
    running session in `folder`; a thread lists it every `every` s while a variant runs. Opt-in (--count-sessions):
    the listing is a little CPU of the benchmark's own on the cores it measures."""

    def __init__(self, folder: Path, every: float = 0.02) -> None:
        self.folder, self.every = folder, every
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(OSError):  # the fabric's state folder gone: it stopped
                self.samples.append(len(os.listdir(self.folder)))
            self._stop.wait(self.every)

    def __enter__(self) -> SessionCounter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def figures(self) -> dict:
        """mean and peak sessions alive over the samples (zeros included: the start and the tail are part of it)."""
        if not self.samples:
            return {}
        return {"sessions_mean": sum(self.samples) / len(self.samples), "sessions_peak": max(self.samples)}


def _mean_or_dash(values: list[float]) -> str:
    return f"{geometric_mean(values):.3f} ({len(values)} runs)" if values else "-"


def clush_binary() -> str | None:
    beside = Path(sys.executable).parent / "clush"  # a virtual environment's, when it is not on PATH
    return shutil.which("clush") or (str(beside) if beside.is_file() else None)


def compile_bytecode(tree: Path) -> None:
    """rdmatool measured as pip installs it: the bytecode of its modules written beforehand. Run from a fresh
    export (or under PYTHONDONTWRITEBYTECODE) it would compile every module it imports from source at each run
    (~0.1 s of CPU no installed rdmatool pays), while clush, a distribution package, comes compiled."""
    import compileall

    if not compileall.compile_dir(str(tree / "rdmatool"), quiet=1):
        raise SystemExit(f"fanout benchmark: {tree}/rdmatool does not compile")


def fold(addresses: list[str]) -> str:
    try:
        from ClusterShell.NodeSet import NodeSet

        return str(NodeSet.fromlist(addresses))
    except ImportError:
        return ",".join(addresses)


def command_plan(bundle: Path) -> list[tuple[str, list[str]]]:
    """(command line, addresses that ran it) for every logical command of snapshot 0 of a collected bundle."""
    from rdmatool import bundle as bundle_io

    manifest = json.loads((bundle / "manifest.json").read_text())
    address = {t["name"]: t["address"] for t in manifest["targets"]}
    by_command: dict[str, list[str]] = defaultdict(list)
    for entry in bundle_io.read(bundle).entries:  # each output's side data, whatever the bundle's format
        if entry.snapshot == 0:
            by_command[entry.result.command].append(address[entry.target])
    return sorted(by_command.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="8 hosts, 1 run, no clush-commands variants")
    ap.add_argument("--hosts", type=int, default=None, help="simulated hosts (default 128; --quick 8)")
    ap.add_argument("--runs", type=int, default=None, help="runs per variant (default 3; --quick 1)")
    ap.add_argument("--forks", type=int, default=64, help="rdmatool --forks and clush --fanout")
    ap.add_argument("--commands-runs", type=int, default=1,
                    help="runs in which the (slow: ~16 ssh per host) clush-commands variants take part (default 1)")
    ap.add_argument("--variants", default=None, help=f"comma list of {', '.join(ALL_VARIANTS)} (default: all; "
                                                     "--quick: the ones without clush-commands)")
    ap.add_argument("--ref-tree", help="a source tree of another rdmatool version (e.g. `git archive REV rdmatool | "
                                       "tar -x -C DIR`), measured alternately as the variant `rdmatool-ref`")
    ap.add_argument("--fabric-nice", type=int, default=0,
                    help="run the simulated fabric's sshd (and every session it forks) at this niceness, so that the "
                         "server side, which a real fleet runs on its own machines, yields the two cores to the client "
                         "under test (both variants alike)")
    ap.add_argument("--count-sessions", action="store_true",
                    help="sample how many simulated sessions run at once (every 20 ms) and report the mean and peak "
                         "per run")
    ap.add_argument("--json", help="also write the raw figures to this file")
    args = ap.parse_args()
    hosts = args.hosts or (8 if args.quick else 128)
    runs = args.runs or (1 if args.quick else 3)
    default = [v for v in ALL_VARIANTS if not (args.quick and v.startswith("clush-commands"))]
    variants = [v for v in args.variants.split(",") if v] if args.variants else default
    if args.ref_tree:
        variants.insert(1, "rdmatool-ref")
    unknown = set(variants) - set(ALL_VARIANTS) - {"rdmatool-ref"}
    if unknown:
        ap.error(f"unknown variants {sorted(unknown)}")

    from tests.fabric import scenario
    from tests.fabric.fixtures import missing_prerequisite
    from tests.fabric.server import start

    reason = missing_prerequisite()
    if reason:
        print(f"fanout benchmark: the simulated fabric cannot run here: {reason}", file=sys.stderr)
        return 2
    clush = clush_binary()
    if clush is None:
        print("clush not found: `pip install ClusterShell` for the comparison; measuring rdmatool only",
              file=sys.stderr)
        variants = [v for v in variants if v.startswith("rdmatool") or v == "asyncssh-script"]
    try:
        import asyncssh  # noqa: F401
    except ImportError:
        if "asyncssh-script" in variants:
            print("asyncssh not importable: `pip install asyncssh` for the asyncssh-script variant; skipping it",
                  file=sys.stderr)
            variants.remove("asyncssh-script")

    compile_bytecode(REPO)
    if args.ref_tree:
        compile_bytecode(Path(args.ref_tree).resolve())
    info = _common.machine(("rdmatool", "paramiko", "ClusterShell", "pandas"))
    _common.print_machine(info)
    openssh = os.popen("ssh -V 2>&1").read().strip()
    print(f"         {openssh}; {hosts} hosts (no switches), forks/fanout {args.forks}, {runs} run(s) per variant")

    work = Path(tempfile.mkdtemp(prefix="rdmatool-bench-fanout-"))
    fabric = start(scenario.build(hosts, platforms=(), name=f"bench-{hosts}"))
    if args.fabric_nice:  # sessions forked from now on inherit it; the warm-up below comes after
        os.setpriority(os.PRIO_PROCESS, fabric._sshd.pid, args.fabric_nice)
    fabric_cpu = FabricCpu(fabric._sshd.pid)  # before the warm-up too: every session forked from now on is counted
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        inv, kh, key, port = str(fabric.inventory_path), str(fabric.known_hosts), str(fabric.client_key), fabric.port
        rdmatool_argv = [sys.executable, "-m", "rdmatool", "collect", "-i", inv, "--interval", "0",
                         "--forks", str(args.forks), "--known-hosts", kh, "--timeout", "20",
                         "--deadline", str(DEADLINE_S)]
        # warm-up (page cache, sshd, the fabric's renders) and the command plan for clush-commands
        warm = timed([*rdmatool_argv, "-o", str(work / "warmup")], env=env, cwd=str(REPO),
                     stdout=str(work / "warmup.log"))
        if warm.returncode != 0:
            print((work / "warmup.log").read_text(), file=sys.stderr)
            return 1
        plan = command_plan(work / "warmup")
        script = work / "host_script.sh"
        from rdmatool import commands

        script.write_text(commands.host_script(commands.new_token()))
        all_nodes = fold([t["address"] for t in fabric.targets])
        print(f"clush-commands: {len(plan)} invocations, {sum(len(a) for _, a in plan)} ssh connections per run:")
        for command, addresses in plan:
            print(f"  {len(addresses):4d} hosts  {command[:100]}{'...' if len(command) > 100 else ''}")

        def ssh_options(x25519: bool) -> str:
            opts = f"-p {port} -i {key} -F none -o UserKnownHostsFile={kh} -o StrictHostKeyChecking=yes -o BatchMode=yes"
            return opts + (" -o KexAlgorithms=curve25519-sha256" if x25519 else "")

        def clush_argv(nodes: str, x25519: bool, command: str) -> list[str]:
            # -u: a host's whole script gets what rdmatool's --deadline gives a target. 60 s cut 9 of 256 hosts off
            # under the fabric's load, which made clush's figure one of less work.
            return [clush, "-w", nodes, "-l", "root", "-f", str(args.forks), "-t", "10", "-u", str(DEADLINE_S),
                    "-o", ssh_options(x25519), command]

        def run_variant(name: str, index: int) -> dict:
            log = work / f"{name}.{index}.out"
            if name in ("rdmatool", "rdmatool-ref"):
                out = work / f"bundle.{index}"
                tree = str(Path(args.ref_tree).resolve()) if name == "rdmatool-ref" else str(REPO)
                r = timed([*rdmatool_argv, "-o", str(out)], env={**env, "PYTHONPATH": tree}, cwd=tree,
                          stdout=str(log))
                ok = r.returncode == 0 and "no errors" in log.read_text()
                shutil.rmtree(out, ignore_errors=True)
                return {"wall_s": r.wall_s, "cpu_s": r.cpu_s, "user_s": r.user_s, "sys_s": r.sys_s, "ok": ok,
                        "invocations": 1}
            x25519 = name.endswith("-x25519")
            if name == "asyncssh-script":
                addresses = ",".join(t["address"] for t in fabric.targets)
                r = timed([sys.executable, str(REPO / "benchmarks" / "asyncssh_script.py"), "--hosts", addresses,
                           "--port", str(port), "--key", key, "--known-hosts", kh, "--script", str(script),
                           "--forks", str(args.forks), "--deadline", str(DEADLINE_S), "--x25519"], stdout=str(log))
                text = log.read_text(errors="replace")
                complete = len(re.findall(r" BEGIN \d+ loadavg ", text))
                ok = r.returncode == 0 and complete == hosts
                fig = {"wall_s": r.wall_s, "cpu_s": r.cpu_s, "user_s": r.user_s, "sys_s": r.sys_s, "ok": ok,
                       "invocations": 1}
                if not ok:
                    complaints = [line for line in text.splitlines() if ": asyncssh: " in line]
                    fig["why"] = (f"exit {r.returncode}; {complete} of {hosts} hosts complete; "
                                  + " | ".join(complaints[:5]))
                return fig
            if name.startswith("clush-script"):
                r = timed(clush_argv(all_nodes, x25519, "sh -s -- 20 full"), stdin=str(script), stdout=str(log))
                # every host got as far as the load average (one of the script's last sections) and clush saw no error
                text = log.read_text(errors="replace")
                complete = len(re.findall(r" BEGIN \d+ loadavg ", text))
                ok = r.returncode == 0 and complete == hosts
                fig = {"wall_s": r.wall_s, "cpu_s": r.cpu_s, "user_s": r.user_s, "sys_s": r.sys_s, "ok": ok,
                       "invocations": 1}
                if not ok:  # the work folder goes at the end: keep why, or a failed check is a figure nobody can read
                    complaints = [line for line in text.splitlines() if line.startswith("clush:")]
                    fig["why"] = (f"clush exit {r.returncode}; {complete} of {hosts} hosts complete; "
                                  f"{len(complaints)} clush complaint(s): " + " | ".join(complaints[:5]))
                return fig
            total = {"wall_s": 0.0, "cpu_s": 0.0, "user_s": 0.0, "sys_s": 0.0, "ok": True, "invocations": 0}
            for i, (command, addresses) in enumerate(plan):
                part = work / f"{name}.{index}.{i}.out"
                r = timed(clush_argv(fold(addresses), x25519, command), stdout=str(part))
                failed = "exited with exit code 255" in part.read_text() or r.returncode not in (0, 1)
                total["ok"] = total["ok"] and not failed
                for k in ("wall_s", "cpu_s", "user_s", "sys_s"):
                    total[k] += getattr(r, k)
                total["invocations"] += 1
                part.unlink()
            return total

        results: dict[str, list[dict]] = {v: [] for v in variants}
        for index in range(runs):
            order = variants[index % len(variants):] + variants[:index % len(variants)]
            for name in order:
                if name.startswith("clush-commands") and index >= args.commands_runs:
                    continue
                load = os.getloadavg()  # the machine is shared: what else ran is part of the figure
                before, fabric_before = machine_cpu(), fabric_cpu.core_seconds()
                counter = SessionCounter(fabric.state / "pids")
                with counter if args.count_sessions else contextlib.nullcontext():
                    fig = run_variant(name, index)
                after, fabric_after = machine_cpu(), fabric_cpu.core_seconds()
                fig.update(counter.figures())
                if fabric_before is not None and fabric_after is not None:
                    fig["fabric_cpu_s"] = fabric_after - fabric_before
                fig["loadavg"] = load
                fig["position"] = order.index(name)  # which went first in this run: the side-by-side order
                if before and after:  # includes the variant's own clean-up (a bundle's removal): a few ms
                    fig["machine_busy_s"], fig["machine_idle_s"] = (b - a for a, b in zip(before, after))
                results[name].append(fig)
                print(f"run {index + 1}/{runs} {name:22s} wall {fig['wall_s']:7.2f} s  client CPU {fig['cpu_s']:7.2f} s"
                      f" (user {fig['user_s']:.2f}, sys {fig['sys_s']:.2f})  load {load[0]:5.1f}"
                      + (f"  machine busy {fig['machine_busy_s']:6.1f}, idle {fig['machine_idle_s']:5.2f} core-s"
                         if "machine_busy_s" in fig else "")
                      + (f"  fabric {fig['fabric_cpu_s']:6.1f} core-s" if "fabric_cpu_s" in fig else "")
                      + (f"  sessions mean {fig['sessions_mean']:4.1f}, peak {fig['sessions_peak']}"
                         if "sessions_mean" in fig else "")
                      + f"  {'ok' if fig['ok'] else 'FAILED'}", flush=True)
                if fig.get("why"):
                    print(f"    why: {fig['why']}", flush=True)
    finally:
        fabric.stop()
        fabric_cpu.close()
        shutil.rmtree(work, ignore_errors=True)

    print()
    print(f"{hosts} hosts, {runs} run(s): median [min-max]")
    print(f"{'variant':24s} {'runs':>4s} {'wall s':>24s} {'client CPU s':>24s} {'CPU/host ms':>12s}")
    results = {name: figs for name, figs in results.items() if figs}  # variants skipped by --commands-runs 0
    for name, figs in results.items():
        walls = [f["wall_s"] for f in figs]
        cpus = [f["cpu_s"] for f in figs]
        per_host = median_spread(cpus)[0] / hosts * 1000
        print(f"{name:24s} {len(figs):4d} {fmt_ms(walls):>24s} {fmt_ms(cpus):>24s} {per_host:12.1f}"
              + ("" if all(f["ok"] for f in figs) else "   (some runs FAILED)"))
    for key, what, unit in (
            ("fabric_cpu_s", "the simulated hosts' CPU in the same runs (sshd and all it forked; the same script: a "
                             "difference is the machine's speed, or how many sessions shared its cores at once)",
             " core-s"),
            ("sessions_mean", "sessions running at once, mean over each run", "")):
        by_variant = {name: [f[key] for f in figs if key in f] for name, figs in results.items()}
        if all(by_variant.values()):  # recorded for every variant (a cgroup, --count-sessions)
            print(f"{what}: " + "; ".join(f"{name} {fmt_ms(v)}{unit}" for name, v in by_variant.items()))
    if "rdmatool" in results:
        base = results["rdmatool"]
        print()
        print("rdmatool / clush (ratio of medians; per-run ratios of the side-by-side runs in brackets):")
        for name, figs in results.items():
            if name == "rdmatool":
                continue
            cpu_r = [a["cpu_s"] / b["cpu_s"] for a, b in zip(base, figs)]  # run i of both: side by side
            wall_r = [a["wall_s"] / b["wall_s"] for a, b in zip(base, figs)]
            cpu_m = median_spread([f["cpu_s"] for f in base])[0] / median_spread([f["cpu_s"] for f in figs])[0]
            wall_m = median_spread([f["wall_s"] for f in base])[0] / median_spread([f["wall_s"] for f in figs])[0]
            # against the raw commands a fifth of their CPU; against the same batched script, no more than OpenSSH
            goal = 0.2 if name.startswith("clush-commands") else 1.0
            print(f"  vs {name:22s} CPU {cpu_m:.3f} [{min(cpu_r):.3f}-{max(cpu_r):.3f}]  goal <= {goal}: "
                  f"{'met' if cpu_m <= goal else 'MISSED'};  wall {wall_m:.3f} [{min(wall_r):.3f}-{max(wall_r):.3f}]"
                  f"  goal <= 1: {'met' if wall_m <= 1.0 else 'MISSED'}")
            # A run's second variant meets the machine the first one left (its load, its page cache): the per-run
            # wall ratios, averaged apart for each order and then together, weigh both orders alike.
            first = [r for a, b, r in zip(base, figs, wall_r) if a["position"] < b["position"]]
            second = [r for a, b, r in zip(base, figs, wall_r) if a["position"] > b["position"]]
            by_order = [geometric_mean(group) for group in (first, second) if group]
            print(f"     per-run wall ratios {', '.join(f'{r:.2f}' for r in wall_r)}: geometric mean "
                  f"{geometric_mean(wall_r):.3f}; rdmatool first {_mean_or_dash(first)}, second "
                  f"{_mean_or_dash(second)}; both orders weighed alike {geometric_mean(by_order):.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": info, "hosts": hosts, "runs": runs, "forks": args.forks,
                                               "fabric_nice": args.fabric_nice, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
