"""`rdmatool watch`: watch the fabric's light counters for a while (or until stopped), judge them over time.

The loop, the history, the judgement and the files are rdmatool.watch's; here only the options, the signals and
the exit code. Findings go to stdout as JSON lines, notes (a host in a gap, the summary) to stderr.
"""

from __future__ import annotations

import json
import re
import signal
import threading
import time
from pathlib import Path
from typing import Annotated

import typer

from rdmatool.cli import _config
from rdmatool.cli._output import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_USAGE, die
from rdmatool.cli._targets import exclude_param, ignore_unknown_param, limit_param
from rdmatool.cli.exit_codes import epilog

_DURATION = re.compile(r"(?P<n>\d+(?:\.\d+)?)(?P<unit>[smhd]?)")
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def register(app: typer.Typer) -> None:
    app.command("watch", epilog=epilog("watch"))(watch_command)


def duration_seconds(text: str) -> float:
    """`90`, `90s`, `30m`, `1h`, `2d` in seconds; 0 for ever. ValueError otherwise."""
    found = _DURATION.fullmatch(text.strip().lower())
    if not found:
        raise ValueError(f"--duration {text!r}: give seconds or a number with s, m, h or d (0: until stopped)")
    return float(found["n"]) * _SECONDS[found["unit"]]


def watch_command(
    inventory_file: Annotated[str, typer.Option("-i", "--inventory", help=_config.INVENTORY_HELP)] = None,
    local: Annotated[bool, typer.Option("--local",
                                        help="Watch this machine itself (no SSH, no inventory).")] = False,
    limit: Annotated[str, limit_param()] = None,
    exclude: Annotated[str, exclude_param()] = None,
    ignore_unknown: Annotated[bool, ignore_unknown_param()] = False,
    interval: Annotated[float, typer.Option("--interval", min=0.1, metavar="S",
                                            help="Seconds between readings.")] = 10.0,
    duration: Annotated[str, typer.Option("--duration", metavar="D",
                                          help="How long: 90s, 30m, 1h, 2d; 0 until stopped.")] = "1h",
    out: Annotated[str, typer.Option("--out", metavar="DIR", help="Keep the history and findings here (a "
                                                                  "restart resumes from it).")] = None,
    textfile_dir: Annotated[str, typer.Option(
        "--textfile", metavar="DIR",
        help="node_exporter textfile directory, rewritten each interval.")] = None,
    probe: Annotated[str, typer.Option(
        "--probe", metavar="KIND",
        help="latency: short rail-aligned latency tests between rotating pairs, within --probe-budget.")] = None,
    playbooks: Annotated[str, typer.Option("--playbooks", help=_config.PLAYBOOKS_HELP)] = None,
    switch_every: Annotated[int, typer.Option(
        "--switch-every", min=0, metavar="N",
        help="Read the switches facing the hosts (inventory links) every N intervals; 0: never.")] = 3,
    forks: Annotated[int, typer.Option("--forks", min=1, metavar="N", help="Hosts read at once.")] = 64,
    timeout: Annotated[int, typer.Option("--timeout", min=1, metavar="S",
                                         help="Per-command timeout, seconds.")] = 20,
    accept_new_host_keys: Annotated[bool, typer.Option("--accept-new-host-keys",
                                                       help="Record unknown host keys.")] = False,
    known_hosts: Annotated[str, typer.Option("--known-hosts",
                                             help="Extra known_hosts file (new keys go here).")] = None,
) -> None:
    """Watch the hosts' pause, ECN, CNP, drop and error counters every interval; print findings over time
    (periodic spikes, counters that start to grow) as JSON lines. SIGTERM ends it cleanly."""
    from rdmatool.errors import RdmatoolError
    from rdmatool.watch import store
    from rdmatool.watch.history import Shape
    from rdmatool.watch.light import HostReader
    from rdmatool.watch.loop import Watch, WatchOptions

    seconds = _checked(duration, probe, local)
    targets = _targets(local, _config.inventory(inventory_file), limit, exclude, ignore_unknown)
    out_dir = _directory(out, create=True) if out else None
    text_dir = _directory(textfile_dir, create=False) if textfile_dir else None
    try:
        rules = _rules(_config.playbooks(playbooks))
        history = store.load(out_dir, Shape()) if out_dir else None
        opener = _opener(local, known_hosts, accept_new_host_keys)
    except RdmatoolError as exc:
        die(f"rdmatool watch: {exc}", EXIT_USAGE)
    readers = [HostReader(t, opener, timeout) for t in targets]
    if switch_every and not local:
        readers += _switch_readers(_config.inventory(inventory_file), targets, switch_every, timeout, known_hosts,
                                   accept_new_host_keys, exclude)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    options = WatchOptions(interval_s=interval, duration_s=seconds, forks=forks, out=out_dir, textfile=text_dir)
    note = lambda line: typer.echo(f"rdmatool watch: {line}", err=True)  # noqa: E731 - one line, said once
    prober = None
    if probe:
        from rdmatool.watch.probe import LatencyProbe, probe_options

        prober = LatencyProbe(targets, probe_options(interval, known_hosts=known_hosts,
                                                     accept_new_host_keys=accept_new_host_keys, forks=forks), stop,
                              _cabling(_config.inventory(inventory_file)))
        note(prober.coverage())
    watch = Watch(readers, options, rules, _emit, note, history=history, probe=prober)
    try:
        outcome = watch.run(stop)
    except RdmatoolError as exc:  # the output directory became unwritable: said, with the file
        die(f"rdmatool watch: {exc}", EXIT_USAGE)
    _conclude(outcome, targets, readers)


def _checked(duration: str, probe: str | None, local: bool) -> float:
    """The seconds --duration gives; a bad duration or --probe is one line and exit 2."""
    try:
        seconds = duration_seconds(duration)
    except ValueError as exc:
        die(f"rdmatool watch: {exc}", EXIT_USAGE)
    if probe not in (None, "latency"):
        die(f"rdmatool watch: --probe {probe!r}: the one kind is latency", EXIT_USAGE)
    if probe and local:
        die("rdmatool watch: --probe needs -i INVENTORY: a latency probe is between two hosts", EXIT_USAGE)
    return seconds


def _conclude(outcome, targets: list, readers: list) -> None:
    """The closing line on stderr, then the exit: 3 when no host was ever read, 1 when a finding reached error."""
    resumed = f" (resumed after {outcome.resumed_from})" if outcome.resumed_from else ""
    hosts_read = outcome.read_ever & {t.name for t in targets}
    switches = f", {len(outcome.read_ever - hosts_read)} of {len(readers) - len(targets)} switches" \
        if len(readers) > len(targets) else ""
    typer.echo(f"rdmatool watch: {outcome.intervals} intervals{resumed}, {len(hosts_read)} of "
               f"{len(targets)} hosts read{switches}, {len(outcome.open_findings)} findings open"
               f"{' (stopped)' if outcome.stopped else ''}", err=True)
    if not hosts_read:
        raise typer.Exit(EXIT_INCONCLUSIVE)
    if outcome.worst is not None and outcome.worst.value in ("error", "critical"):
        raise typer.Exit(EXIT_FAIL)


def _emit(event: dict) -> None:
    typer.echo(json.dumps(event, sort_keys=True))


def _targets(local: bool, inventory_file: str | None, limit, exclude, ignore_unknown) -> list:
    from rdmatool.model import TargetKind

    if local:
        if inventory_file or limit:
            die("rdmatool watch: --local watches this machine; it takes no -i or --limit", EXIT_USAGE)
        from rdmatool.transport.local import local_target

        return [local_target()]
    if not inventory_file:
        die("rdmatool watch: give -i INVENTORY (or `inventory` in the config file), or --local", EXIT_USAGE)
    from rdmatool.cli.collect_cmd import load_targets

    hosts = [t for t in load_targets(inventory_file, limit, None, exclude=exclude, ignore_unknown=ignore_unknown)
             if t.kind is TargetKind.HOST]
    if not hosts:
        die(f"rdmatool watch: {inventory_file}: no host selected (switches are not watched)", EXIT_INCONCLUSIVE)
    return hosts


def _switch_readers(inventory_file: str, hosts: list, every: int, timeout: int, known_hosts: str | None,
                    accept_new: bool, exclude: str | None = None) -> list:
    """A reader per switch the inventory's links cable to a watched host, on those ports (none without links);
    a switch --exclude leaves out is not read (a switch under maintenance, a CLI that hangs)."""
    from rdmatool import inventory
    from rdmatool.model import TargetKind
    from rdmatool.transport.hostkeys import KnownHosts
    from rdmatool.transport.switch import SwitchSession
    from rdmatool.watch.switches import SwitchReader, facing

    loaded = inventory.load_inventory(inventory_file)
    switches = [t for t in loaded.targets if t.kind is TargetKind.SWITCH and t.platform is not None]
    if exclude:  # its unknown names were said (or refused) when the hosts were chosen
        switches = inventory.selection(switches, exclude=exclude, ignore_unknown=True).targets
    ports = facing(switches, loaded.links, {t.name for t in hosts})
    known = KnownHosts(known_hosts, accept_new)

    def opener(target, deadline: float) -> SwitchSession:
        # The session's set-up is bounded by the interval's deadline too, as its login is (at least a second): a
        # switch that takes the connection and never answers (a hung sshd, a management CPU pegged) is a gap, not
        # every interval of its turn stalled for the 10 s of a fixed connect timeout, the hosts' readings with it.
        return SwitchSession(target, known, max(1.0, min(10.0, deadline - time.monotonic())), deadline)

    return [SwitchReader(t, ports[t.name], opener, timeout, every) for t in switches if t.name in ports]


def _cabling(inventory_file: str) -> dict[tuple[str, str], str]:
    """(host, NIC) -> switch from the inventory's `links:` (read already once: it loads)."""
    from rdmatool import inventory

    return {(link.host, link.nic): link.switch for link in inventory.load_inventory(inventory_file).links}


def _directory(path: str, create: bool) -> Path:
    folder = Path(path)
    try:
        if create:
            folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        die(f"rdmatool watch: {folder}: cannot create ({exc.strerror or exc})", EXIT_USAGE)
    if not folder.is_dir():
        die(f"rdmatool watch: {folder}: not a directory", EXIT_USAGE)
    return folder


def _rules(directory: str | None) -> list:
    from rdmatool.diagnose.pipeline import default_playbooks
    from rdmatool.rules.playbook import load_dir

    return load_dir(directory or default_playbooks())


def _opener(local: bool, known_hosts: str | None, accept_new: bool):
    if local:
        from rdmatool.transport.local import LocalSession

        return lambda target, deadline: LocalSession(target)
    from rdmatool.transport.hostkeys import KnownHosts
    from rdmatool.transport.jump import JumpHosts
    from rdmatool.transport.ssh import Session

    known, jumps = KnownHosts(known_hosts, accept_new), JumpHosts()  # one connection per bastion for the watch
    # the set-up within the interval's deadline (monotonic), at least a second, as a switch's (_switch_readers)
    return lambda target, deadline: Session(target, known, max(1.0, min(10.0, deadline - time.monotonic())),
                                            jumps=jumps)
