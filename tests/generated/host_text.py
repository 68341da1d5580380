"""A generated host's outputs, as the real tools print them (ibstat, grep -H over sysfs, ethtool -S / -i,
mlnx_qos, lldpctl -f json, /proc/loadavg, /proc/pressure, nvidia-smi's CSV): name -> (command, text) per snapshot."""

from __future__ import annotations

import json
import zlib

from tests.generated import ib_subnet_text
from tests.generated.model import Fabric, Host, Rail, advertised_port_id

_SPEED = {40: "4X FDR10", 100: "4X EDR", 200: "4X HDR", 400: "4X NDR", 50: "2X HDR", 25: "1X EDR"}
_STATE = {"Active": "4: ACTIVE", "Down": "1: DOWN", "Initializing": "2: INIT"}
_PHYS = {"LinkUp": "5: LinkUp", "Disabled": "3: Disabled", "Polling": "2: Polling"}
_SYSFS_COUNTERS = (
    "symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors", "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors", "port_xmit_discards", "port_xmit_constraint_errors", "port_rcv_constraint_errors",
    "local_link_integrity_errors", "excessive_buffer_overrun_errors", "VL15_dropped", "port_xmit_data",
    "port_rcv_data", "port_xmit_packets", "port_rcv_packets", "port_xmit_wait",
)
_HW_COUNTERS = (
    "np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled", "rp_cnp_ignored", "out_of_buffer",
    "out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "implied_nak_seq_err", "rnr_nak_retry_err",
)


def _h(*parts: object) -> int:
    """A stable hash (Python's own is salted per process, and a seed must replay byte for byte)."""
    return zlib.crc32(repr(parts).encode())


def _guid(host: Host, rail: Rail) -> str:
    return f"0x0c42a103{_h(host.name, rail.device):08x}"


def _lid(fabric: Fabric, host: Host, rail: Rail) -> int:
    if fabric.link_layer == "Ethernet":
        return 0
    return fabric.ca_lids.get((host.name, rail.device), 10 + host.rails.index(rail))


def _sm_lid(fabric: Fabric) -> int:
    if fabric.link_layer == "Ethernet":
        return 0
    return next((lid for lid, _g, _p, state in fabric.sms if state == 3), fabric.sms[0][0] if fabric.sms else 1)


def ibstat(fabric: Fabric, host: Host) -> str:
    out = []
    for rail in host.rails:
        rate = rail.rate_gbps if rail.state == "Active" else 10
        out += [f"CA '{rail.device}'", "\tCA type: MT4129", "\tNumber of ports: 1",
                f"\tFirmware version: {rail.fw}", "\tHardware version: 0", f"\tNode GUID: {_guid(host, rail)}",
                f"\tSystem image GUID: {_guid(host, rail)}", "\tPort 1:", f"\t\tState: {rail.state}",
                f"\t\tPhysical state: {rail.phys}", f"\t\tRate: {rate}",
                f"\t\tBase lid: {_lid(fabric, host, rail)}",
                "\t\tLMC: 0", f"\t\tSM lid: {_sm_lid(fabric)}",
                "\t\tCapability mask: 0x00010000", f"\t\tPort GUID: {_guid(host, rail)}",
                f"\t\tLink layer: {fabric.link_layer}"]
    return "\n".join(out) + "\n"


def sysfs_counters(fabric: Fabric, host: Host, rail: Rail, t: float) -> str:
    base = f"/sys/class/infiniband/{rail.device}"
    rate = rail.rate_gbps if rail.state == "Active" else 10
    speed = _SPEED.get(rate, "4X NDR") if rail.width == "4X" else f"{rail.width} {_SPEED.get(rail.rate_gbps, '4X NDR').split()[1]}"
    lines = [f"{base}/fw_ver:{rail.fw}", f"{base}/board_id:MT_0000000838", f"{base}/hca_type:MT4129",
             f"{base}/node_guid:{_guid(host, rail)[2:6]}:{_guid(host, rail)[6:10]}:0000:0001"]
    port = f"{base}/ports/1"
    names = _SYSFS_COUNTERS if fabric.link_layer == "InfiniBand" else _SYSFS_COUNTERS[:-1]
    lines += [f"{port}/counters/{name}:{rail.counters[name].at(t)}" for name in names if name in rail.counters]
    if fabric.link_layer == "Ethernet":
        lines += [f"{port}/hw_counters/{name}:{rail.counters[name].at(t)}" for name in _HW_COUNTERS]
    lines += [f"{port}/link_layer:{fabric.link_layer}", f"{port}/phys_state:{_PHYS[rail.phys]}",
              f"{port}/rate:{rate} Gb/sec ({speed})", f"{port}/state:{_STATE[rail.state]}"]
    return "\n".join(lines) + "\n"


def ibv_devinfo(fabric: Fabric, host: Host) -> str:
    out = []
    for rail in host.rails:
        state = {"Active": "PORT_ACTIVE (4)", "Down": "PORT_DOWN (1)", "Initializing": "PORT_INIT (2)"}[rail.state]
        mtu_code = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
        out += [f"hca_id:\t{rail.device}", "\ttransport:\t\t\tInfiniBand (0)", f"\tfw_ver:\t\t\t\t{rail.fw}",
                f"\tnode_guid:\t\t\t0c42:a103:{_h(host.name, rail.device) >> 16:04x}:{_h(host.name, rail.device) & 0xffff:04x}",
                "\tvendor_id:\t\t\t0x02c9", "\tvendor_part_id:\t\t\t4129", "\thw_ver:\t\t\t\t0x0",
                "\tboard_id:\t\t\tMT_0000000838", "\tphys_port_cnt:\t\t\t1", "\t\tport:\t1",
                f"\t\t\tstate:\t\t\t{state}", "\t\t\tmax_mtu:\t\t4096 (5)",
                f"\t\t\tactive_mtu:\t\t{rail.mtu} ({mtu_code[rail.mtu]})",
                f"\t\t\tsm_lid:\t\t\t{_sm_lid(fabric)}",
                f"\t\t\tport_lid:\t\t{_lid(fabric, host, rail)}",
                "\t\t\tport_lmc:\t\t0x00", f"\t\t\tlink_layer:\t\t{fabric.link_layer}", ""]
    return "\n".join(out)


def show_gids(host: Host) -> str:
    """The GID table: the one output that says which netdev a RoCE device is bound to."""
    lines = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV", "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---"]
    for r, rail in enumerate(host.rails):
        suffix = f"{_h(host.name, rail.device) & 0xffff:04x}"
        ip = f"10.{100 + r}.{host.rails.index(rail)}.{_h(host.name) % 250 + 1}"
        octets = [int(x) for x in ip.split(".")]
        v4 = f"{octets[0]:02x}{octets[1]:02x}:{octets[2]:02x}{octets[3]:02x}"
        for index, (gid, addr, ver) in enumerate(((f"fe80:0000:0000:0000:0e42:a1ff:fe00:{suffix}", "\t\t", "v1"),
                                                  (f"fe80:0000:0000:0000:0e42:a1ff:fe00:{suffix}", "\t\t", "v2"),
                                                  (f"0000:0000:0000:0000:0000:ffff:{v4}", f"{ip}  \t", "v1"),
                                                  (f"0000:0000:0000:0000:0000:ffff:{v4}", f"{ip}  \t", "v2"))):
            lines.append(f"{rail.device}\t1\t{index}\t{gid}\t{addr}{ver}\t{rail.netdev}")
    lines.append(f"n_gids_found={4 * len(host.rails)}")
    return "\n".join(lines) + "\n"


def ethtool_stats(rail: Rail, t: float) -> str:
    skip = set(_SYSFS_COUNTERS) | set(_HW_COUNTERS)
    rows = [f"     {name}: {c.at(t)}" for name, c in rail.counters.items() if name not in skip]
    rows += [f"     rx{q}_packets: {q * 1000}" for q in range(2)]  # per-queue counters every mlx5 prints
    if rail.all_priorities:  # mlx5 prints every priority's counters, zeros where nothing runs
        have = set(rail.counters)
        for p in range(8):
            for name in ("rx_prio{}_bytes", "rx_prio{}_packets", "tx_prio{}_bytes", "tx_prio{}_packets",
                         "rx_prio{}_pause", "rx_prio{}_pause_duration", "tx_prio{}_pause", "tx_prio{}_pause_duration",
                         "rx_prio{}_pause_transition", "rx_prio{}_discards"):
                if name.format(p) not in have:
                    rows.append(f"     {name.format(p)}: {int(1e6 + t * 1e5) if p == 0 and 'bytes' in name else 0}")
    return "NIC statistics:\n" + "\n".join(rows) + "\n"


def ethtool_info(rail: Rail) -> str:
    return (f"driver: mlx5_core\nversion: 24.04-0.7.0\nfirmware-version: {rail.fw} (MT_0000000838)\n"
            f"expansion-rom-version: \nbus-info: 0000:{rail.device[-1]}a:00.0\nsupports-statistics: yes\n"
            "supports-test: yes\nsupports-eeprom-access: no\nsupports-register-dump: no\nsupports-priv-flags: yes\n")


def mlnx_qos(rail: Rail) -> str:
    by_prio: dict[int, list[int]] = {p: [] for p in range(8)}
    for dscp, prio in sorted(rail.dscp_map.items(), reverse=True):
        by_prio[prio].append(dscp)
    lines = ["DCBX mode: OS controlled", f"Priority trust state: {rail.trust}", "dscp2prio mapping:"]
    lines += [f"\tprio:{p} dscp:" + "".join(f"{d:02d}," for d in ds) for p, ds in by_prio.items() if ds]
    lines += ["default priority:", "\tprio:0", "Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,total_size=1027584",
              "Cable len: 7", "PFC configuration:", "\tpriority    0   1   2   3   4   5   6   7",
              "\tenabled     " + "   ".join("1" if p in rail.pfc else "0" for p in range(8)),
              "\tbuffer      " + "   ".join("1" if p in rail.pfc else "0" for p in range(8))]
    lossless = sorted(rail.pfc)
    rest = [p for p in range(8) if p not in lossless]
    lines += ["tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%"] + [f"\t priority:  {p}" for p in rest]
    for p in lossless:
        lines += [f"tc: {p} ratelimit: unlimited, tsa: ets, bw: 50%", f"\t priority:  {p}"]
    return "\n".join(lines) + "\n"


def dcqcn_sysfs(fabric: Fabric, rail: Rail) -> str:
    base = f"/sys/class/net/{rail.netdev}/ecn"
    lines = [f"{base}/roce_np/cnp_802p_prio:{fabric.site.cnp_priority}", f"{base}/roce_np/cnp_dscp:{fabric.site.cnp_dscp}"]
    lines += [f"{base}/roce_np/enable/{p}:{int(p in rail.np_enabled)}" for p in range(8)]
    lines += [f"{base}/roce_np/min_time_between_cnps:4", f"{base}/roce_rp/dce_tcp_g:1019",
              f"{base}/roce_rp/rpg_ai_rate:5", f"{base}/roce_rp/rpg_time_reset:300"]
    lines += [f"{base}/roce_rp/enable/{p}:{int(p in rail.rp_enabled)}" for p in range(8)]
    return "\n".join(lines) + "\n"


def lldpctl(fabric: Fabric, host: Host) -> str:
    interfaces = {}
    for rail in host.rails:
        if not rail.leaf or not rail.lldp_seen or rail.state != "Active":
            continue
        switch = fabric.switch(rail.leaf)
        port = switch.port(rail.leaf_port)
        entry = {"via": "LLDP", "rid": str(len(interfaces) + 1), "age": "12 day, 03:14:15",
                 "chassis": {fabric.lldp_name(switch.name): {"id": {"type": "mac", "value": f"0c:42:a1:00:00:{fabric.switches.index(switch):02x}"},
                                           "descr": f"{switch.nos} switch", "mgmt-ip": switch.address}},
                 "port": {"id": {"type": "ifname" if switch.nos != "sonic" else "local",
                                 "value": advertised_port_id(switch, port)},
                          "descr": port.name if switch.nos == "sonic" else f"to {host.name}", "mfs": 9216}}
        interfaces[rail.netdev] = entry
    if host.mgmt_lldp:  # the management port sees an out-of-band switch no collection logs into
        interfaces["eno1"] = {"via": "LLDP", "rid": str(len(interfaces) + 1), "age": "90 day, 00:00:01",
                              "chassis": {"oob-sw01": {"id": {"type": "mac", "value": "00:1b:21:aa:bb:cc"},
                                                        "descr": "Cisco IOS Software, C2960X"}},
                              "port": {"id": {"type": "ifname", "value": "Gi1/0/12"}, "descr": "GigabitEthernet1/0/12"}}
    if not interfaces:
        return '{\n  "lldp": {}\n}\n'
    return json.dumps({"lldp": {"interface": interfaces}}, indent=2) + "\n"


def loadavg(host: Host) -> str:
    return f"{host.load1:.2f} {host.load1 * 0.9:.2f} {host.load1 * 0.8:.2f} 3/1207 2740921\n"


def psi(host: Host, t: float) -> str:
    rows = [("cpu", "some", host.psi_cpu), ("cpu", "full", 0.0), ("io", "some", host.psi_io),
            ("io", "full", host.psi_io * 0.8), ("memory", "some", 0.0), ("memory", "full", 0.0)]
    return "".join(f"/proc/pressure/{res}:{kind} avg10={v:.2f} avg60={v * 0.9:.2f} avg300={v * 0.7:.2f} "
                   f"total={int(1e6 + v * 1e4 * (t + 1))}\n" for res, kind, v in rows)


def nvidia_smi(host: Host) -> str:
    return "".join(f"{i}, GPU-{_h(host.name, i) % 10**8:08d}-aaaa-bbbb-cccc-000000000000, NVIDIA H100 80GB HBM3, "
                   f"{int(host.gpu_util)}, 38, 71023, 81559, 5, 5, 16, 16\n" for i in range(host.gpus))


def outputs(fabric: Fabric, host: Host, t: float) -> list[tuple[str, str, str, str]]:
    """(parser, qualifier, command, text) of every output of one host at time t."""
    out = [("ibstat", "", "ibstat", ibstat(fabric, host)), ("ibv_devinfo", "", "ibv_devinfo", ibv_devinfo(fabric, host))]
    for rail in host.rails:
        out.append(("sysfs_counters", rail.device,
                    f"grep -H . /sys/class/infiniband/{rail.device}/ports/*/counters/*", sysfs_counters(fabric, host, rail, t)))
        if fabric.link_layer == "Ethernet":
            out += [("ethtool_stats", rail.netdev, f"ethtool -S {rail.netdev}", ethtool_stats(rail, t)),
                    ("ethtool_info", rail.netdev, f"ethtool -i {rail.netdev}", ethtool_info(rail)),
                    ("mlnx_qos", rail.netdev, f"mlnx_qos -i {rail.netdev}", mlnx_qos(rail)),
                    ("dcqcn_sysfs", rail.netdev, f"grep -H . /sys/class/net/{rail.netdev}/ecn/*/*", dcqcn_sysfs(fabric, rail))]
    if fabric.link_layer == "Ethernet":
        out.append(("show_gids", "", "show_gids", show_gids(host)))
        if fabric.hosts_run_lldpd:
            out.append(("lldpctl", "", "lldpctl -f json", lldpctl(fabric, host)))
    out += [("loadavg", "", "cat /proc/loadavg", loadavg(host)), ("psi", "", "grep -H . /proc/pressure/*", psi(host, t))]
    if fabric.link_layer == "InfiniBand" and host is fabric.hosts[0] and fabric.switches:
        out += ib_subnet_text.outputs(fabric, host.rails[0], t)  # the subnet's sweep, from one host
    if host.gpus:
        out.append(("nvidia_smi", "", "nvidia-smi --query-gpu=... --format=csv,noheader,nounits", nvidia_smi(host)))
    return out


def perftest(fabric: Fabric, client: Host, server: Host, device: str, gbps: float) -> str:
    """ib_write_bw's client side, --report_gbits, one message size."""
    rule = "-" * 87
    link = "Ethernet" if fabric.link_layer == "Ethernet" else "IB"
    local = f" local address: LID {0 if link == 'Ethernet' else 10:#06x} QPN 0x0108 PSN 0x5e1a2b RKey 0x203e00 VAddr 0x007f3a1c400000"
    remote = f" remote address: LID {0 if link == 'Ethernet' else 11:#06x} QPN 0x0a12 PSN 0x7c01d4 RKey 0x1ff300 VAddr 0x007f52b0600000"
    lines = [rule, "                    RDMA_Write BW Test", f" Dual-port       : OFF\t\tDevice         : {device}",
             " Number of qps   : 1\t\tTransport type : IB", " Connection type : RC\t\tUsing SRQ      : OFF",
             " PCIe relax order: ON", " ibv_wr* API     : ON", " TX depth        : 128", " CQ Moderation   : 100",
             " Mtu             : 4096[B]", f" Link type       : {link}"]
    if link == "Ethernet":
        lines.append(" GID index       : 3")
    lines += [" Max inline data : 0[B]", " rdma_cm QPs\t : OFF", " Data ex. method : Ethernet", rule, local]
    if link == "Ethernet":
        lines.append(" GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:100:00:11")
    lines.append(remote)
    if link == "Ethernet":
        lines.append(" GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:100:00:12")
    lines += [rule, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
              f" 65536      5000           {gbps * 1.01:.2f}             {gbps:.2f}\t\t   {gbps * 1e9 / 8 / 65536 / 1e6:.6f}",
              rule]
    return "\n".join(lines) + "\n"


def perftest_outputs(fabric: Fabric, host: Host) -> list[tuple[str, str, str, str]]:
    """The per-peer perftest outputs of a host that ran clients, named the way the fabric's writer names them."""
    out = []
    for n, (client, server, device, gbps) in enumerate(fabric.pairs):
        if client != host.name:
            continue
        peer = fabric.host(server)
        command = f"ib_write_bw -d {device} --report_gbits -D 5 {peer.address}"
        text = perftest(fabric, host, peer, device, gbps)
        if fabric.perf_writer == "rdmatool":
            out.append(("perftest", f"ib_write_bw@{server}", command, text))
        elif fabric.perf_writer == "peer":
            out.append(("perftest", server, command, text))
        else:  # a numbered run whose command line alone says who the server was
            out.append(("perftest", f"run{n}", command, text))
    return out
