"""The single audited list of every command rdmatool may run, per platform. Nothing else builds a command line.

Every command here is read-only: it shows state or counters and changes nothing (no counter clears, no `-r` reset
flags, no configuration verbs). Review this file, and only this file, to know what rdmatool does on a device.

Hosts get ONE exec per snapshot: `sh -s -- <timeout> <mode>` with the script below on stdin. The script discovers
the RDMA devices, ports and netdevs itself (names come from the host's own sysfs, never from the inventory) and
prints each logical command's output between markers that `host_framing.split_sections` takes apart and checks. The only values the
client passes are two validated integers/keywords, so nothing from an inventory ever reaches a shell.

Local mode (`rdmatool collect --local`, `gate --local`: a Slurm HealthCheckProgram or prolog, a Kubernetes
DaemonSet, running on the node itself) runs the same script the same way, as a child process `sh -s -- <timeout>
<mode>` with the script on stdin (`local_entry_argv`: an argument vector, no shell parses a command line). Beside
it, local mode reads the verbs API through pyverbs: that read is code (`rdmatool/transport/verbs.py`: it opens
each device and queries its attributes, ports and GIDs, and reads the same port files of sysfs), not a command.

Switches get their platform's show commands through netmiko: each platform module declares its own (SHOW_COMMANDS in
rdmatool/platforms/<nos>.py, read-only `show` views with their parsers' names) and SWITCH_COMMANDS below gathers
them; every switch command line is built here (`switch_plan`) from that list and nothing else, and per-port
commands are filled in only with port names that passed `valid_port_name` (the platform's PORT_NAME).
tests/test_platforms.py checks the gathered list whole: every command a read-only show. Besides them a switch
receives only netmiko's session set-up and, where the platform's ENTER_ENABLE says so, `enable` (a privilege
level, not a configuration change).

`rdmatool perf` and the gate also start perftest (bounded, between two hosts), and the gate's optional nccl stage a
short nccl-tests `all_reduce_perf` under mpirun (bounded, a few nodes), with the commands of the last two sections;
they are the only commands that put load on a host.
"""

from __future__ import annotations

import re
import secrets
import shlex
from dataclasses import dataclass

from rdmatool import platforms
from rdmatool.model import Platform
from rdmatool.platforms.shapes import SwitchCommand

MARKER = "@@RDMATOOL@@"
HOST_ENTRY_COMMAND = "sh -s -- {timeout} {mode}"  # the only exec request a host ever receives
SNAPSHOT_FULL, SNAPSHOT_COUNTERS = "full", "counters"
# `rdmatool watch`, every interval for as long as it runs: the counters snapshot's port views only (sysfs state and
# counters, perfquery, ethtool -S: pause, ECN, CNPs, drops, errors), none of its LLDP, load or GPU reads.
SNAPSHOT_WATCH = "watch"
# The InfiniBand subnet swept from one host, through the first Active InfiniBand port: the subnet manager (`sminfo`),
# every node and cable (`ibnetdiscover -p`, `iblinkinfo`) and every port's error and data counters, switches included
# (`ibqueryerrors`), in every snapshot (so switch ports get rates), by one host per subnet manager that the collector
# chooses (rdmatool.collect). Here the script's timeout is the sweep's whole budget: each tool gets what is left of it.
SNAPSHOT_SUBNET = "subnet"
# The sweep's tools, in the order the script runs them (cheap first: a sweep cut by its budget keeps what is cheapest to
# read). Each only reads: SMP and PMA Get queries, no counter clear (`-k`/`-K` are never passed), no SM verb.
SUBNET_SWEEP = ("sminfo", "ibnetdiscover", "iblinkinfo", "ibqueryerrors")
# The per-MAD timeout the sweep tools are given (`-t`, milliseconds): a node that does not answer costs this per query
# and retry, not the tools' own default, so a fabric of a few thousand ports is read within the budget.
SUBNET_MAD_TIMEOUT_MS = 200

# The host script. POSIX sh: the same script serves every distribution. `sec PARSER QUALIFIER CMD...` runs one
# read-only command with a timeout and frames its stdout, stderr and exit status. Exit 127 marks a tool that is
# not installed, exactly as a shell reports it, so "ibstat not installed on gpu007" is data, not a crash.
#
# The framing is a protocol the client checks line by line (`host_framing.split_sections`), because what a host prints becomes
# files on the collecting machine. Markers carry a random token made for each run and sent inside the script on
# stdin (never on a command line another user of the host could read), and a sequence number, so a command's
# output (a log line, a crafted file name) cannot open or close a section. Names of devices and netdevs come from
# the host's sysfs: the script only uses the ones made of safe characters (no leading `-`, no glob or space), and
# the client checks them again.
HOST_SCRIPT = r"""
T="${1:-20}"; MODE="${2:-full}"; M="@@RDMATOOL@@ __TOKEN__"; N=0
E="$(mktemp 2>/dev/null || echo /tmp/rdmatool.$$.err)"
TAIL=""
trap 'printf %s "$TAIL"; rm -f "$E"' EXIT
HAVE_TIMEOUT=0; command -v timeout >/dev/null 2>&1 && HAVE_TIMEOUT=1
safe() { case "$1" in ""|[!A-Za-z0-9]*|*[!A-Za-z0-9_.-]*) return 1 ;; esac; return 0; }
sec() {
    p="$1"; q="$2"; shift 2; N=$((N + 1))
    # Each section carries its own read time: the script runs its commands one after another, and a rate's
    # window must be the time between two reads of the same counter, not between two script starts.
    # The previous section's end leaves with this one's start, in one write: sshd sends what one read of the
    # script's output gives as one packet, and each packet costs the collector (the fan-out's client CPU) and sshd.
    # Sent before the command runs, so a host cut by its deadline still shows which command it was in.
    printf '%s\n%s BEGIN %s %s %s %s %s\n' "$TAIL" "$M" "$N" "$p" "$q" "$(date +%s.%N 2>/dev/null || echo -)" "$*"
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "$1: not installed" >"$E"; rc=127
    elif [ "$HAVE_TIMEOUT" = 1 ]; then
        timeout -k 2 "$T" "$@" 2>"$E" </dev/null; rc=$?
    else
        "$@" 2>"$E" </dev/null; rc=$?
    fi
    if [ -s "$E" ]; then  # rare: stderr is copied as it is, then only the end waits
        printf '\n%s STDERR %s\n' "$M" "$N"
        head -c 4096 "$E"
        TAIL="
$M END $N $rc
"
    else
        TAIL="
$M STDERR $N

$M END $N $rc
"
    fi
}
IB=/sys/class/infiniband
NETDEVS=""
if [ "$MODE" = subnet ]; then
    # The subnet sweep (SNAPSHOT_SUBNET): T is its whole budget. Each tool runs with what is left of it and stops at
    # the budget's end; a tool not started by then gets no section (the collector names the sweep partial). Nothing on
    # a host without any of the tools: it is not one to sweep from.
    H=0
    for t in sminfo ibnetdiscover iblinkinfo ibqueryerrors; do command -v "$t" >/dev/null 2>&1 && H=1; done
    [ "$H" = 1 ] || exit 0
    STOP=$(( $(date +%s) + T ))
    left() { T=$(( STOP - $(date +%s) )); [ "$T" -ge 1 ]; }
    for dev in "$IB"/*; do
        d="${dev##*/}"
        safe "$d" || continue
        for port in "$dev"/ports/*; do
            p="${port##*/}"
            case "$p" in ""|*[!0-9]*) continue ;; esac
            [ "$(cat "$port/link_layer" 2>/dev/null)" = InfiniBand ] || continue
            case "$(cat "$port/state" 2>/dev/null)" in *ACTIVE*) ;; *) continue ;; esac
            P="$p"  # sec() sets p: the port goes in a name of its own
            left && sec sminfo "$d.$P" sminfo -t __MAD_MS__ -C "$d" -P "$P"
            left && sec ibnetdiscover "$d.$P" ibnetdiscover -p -t __MAD_MS__ -C "$d" -P "$P"
            left && sec iblinkinfo "$d.$P" iblinkinfo -t __MAD_MS__ -C "$d" -P "$P"
            # Every port's counters over 0 (an empty threshold file: no threshold, nothing suppressed), with the
            # data counters and the discard details beside them.
            left && sec ibqueryerrors "$d.$P" ibqueryerrors --data --details --threshold-file /dev/null \
                -t __MAD_MS__ -C "$d" -P "$P"
            exit 0
        done
    done
    exit 0
fi
[ "$MODE" = full ] && sec ibstat - ibstat
[ "$MODE" = full ] && sec ibv_devinfo - ibv_devinfo -v
for dev in "$IB"/*; do
    [ -d "$dev" ] || continue
    d="${dev##*/}"
    safe "$d" || continue
    sec sysfs_counters "$d" grep -H -r . "$dev/fw_ver" "$dev/board_id" "$dev/hca_type" "$dev/ports"/*/state \
        "$dev/ports"/*/phys_state "$dev/ports"/*/rate "$dev/ports"/*/link_layer "$dev/ports"/*/counters \
        "$dev/ports"/*/hw_counters
    for port in "$dev/ports"/*; do
        [ -d "$port" ] || continue
        p="${port##*/}"
        case "$p" in ""|*[!0-9]*) continue ;; esac
        if [ "$(cat "$port/link_layer" 2>/dev/null)" = InfiniBand ]; then
            sec perfquery "$d.$p" perfquery -x -C "$d" -P "$p"
        fi
    done
    for nd in "$dev"/device/net/*; do
        [ -e "$nd" ] || continue
        n="${nd##*/}"
        safe "$n" || continue
        case " $NETDEVS " in *" $n "*) ;; *) NETDEVS="$NETDEVS $n" ;; esac
    done
done
# The names are safe() ones, so splitting on spaces is exact; `set -f` keeps the shell from globbing them anyway.
set -f
for n in $NETDEVS; do
    sec ethtool_stats "$n" ethtool -S "$n"
    if [ "$MODE" = full ]; then
        [ -d "/sys/class/net/$n/ecn" ] && sec dcqcn_sysfs "$n" grep -H -r . "/sys/class/net/$n/ecn"
        sec ethtool_info "$n" ethtool -i "$n"
        command -v mlnx_qos >/dev/null 2>&1 && sec mlnx_qos "$n" mlnx_qos -i "$n"
    fi
done
set +f
[ "$MODE" = watch ] && exit 0  # the light snapshot ends with the port views (SNAPSHOT_WATCH)
[ "$MODE" = full ] && command -v show_gids >/dev/null 2>&1 && sec show_gids - show_gids
# LLDP in both snapshots: a neighbour that differs between them is a flap or a re-cabling (rdmatool.topology).
command -v lldpctl >/dev/null 2>&1 && sec lldpctl - lldpctl -f json
sec loadavg - cat /proc/loadavg
[ -d /proc/pressure ] && sec psi - grep -H . /proc/pressure/io /proc/pressure/cpu
# GPUs, in both snapshots (the compute-or-communication triage averages two readings: rdmatool.table.triage). Each tool
# only where it is installed: a host without GPUs or without the tool gives no section and no failure, a monitoring
# gap the triage playbook reports at info. All three only read: a query, one DCGM sample, a usage report.
command -v nvidia-smi >/dev/null 2>&1 && sec nvidia_smi - nvidia-smi --query-gpu=__NVIDIA_QUERY__ \
    --format=csv,noheader,nounits
command -v dcgmi >/dev/null 2>&1 && sec dcgmi_dmon - dcgmi dmon -e __DCGM_FIELDS__ -c 1
command -v rocm-smi >/dev/null 2>&1 && sec rocm_smi - rocm-smi --showuse --showmemuse --json
exit 0
"""
# The GPU fields asked for (their parsers, rdmatool.parsers.nvidia_smi and .dcgmi_dmon, read them in this order;
# tests/test_host_framing.py checks the two agree).
NVIDIA_SMI_QUERY = ("index,uuid,name,utilization.gpu,utilization.memory,memory.used,memory.total,"
                    "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max")
DCGM_FIELDS = "203,204,250,252,1009,1010,1011,1012"
HOST_SCRIPT = (HOST_SCRIPT.replace("__NVIDIA_QUERY__", NVIDIA_SMI_QUERY).replace("__DCGM_FIELDS__", DCGM_FIELDS)
               .replace("__MAD_MS__", str(int(SUBNET_MAD_TIMEOUT_MS))))
_TOKEN = re.compile(r"[0-9a-f]{32}")


def new_token() -> str:
    """A marker token the host cannot predict: 128 random bits, fresh for every run of the script."""
    return secrets.token_hex(16)


def host_script(token: str) -> str:
    """The host script with this run's marker token in it (sent on stdin)."""
    if not _TOKEN.fullmatch(token):
        raise ValueError("the marker token must be 32 lowercase hex digits")
    return HOST_SCRIPT.replace("__TOKEN__", token)


# Each switch platform's show commands, in the order they run (LLDP first: it finds the ports facing hosts). JSON
# forms where the platform has them. LLDP is read in both snapshots, so that a neighbour changing between them shows
# (rdmatool.topology.cabling); each platform's port status view (speed, state) once, in the full snapshot: the
# cabling judge compares its speeds with the hosts' (speed_mismatch).
SWITCH_COMMANDS: dict[Platform, tuple[SwitchCommand, ...]] = {Platform(m.NAME): m.SHOW_COMMANDS
                                                              for m in platforms.SWITCHES}
LLDP_PARSER: dict[Platform, str] = {p: cmds[0].parser for p, cmds in SWITCH_COMMANDS.items()}


def valid_port_name(platform: Platform, port: str) -> bool:
    """Whether a port name may go into one of the platform's command lines. Anything else is refused, not quoted:
    a switch CLI is not a POSIX shell, so quoting rules differ per vendor and a strict pattern (the platform's
    PORT_NAME, matched whole) is the safe choice."""
    module = platforms.switch(platform)
    return bool(module and isinstance(port, str) and module.PORT_NAME.fullmatch(port))


def switch_port_argument(platform: Platform, port: str) -> str:
    """The port as the platform's per-port show command wants it (Onyx takes `1/1` for `Eth1/1`)."""
    if not valid_port_name(platform, port):
        raise ValueError(f"refusing switch port name {port!r} for {platform.value}")
    return platforms.switch(platform).port_argument(port)


def host_entry_command(timeout_s: int, mode: str) -> str:
    if mode not in (SNAPSHOT_FULL, SNAPSHOT_COUNTERS, SNAPSHOT_SUBNET, SNAPSHOT_WATCH):
        raise ValueError(f"unknown snapshot mode {mode!r}")
    return HOST_ENTRY_COMMAND.format(timeout=int(timeout_s), mode=shlex.quote(mode))


def local_entry_argv(timeout_s: int, mode: str) -> list[str]:
    """HOST_ENTRY_COMMAND as local mode starts it: the same two values, as an argument vector (no shell)."""
    if mode not in (SNAPSHOT_FULL, SNAPSHOT_COUNTERS, SNAPSHOT_SUBNET, SNAPSHOT_WATCH):
        raise ValueError(f"unknown snapshot mode {mode!r}")
    return ["sh", "-s", "--", str(int(timeout_s)), mode]


@dataclass(frozen=True)
class PlannedCommand:
    parser: str
    qualifier: str | None
    command: str
    keep_echo: bool = False


def switch_plan(platform: Platform, ports: tuple[str, ...] | list[str], mode: str) -> list[PlannedCommand]:
    """The commands of one switch snapshot; per-port commands expand over validated ports only."""
    plan: list[PlannedCommand] = []
    for cmd in SWITCH_COMMANDS[platform]:
        if mode == SNAPSHOT_COUNTERS and not cmd.counters:
            continue
        if not cmd.per_port:
            plan.append(PlannedCommand(cmd.parser, cmd.qualifier, cmd.command, cmd.keep_echo))
            continue
        for port in ports:
            argument = switch_port_argument(platform, port)
            qualifier = port if cmd.qualifier is None else f"{port}.{cmd.qualifier}"
            plan.append(PlannedCommand(cmd.parser, qualifier, cmd.command.format(port=argument), cmd.keep_echo))
    return plan


# --- perftest orchestration (`rdmatool perf run`, the gate) ---------------------------------------------------------
#
# Bandwidth/latency tests are the one place rdmatool starts a load on a host: a perftest server on A and a client
# on B for a bounded time, never a configuration change. Three more exec requests exist for it, all below:
# a read-only discovery script (on stdin, like HOST_SCRIPT, no arguments), the perftest command itself (server or
# client, always under `timeout -k 2` so it can never outlive its pair), and the kill of exactly the `timeout`
# process such a command started (its PID is echoed first; the kill checks it is still a `timeout`).
# Every value comes from a fixed set, is an integer, or passed a strict pattern; all are shlex-quoted anyway.

PERF_DISCOVER_COMMAND = "sh -s"
# For each RDMA port: link layer, state, rate and the GID table with types and netdevs (sysfs gid_attrs); for each
# netdev its IPv4 addresses (`ip`, when installed). Lines are `path:value` from grep, or tagged `netdev:` / `ipv4:`.
PERF_DISCOVER_SCRIPT = r"""
for dev in /sys/class/infiniband/*; do
    [ -d "$dev" ] || continue
    for port in "$dev"/ports/*; do
        [ -d "$port" ] || continue
        grep -H -s . "$port/link_layer" "$port/state" "$port/rate" "$port"/gid_attrs/types/* "$port"/gids/* \
            "$port"/gid_attrs/ndevs/* 2>/dev/null
    done
    for nd in "$dev"/device/net/*; do
        [ -e "$nd" ] || continue
        n="${nd##*/}"
        echo "netdev:${dev##*/}:$n"
        command -v ip >/dev/null 2>&1 && ip -4 -o addr show dev "$n" 2>/dev/null | sed "s|^|ipv4:$n:|"
    done
done
exit 0
"""
PERF_TESTS = ("ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat", "ib_send_lat", "ib_read_lat")
PERF_PID_MARK = f"{MARKER} PID"
# `$$` of `sh -c` survives `exec`: it is the PID of `timeout`, which forwards a TERM to perftest and KILLs it 2 s later.
PERF_COMMAND = "echo " + PERF_PID_MARK + " $$; exec timeout -k 2 {limit} {tool} {args}"
PERF_KILL_COMMAND = '[ "$(cat /proc/{pid}/comm 2>/dev/null)" = timeout ] && kill -TERM {pid}; exit 0'
# An RDMA device or netdev name as the host script's safe() accepts it (no leading `-`, no glob, no space).
DEVICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_FABRIC_ADDRESS = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[A-Za-z0-9][A-Za-z0-9.-]{0,252}|[0-9A-Fa-f:]+")


def perftest_command(
    tool: str, device: str, ib_port: int, gid_index: int | None, tcp_port: int, limit_s: int,
    duration_s: int | None = None, size_bytes: int | None = None, qps: int | None = None,
    iterations: int | None = None, server_address: str | None = None,
) -> str:
    """One perftest server (no `server_address`) or client command, bounded by `timeout -k 2 limit_s`.

    `-F` (no CPU-frequency check) and `--report_gbits` for bandwidth tests; `-x` only for RoCE (IB has no GID
    index); `-D` for bandwidth tests, `-n` for latency tests (duration mode would drop the percentiles)."""
    if tool not in PERF_TESTS:
        raise ValueError(f"unknown perftest {tool!r}")
    if not isinstance(device, str) or not DEVICE_NAME.fullmatch(device):
        raise ValueError(f"refusing RDMA device name {device!r}")
    args = ["-d", device, "-i", str(int(ib_port))]
    if gid_index is not None:
        args += ["-x", str(int(gid_index))]
    args.append("-F")
    if tool.endswith("_bw"):
        args += ["--report_gbits", "-D", str(max(1, int(duration_s or 10)))]
        if qps:
            args += ["-q", str(int(qps))]
    elif iterations:
        args += ["-n", str(int(iterations))]
    if size_bytes:
        args += ["-s", str(int(size_bytes))]
    if not 1024 <= int(tcp_port) <= 65535:
        raise ValueError(f"perftest port {tcp_port} out of range")
    args += ["-p", str(int(tcp_port))]
    if server_address is not None:
        if not isinstance(server_address, str) or not _FABRIC_ADDRESS.fullmatch(server_address):
            raise ValueError(f"refusing fabric address {server_address!r}")
        args.append(server_address)
    return PERF_COMMAND.format(limit=max(1, int(limit_s)), tool=tool, args=" ".join(shlex.quote(a) for a in args))


def perftest_kill_command(pid: int) -> str:
    """End the `timeout` (and with it the perftest) a PERF_COMMAND started; nothing if that PID is something else."""
    pid = int(pid)
    if pid <= 1:
        raise ValueError(f"refusing PID {pid}")
    return PERF_KILL_COMMAND.format(pid=pid)


def capture_command(interface: str, duration_s: int, max_packets: int, snaplen: int) -> str:
    """`rdmatool capture`: one bounded, passive packet capture on an RDMA device or netdev, the pcap on stdout.

    tcpdump runs under `timeout -k 2` with a packet count and a snap length, never in promiscuous mode (`-p`), with
    no name resolution (`-n`), writing each packet as it comes (`-U -w -`); `--` ends its options (no filter
    expression follows). The interface must match DEVICE_NAME whole and is quoted anyway. Exit 127 with
    `tcpdump: not installed` on stderr when there is no tcpdump; capturing needs root (or CAP_NET_RAW) on the host."""
    if not isinstance(interface, str) or not DEVICE_NAME.fullmatch(interface):
        raise ValueError(f"refusing interface name {interface!r}")
    limit, count, snap = int(duration_s), int(max_packets), int(snaplen)
    if not 1 <= limit <= 3600:
        raise ValueError(f"capture duration {limit} s out of range (1-3600)")
    if not 1 <= count <= 10_000_000:
        raise ValueError(f"capture packet count {count} out of range (1-10000000)")
    if not 64 <= snap <= 65535:
        raise ValueError(f"capture snap length {snap} out of range (64-65535)")
    return ("command -v tcpdump >/dev/null 2>&1 || { echo 'tcpdump: not installed' >&2; exit 127; }; "
            f"exec timeout -k 2 {limit} tcpdump -p -n -U -i {shlex.quote(interface)} -s {snap} -c {count} -w - --")


# --- nccl-tests (the gate's optional nccl stage) --------------------------------------------------------------------
#
# A short `all_reduce_perf` across a few nodes with the NCCL environment `rdmatool nccl env` computes for them: a
# benchmark, bounded like perftest (`timeout -k 2`), that changes nothing. nccl-tests runs on several nodes only
# under MPI (its README: "NCCL tests rely on MPI to work on multiple processes, hence multiple nodes"), so the first
# node starts `mpirun` with one app context per node (`-np 1 -host <node>`), each rank's environment set by `env`
# (nodes whose recipes differ each get their own). A read-only probe first says whether the binary and mpirun are
# installed. Every value is a validated integer, a name from a fixed pattern, or a recipe value of safe characters;
# all are shlex-quoted anyway.

NCCL_TESTS_BINARY = re.compile(r"(?:/[A-Za-z0-9_.+-]+)+|[A-Za-z0-9_][A-Za-z0-9_.+-]*")
NCCL_ENV_NAME = re.compile(r"(?:NCCL|UCX)_[A-Z0-9_]{1,60}")
NCCL_ENV_VALUE = re.compile(r"[A-Za-z0-9_.,:=^/+-]{0,256}")
_NCCL_HOST = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[A-Za-z0-9][A-Za-z0-9.-]{0,252}")


def refused_nccl_env(env: dict) -> tuple[str, object] | None:
    """The first (name, value) of `env` the nccl-tests command refuses (a name not NCCL_* / UCX_*, a value outside
    the safe characters), else None."""
    for name, value in env.items():
        if not NCCL_ENV_NAME.fullmatch(str(name)) or not NCCL_ENV_VALUE.fullmatch(str(value)):
            return str(name), value
    return None


def nccl_tests_probe_command(binary: str) -> str:
    """Which of the nccl-tests binary and mpirun the node has: each one found printed as `found <name>`."""
    if not isinstance(binary, str) or not NCCL_TESTS_BINARY.fullmatch(binary):
        raise ValueError(f"refusing nccl-tests binary {binary!r}")
    return (f"for t in {shlex.quote(binary)} mpirun; do command -v \"$t\" >/dev/null 2>&1 && echo \"found $t\"; "
            "done; exit 0")


def nccl_tests_command(ranks: list[tuple[str, dict[str, str]]], binary: str, size_bytes: int, gpus: int,
                       iterations: int, warmup: int, limit_s: int) -> str:
    """`mpirun` with one process per node (`ranks`: node address, its NCCL_*/UCX_* environment), each running
    `<binary> -b S -e S -f 2 -g G -n N -w W -c 0` (one size, no validation pass) with NCCL_DEBUG=INFO for the
    INIT and NET subsystems, so the output also says what NCCL chose on each node."""
    if not isinstance(binary, str) or not NCCL_TESTS_BINARY.fullmatch(binary):
        raise ValueError(f"refusing nccl-tests binary {binary!r}")
    size, gpus, iterations, warmup = int(size_bytes), int(gpus), int(iterations), int(warmup)
    if not (1 <= size <= 1 << 40 and 1 <= gpus <= 64 and 1 <= iterations <= 100000 and 0 <= warmup <= 100000):
        raise ValueError("nccl-tests size, GPU, iteration or warm-up count out of range")
    if len(ranks) < 2:
        raise ValueError("nccl-tests across nodes needs at least two nodes")
    contexts = []
    for host, env in ranks:
        if not isinstance(host, str) or not _NCCL_HOST.fullmatch(host):
            raise ValueError(f"refusing node address {host!r}")
        if (refused := refused_nccl_env(env)) is not None:
            raise ValueError(f"refusing NCCL environment {refused[0]}={refused[1]!r}")
        assigned = ["NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,NET", *(f"{k}={v}" for k, v in env.items())]
        args = ["-np", "1", "-host", host, "env", *assigned, binary, "-b", str(size), "-e", str(size), "-f", "2",
                "-g", str(gpus), "-n", str(iterations), "-w", str(warmup), "-c", "0"]
        contexts.append(" ".join(shlex.quote(a) for a in args))
    # Open MPI refuses to start as root without its two confirmations; other MPIs ignore the variables.
    return (f"exec timeout -k 2 {max(1, int(limit_s))} env OMPI_ALLOW_RUN_AS_ROOT=1 "
            f"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun " + " : ".join(contexts))
