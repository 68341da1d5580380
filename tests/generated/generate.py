"""generate(seed): one random healthy fabric (tests/generated/model.py says what a Fabric holds).

What varies is what real sites vary: 1-4 spines and 2-8 leaves cabled leaf-spine (1 or 2 uplinks to each spine),
one NOS or a mix, SONiC aliases, Cumulus breakouts, 1-8 rails per host cabled rail-optimised or top-of-rack,
RoCE or InfiniBand, the site's RoCE/CNP class, 1-3 snapshots, bundle formats /1-/3, load from idle to busy.
A healthy fabric's counters move the way a healthy busy fabric's do: traffic on the RoCE class, a few ECN marks
answered by CNPs, a little PFC on the lossless priority, corrected FEC blocks, old error counts that do not grow.
"""

from __future__ import annotations

import random

from tests.generated.ib_subnet_text import AGGREGATION, LANES
from tests.generated.model import (
    NOSES,
    RATES_GBPS,
    SITE_CLASSES,
    Counter,
    Fabric,
    Host,
    Rail,
    Site,
    Switch,
    SwitchPort,
    advertised_port_id,
    port_names,
)


def generate(seed: int, link_layer: str | None = None, nos: str | None = None) -> Fabric:
    rng = random.Random(seed)
    link_layer = link_layer or rng.choice(("Ethernet", "Ethernet", "InfiniBand"))
    site = Site(*rng.choice(SITE_CLASSES))
    rate = rng.choice(RATES_GBPS)
    n_rails = rng.choice((1, 2, 4, 8))
    n_leaves = rng.randint(2, 8)
    n_spines = rng.randint(1, 4)
    n_compute = rng.randint(2, 10)
    n_storage = rng.choice((0, 0, 1, 2))
    load = rng.choice((0.0, rng.uniform(0.01, 0.2), rng.uniform(0.3, 0.9)))
    fw = rng.choice(("28.39.1002", "22.38.1900", "28.41.1000"))
    fabric = Fabric(seed=seed, link_layer=link_layer, site=site, hosts=[], switches=[],
                    snapshots=rng.choice((1, 2, 2, 3)), interval_s=rng.choice((5.0, 10.0, 30.0)),
                    fmt=rng.choice((1, 2, 3)), load=load, fw=fw)
    irng = random.Random(seed * 7919 + 1)  # InfiniBand's own draws: the Ethernet fabrics stay as they were
    if link_layer == "InfiniBand":
        fabric.ib_speed = irng.choice(("EDR", "HDR", "HDR", "NDR", "NDR", "FDR10"))
        rate = 4 * LANES[fabric.ib_speed][1]
    fabric.domain = rng.choice(("", "", "pod1.example.net", "cluster.local"))
    fabric.upper_switch_names = rng.random() < 0.2
    fabric.hosts_run_lldpd = rng.random() < 0.75
    mgmt_lldp, all_priorities = rng.random() < 0.5, rng.random() < 0.5
    name_style = rng.choice(("gpu{:02d}", "node-{:03d}", "dgx-a{:02d}"))
    for i in range(n_compute + n_storage):
        role = "compute" if i < n_compute else "storage"
        name = name_style.format(i + 1) if role == "compute" else f"stor{i - n_compute + 1:02d}"
        rails = n_rails if role == "compute" else 1
        host = Host(name=name, role=role, address=f"10.{rng.randint(0, 3)}.{i // 200}.{i % 200 + 10}",
                    gpus=8 if role == "compute" else 0, gpu_util=rng.uniform(85, 99),
                    load1=rng.uniform(2, 30), psi_io=rng.uniform(0, 2), psi_cpu=rng.uniform(0, 3))
        host.mgmt_lldp = mgmt_lldp
        # storage often has a NIC one speed below the compute rails
        rail_rate = rate if role == "compute" or rng.random() < 0.5 else max(100, rate // 2)
        if link_layer == "InfiniBand":  # an HCA faster than the switch trains at the switch's speed
            rail_rate = min(rail_rate, rate)
        for r in range(rails):
            host.rails.append(_rail(rng, fabric, r, rail_rate))
            host.rails[-1].all_priorities = all_priorities
            if role == "storage":  # storage keeps off the training's lossless class: lossy RoCE with ECN
                host.rails[-1].pfc = ()
        fabric.hosts.append(host)
    # InfiniBand switches are never logged into: only the subnet's iblinkinfo (read from one host) shows them
    _switches(rng, fabric, n_leaves, n_spines, rate, nos if link_layer == "Ethernet" else "ib")
    if link_layer == "InfiniBand":
        ib_dress(irng, fabric)
    _cable_hosts(rng, fabric)
    _cable_uplinks(rng, fabric)
    if link_layer == "InfiniBand":
        ib_subnet(irng, fabric)
    for host in fabric.hosts:
        for rail in host.rails:
            rail.counters = host_counters(rng, fabric, rail)
    _balance_cnps(rng, fabric)
    for switch in fabric.switches:
        for port in switch.ports:
            port.counters = switch_counters(rng, fabric, switch, port)
            if switch.nos == "ib":
                port.counters = ib_switch_counters(irng, fabric, port)
    if rng.random() < 0.5:
        _perftest_pairs(rng, fabric)
    return fabric


def _perftest_pairs(rng: random.Random, fabric: Fabric) -> None:
    """Each compute host against the next three (bandwidth on its first rail, at 90-97 % of line rate), as a
    pre-job check leaves them; written under one of the names other writers use."""
    compute = [h for h in fabric.hosts if h.role == "compute"]
    fabric.perf_writer = rng.choice(("rdmatool", "peer", "command"))
    for i, client in enumerate(compute):
        for k in range(1, min(4, len(compute))):
            server = compute[(i + k) % len(compute)]
            rail = client.rails[0]
            fabric.pairs.append((client.name, server.name, rail.device, rail.rate_gbps * rng.uniform(0.9, 0.97)))


def _balance_cnps(rng: random.Random, fabric: Fabric) -> None:
    """Every CNP a notification point sends reaches a reaction point: across the fleet, CNPs handled per second
    match CNPs sent (a few percent are lost or arrive for a QP already at line rate)."""
    rails = [r for h in fabric.hosts for r in h.rails if "np_cnp_sent" in r.counters]
    sent = sum(r.counters["np_cnp_sent"].rate for r in rails)
    handled = sum(r.counters["rp_cnp_handled"].rate for r in rails)
    scale = sent * rng.uniform(0.95, 1.0) / handled if handled else 0.0
    for r in rails:
        r.counters["rp_cnp_handled"].rate *= scale


def _rail(rng: random.Random, fabric: Fabric, index: int, rate: int) -> Rail:
    bus = 0x18 + 0x10 * index
    if fabric.link_layer == "Ethernet":
        # one naming scheme per site, as a distribution's udev rules give
        netdev = (f"ens{bus // 8 + 1}f0np0", f"enp{bus}s0f0np0", f"eth{index + 2}")[fabric.seed % 3]
        site = fabric.site
        dscp_map = {d: d >> 3 for d in range(64)}  # the mlx5 default map, which every site class here fits
        return Rail(device=f"mlx5_{index}", netdev=netdev, rate_gbps=rate, mtu=4096, pfc=(site.roce_priority,),
                    trust="dscp", dscp_map=dscp_map, fw=fabric.fw)
    return Rail(device=f"mlx5_{index}", netdev=f"ibp{bus}s0", rate_gbps=rate, mtu=4096, fw=fabric.fw)


def _switches(rng: random.Random, fabric: Fabric, n_leaves: int, n_spines: int, rate: int, nos: str | None) -> None:
    mixed = nos is None and rng.random() < 0.4
    one = nos or rng.choice(NOSES)
    prefix = rng.choice(("leaf", "tor-", "sw-leaf")) if nos != "ib" else rng.choice(("ib-leaf", "qm-l"))
    for role, count in (("leaf", n_leaves), ("spine", n_spines)):
        for i in range(count):
            kind = rng.choice(NOSES) if mixed else one
            name = f"{prefix}{i + 1:02d}" if role == "leaf" else f"spine{i + 1:02d}"
            switch = Switch(name=name, nos=kind, role=role, address=f"10.254.{0 if role == 'leaf' else 1}.{i + 1}",
                            pfc=(fabric.site.roce_priority,), ecn_min=rng.choice((100_000, 150_000, 200_000)),
                            ecn_max=rng.choice((600_000, 800_000, 1_000_000)), ecn_prob=rng.choice((10, 20, 50)),
                            chassis=kind == "sonic" and rng.random() < 0.3)
            # enough ports for every host rail plus the uplinks, named as the NOS names them
            names = port_names(kind, 60, rng) if kind != "ib" else [(str(n), "") for n in range(1, 65)]
            for name_, alias in names:
                switch.ports.append(SwitchPort(name=name_, alias=alias, speed_gbps=rate, up=False))
            fabric.switches.append(switch)


def _free_port(switch: Switch, start: int = 0) -> SwitchPort:
    port = next(p for p in switch.ports[start:] if not p.peer)
    port.up = True
    return port


def _cable_hosts(rng: random.Random, fabric: Fabric) -> None:
    leaves = [s for s in fabric.switches if s.role == "leaf"]
    rail_optimised = rng.random() < 0.5
    for h, host in enumerate(fabric.hosts):
        for r, rail in enumerate(host.rails):
            leaf = leaves[(r if rail_optimised and len(host.rails) > 1 else h) % len(leaves)]
            port = _free_port(leaf)
            port.peer, port.peer_port, port.speed_gbps = host.name, rail.netdev, rail.rate_gbps
            rail.leaf, rail.leaf_port = leaf.name, port.name


def _cable_uplinks(rng: random.Random, fabric: Fabric) -> None:
    leaves = [s for s in fabric.switches if s.role == "leaf"]
    spines = [s for s in fabric.switches if s.role == "spine"]
    uplinks = rng.choice((1, 2))
    if fabric.link_layer == "Ethernet" and rng.random() < 0.3:  # MLAG pairs: two peer links between leaf 2i, 2i+1
        for a_leaf, b_leaf in zip(leaves[0::2], leaves[1::2]):
            for _ in range(2):
                a, b = _free_port(a_leaf, 56), _free_port(b_leaf, 56)
                a.peer, a.peer_port = b_leaf.name, advertised_port_id(b_leaf, b)
                b.peer, b.peer_port = a_leaf.name, advertised_port_id(a_leaf, a)
    for leaf in leaves:
        for spine in spines:
            for _ in range(uplinks):
                a, b = _free_port(leaf, 48), _free_port(spine)
                a.peer, a.peer_port = spine.name, advertised_port_id(spine, b)
                b.peer, b.peer_port = leaf.name, advertised_port_id(leaf, a)


def _traffic(rng: random.Random, fabric: Fabric, rate_gbps: int) -> float:
    """Bytes per second one way on a port: a share of line rate that grows with the fabric's load."""
    return fabric.load * rate_gbps * 1e9 / 8 * rng.uniform(0.2, 0.8)


def host_counters(rng: random.Random, fabric: Fabric, rail: Rail) -> dict[str, Counter]:
    """A rail's counters by their kernel / ethtool names (sysfs counters/ and hw_counters/, ethtool -S)."""
    tx, rx = _traffic(rng, fabric, rail.rate_gbps), _traffic(rng, fabric, rail.rate_gbps)
    big = rng.choice((0, 10**6, 10**9, 10**12))  # a counter read soon after boot, or after months
    c = {
        "port_xmit_data": Counter(big + rng.randint(0, 10**6), tx / 4),
        "port_rcv_data": Counter(big + rng.randint(0, 10**6), rx / 4),
        "port_xmit_packets": Counter(big // 4096, tx / 4096),
        "port_rcv_packets": Counter(big // 4096, rx / 4096),
        "symbol_error": Counter(rng.choice((0, 0, 3))),  # old errors, not growing
        "link_error_recovery": Counter(rng.choice((0, 0, 1))),
        "link_downed": Counter(rng.choice((0, 1, 2))),
        "port_rcv_errors": Counter(0), "port_xmit_discards": Counter(0),
        "port_rcv_remote_physical_errors": Counter(0), "local_link_integrity_errors": Counter(0),
        "excessive_buffer_overrun_errors": Counter(0), "VL15_dropped": Counter(0),
        "port_rcv_switch_relay_errors": Counter(0), "port_xmit_constraint_errors": Counter(0),
        "port_rcv_constraint_errors": Counter(0),
    }
    if fabric.link_layer == "InfiniBand":
        c["port_xmit_wait"] = Counter(rng.randint(0, 10**5), fabric.load * rng.uniform(0, 1000))
        return c
    marks = fabric.load * rng.uniform(0, 300)
    handled = fabric.load * rng.uniform(0, 300)
    prio = fabric.site.roce_priority
    paused_in = fabric.load * rng.uniform(0, 30)
    paused_out = fabric.load * rng.uniform(0, 10)
    c.update({
        "np_ecn_marked_roce_packets": Counter(rng.randint(0, 10**5), marks),
        "np_cnp_sent": Counter(rng.randint(0, 10**5), marks * rng.uniform(0.9, 1.0)),
        "rp_cnp_handled": Counter(rng.randint(0, 10**5), handled),
        "rp_cnp_ignored": Counter(0), "out_of_buffer": Counter(0), "out_of_sequence": Counter(0),
        "packet_seq_err": Counter(0), "local_ack_timeout_err": Counter(rng.choice((0, 0, 4))),
        "implied_nak_seq_err": Counter(0), "rnr_nak_retry_err": Counter(0),
        f"rx_prio{prio}_pause": Counter(rng.randint(0, 10**4), paused_in),
        f"rx_prio{prio}_pause_duration": Counter(rng.randint(0, 10**6), paused_in * rng.uniform(1, 5)),
        f"tx_prio{prio}_pause": Counter(rng.randint(0, 10**3), paused_out),
        f"tx_prio{prio}_pause_duration": Counter(rng.randint(0, 10**5), paused_out * rng.uniform(1, 5)),
        f"rx_prio{prio}_bytes": Counter(big, rx), f"tx_prio{prio}_bytes": Counter(big, tx),
        f"rx_prio{prio}_packets": Counter(big // 4096, rx / 4096), f"tx_prio{prio}_packets": Counter(big // 4096, tx / 4096),
        "rx_bytes_phy": Counter(big, rx * 1.01), "tx_bytes_phy": Counter(big, tx * 1.01),
        "rx_packets_phy": Counter(big // 4096, rx / 4000), "tx_packets_phy": Counter(big // 4096, tx / 4000),
        "rx_discards_phy": Counter(0), "tx_discards_phy": Counter(0), "rx_crc_errors_phy": Counter(0),
        "rx_symbol_err_phy": Counter(0), "link_down_events_phy": Counter(rng.choice((0, 1, 2))),
        "rx_pause_ctrl_phy": Counter(0), "tx_pause_ctrl_phy": Counter(0),
        "rx_corrected_bits_phy": Counter(rng.randint(0, 10**6), rng.uniform(0, 100)),
        "rx_fec_corrected_blocks": Counter(rng.randint(0, 10**6), rng.uniform(0, 500)),
        "rx_fec_uncorrectable_blocks": Counter(0),
    })
    return c


def switch_counters(rng: random.Random, fabric: Fabric, switch: Switch, port: SwitchPort) -> dict[str, Counter]:
    """A switch port's counters by neutral names; each NOS's renderer spells them its own way. Where the peer is a
    host, the pause both ends count agree: what the switch sends the host receives."""
    if not port.up:
        return {}
    prio = fabric.site.roce_priority
    tx, rx = _traffic(rng, fabric, port.speed_gbps), _traffic(rng, fabric, port.speed_gbps)
    pause_tx = fabric.load * rng.uniform(0, 30)
    pause_rx = fabric.load * rng.uniform(0, 10)
    peer_host = next((h for h in fabric.hosts if h.name == port.peer), None)
    if peer_host is not None:
        rail = next(r for r in peer_host.rails if r.leaf_port == port.name and r.leaf == switch.name)
        tx = rail.counters["port_rcv_data"].rate * 4
        rx = rail.counters["port_xmit_data"].rate * 4
        if f"rx_prio{prio}_pause" in rail.counters:
            pause_tx = rail.counters[f"rx_prio{prio}_pause"].rate
            pause_rx = rail.counters[f"tx_prio{prio}_pause"].rate
    pkts_tx = tx / 4096
    marks = min(pkts_tx * 0.01, fabric.load * rng.uniform(0, 300))
    big = rng.choice((0, 10**7, 10**10))
    return {
        "rx_ok": Counter(big, rx / 4096), "tx_ok": Counter(big, pkts_tx),
        "rx_bytes": Counter(big * 4096, rx), "tx_bytes": Counter(big * 4096, tx),
        "rx_err": Counter(0), "tx_err": Counter(0), "rx_drp": Counter(0), "tx_drp": Counter(0),
        "fcs": Counter(rng.choice((0, 0, 2))), "symbol": Counter(0),
        f"rx_pfc{prio}": Counter(rng.randint(0, 10**3), pause_rx), f"tx_pfc{prio}": Counter(rng.randint(0, 10**4), pause_tx),
        f"rx_pfc{prio}_us": Counter(rng.randint(0, 10**5), pause_rx * rng.uniform(1, 5)),
        f"tx_pfc{prio}_us": Counter(rng.randint(0, 10**6), pause_tx * rng.uniform(1, 5)),
        f"ecn{prio}": Counter(rng.randint(0, 10**5), marks), f"wred{prio}": Counter(0),
        f"qtx{prio}": Counter(big, pkts_tx), f"qtxb{prio}": Counter(big * 4096, tx),
    }


# Switch models by speed (the part of an `MF0;` description), and the descriptions firmware answers with when nobody
# set one: shared by every switch so left, with the runs of spaces the firmware pads them with.
_MODELS = {"EDR": "MSB7800", "HDR": "MQM8700", "NDR": "MQM9700", "FDR10": "MSX6036"}
_DEFAULTS = ("Quantum Mellanox Technologies", "Mellanox Technologies Aggregation Node", "SwitchIB    Mellanox Technologies",
             "Quantum-2  Mellanox Technologies")


def ib_dress(rng: random.Random, fabric: Fabric) -> None:
    """Each InfiniBand switch's description, GUID, LID and port numbers, as real subnets vary them: `MF0;` names,
    plain names (padded inside the quotes, or one name on two switches), firmware defaults; ports numbered from 1, or
    above 64 (a director's line card, the second half of a split cage), or every other one (split cages)."""
    style = rng.choice(("mf0", "mf0", "plain", "default", "mixed"))
    numbering = rng.choice(("plain", "plain", "high", "split"))
    lids = rng.sample(range(1, 1200), len(fabric.switches))
    for i, switch in enumerate(fabric.switches):
        kind = rng.choice(("mf0", "default")) if style == "mixed" else style
        name = switch.name.replace("ib-leaf", rng.choice(("ib-leaf", "leaf-", "leaf"))) if kind == "plain" else switch.name
        switch.desc = {"mf0": f"MF0;{switch.name}:{_MODELS[fabric.ib_speed]}/U1", "default": rng.choice(_DEFAULTS[:2]),
                       "plain": rng.choice((name, f" {name}", f"{name}  "))}[kind]
        switch.guid = f"0x{rng.choice(('b83fd203', '0c42a103', '248a0703', '98039b03'))}00{rng.getrandbits(24):06x}"
        switch.lid = lids[i]
        first, step = {"plain": (1, 1), "high": (65, 1), "split": (1, 2)}[numbering]
        for k, port in enumerate(switch.ports):
            port.name = str(first + k * step)
    if style == "plain" and rng.random() < 0.3 and len(fabric.switches) > 2:  # two pods that both have a leaf01
        fabric.switches[1].desc = fabric.switches[0].desc


def ib_subnet(rng: random.Random, fabric: Fabric) -> None:
    """After the leaf-spine cabling: a third tier (core switches on every spine) on some fabrics, the CAs' LIDs, and
    the subnet managers (a master, often a standby beside it)."""
    spines = [s for s in fabric.switches if s.role == "spine"]
    if len(spines) >= 2 and rng.random() < 0.3:
        for i in range(rng.randint(1, 2)):
            core = Switch(name=f"core{i + 1:02d}", nos="ib", role="core", address=f"10.254.2.{i + 1}")
            first = fabric.switches[0]
            core.ports = [SwitchPort(name=p.name, speed_gbps=first.ports[0].speed_gbps, up=False) for p in first.ports]
            core.desc = (first.desc.replace(first.name, core.name) if first.name in first.desc
                         else f"MF0;{core.name}:{_MODELS[fabric.ib_speed]}/U1")
            core.guid = f"0x0c42a10300{rng.getrandbits(24):06x}"
            core.lid = 1500 + i
            fabric.switches.append(core)
            for spine in spines:
                a, b = _free_port(spine, 32), _free_port(core)
                a.peer, a.peer_port = core.name, b.name
                b.peer, b.peer_port = spine.name, a.name
    sharp = fabric.ib_speed in ("HDR", "NDR") and rng.random() < 0.3
    for switch in fabric.switches if sharp else ():  # SHARP: each switch's Aggregation Node, a CA on its own port
        port = next(p for p in reversed(switch.ports) if not p.peer)
        port.up, port.peer, port.peer_port = True, AGGREGATION + switch.name, "1"
    taken = {s.lid for s in fabric.switches}
    lids = [lid for lid in rng.sample(range(1, 4000), len(fabric.hosts) * 8 + 40) if lid not in taken]
    for host in fabric.hosts:
        for rail in host.rails:
            fabric.ca_lids[(host.name, rail.device)] = lids.pop()
    for switch in fabric.switches if sharp else ():
        fabric.ca_lids[(AGGREGATION + switch.name, "")] = lids.pop()
    master_lid = rng.choice([s.lid for s in fabric.switches] + [fabric.ca_lids[(fabric.hosts[-1].name, "mlx5_0")]])
    fabric.sms = [(master_lid, f"0x0c42a10300{rng.getrandbits(24):06x}", rng.choice((15, 14, 1)), 3)]
    fabric.ca_style = rng.choice(("plain", "plain", "fqdn", "padded"))
    if rng.random() < 0.6:
        fabric.sms.append((lids.pop(), f"0x0c42a10300{rng.getrandbits(24):06x}", rng.choice((14, 1, 0)), 2))
    if rng.random() < 0.2:  # an SM installed on a host but not running (opensm's default state before its start)
        fabric.sms.append((lids.pop(), f"0x0c42a10300{rng.getrandbits(24):06x}", 0, 0))


def ib_switch_counters(rng: random.Random, fabric: Fabric, port: SwitchPort) -> dict[str, Counter]:
    """A healthy InfiniBand switch port by ibqueryerrors' names: data moving with the load, a few old errors that do
    not grow, a little credit wait (PortXmitWait, ticks) that does."""
    if not port.up:
        return {}
    tx, rx = _traffic(rng, fabric, port.speed_gbps), _traffic(rng, fabric, port.speed_gbps)
    big = rng.choice((0, 10**7, 10**10))
    return {
        "PortXmitData": Counter(big, tx / 4), "PortRcvData": Counter(big, rx / 4),
        "PortXmitPkts": Counter(big // 1024, tx / 4096), "PortRcvPkts": Counter(big // 1024, rx / 4096),
        "SymbolErrorCounter": Counter(rng.choice((0, 0, 2, 14))),
        "LinkErrorRecoveryCounter": Counter(rng.choice((0, 0, 1))),
        "LinkDownedCounter": Counter(rng.choice((0, 0, 1, 3))),
        "PortRcvErrors": Counter(rng.choice((0, 0, 5))),
        "PortXmitDiscards": Counter(rng.choice((0, 0, 12))),
        "PortXmitWait": Counter(rng.randint(0, 10**6), fabric.load * rng.uniform(0, 2e5)),
    }
