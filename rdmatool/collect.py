"""The collect service: fan-out over the transports → bundle commit (with its parsed samples). Used by
`rdmatool collect`, `diagnose -i` and the gate alike; progress is reported through a callback, never printed here.

Fan-out: every target concurrently, bounded by `forks`; a failing target becomes a result, never an abort. Each
target keeps one session for the whole collection. Snapshot 0 reads everything; snapshot 1, `interval_s` after
that target's own first read, re-reads only counters so the analysis can compute rates. What runs on a target is
in `rdmatool.commands` (the audited list), and nothing else.

Local mode (`local`): the one target is this machine (`transport.local.local_target`), read by the same script
run as a child process, plus the verbs read; the bundle is laid out as any other. A host whose full snapshot shows
no RDMA device is a failed target with the reason (the script's sysfs walk and, locally, pyverbs' own words): it
answered, but nothing of the fabric can be judged there, which is no data, never a pass.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from rdmatool import commands, limits, parsers
from rdmatool.errors import BundleError, NothingCollected, ParseError
from rdmatool.model import CommandResult, Target, TargetKind
from rdmatool.outcome.failures import DEADLINE_EXCEEDED
from rdmatool.transport.framed import now_iso

if TYPE_CHECKING:
    from rdmatool.transport.hostkeys import KnownHosts
    from rdmatool.transport.jump import JumpHosts


@dataclass(frozen=True)
class CollectOptions:
    interval_s: float = 10.0
    forks: int = 64
    connect_timeout: float = 10.0
    command_timeout: int = 20
    target_deadline: float = 120.0
    accept_new_host_keys: bool = False
    known_hosts: str | None = None
    accept_new_key_types: bool = False  # with accept_new_host_keys: a known host may present a key of a new type
    local: bool = False  # read this machine itself (transport.local), no SSH


@dataclass
class TargetOutcome:
    target: Target
    snapshots: dict[int, list[CommandResult]] = field(default_factory=dict)
    error: str | None = None
    # The subnet sweeps this host ran or tried (`_Subnets`): {sm_lid, snapshot, port, outcome, error, order, tools},
    # what the manifest's `subnet_sweeps` is made of; `notices`: failures that are no command's result (the tools a
    # partial sweep never started), as manifest failure entries.
    sweeps: list[dict] = field(default_factory=list)
    notices: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    def snapshots_with_output(self) -> list[int]:
        """Snapshots in which at least one command of this target gave a usable output."""
        return [i for i, results in self.snapshots.items() if any(r.ok for r in results)]

    @property
    def usable(self) -> bool:
        """Whether this target gave output the analysis can judge: it did not fail (a host that broke the framing,
        hit its deadline or has no RDMA device keeps what it printed, but that is not a reading to judge by) and at
        least one of its commands gave output."""
        return self.ok and bool(self.snapshots_with_output())


Progress = Callable[[str, str], None]  # (target name, event) — presentation lives in the CLI


def collect_all(targets: list[Target], options: CollectOptions, progress: Progress | None = None,
                finished: Callable[[TargetOutcome], None] | None = None) -> list[TargetOutcome]:
    """Every target's outcome, in the targets' order. `finished` is called with each outcome as soon as its target is
    done, in the thread that collected it (the bundle is written while slower hosts still answer); what it raises
    ends the collection, as an exception of the caller would."""
    known = jumps = None  # local mode dials nobody: the SSH transport (paramiko) is not even imported
    if not options.local:
        from rdmatool.transport.hostkeys import KnownHosts
        from rdmatool.transport.jump import JumpHosts

        known = KnownHosts(options.known_hosts, options.accept_new_host_keys, options.accept_new_key_types)
        jumps = JumpHosts()  # one connection per ProxyJump bastion for the whole collection
    snapshot_count = 1 if options.interval_s <= 0 else 2
    outcomes = [TargetOutcome(t) for t in targets]
    report = progress or (lambda name, event: None)
    stop = threading.Event()
    # No subnet sweep in local mode: each node there is a collection of its own (a prolog, a DaemonSet), so nobody
    # chooses one host per subnet, and every node sweeping the whole fabric at once would load every switch's
    # management agents as many times over.
    subnets = None if options.local else _Subnets(limits.value("subnet_sweep_s"))

    def work(outcome: TargetOutcome) -> None:
        deadline = time.monotonic() + options.target_deadline + (options.interval_s if snapshot_count == 2 else 0)
        try:
            _collect_target(outcome, options, known, stop, snapshot_count, deadline, subnets, jumps)
        except Exception as exc:  # the last line of defence: one broken target never stops the others
            outcome.error = outcome.error or f"{outcome.target.name}: {type(exc).__name__}: {exc}"
        if finished is not None and not stop.is_set():
            finished(outcome)
        report(outcome.target.name, "failed" if outcome.error else "done")

    # Ctrl-C must end a collection promptly: workers wait on `stop` instead of sleeping, and the pool is not
    # joined on the way out (the caller discards the half-written bundle).
    pool = ThreadPoolExecutor(max_workers=max(1, options.forks), thread_name_prefix="rdmatool")
    try:
        futures = [pool.submit(work, outcome) for outcome in outcomes]
        for future in futures:
            future.result()
    except BaseException:
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        if jumps is not None:
            jumps.close()
        raise
    pool.shutdown()
    if jumps is not None:
        jumps.close()
    return outcomes


def _collect_target(
    outcome: TargetOutcome, options: CollectOptions, known: KnownHosts, stop: threading.Event,
    snapshot_count: int, deadline: float, subnets: _Subnets | None = None, jumps: JumpHosts | None = None,
) -> None:
    target = outcome.target
    if stop.is_set():
        return
    try:
        session = _open(target, known, options.connect_timeout, options.local, deadline, jumps)
    except Exception as exc:
        from rdmatool.transport.ssh import describe_connect_error

        outcome.error = describe_connect_error(target, exc)
        return
    sm_lid: int | None = None  # the subnet manager of the port this host would sweep its subnet through
    try:
        ports: tuple[str, ...] = target.ports
        for index in range(snapshot_count):
            first_read = time.monotonic()
            mode = commands.SNAPSHOT_FULL if index == 0 else commands.SNAPSHOT_COUNTERS
            if target.kind is TargetKind.HOST:
                results, error = session.run_snapshot(mode, options.command_timeout, deadline, stop)
            else:
                discovered: list[CommandResult] = []
                if index == 0 and not ports:
                    ports, discovered = _discover_ports(session, target, options, deadline)
                plan = commands.switch_plan(target.platform, ports, mode)
                if discovered:  # LLDP was read already to find the ports; do not ask twice
                    plan = [step for step in plan if step.parser != discovered[0].parser]
                results = discovered + session.run(plan, options.command_timeout, deadline)
                error = results[0].error if results and all(r.error for r in results) else None
                cut = sum(r.error == DEADLINE_EXCEEDED for r in results)
                if error is None and cut:  # as a host cut by its deadline: not read in full, whatever it gave
                    error = f"{DEADLINE_EXCEEDED}; {cut} of {len(results)} commands not run, output so far kept"
            outcome.snapshots[index] = outcome.snapshots.get(index, []) + results
            if error:
                outcome.error = f"{target.name}: {error}"
                return
            if index == 0 and target.kind is TargetKind.HOST and (nothing := _no_rdma_device(results)):
                outcome.error = f"{target.name}: {nothing}"
                return
            if target.kind is TargetKind.HOST and subnets is not None:
                if index == 0:
                    sm_lid = _sweep_subnet_manager(results)
                if sm_lid is not None:  # the time this host waits for another's sweep, or sweeps, is not its own
                    deadline += _sweep(session, outcome, subnets, sm_lid, index, deadline, stop)
            if index + 1 < snapshot_count:
                wait = first_read + options.interval_s - time.monotonic()
                if wait > 0 and stop.wait(wait):
                    outcome.error = f"{target.name}: collection interrupted"
                    return
    finally:
        if subnets is not None and sm_lid is not None:
            subnets.leave(target.name)  # a host that ends (done, failed, cut) sweeps no more: the next one may
        session.close()


def _sweep(session, outcome: TargetOutcome, subnets: _Subnets, sm_lid: int, index: int, deadline: float,
           stop: threading.Event) -> float:
    """Sweep the host's subnet in snapshot `index` if the chooser gives it this host; the seconds it took (waiting
    for another host's sweep included), which the caller adds to the host's deadline."""
    began = time.monotonic()
    granted = subnets.claim(outcome.target.name, sm_lid, index, deadline, stop)
    if granted is not None:
        found, error = session.run_snapshot(commands.SNAPSHOT_SUBNET, granted, time.monotonic() + granted + 15, stop)
        found, attempt, notices = subnets.finish(outcome.target.name, sm_lid, index, found, error, granted)
        outcome.snapshots[index] = outcome.snapshots.get(index, []) + found
        outcome.sweeps.append(attempt)
        outcome.notices += notices
    return time.monotonic() - began


# Hosts tried per subnet and snapshot at most: a fleet without the sweep tools costs a few quick failures, not one per
# host (each try is an exec on one more host, while the subnet's other hosts wait for its outcome).
SWEEP_TRIES = 5


@dataclass
class _Subnet:
    """One subnet's sweeps: the host that swept it last (it keeps the subnet for the next snapshot: the same vantage
    point), the one sweeping now, the hosts whose sweep failed, and per snapshot whether it is read and how many
    hosts tried it, and when its budget started."""

    chosen: str | None = None
    holder: str | None = None
    failed: set[str] = field(default_factory=set)
    done: set[int] = field(default_factory=set)
    tries: dict[int, int] = field(default_factory=dict)
    started: dict[int, float] = field(default_factory=dict)


class _Subnets:
    """Which host sweeps each InfiniBand subnet (by the LID of its subnet manager) in each snapshot.

    The first host under an SM to ask claims its subnet; it keeps it for the later snapshots. A host whose sweep
    fails (no sweep tool, a tool missing or in error, its session broken or ended) hands the subnet to the next
    host of that subnet, within what is left of the snapshot's one budget (`limits.subnet_sweep_s`, counted from the
    first try) and for at most `tries` hosts. A sweep cut by the budget is partial: the budget is spent, nobody else
    tries. Hosts of a subnet whose sweep is running (or whose chosen host has yet to sweep this snapshot) wait for
    its outcome, up to their own deadline: a failure then finds them still there to take over."""

    def __init__(self, budget_s: int, tries: int = SWEEP_TRIES) -> None:
        self._cond = threading.Condition()
        self._budget = int(budget_s)
        self._tries = tries
        self._subnets: dict[int, _Subnet] = {}
        self._order = 0

    def claim(self, host: str, sm_lid: int, index: int, until: float, stop: threading.Event | None = None,
              ) -> int | None:
        """The whole seconds of budget this host has to sweep subnet `sm_lid` in snapshot `index`, or None when
        another host sweeps it (or has), the budget is spent, or this host failed it before."""
        with self._cond:
            subnet = self._subnets.setdefault(sm_lid, _Subnet())
            while True:
                if index in subnet.done or host in subnet.failed or subnet.tries.get(index, 0) >= self._tries:
                    return None
                begun = subnet.started.get(index)
                left = self._budget - (time.monotonic() - begun if begun is not None else 0.0)
                if left < 1:
                    return None
                mine = subnet.chosen in (None, host) or subnet.chosen in subnet.failed
                if subnet.holder is None and mine:
                    subnet.holder = host
                    subnet.started.setdefault(index, time.monotonic())
                    subnet.tries[index] = subnet.tries.get(index, 0) + 1
                    return int(left)
                wait = until - time.monotonic()
                if wait <= 0 or (stop is not None and stop.is_set()):
                    return None
                self._cond.wait(min(wait, 1.0))  # woken by a finish; the second bounds a missed `stop`

    def finish(self, host: str, sm_lid: int, index: int, found: list[CommandResult], error: str | None,
               budget_s: int) -> tuple[list[CommandResult], dict, list[dict]]:
        """Record a sweep's outcome: (its results, a partial sweep's cut tool renamed as such; the attempt for the
        manifest; failure entries for the tools a partial sweep never started)."""
        port = found[0].qualifier if found else None
        outcome, why, cut = _judge_sweep(host, found, error)
        notices: list[dict] = []
        if outcome == "partial":
            said = (f"partial subnet sweep of SM lid {sm_lid} from {host}: the budget of {self._budget} s "
                    f"(limits.subnet_sweep_s; {budget_s} s of it left for this host) ran out")
            # Worded as no timeout of the host's own (outcome.failures.command_gap): the fabric's read is short, not
            # this host's, whose own snapshot a verdict still vouches for.
            found = [replace(r, error=f"{said} in {r.parser} ({(r.command or r.parser).split()[0]} stopped there)")
                     if r.parser == cut else r for r in found]
            ran = {r.parser for r in found}
            notices = [{"target": host, "parser": tool, "qualifier": port, "snapshot": index,
                        "error": f"{said} before {tool} started"} for tool in commands.SUBNET_SWEEP if tool not in ran]
            why = f"{said} ({cut or 'before ' + commands.SUBNET_SWEEP[len(ran)]})"
        with self._cond:
            subnet = self._subnets[sm_lid]
            subnet.holder = None
            if outcome == "failed":
                subnet.failed.add(host)
            else:
                subnet.done.add(index)
                subnet.chosen = host
            self._order += 1
            order = self._order
            self._cond.notify_all()
        attempt = {"sm_lid": sm_lid, "snapshot": index, "host": host, "port": port, "outcome": outcome,
                   "error": why, "order": order, "tools": [r.parser for r in found if _read_in_full(r)]}
        return found, attempt, notices

    def leave(self, host: str) -> None:
        """This host's collection ended: a subnet it was chosen for goes to the next host that asks."""
        with self._cond:
            for subnet in self._subnets.values():
                if subnet.chosen == host or subnet.holder == host:
                    subnet.failed.add(host)
                    subnet.holder = None if subnet.holder == host else subnet.holder
            self._cond.notify_all()


# Exit statuses that report what the sweep found, not a failure: ibqueryerrors exits 1 when a counter is above its
# threshold (its manual's EXIT STATUS), which with no threshold is any error at all.
_SWEEP_FINDINGS = {"ibqueryerrors": (1,)}


def _read_in_full(r: CommandResult) -> bool:
    return r.error is None and (r.exit_code == 0 or r.exit_code in _SWEEP_FINDINGS.get(r.parser, ()))


def _judge_sweep(host: str, found: list[CommandResult], error: str | None) -> tuple[str, str | None, str | None]:
    """(`complete`, `partial` or `failed`; why, when not complete; the tool the budget cut, for a partial one)."""
    for r in found:  # a tool missing (127) or in error on this host: another host may do better
        if r.exit_code not in (0, 124, None) and r.exit_code not in _SWEEP_FINDINGS.get(r.parser, ()):
            tool = r.command.split()[0] if r.command else r.parser
            return "failed", r.error or f"{tool} exited {r.exit_code} on {host}: {' '.join(r.stderr.split())[:200]}", None
    if not found and (error is None or error.startswith("the host returned no output")):
        return "failed", f"no subnet sweep tool installed on {host}", None  # the script prints nothing then
    cut = next((r.parser for r in found if r.exit_code in (124, None)), None)
    if error is not None and cut is None and len(found) < len(commands.SUBNET_SWEEP):
        return "failed", f"{host}: {error}", None  # the session broke, not the budget
    if cut is not None or len(found) < len(commands.SUBNET_SWEEP):
        return "partial", None, cut
    return "complete", None, None


def sweep_record(outcomes: list[TargetOutcome]) -> list[dict]:
    """The manifest's `subnet_sweeps`: per subnet (SM LID) and snapshot, the host whose sweep is the snapshot's
    (null when none succeeded), through which port, complete or partial, and the hosts tried before it with why."""
    attempts = sorted((a for o in outcomes for a in o.sweeps), key=lambda a: a["order"])
    record: dict[tuple[int, int], dict] = {}
    for a in attempts:
        entry = record.setdefault((a["sm_lid"], a["snapshot"]), {
            "sm_lid": a["sm_lid"], "snapshot": a["snapshot"], "host": None, "port": None, "complete": False,
            "tools": [], "tried": []})
        if a["outcome"] == "failed":
            entry["tried"].append({"host": a["host"], "error": a["error"]})
        else:
            entry.update(host=a["host"], port=a["port"], complete=a["outcome"] == "complete", tools=a["tools"])
            if a["error"]:
                entry["partial"] = a["error"]
    return [record[key] for key in sorted(record)]


def _sweep_subnet_manager(results: list[CommandResult]) -> int | None:
    """The SM LID of the port the subnet sweep goes through: the host's first Active InfiniBand port in the order
    the script finds it (device, then port, as a shell's glob sorts them); None without one."""
    ports = _ib_ports(results)
    active = [name for name, p in ports.items() if p.get("link_layer") == "InfiniBand"
              and p.get("port_state") == "Active" and isinstance(p.get("sm_lid"), (int, float)) and p["sm_lid"] > 0]
    return int(ports[min(active)]["sm_lid"]) if active else None


def _ib_ports(results: list[CommandResult]) -> dict[str, dict]:
    """Each port's ibstat fields (by `<device>/<port>`), from the host's ibstat output."""
    ibstat = next((r for r in results if r.parser == "ibstat" and r.ok), None)
    if ibstat is None:
        return {}
    try:
        samples = parsers.parse("ibstat", ibstat.stdout)
    except ParseError:
        return {}
    ports: dict[str, dict] = {}
    for sample in samples:
        ports.setdefault(sample.entity, {})[sample.metric] = sample.value if sample.text is None else sample.text
    return ports


def _no_rdma_device(results: list[CommandResult]) -> str | None:
    """Why a host's full snapshot holds no RDMA device, as one line, or None when it holds one: the script reads a
    `sysfs_counters` section for every device of /sys/class/infiniband; the verbs read, when there is one, says what
    pyverbs found (`Failed to get devices list` where the kernel has no RDMA subsystem)."""
    if any(r.parser == "sysfs_counters" for r in results):
        return None
    line = "no RDMA device: /sys/class/infiniband lists none"
    verbs = next((r for r in results if r.parser == "verbs" and r.ok), None)
    if verbs is not None:
        try:
            said = [s.text for s in parsers.parse("verbs", verbs.stdout) if s.metric == "verbs_unavailable"]
        except ParseError:
            said = []
        line += f"; {said[0]}" if said else ""
    return line + "; nothing of the fabric can be judged on this host"


def _open(target: Target, known: KnownHosts | None, timeout: float, local: bool = False,
          deadline: float | None = None, jumps: JumpHosts | None = None):
    if local:
        from rdmatool.transport.local import LocalSession

        return LocalSession(target)
    if target.kind is TargetKind.HOST:
        from rdmatool.transport.ssh import Session

        return Session(target, known, timeout, jumps=jumps)
    from rdmatool.transport.switch import SwitchSession

    return SwitchSession(target, known, timeout, deadline)


def _discover_ports(session, target: Target, options: CollectOptions, deadline: float):
    """Ports facing hosts, from the switch's LLDP table: the ones whose per-port counters matter for RoCE."""
    lldp = commands.SWITCH_COMMANDS[target.platform][0]
    results = session.run([commands.PlannedCommand(lldp.parser, None, lldp.command)], options.command_timeout, deadline)
    ports: list[str] = []
    if results and results[0].ok and lldp.parser in parsers.names():
        try:
            for sample in parsers.parse(lldp.parser, results[0].stdout):
                wanted = sample.metric == "lldp_neighbor" and sample.entity not in ports
                if wanted and commands.valid_port_name(target.platform, sample.entity):
                    ports.append(sample.entity)
        except ParseError:
            pass  # recorded when the bundle is analysed; the per-port views are then skipped
    return tuple(ports), results


def collect_to_bundle(
    targets: list[Target], options: CollectOptions, out: str, force: bool = False, progress: Progress | None = None,
) -> tuple[list[TargetOutcome], str]:
    """Collect, then commit the bundle atomically. An existing bundle is replaced by one in which no target is
    usable (`TargetOutcome.usable`: unreachable, framing broken, cut by the deadline, whatever the reason) only with
    `force` (NothingCollected otherwise: a failed night must not erase the last good record)."""
    from rdmatool import bundle as bundle_io

    writer = bundle_io.BundleWriter(out)
    try:
        started = now_iso()
        lock = threading.Lock()
        builder: list = []  # the samples store's builder, made when the first target is done (`_store_builder`)

        def write(outcome: TargetOutcome) -> None:
            # Each target is written and parsed as soon as it is done, while slower hosts still answer: the commit
            # then only joins the parsed shares (parsing everything at the end came after the last host, on top).
            with lock:  # one writer, many collecting threads
                first = len(writer.written)
                _write_outcome(writer, outcome)
                fresh = writer.written[first:]
                writer.sync_soon(fresh)  # made durable while slower hosts still answer, not all at the commit
                if not builder:
                    builder.append(_store_builder())
            builder[0].add(fresh, writer.signatures)

        outcomes = collect_all(targets, options, progress, finished=write)
        finished = now_iso()
        if not force and writer.final.exists() and not any(o.usable for o in outcomes):
            raise NothingCollected(f"{writer.final}: no target was collected; the existing bundle is kept "
                                   "(--force replaces it anyway)" + _first_failure(outcomes))
        failures = [{"target": o.target.name, "error": o.error} for o in outcomes if not o.ok]
        failures += [
            {"target": r.target, "parser": r.parser, "qualifier": r.qualifier, "error": r.error, "snapshot": index}
            for o in outcomes for index, results in sorted(o.snapshots.items()) for r in results if r.error and o.ok
        ]
        failures += [notice for o in outcomes for notice in o.notices]  # a partial subnet sweep's tools not run
        sweeps = sweep_record(outcomes)
        # The parsed samples go with the bundle: its readers then read numbers instead of parsing again.
        store = builder[0] if builder else _store_builder()
        path = writer.commit(targets, _snapshot_times(outcomes, started, finished), failures, options.interval_s,
                             before_commit=store.write, extra={"subnet_sweeps": sweeps} if sweeps else None)
    except BaseException:
        writer.abort()  # never a half bundle under any name
        raise
    return outcomes, str(path)


def nothing_collected(outcomes: list[TargetOutcome]) -> str | None:
    """Why a collection gave nothing to judge (no target answered), as one line, or None: what `collect`,
    `diagnose -i` and `nccl env -i` each ask of a collection before judging it."""
    from rdmatool.outcome.verdict import no_data

    return no_data(len(outcomes), any(o.ok for o in outcomes), [{"error": o.error} for o in outcomes if not o.ok])


def _first_failure(outcomes: list[TargetOutcome]) -> str:
    """The first target's failure and how many more, as the tail of one line (a thousand refusals stay one line)."""
    errors = [o.error for o in outcomes if o.error]
    if not errors:
        return ""
    more = f"; and {len(errors) - 1} more failures" if len(errors) > 1 else ""
    return f": {errors[0]}{more}"


def _store_builder():
    """A new samples store builder. Imported here, when the first target is done: the parse's imports (numpy) then
    load while the other targets are still collected, not between the command's start and its first connection."""
    from rdmatool.table import samples_store

    return samples_store.StoreBuilder()


def _write_outcome(writer, outcome: TargetOutcome) -> None:
    """Write one target's results; a result the bundle refuses (a name that would leave the bundle) fails that
    target alone, with the reason, and its later results are dropped."""
    for index in sorted(outcome.snapshots):
        kept = []
        for result in outcome.snapshots[index]:
            try:
                writer.add(index, result)
            except BundleError as exc:
                outcome.error = outcome.error or f"{outcome.target.name}: {exc}"
                break
            kept.append(result)
        outcome.snapshots[index] = kept


def _snapshot_times(outcomes: list[TargetOutcome], started: str, finished: str) -> list[dict]:
    """Each snapshot's first and last read over the fleet (each output's own read time is in its side file)."""
    times: dict[int, list[str]] = {}
    for outcome in outcomes:
        for index, results in outcome.snapshots.items():
            times.setdefault(index, []).extend(r.started for r in results if r.started)
    if not times:
        return [{"index": 0, "started": started, "finished": finished}]
    return [{"index": i, "started": min(stamps, default=started), "finished": max(stamps, default=finished)}
            for i, stamps in sorted(times.items())]
