"""The host script's framing, checked: what a host prints can only become the sections the script emits.

The host script (`commands.HOST_SCRIPT`) frames each command's output between markers carrying a per-run token and
a sequence number. `split_sections` takes a snapshot's stream apart and checks, line by line, that the sections
come in the order the script emits them, with the parser names it uses and qualifiers that are the device, port
or netdev names it may print. The first breach ends the trust in that stream: the host is a failed target, and
none of its later output becomes a file in the bundle (the parser and qualifier of a section name a file there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rdmatool.commands import (
    DEVICE_NAME,
    MARKER,
    SNAPSHOT_COUNTERS,
    SNAPSHOT_FULL,
    SNAPSHOT_SUBNET,
    SNAPSHOT_WATCH,
    SUBNET_SWEEP,
)


@dataclass(frozen=True)
class Section:
    parser: str
    qualifier: str | None
    command: str
    stdout: str
    stderr: str
    exit_code: int | None  # None: the section never finished (target deadline hit mid-command)
    started_epoch: float | None = None  # the host's clock when the command started


# What the host script can emit, in the order it emits it: the sections a parser name may follow (None: the first
# section). Anything else in the stream is a host that does not run our script faithfully. A change to the order of
# commands in HOST_SCRIPT must be made here too (tests/test_host_framing.py runs the real script against it).
_AFTER_DEVICES = ("sysfs_counters", "ethtool_stats", "show_gids", "lldpctl", "loadavg")
# The GPU tools close every snapshot, each where it is installed (commands.HOST_SCRIPT).
_GPU_ORDER: dict[str | None, tuple[str, ...]] = {
    "loadavg": ("psi", "nvidia_smi", "dcgmi_dmon", "rocm_smi"),
    "psi": ("nvidia_smi", "dcgmi_dmon", "rocm_smi"),
    "nvidia_smi": ("dcgmi_dmon", "rocm_smi"),
    "dcgmi_dmon": ("rocm_smi",),
    "rocm_smi": (),
}
_AFTER_NETDEV = ("ethtool_stats", "show_gids", "lldpctl", "loadavg")
_HOST_ORDER: dict[str, dict[str | None, tuple[str, ...]]] = {
    SNAPSHOT_FULL: {
        None: ("ibstat",),
        "ibstat": ("ibv_devinfo",),
        "ibv_devinfo": _AFTER_DEVICES,
        "sysfs_counters": ("perfquery", *_AFTER_DEVICES),
        "perfquery": ("perfquery", *_AFTER_DEVICES),
        "ethtool_stats": ("dcqcn_sysfs", "ethtool_info"),
        "dcqcn_sysfs": ("ethtool_info",),
        "ethtool_info": ("mlnx_qos", *_AFTER_NETDEV),
        "mlnx_qos": _AFTER_NETDEV,
        "show_gids": ("lldpctl", "loadavg"),
        "lldpctl": ("loadavg",),
        **_GPU_ORDER,
    },
    SNAPSHOT_COUNTERS: {
        None: ("sysfs_counters", "ethtool_stats", "lldpctl", "loadavg"),
        "sysfs_counters": ("perfquery", "sysfs_counters", "ethtool_stats", "lldpctl", "loadavg"),
        "perfquery": ("perfquery", "sysfs_counters", "ethtool_stats", "lldpctl", "loadavg"),
        "ethtool_stats": ("ethtool_stats", "lldpctl", "loadavg"),
        "lldpctl": ("loadavg",),
        **_GPU_ORDER,
    },
    # The sweep's tools in commands.SUBNET_SWEEP's order; one cut by the sweep's budget ends the stream early.
    SNAPSHOT_SUBNET: {None: SUBNET_SWEEP[:1], **{tool: SUBNET_SWEEP[i + 1:i + 2] for i, tool in enumerate(SUBNET_SWEEP)}},
}
# The watch snapshot is the counters one cut short after the port views: its order is the same, its end earlier.
_HOST_ORDER[SNAPSHOT_WATCH] = _HOST_ORDER[SNAPSHOT_COUNTERS]
HOST_PARSERS = (frozenset(_HOST_ORDER[SNAPSHOT_FULL]) | frozenset(_HOST_ORDER[SNAPSHOT_SUBNET])) - {None}
_NO_QUALIFIER = frozenset({"ibstat", "ibv_devinfo", "show_gids", "lldpctl", "loadavg", "psi", "nvidia_smi",
                           "dcgmi_dmon", "rocm_smi"})
_OF_NETDEV = frozenset({"dcqcn_sysfs", "ethtool_info", "mlnx_qos"})


class ProtocolError(ValueError):
    """The host's output does not follow the script's framing: its later output is not trusted."""


def _epoch(stamp: str) -> float | None:
    try:
        value = float(stamp)
    except ValueError:
        return None  # `date` without %N support (busybox) prints a literal N; the snapshot time is used instead
    # A real clock reads between 1970 and the far future; anything else (nan, inf, 1e300) is not a time.
    return value if 0 < value < 1e11 else None


def _quote(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


class _Framing:
    """The checks of one stream: sequence numbers, the order of parsers, and each qualifier against its parser."""

    def __init__(self, mode: str) -> None:
        self.order = _HOST_ORDER[mode]
        self.seq = 0
        self.previous: str | None = None
        self.device: str | None = None  # of the last sysfs_counters section (perfquery qualifiers name its ports)
        self.netdev: str | None = None  # of the last ethtool_stats section (the netdev's other views follow it)
        self.sweep_port: str | None = None  # the `<device>.<port>` of the subnet sweep's first section

    def begin(self, seq: str, parser: str, qualifier: str) -> str | None:
        if seq != str(self.seq + 1):
            raise ProtocolError(f"section number {_quote(seq)} where {self.seq + 1} was due")
        if parser not in self.order.get(self.previous, ()):
            after = f"after {self.previous}" if self.previous else "first"
            raise ProtocolError(f"section {_quote(parser)} cannot come {after}")
        self.seq += 1
        self.previous = parser
        if parser in _NO_QUALIFIER:
            if qualifier != "-":
                raise ProtocolError(f"{parser} takes no qualifier, got {_quote(qualifier)}")
            return None
        if parser == "perfquery":
            device, _, port = qualifier.rpartition(".")
            if device != self.device or not port.isdigit() or not port.isascii():
                raise ProtocolError(f"perfquery qualifier {_quote(qualifier)} is not a port of {self.device}")
            return qualifier
        if parser in SUBNET_SWEEP:  # the device and port the subnet is swept through, one for the whole sweep
            device, _, port = qualifier.rpartition(".")
            if not DEVICE_NAME.fullmatch(device) or not port.isdigit() or not port.isascii():
                raise ProtocolError(f"{parser} qualifier {_quote(qualifier)} is not a device port")
            if self.sweep_port not in (None, qualifier):
                raise ProtocolError(f"{parser} qualifier {_quote(qualifier)} is not the sweep's port {self.sweep_port}")
            self.sweep_port = qualifier
            return qualifier
        if not DEVICE_NAME.fullmatch(qualifier):
            raise ProtocolError(f"{parser} qualifier {_quote(qualifier)} is not a device name")
        if parser == "sysfs_counters":
            self.device = qualifier
        elif parser == "ethtool_stats":
            self.netdev = qualifier
        elif parser in _OF_NETDEV and qualifier != self.netdev:
            raise ProtocolError(f"{parser} qualifier {_quote(qualifier)} is not the netdev {self.netdev}")
        return qualifier


def split_sections(stream: str, token: str, mode: str = SNAPSHOT_FULL) -> tuple[list[Section], str | None]:
    """Take the host script's framed output apart, checking the framing as it goes.

    Returns the sections and None, or the sections before the first breach of the framing and a one-line reason:
    a host whose output breaks it is a failed target, and nothing it printed after the breach is used. A section
    cut off by a deadline comes back with exit None. Text outside sections (a shell start-up file that prints) is
    ignored; a line that merely looks like a marker without this run's token is a command's output like any other.
    """
    prefix = f"{MARKER} {token} "
    framing = _Framing(mode)
    sections: list[Section] = []
    current: dict | None = None
    buffers: list[list[str]] = [[], []]  # stdout, stderr of the open section
    part = 0

    def finish(exit_code: int | None) -> None:
        # The script prints a newline before every marker so that a marker always starts a line; drop it again.
        out, err = "".join(buffers[0]), "".join(buffers[1])
        out = out[:-1] if out.endswith("\n") else out
        err = err[:-1] if err.endswith("\n") else err
        sections.append(Section(current["parser"], current["qualifier"], current["command"], out, err, exit_code,
                                _epoch(current["stamp"])))

    line_no = 0
    try:
        for number, line in enumerate(stream.splitlines(keepends=True), 1):
            line_no = number  # named in the message when the framing breaks on this line
            if not line.startswith(prefix):
                if current is not None:
                    buffers[part].append(line)
                continue
            fields = line[len(prefix):].rstrip("\r\n").split(" ", 5)
            kind = fields[0]
            if kind == "BEGIN" and len(fields) >= 5:
                if current is not None:
                    raise ProtocolError(f"section {current['seq']} did not end before the next began")
                qualifier = framing.begin(fields[1], fields[2], fields[3])
                current = {"seq": fields[1], "parser": fields[2], "qualifier": qualifier, "stamp": fields[4],
                           "command": fields[5] if len(fields) > 5 else ""}
                buffers, part = [[], []], 0
            elif kind == "STDERR" and len(fields) == 2:
                if current is None or fields[1] != current["seq"] or part != 0:
                    raise ProtocolError(f"stray STDERR marker for section {_quote(fields[1])}")
                part = 1
            elif kind == "END" and len(fields) == 3:
                if current is None or fields[1] != current["seq"] or part != 1:
                    raise ProtocolError(f"stray END marker for section {_quote(fields[1])}")
                if not re.fullmatch(r"-?[0-9]{1,5}", fields[2]):
                    raise ProtocolError(f"exit status {_quote(fields[2])} is not a number")
                finish(int(fields[2]))
                current = None
            else:
                raise ProtocolError(f"malformed marker {_quote(line.rstrip())}")
    except ProtocolError as exc:
        return sections, f"host output breaks the collection script's framing at line {line_no} ({exc}); the rest ignored"
    if current is not None:
        finish(None)
    return sections, None
