"""Incast: N senders -> 1 receiver per leaf, all at once, so that PFC and ECN are seen working under load.

A quiet fabric never pauses, so pairs alone cannot validate the congestion settings. This is the many-to-one pattern
of SuperBench's ib traffic benchmark: on each leaf switch one host receives from `fan_in` others of the same leaf,
the leaf's port toward the receiver being the congestion point (docs/tuning.md §2.4: the egress queue where ECN
marks, the senders' ingress priority groups where PFC fires). Two steps, both values in, values out:

- `plan(hosts, cabling, fan_in)` (pure): per leaf, the first host by name receives, the next `fan_in` send; hosts
  whose cabling is not known form one group of their own (the host-side figures still say something).
- `run(session, groups, deadline)`: every group at once. On the receiver one server per sender (each its own TCP
  port, bounded by `timeout` like every perftest server); once all say they wait for a client, the senders' clients
  together; every server and client cleaned up whatever happens. One PairResult per sender (server = receiver).

What the load did to the counters, read before and after it, is rdmatool.perf.incast_figures'.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rdmatool.perf import engine
from rdmatool.perf.model import NOT_RUN, UNREACHABLE, HostInfo, PairResult
from rdmatool.perf.remote import Background
from rdmatool.topology import Link

_READY = "waiting for client"
# How long the receiver's servers get to all listen before the clients start anyway: an incast's load must start
# together, so this waits for the slowest server, not the first (perftest's own start is well under a second).
READY_S = 10.0


@dataclass(frozen=True)
class Group:
    """One incast: `senders` -> `receiver`, through `switch` (the leaf, None when the cabling is not known);
    `port` is the leaf's port toward the receiver, `sender_ports` each sender's leaf port. `receiver_nics`: the
    receiver's RDMA device each sender is served through (a storage node with several NICs: every one of them
    driven); a sender not named there, through the NIC discovery chose."""

    receiver: str
    senders: tuple[str, ...]
    switch: str | None = None
    port: str | None = None
    sender_ports: tuple[tuple[str, str], ...] = ()
    receiver_nics: tuple[tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        return f"{self.switch or 'fabric'}:{self.receiver}"

    @property
    def members(self) -> tuple[str, ...]:
        return (self.receiver, *self.senders)

    def as_dict(self) -> dict:
        return {"name": self.name, "receiver": self.receiver, "senders": list(self.senders), "switch": self.switch,
                "port": self.port, "sender_ports": dict(self.sender_ports),
                **({"receiver_nics": dict(self.receiver_nics)} if self.receiver_nics else {})}


def cabling_of(links: Iterable[Link], infos: Mapping[str, HostInfo]) -> dict[str, tuple[str, str]]:
    """host -> (leaf switch, its port) of the NIC each host tests with: the link whose host port is that NIC's
    RDMA device or its netdev (the cabling names either)."""
    out: dict[str, tuple[str, str]] = {}
    for link in links:
        info = infos.get(link.host)
        if info is not None and link.nic in (info.device, info.netdev) and link.host not in out:
            out[link.host] = (link.switch, link.switch_port)
    return out


def plan(hosts: Iterable[str], cabling: Mapping[str, tuple[str, str]], fan_in: int) -> list[Group]:
    """One group per leaf with at least two of `hosts`: the first by name receives from the next `fan_in`. The
    hosts of unknown cabling make one group of their own, listed last."""
    if fan_in < 1:
        raise ValueError(f"an incast needs at least one sender, not fan_in={fan_in}")
    by_leaf: dict[str | None, list[str]] = {}
    for host in sorted(set(hosts)):
        by_leaf.setdefault(cabling[host][0] if host in cabling else None, []).append(host)
    groups = []
    for leaf in sorted(by_leaf, key=lambda name: (name is None, name or "")):
        members = by_leaf[leaf]
        if len(members) < 2:
            continue
        receiver, senders = members[0], tuple(members[1:1 + fan_in])
        if leaf is None:
            groups.append(Group(receiver, senders))
        else:
            groups.append(Group(receiver, senders, leaf, cabling[receiver][1],
                                tuple((s, cabling[s][1]) for s in senders)))
    return groups


def needed_s(options) -> float:
    """Seconds one incast round may take, as the engine bounds a pair: the servers' start, then the clients."""
    client_bound, _ = engine._limits(options)
    return max(options.server_ready_s, READY_S) + client_bound + 3


def run(session: engine.PerfSession, groups: list[Group], deadline: float | None = None) -> list[PairResult]:
    """Every group at once (they share no host); a group that cannot finish before `deadline` is not started."""
    session.open()
    if deadline is not None and time.monotonic() + needed_s(session.options) > deadline:
        return [_not_run(session, g.receiver, s, "deadline reached") for g in groups for s in g.senders]
    out: dict[int, list[PairResult]] = {}
    threads = [threading.Thread(target=lambda i=i, g=g: out.__setitem__(i, run_group(session, g)),
                                name=f"rdmatool-incast-{i}", daemon=True) for i, g in enumerate(groups)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)
    except BaseException:
        session.stop.set()  # Ctrl-C: every group ends its commands; whatever is left is killed
        for thread in threads:
            thread.join(30)
        session.cleanup_all()
        raise
    return [r for i in range(len(groups)) for r in out.get(i, [])]


def _not_run(session, receiver: str, sender: str, why: str) -> PairResult:
    options = session.options
    return PairResult(receiver, sender, options.test, options.size, None, None, None, f"{NOT_RUN}{why}", 0, "", "",
                      0.0)


def _blocked(session, name: str) -> str | None:
    state = session.hosts.get(name)
    if state is None:
        return f"{NOT_RUN}{name} is not a host of this run"
    if state.error:
        return f"{UNREACHABLE}{state.error}"
    return state.unusable


def run_group(session: engine.PerfSession, group: Group) -> list[PairResult]:
    """The servers on the receiver, then all the clients at once; one result per sender."""
    options = session.options
    client_bound, server_bound = engine._limits(options)
    t0 = time.monotonic()

    def result(sender, error=None, srv=None, cli=None, srv_out="", cli_out="") -> PairResult:
        srv, cli = srv or engine._Side(), cli or engine._Side()
        return PairResult(group.receiver, sender, options.test, options.size,
                          cli.bw_avg if cli.bw_avg is not None else srv.bw_avg,
                          cli.bw_peak if cli.bw_avg is not None else srv.bw_peak,
                          None, error, 0, srv_out, cli_out, round(time.monotonic() - t0, 3))

    blocked = _blocked(session, group.receiver)
    if blocked:
        return [result(s, blocked) for s in group.senders]
    receiver = session.hosts[group.receiver]
    nics = dict(group.receiver_nics)

    def served_by(sender: str):  # noqa: ANN202 - the receiver's HostInfo for this sender
        return receiver.rails.get(nics.get(sender, ""), receiver.info)

    results: dict[str, PairResult] = {}
    servers: dict[str, Background] = {}
    ports: dict[str, int] = {}
    clients: dict[str, Background] = {}
    try:
        for sender in group.senders:
            blocked = _blocked(session, sender)
            if blocked:
                results[sender] = result(sender, blocked)
                continue
            ports[sender] = session.next_port()
            servers[sender] = receiver.remote.start(
                engine._command(options, served_by(sender), ports[sender], server_bound, None))
        ready_by = time.monotonic() + max(options.server_ready_s, READY_S)
        for job in servers.values():  # every server listening before any client: the load starts together
            job.wait(max(0.0, ready_by - time.monotonic()), session.stop, until=lambda out: _READY in out.lower())
        for sender, job in servers.items():
            if job.done and job.exit_code != 0:
                srv = engine._read(job.output(), job.exit_code, "server", group.receiver, server_bound)
                results[sender] = result(sender, srv.error or f"server {group.receiver}: exited with status "
                                         f"{job.exit_code}", srv_out=job.output())
            elif session.stop.is_set():
                results[sender] = result(sender, f"{NOT_RUN}interrupted", srv_out=job.output())
        for sender in servers:
            if sender not in results:
                info = session.hosts[sender].info
                clients[sender] = session.hosts[sender].remote.start(
                    engine._command(options, info, ports[sender], client_bound, served_by(sender).fabric_address))
        end = time.monotonic() + client_bound + 3
        finished = {s: job.wait(max(0.0, end - time.monotonic()), session.stop) for s, job in clients.items()}
        for sender, job in clients.items():
            srv_job = servers[sender]
            ok = finished[sender] and job.exit_code == 0
            srv_job.wait(2.0 if ok else 0.0, session.stop)  # its report
            srv_job.cleanup()
            srv = engine._read(srv_job.output(), srv_job.exit_code if srv_job.done else None, "server",
                               group.receiver, server_bound)
            cli = engine._read(job.output(), job.exit_code if finished[sender] else None, "client", sender,
                               client_bound)
            if cli.bw_avg is not None and ok:
                error = None
            elif session.stop.is_set():
                error = f"{NOT_RUN}interrupted"
            else:
                error = cli.error or srv.error or f"client {sender}: no result in the perftest output"
            results[sender] = result(sender, error, srv, cli, srv_job.output(), job.output())
    except Exception as exc:  # a broken connection is this group's result, never a crash of the stage
        for sender in group.senders:
            results.setdefault(sender, result(sender, f"{type(exc).__name__}: {exc}"))
    finally:
        for job in (*clients.values(), *servers.values()):
            job.cleanup()
    return [results[s] for s in group.senders]


def saved_groups(path, required: frozenset[str] = frozenset({"name"})) -> list[dict] | None:
    """The incast groups a gate bundle recorded (`incast/results.json` at `path`); None when there is no such
    file. BundleError names a file that cannot be read, or whose `groups` is not a list of groups each holding
    `required` (the gate's replay needs every figure; a trial the names)."""
    import json

    from rdmatool import files
    from rdmatool.errors import BundleError

    if not path.is_file():
        return None
    try:
        groups = json.loads(files.read_regular_text(path, errors="strict")).get("groups")
    except files.UnsafeFileError as exc:
        raise BundleError(f"{path}: {exc.reason}; not read") from None
    except (OSError, ValueError, AttributeError, RecursionError) as exc:
        raise BundleError(f"{path}: unreadable incast results ({type(exc).__name__})") from None
    if not isinstance(groups, list) or not all(isinstance(g, dict) and set(g) >= required for g in groups):
        raise BundleError(f"{path}: `groups` must be a list of incast groups"
                          + (", each with its name" if required == {"name"} else f" with {', '.join(sorted(required))}"))
    return groups
