"""`rdmatool capture`: one bounded, passive packet capture on a host, streamed into a bundle.

Exit 0 captured, 2 usage (not exactly one host, a bad device name, a path that is no bundle), 3 nothing captured
(unreachable, tcpdump missing or not permitted, no such interface).
"""

from __future__ import annotations

from typing import Annotated

import typer

from rdmatool import limits
from rdmatool.cli import _config
from rdmatool.cli._output import EXIT_INCONCLUSIVE, EXIT_USAGE, die
from rdmatool.cli._targets import exclude_param, ignore_unknown_param, limit_param
from rdmatool.cli.exit_codes import epilog

# The upper bounds, checked in the command rather than by typer, whose help would print each range where the option
# names need the room at 80 columns. --max-packets' bound is the run's limits.capture_packets (a million by default:
# minutes of a busy RoCE class at the default snap length, a file more than `rdmatool pcap` reads by default).
LIMITS = {"duration": 3600, "max_packets": limits.DEFAULTS["capture_packets"], "snaplen": 65535}


def register(app: typer.Typer) -> None:
    app.command("capture", epilog=epilog("capture"))(capture_command)


def capture_command(
    *,  # keyword-only, as typer passes them: lets a required option follow one with a default
    inventory_file: Annotated[str, typer.Option("-i", "--inventory", help=_config.INVENTORY_HELP)] = None,
    limit: Annotated[str, limit_param(help="The one host to capture on.")],
    exclude: Annotated[str, exclude_param()] = None,
    ignore_unknown: Annotated[bool, ignore_unknown_param()] = False,
    device: Annotated[str, typer.Option("--device", help="RDMA device to capture on (e.g. mlx5_0).")] = None,
    netdev: Annotated[str, typer.Option("--netdev", help="Or a network device (e.g. eth2).")] = None,
    duration: Annotated[int, typer.Option("--duration", min=1, metavar="S",
                                          help=f"Seconds at most (up to {LIMITS['duration']}).")] = 10,
    max_packets: Annotated[int, typer.Option(
        "--max-packets", min=1, metavar="N",
        help=f"Packets at most (up to {LIMITS['max_packets']}).")] = 100000,
    snaplen: Annotated[int, typer.Option(
        "--snaplen", min=64, metavar="BYTES",
        help=f"Bytes kept of each packet (up to {LIMITS['snaplen']}).")] = 128,
    out: Annotated[str, typer.Option("-o", "--out",
                                     help="Bundle to add the capture to (created when absent).")],
    accept_new_host_keys: Annotated[bool, typer.Option("--accept-new-host-keys",
                                                       help="Record unknown host keys.")] = False,
    known_hosts: Annotated[str, typer.Option("--known-hosts",
                                             help="Extra known_hosts file (new keys go here).")] = None,
) -> None:
    """Capture packets on one host (tcpdump under timeout, needs root there) into BUNDLE as
    capture.<device>.pcap; `rdmatool diagnose BUNDLE` and `rdmatool pcap` read it."""
    from rdmatool import commands
    from rdmatool.capture.remote import CaptureFailed, take
    from rdmatool.cli.collect_cmd import load_targets
    from rdmatool.errors import RdmatoolError
    from rdmatool.model import TargetKind

    inventory_file = _config.inventory(inventory_file)  # the configuration file's limits apply from here
    bounds = {**LIMITS, "max_packets": limits.value("capture_packets")}
    for option, value in (("duration", duration), ("max_packets", max_packets), ("snaplen", snaplen)):
        if value > bounds[option]:
            die(f"rdmatool capture: --{option.replace('_', '-')} {value}: at most {bounds[option]}", EXIT_USAGE)
    if not inventory_file:
        die("rdmatool capture: give -i INVENTORY (or `inventory` in the config file)", EXIT_USAGE)
    if bool(device) == bool(netdev):
        die("rdmatool capture: give exactly one of --device or --netdev", EXIT_USAGE)
    interface = device or netdev
    if not commands.DEVICE_NAME.fullmatch(interface):
        die(f"rdmatool capture: refusing interface name {interface!r}", EXIT_USAGE)
    selected = load_targets(inventory_file, limit, None, exclude=exclude, ignore_unknown=ignore_unknown)
    hosts = [t for t in selected if t.kind is TargetKind.HOST]
    if len(hosts) != 1:
        die(f"rdmatool capture: --limit {limit!r} must name exactly one host ({len(hosts)} match)", EXIT_USAGE)
    try:
        path = take(hosts[0], interface, out, duration, max_packets, snaplen, known_hosts=known_hosts,
                    accept_new_host_keys=accept_new_host_keys)
    except CaptureFailed as exc:
        die(f"rdmatool capture: {exc}", EXIT_INCONCLUSIVE)
    except RdmatoolError as exc:
        die(f"rdmatool capture: {exc}", EXIT_USAGE)
    typer.echo(f"captured on {hosts[0].name} {interface}: {path}", err=True)
