"""Hand-made pods written as real bundles: the per-rule tests' pod, and the small fleets of the baseline tests.

Three GPU nodes (a 400G NDR InfiniBand port mlx5_0 and a 200G RoCE port mlx5_1/ens1f0np0 each), one storage node
(a 200G RoCE port with its own lossless priority 4) and one SONiC leaf the RoCE ports are cabled to. Every output is
rendered in its tool's own format (sysfs grep, `perfquery -x`, `ibv_devinfo -v`, `ethtool -S`, `mlnx_qos`, DCQCN
sysfs, `show_gids`, `lldpctl -f json`, perftest, PSI, SONiC `show ...` tables), in two snapshots WINDOW_S apart, so
counters get rates exactly as a collected bundle does. A switch port runs at the speed of the host port cabled to
it unless a test sets `SwitchPort.speed_gbps`; every NOS's port status view shows it.

`healthy_pod(platforms=...)` builds the same pod behind leaves of other switch OSes (one leaf per platform, the RoCE
ports cabled round-robin): Cumulus, Onyx, EOS and NX-OS answer the commands of `rdmatool.commands.switch_plan`
through the simulated fabric's renderers (tests/fabric/shims), fed from this pod's counters, so one switch model
gives every NOS's outputs.

A counter is `[value in snapshot 0, growth until snapshot 1]`; a test mutates the healthy pod (`bump` a counter,
change a setting, leave a tool's output out with `Host.omit`, empty with `Host.printed_nothing`, or make its command
fail with `Host.failing`: written through the transport's own conversion, with the failure in the manifest as a
collection records it) before writing it. Everything a test asserts on is an input here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from rdmatool import commands as audited
from rdmatool.bundle import BundleWriter
from rdmatool.model import CommandResult, Platform, Target, TargetKind
from rdmatool.transport.framed import results_of
from rdmatool.transport.host_framing import Section
from tests.fabric import fastpath
from tests.fabric.scenario import switch_port_name
from tests.fabric.shims import cli_platforms, sonic_show
from tests.fabric.shims._base import Ctx
from tests.fabric.shims.lldpctl import DESCR

WINDOW_S = 10.0
T0 = datetime(2025, 3, 3, 2, 0, 0, tzinfo=timezone.utc)
SWITCH = "leaf01"

Counters = dict[str, list[int]]


def value(counter: list[int], snapshot: int) -> int:
    return counter[0] + snapshot * counter[1]


def bump(counters: Counters, name: str, growth: int) -> None:
    """Make `name` grow by `growth` more between the two snapshots (negative: it goes down, a reset)."""
    counters[name][1] += growth


# --- the model ----------------------------------------------------------------------------------------------------

# sysfs `ports/1/counters` file → perfquery field (the same PMA counter seen by both tools)
PMA_FIELDS = {
    "port_xmit_data": "PortXmitData", "port_rcv_data": "PortRcvData", "port_xmit_packets": "PortXmitPkts",
    "port_rcv_packets": "PortRcvPkts", "symbol_error": "SymbolErrorCounter",
    "link_error_recovery": "LinkErrorRecoveryCounter", "link_downed": "LinkDownedCounter",
    "port_rcv_errors": "PortRcvErrors", "port_rcv_remote_physical_errors": "PortRcvRemotePhysicalErrors",
    "port_rcv_switch_relay_errors": "PortRcvSwitchRelayErrors", "port_xmit_discards": "PortXmitDiscards",
    "port_xmit_constraint_errors": "PortXmitConstraintErrors",
    "port_rcv_constraint_errors": "PortRcvConstraintErrors", "local_link_integrity_errors": "LocalLinkIntegrityErrors",
    "excessive_buffer_overrun_errors": "ExcessiveBufferOverrunErrors", "VL15_dropped": "VL15Dropped",
    "port_xmit_wait": "PortXmitWait",
}


def pma_counters() -> Counters:
    """A busy, clean port: traffic grows, errors stay where they are."""
    out = {name: [0, 0] for name in PMA_FIELDS}
    out.update(port_xmit_data=[9 * 10**14, 5 * 10**10], port_rcv_data=[9 * 10**14, 5 * 10**10],
               port_xmit_packets=[2 * 10**11, 10**7], port_rcv_packets=[2 * 10**11, 10**7],
               symbol_error=[3, 0], link_downed=[1, 0], port_xmit_wait=[10**9, 20_000])
    return out


def hw_counters(roce: bool) -> Counters:
    """mlx5 hw_counters; on a RoCE port DCQCN is busy and healthy: every CNP sent is handled by a sender, and the
    odd one is ignored (a trickle of 0.1/s, as on the simulated healthy fabric)."""
    flow = 50_000 if roce else 0
    return {
        "np_ecn_marked_roce_packets": [10**8, flow], "np_cnp_sent": [10**8, flow], "rp_cnp_handled": [10**8, flow],
        "rp_cnp_ignored": [40, 1 if roce else 0], "out_of_sequence": [12, 0], "packet_seq_err": [0, 0], "local_ack_timeout_err": [0, 0],
        "out_of_buffer": [0, 0], "duplicate_request": [2, 0], "rnr_nak_retry_err": [0, 0],
    }


def ethtool_counters(lossless: int) -> Counters:
    """`ethtool -S` of a RoCE netdev carrying its traffic on priority `lossless` with light, normal PFC activity."""
    out: Counters = {
        "rx_packets_phy": [4 * 10**11, 10**7], "tx_packets_phy": [4 * 10**11, 10**7],
        "rx_bytes_phy": [10**15, 4 * 10**10], "tx_bytes_phy": [10**15, 4 * 10**10], "rx_out_of_buffer": [0, 0],
        "rx_discards_phy": [0, 0], "tx_discards_phy": [0, 0], "rx_crc_errors_phy": [0, 0], "rx_symbol_err_phy": [0, 0],
        "rx_corrected_bits_phy": [10**6, 100], "rx_fec_corrected_blocks_phy": [10**6, 100],
        "rx_fec_uncorrectable_blocks_phy": [0, 0], "rx_pause_ctrl_phy": [0, 0], "tx_pause_ctrl_phy": [0, 0],
        "link_down_events_phy": [1, 0],
    }
    for p in range(8):
        busy = p == lossless
        out[f"rx_prio{p}_packets"] = [4 * 10**11, 10**7] if busy else [0, 0]
        out[f"tx_prio{p}_packets"] = [4 * 10**11, 10**7] if busy else [0, 0]
        out[f"rx_prio{p}_discards"] = [0, 0]
    for p in range(8):
        busy = p == lossless
        out[f"rx_prio{p}_pause"] = [10**6, 1_000] if busy else [0, 0]  # 100 frames/s
        out[f"rx_prio{p}_pause_duration"] = [10**7, 10_000] if busy else [0, 0]  # paused 0.1 % of the time
        out[f"tx_prio{p}_pause"] = [5 * 10**5, 500] if busy else [0, 0]
        out[f"tx_prio{p}_pause_duration"] = [5 * 10**6, 5_000] if busy else [0, 0]
    for p in range(8):
        out[f"rx_prio{p}_marked"] = [10**8, 50_000] if p == lossless else [0, 0]
    out["tx_pause_storm_warning_events"] = [0, 0]
    return out


@dataclass
class Port:
    device: str
    link_layer: str  # InfiniBand | Ethernet
    netdev: str
    rate: int
    speed: str  # lane generation as sysfs prints it (NDR, HDR)
    fw: str
    board_id: str
    hca_type: str
    lanes: int = 4
    state: str = "4: ACTIVE"  # sysfs spelling; ibv_devinfo's is derived
    phys: str = "5: LinkUp"
    active_mtu: int = 4096
    max_mtu: int = 4096
    pma: Counters = field(default_factory=pma_counters)
    hw: Counters = field(default_factory=dict)
    # RoCE only
    switch_port: str | None = None
    switch: str = SWITCH  # the leaf the port is cabled to
    pfc: tuple[int, ...] = (3,)
    trust: str = "dscp"
    dscp26_priority: int = 3  # the priority the port's DSCP map sends `roce_dscp` to
    roce_dscp: int = 26
    np_enabled: dict[int, int] = field(default_factory=lambda: dict.fromkeys(range(8), 1))
    rp_enabled: dict[int, int] = field(default_factory=lambda: dict.fromkeys(range(8), 1))
    ethtool: Counters = field(default_factory=dict)

    @property
    def roce(self) -> bool:
        return self.link_layer == "Ethernet"


@dataclass
class Host:
    name: str
    role: str
    ports: list[Port]
    psi_io: float = 0.4
    psi_cpu: float = 1.2
    bw: dict[int, float] | None = None  # ib_write_bw average Gb/s per message size
    lat: list[tuple[int, float, float]] | None = None  # ib_write_lat rows: (size, t_typical, 99 % percentile)
    perftest_error: str | None = None  # perftest failed with this message instead of printing rows
    omit: set[str] = field(default_factory=set)  # parsers whose output this host did not give
    # parsers whose command failed on this host, with the exit status the host script recorded for it: 127 its tool
    # is not installed, 124 its timeout fired (the tool hung), None it never finished; written as the transport does
    failing: dict[str, int | None] = field(default_factory=dict)
    printed_nothing: set[str] = field(default_factory=set)  # parsers whose tool exited 0 having printed nothing
    # GPUs (nvidia-smi): None = no GPU; else the mean utilisation of its GPUs (read as +1 and -1 in the snapshots)
    gpu_util: float | None = None
    gpus: int = 4
    gpu_memory_pct: float = 85.0  # of each GPU's memory allocated (a job is on the GPUs)
    gpu_error: str | None = None  # what nvidia-smi prints instead of the GPU lines (no device, no driver)

    def port(self, device: str) -> Port:
        return next(p for p in self.ports if p.device == device)


@dataclass
class SwitchPort:
    name: str
    host: str
    netdev: str
    lossless: tuple[int, ...] = (3, 4)
    rx_pfc: Counters = field(default_factory=dict)  # priority as str → counter
    tx_pfc: Counters = field(default_factory=dict)
    uc_packets: Counters = field(default_factory=dict)
    uc_drops: Counters = field(default_factory=dict)
    wred_drops: Counters = field(default_factory=dict)
    ecn_marks: Counters = field(default_factory=dict)
    pg_drops: Counters = field(default_factory=dict)
    wd_status: str = "operational"  # PFC watchdog state of queue 3 (the other lossless queues stay operational)
    wd_storms: list[int] = field(default_factory=lambda: [0, 0])  # storms the watchdog detected on queue 3
    rx_pause_us: Counters = field(default_factory=dict)  # time paused by the peer, µs (where the NOS reports it)
    tx_pause_us: Counters = field(default_factory=dict)  # time this port kept its peer paused, µs
    cnp: list[int] = field(default_factory=lambda: [10**8, 40_000])  # CNPs the port forwarded (switch counters)
    speed_gbps: int = 200
    # frames received with errors: SONiC RX_ERR, NX-OS CRC and input errors, Cumulus / Onyx / EOS FCS and receive
    # errors (a bad cable or optic makes them grow)
    rx_errors: list[int] = field(default_factory=lambda: [12, 0])
    # PHY symbol errors (Cumulus, Onyx, EOS; SONiC's portstat and NX-OS's show interface print none)
    rx_symbol_errors: list[int] = field(default_factory=lambda: [3, 0])


def switch_port(name: str, host: str, netdev: str, busy: int) -> SwitchPort:
    def zero() -> Counters:
        return {str(p): [0, 0] for p in range(8)}

    sp = SwitchPort(name, host, netdev, rx_pfc=zero(), tx_pfc=zero(), uc_packets=zero(), uc_drops=zero(),
                    wred_drops=zero(), ecn_marks=zero(), pg_drops=zero(), rx_pause_us=zero(), tx_pause_us=zero())
    b = str(busy)
    sp.rx_pfc[b] = [5 * 10**5, 500]  # 50 pause frames/s each way: normal
    sp.tx_pfc[b] = [10**6, 500]
    sp.rx_pause_us[b] = [10**7, 10_000]  # paused 0.1 % of the window, as the hosts are
    sp.tx_pause_us[b] = [10**7, 10_000]
    sp.uc_packets[b] = [4 * 10**11, 10**7]
    sp.ecn_marks[b] = [10**8, 10_000]  # 0.1 % of the packets marked: ECN acts, gently
    sp.uc_packets["0"] = [10**9, 10**4]
    return sp


@dataclass
class Switch:
    name: str
    ports: list[SwitchPort]
    kmin: int = 153_600
    kmax: int = 409_600
    pmax: int = 10
    ecn_profile: str = "AZURE_LOSSLESS"
    ecn_mode: str = "ecn_all"
    platform: str = "sonic"
    omit: set[str] = field(default_factory=set)  # parsers whose output this switch did not give

    def port(self, name: str) -> SwitchPort:
        return next(p for p in self.ports if p.name == name)


@dataclass
class Pod:
    hosts: list[Host]
    switches: list[Switch] = field(default_factory=list)

    @property
    def switch(self) -> Switch:
        """The leaf of a one-switch pod (the per-rule tests' pod has one)."""
        return self.switches[0]

    def host(self, name: str) -> Host:
        return next(h for h in self.hosts if h.name == name)


def _gpu(i: int) -> Host:
    name = f"gpu0{i}"
    ib = Port("mlx5_0", "InfiniBand", "ibp24s0", 400, "NDR", "28.39.1002", "MT_0000000838", "MT4129",
              hw=hw_counters(roce=False))
    roce = Port("mlx5_1", "Ethernet", "ens1f0np0", 200, "HDR", "22.39.1002", "MT_0000000359", "MT4125",
                hw=hw_counters(roce=True), switch_port=f"Ethernet{4 * (i - 1)}", ethtool=ethtool_counters(3))
    return Host(name, "compute", [ib, roce], bw={65536: 388.5, 1048576: 391.2},
                lat=[(2, 1.05, 1.21), (4096, 2.31, 2.62), (1048576, 88.4, 91.7)],
                gpu_util=93.0)  # busy GPUs on a busy network: compute and communication overlapped, no triage class


def _stor(i: int) -> Host:
    roce = Port("mlx5_0", "Ethernet", "ens2f0np0", 200, "HDR", "22.39.1002", "MT_0000000359", "MT4125",
                hw=hw_counters(roce=True), switch_port=f"Ethernet{4 * (i + 2)}", pfc=(4,), ethtool=ethtool_counters(4))
    return Host(f"stor0{i}", "storage", [roce], psi_io=4.2, psi_cpu=6.5)


PLATFORMS = ("sonic", "cumulus", "onyx", "eos", "nxos")


def healthy_pod(platforms: tuple[str, ...] = ("sonic",), gpus: int = 3) -> Pod:
    """The healthy pod; every call returns a fresh one to mutate. With one platform: one leaf `leaf01` of that NOS;
    with several: leaf01, leaf02, ... one per platform, the RoCE ports cabled to them in turn."""
    hosts = [*(_gpu(i) for i in range(1, gpus + 1)), _stor(1)]
    names = [SWITCH] if len(platforms) == 1 else [f"leaf{k + 1:02d}" for k in range(len(platforms))]
    per_switch: dict[str, list[SwitchPort]] = {n: [] for n in names}
    roce_ports = [(h, p) for h in hosts for p in h.ports if p.roce]
    for i, (h, p) in enumerate(roce_ports):
        k = i % len(platforms)
        p.switch = names[k]
        p.switch_port = switch_port_name(platforms[k], len(per_switch[names[k]]))
        port = switch_port(p.switch_port, h.name, p.netdev, busy=p.pfc[0])
        port.speed_gbps = p.rate
        per_switch[names[k]].append(port)
    return Pod(hosts, [Switch(n, per_switch[n], platform=platform) for n, platform in zip(names, platforms)])


# --- renderers: each tool's own output format ---------------------------------------------------------------------


def _sysfs(port: Port, s: int) -> str:
    base = f"/sys/class/infiniband/{port.device}"
    lines = [f"{base}/fw_ver:{port.fw}", f"{base}/board_id:{port.board_id}", f"{base}/hca_type:{port.hca_type}",
             f"{base}/ports/1/state:{port.state}", f"{base}/ports/1/phys_state:{port.phys}",
             f"{base}/ports/1/rate:{port.rate} Gb/sec ({port.lanes}X {port.speed})",
             f"{base}/ports/1/link_layer:{port.link_layer}"]
    lines += [f"{base}/ports/1/counters/{name}:{value(c, s)}" for name, c in port.pma.items()]
    lines += [f"{base}/ports/1/hw_counters/{name}:{value(c, s)}" for name, c in port.hw.items()]
    return "\n".join(lines) + "\n"


def _perfquery(port: Port, s: int) -> str:
    def row(label: str, number: int) -> str:
        return f"{label + ':':.<33}{number}"

    head = ["# Port extended counters: Lid 100 port 1 (CapMask: 0x5A00 CapMask2: 0x0000002)", row("PortSelect", 1)]
    body = [row(PMA_FIELDS[name], value(c, s)) for name, c in port.pma.items()]
    return "\n".join(head + body) + "\n"


def _ibv_devinfo(host: Host) -> str:
    out = []
    for i, port in enumerate(host.ports):
        code = port.state.split(":")[0]
        state = {"4": "PORT_ACTIVE", "1": "PORT_DOWN", "2": "PORT_INIT"}[code]
        mtu_code = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
        phys = {"LinkUp": "LINK_UP (5)", "Polling": "POLLING (2)", "Disabled": "DISABLED (3)"}[port.phys.split(": ")[1]]
        out += [
            f"hca_id:\t{port.device}",
            "\ttransport:\t\t\tInfiniBand (0)",
            f"\tfw_ver:\t\t\t\t{port.fw}",
            f"\tnode_guid:\t\t\tb83f:d203:0000:{i:04x}",
            f"\tboard_id:\t\t\t{port.board_id}",
            "\tphys_port_cnt:\t\t\t1",
            "\t\tport:\t1",
            f"\t\t\tstate:\t\t\t{state} ({code})",
            f"\t\t\tmax_mtu:\t\t{port.max_mtu} ({mtu_code[port.max_mtu]})",
            f"\t\t\tactive_mtu:\t\t{port.active_mtu} ({mtu_code[port.active_mtu]})",
            f"\t\t\tlink_layer:\t\t{port.link_layer}",
            f"\t\t\tactive_width:\t\t{port.lanes}X",
            f"\t\t\tphys_state:\t\t{phys}",
            "",
        ]
    return "\n".join(out)


def _ethtool(port: Port, s: int) -> str:
    return "NIC statistics:\n" + "".join(f"     {name}: {value(c, s)}\n" for name, c in port.ethtool.items())


def _dcqcn(port: Port) -> str:
    base = f"/sys/class/net/{port.netdev}/ecn"
    lines = [f"{base}/roce_rp/rpg_min_rate:1", f"{base}/roce_rp/rpg_ai_rate:5"]
    lines += [f"{base}/roce_rp/enable/{p}:{port.rp_enabled[p]}" for p in range(7, -1, -1)]
    lines += [f"{base}/roce_np/cnp_802p_prio:6", f"{base}/roce_np/cnp_dscp:48"]
    lines += [f"{base}/roce_np/enable/{p}:{port.np_enabled[p]}" for p in range(7, -1, -1)]
    return "\n".join(lines) + "\n"


def _mlnx_qos(port: Port) -> str:
    mapping: dict[int, list[int]] = {p: [] for p in range(8)}
    for dscp in range(63, -1, -1):
        mapping[port.dscp26_priority if dscp == port.roce_dscp else dscp // 8].append(dscp)
    lines = ["DCBX mode: OS controlled", f"Priority trust state: {port.trust}", "dscp2prio mapping:"]
    lines += [f"\tprio:{p} dscp:" + "".join(f"{d:02d}," for d in mapping[p]) for p in range(8) if mapping[p]]
    lines += ["default priority:", "Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,", "Cable len: 7",
              "PFC configuration:", "\tpriority    0   1   2   3   4   5   6   7",
              "\tenabled     " + "   ".join("1" if p in port.pfc else "0" for p in range(8)) + "   ",
              "\tbuffer      " + "   ".join("1" if p in port.pfc else "0" for p in range(8)) + "   "]
    for tc in range(8):
        lines += [f"tc: {tc} ratelimit: unlimited, tsa: vendor", f"\t priority:  {tc}"]
    return "\n".join(lines) + "\n"


def _lldp(host: Host, platforms: dict[str, str]) -> str:
    interfaces = {
        p.netdev: {"via": "LLDP", "rid": "1", "age": "3 day, 02:02:02",
                   "chassis": {p.switch: {"id": {"type": "mac", "value": "0c:42:a1:00:00:00"},
                                          "descr": DESCR[platforms.get(p.switch, "sonic")], "mgmt-ip": "10.0.1.1"}},
                   "port": {"id": {"type": "ifname", "value": p.switch_port}, "descr": p.switch_port, "ttl": "120"}}
        for p in host.ports if p.roce
    }
    return json.dumps({"lldp": {"interface": interfaces}}, indent=2) + "\n"


def _show_gids(host: Host, index: int) -> str:
    """The RoCE GID table (mlnx-tools `show_gids`): it names each RDMA port's netdev."""
    rows = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV",
            "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---"]
    count = 0
    for k, p in enumerate(host.ports):
        if not p.roce:
            continue
        ip = f"192.168.{k + 1}.{index + 1}"
        v4 = "0000:0000:0000:0000:0000:ffff:" + "".join(f"{int(b):02x}" for b in ip.split(".")[:2]) + ":" + \
            "".join(f"{int(b):02x}" for b in ip.split(".")[2:])
        rows.append(f"{p.device}\t1\t0\tfe80:0000:0000:0000:ba3f:d2ff:fe00:{index:04x}\t\t\tv1\t{p.netdev}")
        rows.append(f"{p.device}\t1\t3\t{v4}\t{ip}  \tv2\t{p.netdev}")
        count += 2
    return "\n".join([*rows, f"n_gids_found={count}"]) + "\n"


def _perftest(host: Host) -> str:
    rule = "-" * 87
    head = (f"{rule}\n                    RDMA_Write BW Test\n Dual-port       : OFF\t\tDevice         : mlx5_0\n"
            f" Number of qps   : 1\t\tTransport type : IB\n Link type       : IB\n{rule}\n")
    if host.perftest_error:
        return (f" {host.perftest_error}\n"
                "Unable to open file descriptor for socket connection Unable to init the socket connection\n")
    rows = "\n".join(f" {size:<10} 5000             {bw + 0.3:.2f}              {bw:.2f}\t\t   0.7"
                     for size, bw in sorted((host.bw or {}).items()))
    return (f"{head} #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
            f"{rows}\n{rule}\n")


def _perftest_lat(host: Host) -> str:
    rule = "-" * 87
    rows = "\n".join(f" {size:<7} 1000          {typ * 0.95:.2f}           {p99 * 2:.2f}        {typ:.2f}     "
                     f"\t       {typ * 1.01:.2f}     \t{typ * 0.04:.2f}\t\t{p99:.2f} \t\t{p99 * 1.5:.2f}"
                     for size, typ, p99 in host.lat or [])
    return (f"{rule}\n                    RDMA_Write Latency Test\n Dual-port       : OFF    Device         : mlx5_0\n"
            f" Link type       : IB\n{rule}\n"
            " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
            "   99% percentile[usec]   99.9% percentile[usec]\n"
            f"{rows}\n{rule}\n")


def _nvidia_smi(host: Host, s: int) -> str:
    """`nvidia-smi --query-gpu=<commands.NVIDIA_SMI_QUERY> --format=csv,noheader,nounits`, one line per GPU."""
    if host.gpu_error is not None:
        return host.gpu_error + "\n"
    util = max(0.0, min(100.0, host.gpu_util + (1 if s == 0 else -1)))
    total = 81559
    used = round(total * host.gpu_memory_pct / 100)
    return "".join(f"{g}, GPU-{g:08x}-0000-4000-8000-{host.name:0>12}, NVIDIA H100 80GB HBM3, {util:g}, 35, {used}, "
                   f"{total}, 5, 5, 16, 16\n" for g in range(host.gpus))


def _psi(host: Host, s: int) -> str:
    def line(resource: str, kind: str, avg10: float) -> str:
        total = int(avg10 * 10**6) * (100 + s)
        return f"/proc/pressure/{resource}:{kind} avg10={avg10:.2f} avg60={avg10:.2f} avg300={avg10:.2f} total={total}"

    return "\n".join([line("io", "some", host.psi_io), line("io", "full", host.psi_io / 2),
                      line("cpu", "some", host.psi_cpu), line("cpu", "full", 0.0)]) + "\n"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """A SONiC (tabulate "simple") table: right-aligned columns two spaces apart under a dashed rule."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    def fmt(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) for c, w in zip(cells, widths))
    return "\n".join([fmt(headers), "  ".join("-" * w for w in widths), *(fmt(r) for r in rows)])


def _n(number: int) -> str:
    return f"{number:,}"


def _sonic_pfc_counters(sw: Switch, s: int) -> str:
    heads = [f"PFC{p}" for p in range(8)]
    rx = [[p.name, *(_n(value(p.rx_pfc[str(q)], s)) for q in range(8))] for p in sw.ports]
    tx = [[p.name, *(_n(value(p.tx_pfc[str(q)], s)) for q in range(8))] for p in sw.ports]
    return _table(["Port Rx", *heads], rx) + "\n\n" + _table(["Port Tx", *heads], tx) + "\n"


def _sonic_pfc_priority(sw: Switch) -> str:
    rows = [[p.name, ",".join(str(q) for q in p.lossless)] for p in sw.ports]
    widths = [max(len("Interface"), *(len(r[0]) for r in rows)), len("Lossless priorities")]
    out = ["", f"{'Interface'.ljust(widths[0])}  Lossless priorities", f"{'-' * widths[0]}  {'-' * widths[1]}"]
    out += [f"{r[0].ljust(widths[0])}  {r[1]}" for r in rows]
    return "\n".join(out) + "\n"


def _per_queue(sw: Switch, s: int, first: str, second: str, headers: list[str]) -> str:
    """A SONiC per-queue view: one block per port, two counters per unicast queue (packets and bytes of each)."""
    blocks = []
    for p in sw.ports:
        one, two = getattr(p, first), getattr(p, second)
        rows = [[p.name, f"UC{q}", _n(value(one[str(q)], s)), _n(value(one[str(q)], s) * 1000),
                 _n(value(two[str(q)], s)), _n(value(two[str(q)], s) * 1000)] for q in range(8)]
        blocks.append("For namespace :\n" + _table(["Port", "TxQ", *headers], rows))
    return "\n\n".join(blocks) + "\n"


def _sonic_queues(sw: Switch, s: int) -> str:
    return _per_queue(sw, s, "uc_packets", "uc_drops", ["Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes"])


def _sonic_wred(sw: Switch, s: int) -> str:
    return _per_queue(sw, s, "wred_drops", "ecn_marks",
                      ["WredDrp/pkts", "WredDrp/bytes", "EcnMarked/pkts", "EcnMarked/bytes"])


def _sonic_pfcwd(sw: Switch, s: int) -> str:
    def row(p: SwitchPort, q: int) -> list[str]:
        status, storms = (p.wd_status, value(p.wd_storms, s)) if q == 3 else ("operational", 0)
        return [f"{p.name}:{q}", status, f"{storms}/{storms}", "1000/0", "1000/0", "0/0", "0/0"]

    rows = [row(p, q) for p in sw.ports for q in p.lossless]
    return _table(["QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP", "TX LAST OK/DROP",
                   "RX LAST OK/DROP"], rows) + "\n"


def _sonic_pg_drop(sw: Switch, s: int) -> str:
    rows = [[p.name, *(_n(value(p.pg_drops[str(q)], s)) for q in range(8))] for p in sw.ports]
    return "Ingress PG dropped packets:\n" + _table(["Port", *(f"PG{q}" for q in range(8))], rows) + "\n"


def _sonic_ecn(sw: Switch) -> str:
    rows = [("ecn", sw.ecn_mode), ("green_min_threshold", sw.kmin), ("green_max_threshold", sw.kmax),
            ("green_drop_probability", sw.pmax), ("wred_green_enable", "true")]
    return (f"Profile: {sw.ecn_profile}\n-----------------------  -------\n"
            + "".join(f"{k:<25}{v}\n" for k, v in rows) + "-----------------------  -------\n")


# --- the bundle ---------------------------------------------------------------------------------------------------

# The command line of a host parser whose failure a test writes (`Host.failing`), as the host script runs it
# (rdmatool.commands.HOST_SCRIPT): the transport's failure names its tool.
_COMMANDS = {"ethtool_stats": "ethtool -S {qualifier}", "ethtool_info": "ethtool -i {qualifier}",
             "mlnx_qos": "mlnx_qos -i {qualifier}", "ibstat": "ibstat", "ibv_devinfo": "ibv_devinfo -v",
             "sysfs_counters": "grep -H -r . /sys/class/infiniband/{qualifier}/ports",
             "nvidia_smi": f"nvidia-smi --query-gpu={audited.NVIDIA_SMI_QUERY} --format=csv,noheader,nounits"}


def write(pod: Pod, path: Path, created: datetime | None = None, only: set[str] | None = None) -> Path:
    """The pod as a two-snapshot bundle (configuration in snapshot 0, counters in both), like `rdmatool collect`.
    `created`: the manifest's `created` and the time of snapshot 0 (a night of a baseline series; T0 and the time
    of the commit when None); `only`: the parsers whose outputs are written (all when None), for a small bundle."""
    writer = BundleWriter(path)
    night = created
    created = created or T0
    failures: list[dict] = []  # the manifest's, as a collection records a failed command of a reached host

    def add(snapshot: int, target: str, parser: str, stdout: str, qualifier: str | None = None) -> None:
        if only is not None and parser not in only:
            return
        started = (created + timedelta(seconds=WINDOW_S * snapshot)).isoformat()
        writer.add(snapshot, CommandResult(target=target, parser=parser, command=parser, stdout=stdout,
                                           qualifier=qualifier, started=started, duration_s=0.1))

    def fail(snapshot: int, target: str, parser: str, qualifier: str | None, exit_code: int | None) -> None:
        if only is not None and parser not in only:
            return
        command = _COMMANDS.get(parser, parser).format(qualifier=qualifier)
        stderr = f"{command.split()[0]}: not installed" if exit_code == 127 else ""
        section = Section(parser, qualifier, command, "", stderr, exit_code, created.timestamp() + WINDOW_S * snapshot)
        result = results_of(target, [section], created.isoformat(), 0.1)[0]
        writer.add(snapshot, result)
        if result.error:
            failures.append({"target": target, "parser": parser, "qualifier": qualifier, "error": result.error,
                             "snapshot": snapshot})

    for h in pod.hosts:
        def out(snapshot: int, parser: str, stdout: str, qualifier: str | None = None, host: Host = h) -> None:
            if parser in host.omit:
                return
            if parser in host.failing:
                fail(snapshot, host.name, parser, qualifier, host.failing[parser])
            else:
                add(snapshot, host.name, parser, "" if parser in host.printed_nothing else stdout, qualifier)

        out(0, "ibv_devinfo", _ibv_devinfo(h))
        for s in (0, 1):
            for p in h.ports:
                out(s, "sysfs_counters", _sysfs(p, s), p.device)
                if not p.roce:
                    out(s, "perfquery", _perfquery(p, s), f"{p.device}.1")
                else:
                    out(s, "ethtool_stats", _ethtool(p, s), p.netdev)
            out(s, "psi", _psi(h, s))
            if h.gpu_util is not None:
                out(s, "nvidia_smi", _nvidia_smi(h, s))
        for p in h.ports:
            if p.roce:
                out(0, "dcqcn_sysfs", _dcqcn(p), p.netdev)
                out(0, "mlnx_qos", _mlnx_qos(p), p.netdev)
        if any(p.roce for p in h.ports):
            out(0, "lldpctl", _lldp(h, {sw.name: sw.platform for sw in pod.switches}))
            out(0, "show_gids", _show_gids(h, pod.hosts.index(h)))
        if h.bw is not None or h.perftest_error:
            out(1, "perftest", _perftest(h), "ib_write_bw")
        if h.lat:
            out(1, "perftest", _perftest_lat(h), "ib_write_lat")
    targets = [Target(h.name, f"10.0.0.{i + 1}", role=h.role) for i, h in enumerate(pod.hosts)]
    for k, sw in enumerate(pod.switches):
        targets.append(Target(sw.name, f"10.0.1.{k + 1}", kind=TargetKind.SWITCH, platform=Platform(sw.platform),
                              role="leaf"))
        if sw.platform != "sonic":
            for s in (0, 1):
                for parser, qualifier, stdout in _nos_outputs(sw, k, s, pod):
                    if parser not in sw.omit:
                        add(s, sw.name, parser, stdout, qualifier)
            continue
        views = [((0, 1), "sonic_pfc_counters", lambda s, sw=sw: _sonic_pfc_counters(sw, s)),
                 ((0, 1), "sonic_queue_counters", lambda s, sw=sw: _sonic_queues(sw, s)),
                 ((0, 1), "sonic_wred_counters", lambda s, sw=sw: _sonic_wred(sw, s)),
                 ((0, 1), "sonic_pfcwd_stats", lambda s, sw=sw: _sonic_pfcwd(sw, s)),
                 ((0, 1), "sonic_pg_drop", lambda s, sw=sw: _sonic_pg_drop(sw, s)),
                 ((0, 1), "sonic_portstat", lambda s, sw=sw, k=k: _sonic_portstat(sw, k, s, pod)),
                 ((0,), "sonic_interface_status", lambda s, sw=sw, k=k: _sonic_status(sw, k, pod)),
                 ((0,), "sonic_pfc_priority", lambda s, sw=sw: _sonic_pfc_priority(sw)),
                 ((0,), "sonic_ecn", lambda s, sw=sw: _sonic_ecn(sw))]
        for snapshots, parser, render in views:
            # a switch without ports has no per-port tables to render
            if (only is None or parser in only) and parser not in sw.omit:
                for s in snapshots:
                    add(s, sw.name, parser, render(s))
    snapshots = [{"index": s, "started": (created + timedelta(seconds=WINDOW_S * s)).isoformat(), "finished": None}
                 for s in (0, 1)]
    final = writer.commit(targets, snapshots, failures, WINDOW_S)
    if night is not None:  # the night the bundle stands for, as a nightly collection would have recorded it
        manifest = json.loads((final / "manifest.json").read_text())
        manifest["created"] = created.isoformat()
        (final / "manifest.json").write_text(json.dumps(manifest))
    return final


# --- the other switch OSes, through the simulated fabric's renderers ---------------------------------------------


def _fabric_counters(p: SwitchPort) -> dict[str, list[float]]:
    """The pod port's counters under the simulated fabric's names (tests/fabric/counters.py), as [base, per-second
    rate] over the pod's window."""
    def per_s(counter: list[int], scale: int = 1) -> list[float]:
        return [counter[0] * scale, counter[1] * scale / WINDOW_S]

    out: dict[str, list[float]] = {}
    total = [sum(c[0] for c in p.uc_packets.values()), sum(c[1] for c in p.uc_packets.values())]
    for name in ("rx_ok", "tx_ok"):
        out[name] = per_s(total)
    for name in ("rx_bytes", "tx_bytes"):
        out[name] = per_s(total, 1000)
    for q in range(8):
        k = str(q)
        out |= {f"rx_pfc{q}": per_s(p.rx_pfc[k]), f"tx_pfc{q}": per_s(p.tx_pfc[k]),
                f"rx_pfc{q}_duration": per_s(p.rx_pause_us.get(k, [0, 0])),
                f"tx_pfc{q}_duration": per_s(p.tx_pause_us.get(k, [0, 0])),
                f"pg{q}_drop": per_s(p.pg_drops[k]), f"pg{q}_rx_frames": per_s(p.uc_packets[k]),
                f"q{q}_pkts": per_s(p.uc_packets[k]), f"q{q}_bytes": per_s(p.uc_packets[k], 1000),
                f"q{q}_drop_pkts": per_s(p.uc_drops[k]), f"q{q}_drop_bytes": per_s(p.uc_drops[k], 1000),
                f"q{q}_wred_pkts": per_s(p.wred_drops[k]), f"q{q}_ecn_pkts": per_s(p.ecn_marks[k])}
    out["pfcwd_detected"] = per_s(p.wd_storms)
    out["rx_err"] = per_s(p.rx_errors)
    out["rx_symbol_err"] = per_s(p.rx_symbol_errors)
    out["cnp_pkts"] = per_s(p.cnp)
    return out


def _switch_spec(sw: Switch, k: int, pod: Pod) -> dict:
    """The simulated fabric's per-target spec of a pod switch (what its renderers read)."""
    lossless = list(sw.ports[0].lossless) if sw.ports else [3, 4]
    ports = []
    for p in sw.ports:
        host_index = next(i for i, h in enumerate(pod.hosts) if h.name == p.host)
        ports.append({"name": p.name, "speed_gbps": p.speed_gbps, "up": True, "counters": _fabric_counters(p),
                      "stormed": [3] if p.wd_status == "stormed" else [],
                      "neighbor": {"name": p.host, "port": p.netdev, "mac": f"b8:3f:d2:00:{host_index:02x}:01",
                                   "address": f"10.0.0.{host_index + 1}"}})
    qos = {"pfc": lossless, "trust": "dscp", "roce_prio": 3, "ecn_min_bytes": sw.kmin, "ecn_max_bytes": sw.kmax,
           "ecn_probability": sw.pmax, "xoff_bytes": 524288, "pfcwd_detection_ms": 200, "pfcwd_restoration_ms": 200}
    return {"kind": "switch", "platform": sw.platform, "name": sw.name, "address": f"10.0.1.{k + 1}", "epoch": 0.0,
            "qos": qos, "tools": {}, "mac": f"0c:42:a1:00:{k:02x}:00", "ports": ports, "lldp_extra": []}


def _sonic_portstat(sw: Switch, k: int, snapshot: int, pod: Pod) -> str:
    """`show interfaces counters` of a SONiC leaf, through the simulated fabric's renderer (RX_ERR and the rest)."""
    spec = _switch_spec(sw, k, pod)
    return sonic_show.portstat(Ctx("", spec["address"], spec, "", snapshot * WINDOW_S)) + "\n"


def _sonic_status(sw: Switch, k: int, pod: Pod) -> str:
    """`show interfaces status` of a SONiC leaf (each port's speed and state), through the fabric's renderer."""
    spec = _switch_spec(sw, k, pod)
    return sonic_show.interface_status(Ctx("", spec["address"], spec, "", 0.0)) + "\n"


def _nos_outputs(sw: Switch, k: int, snapshot: int, pod: Pod) -> list[tuple[str, str | None, str]]:
    """(parser, qualifier, stdout) of one snapshot of a Cumulus / Onyx / EOS / NX-OS leaf, for exactly the commands
    the collector runs there, as the collector stores them (the echoed command line kept where it must be)."""
    spec = _switch_spec(sw, k, pod)
    mode = audited.SNAPSHOT_FULL if snapshot == 0 else audited.SNAPSHOT_COUNTERS
    ctx = Ctx("", spec["address"], spec, "", snapshot * WINDOW_S)
    out = []
    for planned in audited.switch_plan(Platform(sw.platform), [p.name for p in sw.ports], mode):
        words = planned.command.split()
        if words[0] in ("nv", "lldpctl"):
            module = "cumulus_nv" if words[0] == "nv" else "lldpctl"
            stdout = fastpath.capture(module, ctx, words[1:])[0]
        else:
            stdout = cli_platforms.PLATFORMS[sw.platform](ctx, planned.command)
            assert stdout is not None, f"the simulated {sw.platform} CLI does not answer {planned.command!r}"
        if planned.keep_echo:
            stdout = planned.command + "\n" + stdout
        out.append((planned.parser, planned.qualifier, stdout))
    return out
