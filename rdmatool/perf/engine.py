"""Run perftest schedules over SSH: rounds in sequence, the pairs of a round in parallel; failures are values.

Rail-aligned schedules (`run_gate_perf(rail_planner=...)`): a pair runs on a rail, NIC k of A against NIC k of B
(`PerfSession` knows every usable NIC of the fleet's link layer per host); round i of every rail runs at once, a
NIC (host, rail) being the busy unit, and the rails are attributed apart (rdmatool.pairs.attribution.attribute_rails).

Each pair: the server on A (`timeout -k 2 <ready + D + slack>`), once it says it waits for a client (or after
`server_ready_s`) the client on B toward A's fabric address, both outputs parsed. Every server and client gets
cleaned up whatever happens (client done, timeout, error, Ctrl-C): the pair's `finally`, then the session's.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace

from rdmatool import commands
from rdmatool.errors import ParseError
from rdmatool.model import Target, TargetKind
from rdmatool.parsers import perftest as perftest_parser
from rdmatool.perf import discovery
from rdmatool.perf.attribution import attribute, attribute_rails, classify, with_down_nics
from rdmatool.perf.model import NOT_RUN, UNREACHABLE, Attribution, HostInfo, PairResult, PerfOptions
from rdmatool.perf.remote import Background, Remote
from rdmatool.perf.schedule import Pair, RailPair, confirmation_for, gate_rounds, rail_rounds, split_conflicts
from rdmatool.transport.hostkeys import KnownHosts
from rdmatool.transport.jump import JumpHosts
from rdmatool.transport.ssh import describe_connect_error

Progress = Callable[[str], None]
_DISCOVER_TIMEOUT = 20.0
_DISCOVER_TRIES = 2  # a read cut by its bound is tried once more: a loaded host's sshd can be slow to start it


@dataclass
class HostState:
    target: Target
    remote: Remote | None = None
    info: HostInfo | None = None
    rails: dict[str, HostInfo] = field(default_factory=dict)  # device -> port: the NICs a rail schedule may test
    error: str | None = None  # unreachable (connection) error, or its discovery not read to its end
    unusable: str | None = None  # reachable, but no port to test with
    # device -> (link layer, why perftest cannot run on it): a NIC whose port is down, a RoCE NIC without a usable GID
    down: dict[str, tuple[str, str]] = field(default_factory=dict)
    usable: dict[str, str] = field(default_factory=dict)  # device -> link layer of every NIC perftest can run on


@dataclass(frozen=True)
class DiscoveryUnread:
    """A discovery that did not run to its end (timed out, interrupted, the shell failed): its host is missing."""
    message: str


class PerfSession:
    """Connections to the hosts (one each), what discovery found, and the port counter; close() cleans up.

    Hosts behind a ProxyJump bastion share one connection to it for the whole session, a channel each: `open`
    connects to up to `forks` hosts at once, and as many logins at once to one bastion would meet its `MaxStartups`
    (hosts refused at random, a gate inconclusive for no fault of theirs)."""

    def __init__(self, targets: list[Target], options: PerfOptions, stop: threading.Event | None = None) -> None:
        self.options = options
        self.stop = stop or threading.Event()
        self.hosts = {t.name: HostState(t) for t in targets if t.kind is TargetKind.HOST}
        self._ports = itertools.count()
        self._lock = threading.Lock()
        self._jumps = JumpHosts()
        self.opened = False

    def __enter__(self) -> PerfSession:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        if self.opened:
            return
        self.opened = True
        known = KnownHosts(self.options.known_hosts, self.options.accept_new_host_keys)
        per_host: dict[str, list[HostInfo]] = {}

        def connect(state: HostState) -> None:
            try:
                state.remote = Remote(state.target, known, self.options.connect_timeout, self._jumps)
            except Exception as exc:
                state.error = describe_connect_error(state.target, exc)
                return
            try:
                text = self._discover(state)
            except Exception as exc:  # the channel failed: the host's ports are not known, not absent
                state.error = f"{state.target.name}: discovery failed: {type(exc).__name__}: {exc}"
                return
            if isinstance(text, DiscoveryUnread):
                state.error = text.message
            else:
                per_host[state.target.name] = discovery.candidates(state.target.name, state.target.address, text)
                state.down = discovery.unusable(text)
                state.usable = {c.device: c.link_layer for c in per_host[state.target.name]}

        with ThreadPoolExecutor(max_workers=max(1, min(self.options.forks, len(self.hosts) or 1))) as pool:
            list(pool.map(connect, self.hosts.values()))
        for name, choice in discovery.choose(per_host, self.options.device, self.options.link_layer).items():
            if isinstance(choice, str):
                self.hosts[name].unusable = choice
            else:
                self.hosts[name].info = choice
                # one fixed `device`: that NIC alone; else every NIC of the chosen link layer, one rail each
                self.hosts[name].rails = {choice.device: choice} if self.options.device else \
                    discovery.rail_ports(per_host[name], choice)

    def _discover(self, state: HostState) -> str | DiscoveryUnread:
        """The discovery script's whole output, or why it was not read to its end.

        Only a script that ran to its `exit 0` says what ports a host has: a read cut by its bound, or a shell that
        failed, says nothing of them, and taking its (empty) output for "no port" would name a healthy node bad.
        Such a host is missing (the verdict inconclusive), as one unreachable is."""
        assert state.remote is not None
        found = None
        for _ in range(_DISCOVER_TRIES):
            found = state.remote.run(commands.PERF_DISCOVER_COMMAND, _DISCOVER_TIMEOUT,
                                     stdin=commands.PERF_DISCOVER_SCRIPT, stop=self.stop)
            if not found.timed_out or self.stop.is_set():
                break
        name = state.target.name
        if found.timed_out:
            return DiscoveryUnread(f"{name}: discovery not read: "
                                   + ("interrupted" if self.stop.is_set() else
                                      f"no answer within {_DISCOVER_TIMEOUT:g} s, {_DISCOVER_TRIES} tries"))
        if found.exit_code != 0:
            said = found.stderr.strip().splitlines()
            return DiscoveryUnread(f"{name}: discovery not read: the shell exited with status {found.exit_code}"
                                   + (f": {said[-1][:200]}" if said else ""))
        return found.stdout

    def close(self) -> None:
        for state in self.hosts.values():
            if state.remote is not None:
                with contextlib.suppress(Exception):  # closing never masks what happened before
                    state.remote.close()
                state.remote = None
        # after every Remote: a host behind a bastion is reached through it, and its close above kills its
        # perftest commands over that path (cut first, they would run on until their `timeout` bound)
        self._jumps.close()

    def cleanup_all(self) -> None:
        for state in self.hosts.values():
            if state.remote is not None:
                state.remote.cleanup_all()

    @property
    def missing(self) -> dict[str, str]:
        return {n: s.error for n, s in self.hosts.items() if s.error}

    @property
    def reachable(self) -> list[str]:
        return [n for n, s in self.hosts.items() if not s.error]

    @property
    def devices(self) -> dict[str, str]:
        """host -> the RDMA device its perftest runs on, as discovery chose it (hosts with a usable port)."""
        return {n: s.info.device for n, s in self.hosts.items() if s.info}

    @property
    def rails(self) -> dict[str, list[str]]:
        """host -> the RDMA devices a rail-aligned schedule may test on it (hosts with a usable port)."""
        return {n: sorted(s.rails) for n, s in self.hosts.items() if s.info}

    @property
    def discovered(self) -> dict[str, dict]:
        return {n: (s.info.as_dict() if s.info else {"error": s.error or s.unusable}) for n, s in self.hosts.items()}

    def untested(self, rail_aligned: bool) -> dict[str, dict[str, str]]:
        """host -> device -> why this run does not test that NIC (every RDMA NIC of a reached host is tested or
        named here): its port is down or has no usable GID, it is of the other link layer, or (not rail-aligned)
        the run tests one NIC per host."""
        out: dict[str, dict[str, str]] = {}
        for name, state in self.hosts.items():
            if state.error:
                continue
            tested = set(state.rails) if rail_aligned else ({state.info.device} if state.info else set())
            layer = state.info.link_layer if state.info else None
            why = {device: f"{kind or 'RDMA'} {reason}" for device, (kind, reason) in state.down.items()}
            for device, kind in state.usable.items():
                if device in tested:
                    continue
                if self.options.device:
                    why[device] = f"{kind}: not the run's device {self.options.device}"
                elif layer and kind != layer:
                    why[device] = f"{kind}: the run tests {layer} NICs"
                else:
                    why[device] = f"{kind}: one NIC per host in this run ({state.info.device if state.info else '-'})"
            if why:
                out[name] = dict(sorted(why.items()))
        return out

    def down_rails(self) -> dict[tuple[str, str], str]:
        """(host, device) -> why: a NIC perftest cannot run on (its port down, no usable GID) while the NIC of the
        same name runs on another host of the run — that host's rail is down. A device down on every host (a port
        never cabled) is no rail of the fleet: it is named by `untested`, not blamed."""
        elsewhere: dict[str, set[str]] = {}
        for name, state in self.hosts.items():
            for device in state.usable:
                elsewhere.setdefault(device, set()).add(name)
        return {(name, device): f"{kind or 'RDMA'} {reason}" for name, state in sorted(self.hosts.items())
                if not state.error and not self.options.device for device, (kind, reason) in state.down.items()
                if elsewhere.get(device, set()) - {name}}

    def expected_gbps(self, rail: str | None = None) -> dict[str, float]:
        """host -> the line rate of the port it tests with (on `rail`: of that NIC)."""
        ports = {n: s.info if rail is None else s.rails.get(rail) for n, s in self.hosts.items()}
        return {n: p.rate_gbps for n, p in ports.items() if p is not None and p.rate_gbps}

    def next_port(self) -> int:
        with self._lock:
            return self.options.port_base + next(self._ports) % 2000


# --------------------------------------------------------------------------------------------------- one pair


def _limits(options: PerfOptions) -> tuple[int, int]:
    """(client bound, server bound) in seconds for `timeout`: duration + slack; the server also waits for us."""
    run = options.duration_s if options.is_bw else options.iterations / 1000.0
    client = int(run + options.slack_s + 0.999)
    return client, int(client + options.server_ready_s + 1)


def _command(options: PerfOptions, info: HostInfo, port: int, limit: int, server_address: str | None) -> str:
    return commands.perftest_command(
        options.test, info.device, info.ib_port, info.gid_index, port, limit, duration_s=options.duration_s,
        size_bytes=options.size, qps=options.qps, iterations=options.iterations, server_address=server_address)


@dataclass
class _Side:
    bw_avg: float | None = None
    bw_peak: float | None = None
    lat: dict | None = None
    error: str | None = None


def _read(output: str, exit_code: int | None, role: str, name: str, bound: int) -> _Side:
    side = _Side()
    messages: list[str] = []
    try:
        samples = perftest_parser.parse(output)
    except ParseError as exc:
        samples = []
        messages.append(f"unparsed output ({exc})")
    lat: dict = {}
    tool_errors: list[str] = []
    for s in samples:
        if s.metric == "bw_avg_gbps" and s.value is not None:
            side.bw_avg = float(s.value)
        elif s.metric == "bw_peak_gbps" and s.value is not None:
            side.bw_peak = float(s.value)
        elif s.metric.startswith("lat_") and s.value is not None:
            lat[s.metric] = float(s.value)
        elif s.metric == "tool_error":
            tool_errors.append(s.text or "perftest error")
    messages[:0] = tool_errors  # perftest's own first complaint says most
    side.lat = lat or None
    if exit_code is None or exit_code in (124, 137):
        messages.insert(0, f"timed out (bound {bound} s)")
    elif exit_code == 127:
        messages.insert(0, "perftest not installed")
    elif exit_code != 0 and not messages:
        messages.append(f"exited with status {exit_code}")
    if messages:
        side.error = f"{role} {name}: {messages[0]}"
    return side


def _nic(info: HostInfo | None) -> str | None:
    """`<device>/<port>` of the port a pair end ran on (None before it was chosen)."""
    return None if info is None else f"{info.device}/{info.ib_port}"


def run_pair(session: PerfSession, server: str, client: str, round_no: int, rail: str | None = None) -> PairResult:
    """One pair: on each host's tested port, or on `rail` (that NIC on both hosts)."""
    options = session.options
    t0 = time.monotonic()

    def result(error: str | None, srv: _Side | None = None, cli: _Side | None = None, srv_out: str = "",
               cli_out: str = "") -> PairResult:
        srv, cli = srv or _Side(), cli or _Side()
        return PairResult(
            server, client, options.test, options.size,
            cli.bw_avg if cli.bw_avg is not None else srv.bw_avg,
            cli.bw_peak if cli.bw_avg is not None else srv.bw_peak,
            cli.lat or srv.lat, error, round_no, srv_out, cli_out, round(time.monotonic() - t0, 3), rail,
            _nic(a_info), _nic(b_info))

    a_info = b_info = None

    a, b = session.hosts.get(server), session.hosts.get(client)
    for name, state in ((server, a), (client, b)):
        if state is None:
            return result(f"{NOT_RUN}{name} is not a host of this run")
        if state.error:
            return result(f"{UNREACHABLE}{state.error}")
    for state in (a, b):
        if state.unusable:
            return result(state.unusable)
    a_info, b_info = (a.info, b.info) if rail is None else (a.rails.get(rail), b.rails.get(rail))
    for name, info in ((server, a_info), (client, b_info)):
        if info is None:
            return result(f"{NOT_RUN}{name} has no usable port on rail {rail}")
    if session.stop.is_set():
        return result(f"{NOT_RUN}interrupted")
    client_bound, server_bound = _limits(options)
    port = session.next_port()
    srv_job: Background | None = None
    cli_job: Background | None = None
    try:
        srv_job = a.remote.start(_command(options, a_info, port, server_bound, None))
        srv_job.wait(options.server_ready_s, session.stop, until=lambda out: "waiting for client" in out.lower())
        if srv_job.done and srv_job.exit_code != 0:  # the server failed before any client came
            srv = _read(srv_job.output(), srv_job.exit_code, "server", server, server_bound)
            return result(srv.error or f"server {server}: exited with status {srv_job.exit_code}", srv_out=srv_job.output())
        if session.stop.is_set():
            return result(f"{NOT_RUN}interrupted", srv_out=srv_job.output())
        cli_job = b.remote.start(_command(options, b_info, port, client_bound, a_info.fabric_address))
        finished = cli_job.wait(client_bound + 3, session.stop)
        if not finished:
            cli_job.cleanup()
        srv_job.wait(2.0 if finished and cli_job.exit_code == 0 else 0.0, session.stop)  # its report
        srv_job.cleanup()
        srv = _read(srv_job.output(), srv_job.exit_code if srv_job.done else None, "server", server, server_bound)
        cli = _read(cli_job.output(), cli_job.exit_code if finished else None, "client", client, client_bound)
        have = (cli.bw_avg is not None or bool(cli.lat)) and finished and cli_job.exit_code == 0
        if have:
            error = None
        elif session.stop.is_set():
            error = f"{NOT_RUN}interrupted"
        else:
            error = cli.error or srv.error or f"client {client}: no result in the perftest output"
            if not finished and srv.error and "timed out" in (cli.error or ""):
                error = f"{cli.error}; {srv.error}"
        return result(error, srv, cli, srv_job.output(), cli_job.output())
    except Exception as exc:  # a broken connection or a refused command is this pair's result, never a crash
        return result(f"{type(exc).__name__}: {exc}", srv_out=srv_job.output() if srv_job else "",
                      cli_out=cli_job.output() if cli_job else "")
    finally:
        for job in (cli_job, srv_job):
            if job is not None:
                job.cleanup()


# --------------------------------------------------------------------------------------------------- schedules


def _run_round(session: PerfSession, pairs: list[Pair | RailPair], round_no: int) -> list[PairResult]:
    pool = ThreadPoolExecutor(max_workers=max(1, len(pairs)), thread_name_prefix="rdmatool-perf")
    futures = [pool.submit(run_pair, session, p[0], p[1], round_no, p[2] if len(p) == 3 else None) for p in pairs]
    try:
        while True:
            done, pending = wait(futures, timeout=0.2, return_when=FIRST_EXCEPTION)
            if not pending:
                break
    except BaseException:
        # Ctrl-C: every pair sees `stop`, ends its commands and returns; then whatever is left is killed.
        session.stop.set()
        wait(futures, timeout=30)
        session.cleanup_all()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return [f.result() for f in futures]


def run_schedule(targets: list[Target], rounds: list[list[Pair | RailPair]], options: PerfOptions,
                 deadline: float | None = None, session: PerfSession | None = None,
                 progress: Progress | None = None, first_round: int = 0) -> list[PairResult]:
    """Run `rounds` in sequence, the pairs of a round in parallel (a round in which a node appears twice is split
    into conflict-free sub-rounds; a pair (server, client, rail) runs on that rail, a NIC being busy rather than its
    host, so the rails share a round). `deadline` is a time.monotonic() value: a round that cannot finish before it
    is not started, its pairs come back as `not run: deadline` results."""
    own = session is None
    session = session or PerfSession(targets, options)
    session.open()
    client_bound, server_bound = _limits(options)
    results: list[PairResult] = []
    try:
        for index, pairs in enumerate(rounds):
            round_no = first_round + index
            for sub in split_conflicts(list(pairs)):
                late = deadline is not None and time.monotonic() + options.server_ready_s + client_bound > deadline
                if late or session.stop.is_set():
                    why = "deadline reached" if late else "interrupted"
                    results += [PairResult(p[0], p[1], options.test, options.size, None, None, None,
                                           f"{NOT_RUN}{why}", round_no, "", "", 0.0, p[2] if len(p) == 3 else None)
                                for p in sub]
                    continue
                if progress:
                    progress(f"round {round_no}: {len(sub)} pairs")
                results += _run_round(session, sub, round_no)
    finally:
        if own:
            session.close()
    _ = server_bound
    return results


def run_gate_perf(targets: list[Target], options: PerfOptions, expected_gbps: dict[str, float] | float | None,
                  rounds: int = 3, deadline: float | None = None, session: PerfSession | None = None,
                  threshold: float = 0.9, seed: int = 0, progress: Progress | None = None,
                  planner: Callable[[list[str]], list[list[Pair]]] | None = None,
                  leaf_of: dict[str, str] | None = None,
                  rail_planner: Callable[[list[str]], dict[str, list[list[Pair]]]] | None = None,
                  rail_leaves: dict[str, dict[str, str]] | None = None) -> tuple[list[PairResult], Attribution]:
    """gate_rounds over the reachable hosts, a confirmation round for the suspects against known-good peers, then
    attribute(). `expected_gbps` None: each node's discovered line rate (explicit values win per node).
    `planner` (reachable hosts -> rounds) replaces gate_rounds, e.g. with schedule.topology_rounds; `leaf_of`
    (host -> leaf) makes the confirmation topology-aware (schedule.topology_confirmation).

    `rail_planner` (reachable hosts -> rail -> rounds, e.g. schedule.rail_plan) makes the run rail-aligned: round i
    of every rail at once, then one confirmation round holding each rail's own (topology-aware with `rail_leaves`,
    rail -> host -> leaf), then the attribution per rail (bad nodes apart from bad NICs)."""
    own = session is None
    session = session or PerfSession(targets, options)
    session.open()
    try:
        nodes = session.reachable
        if rail_planner is not None:
            results, attribution = _run_rails(targets, options, session, rail_planner(nodes), expected_gbps,
                                              threshold, deadline, progress, rail_leaves or {})
        else:
            expected = _expected(session, expected_gbps)
            plan = planner(nodes) if planner else gate_rounds(nodes, rounds=rounds, seed=seed)
            results = run_schedule(targets, plan, options, deadline, session, progress)
            statuses = {pair: v.status for pair, v in classify(results, expected, threshold).items()}
            confirm = confirmation_for(statuses, nodes, leaf_of)
            if confirm:
                results += run_schedule(targets, [confirm], options, deadline, session, progress,
                                        first_round=len(plan))
            attribution = attribute(results, expected, threshold)
    finally:
        if own:
            session.close()
    missing = tuple(sorted(set(attribution.missing) | set(session.missing)))
    # A host whose rail is down has passed nothing on that rail: its NIC is bad, named with why (not "at speed").
    return results, with_down_nics(replace(attribution, missing=missing), session.down_rails())


def _run_rails(targets: list[Target], options: PerfOptions, session: PerfSession, plan: dict[str, list[list[Pair]]],
               expected_gbps: dict[str, float] | float | None, threshold: float, deadline: float | None,
               progress: Progress | None, rail_leaves: dict[str, dict[str, str]]) -> tuple[list[PairResult], Attribution]:
    """A rail plan run side by side, each rail's confirmation in one shared round, attributed rail by rail."""
    merged = rail_rounds(plan)
    results = run_schedule(targets, merged, options, deadline, session, progress)
    expected = {rail: _expected(session, expected_gbps, rail) for rail in plan}
    confirm: list[RailPair] = []
    for rail in plan:
        mine = [r for r in results if r.rail == rail]
        statuses = {pair: v.status for pair, v in classify(mine, expected[rail], threshold).items()}
        members = list(rail_leaves.get(rail) or {n for rounds in plan[rail] for pair in rounds for n in pair})
        confirm += [(s, c, rail) for s, c in confirmation_for(statuses, members, rail_leaves.get(rail))]
    if confirm:
        results += run_schedule(targets, [confirm], options, deadline, session, progress, first_round=len(merged))
    return results, attribute_rails(results, expected, threshold)


def _expected(session: PerfSession, expected_gbps: dict[str, float] | float | None,
              rail: str | None = None) -> dict[str, float]:
    rates = session.expected_gbps(rail)
    if isinstance(expected_gbps, dict):
        return {**rates, **expected_gbps}
    if expected_gbps is not None:
        return dict.fromkeys(session.hosts, float(expected_gbps))
    return rates
