"""The fault catalogue: one fault injected into a generated healthy fabric, with the target that must be named and
the rules any of which names it. Each row is a row of the troubleshooting table or a pitfall a fabric engineer
meets (docs/tuning.md). A fault that does not fit a fabric (no storage host, one rail, InfiniBand) says so with
None, and the suite takes the next seed.

`apply(fabric, rng)` changes the model in place and returns (target, entity substring or "", rule ids)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from tests.generated.model import Counter, Fabric, Host, Rail

Injected = tuple[str, str, frozenset[str]] | None


@dataclass(frozen=True)
class Fault:
    name: str
    link_layer: str | None  # the link layer it needs, None: either
    apply: Callable[[Fabric, random.Random], Injected]
    fast: bool = True  # in the fast suite too (False: the slow suite only, where a unit test covers the rule)


def _compute(fabric: Fabric) -> list[Host]:
    return [h for h in fabric.hosts if h.role == "compute"]


def _pick(fabric: Fabric, rng: random.Random) -> tuple[Host, Rail]:
    host = rng.choice(_compute(fabric))
    return host, rng.choice(host.rails)


def _switch_port_of(fabric: Fabric, rail: Rail):
    return fabric.switch(rail.leaf).port(rail.leaf_port) if rail.leaf else None


def optic_flapping_host(fabric: Fabric, rng: random.Random) -> Injected:
    if fabric.snapshots < 2:
        return None
    host, rail = _pick(fabric, rng)
    if fabric.link_layer == "Ethernet":
        rail.counters["link_down_events_phy"] = Counter(3, 0.2)
        rail.counters["rx_symbol_err_phy"] = Counter(100, 50)
        return host.name, rail.netdev, frozenset({"eth_link_flapping", "cable_errors_host_end", "cable_errors_both_ends"})
    rail.counters["link_downed"] = Counter(3, 0.2)
    rail.counters["symbol_error"] = Counter(100, 50)
    return host.name, rail.device, frozenset({"ib_link_flapping", "ib_symbol_errors_growing", "cable_errors_host_end"})


def optic_errors_switch(fabric: Fabric, rng: random.Random) -> Injected:
    if fabric.snapshots < 2:
        return None
    host, rail = _pick(fabric, rng)
    port = _switch_port_of(fabric, rail)
    port.counters["fcs"] = Counter(10, 40)
    port.counters["symbol"] = Counter(10, 40)
    return rail.leaf, "", frozenset({"switch_port_errors_growing", "eth_crc_errors_growing", "cable_errors_both_ends",
                                     "cable_errors_switch_end"})


def rail_down(fabric: Fabric, rng: random.Random) -> Injected:
    host, rail = _pick(fabric, rng)
    # a cable out trains forever (Polling); a port disabled is a fault only against peers whose port is up
    rail.state, rail.phys = "Down", rng.choice(("Polling", "Disabled")) if len(_compute(fabric)) >= 3 else "Polling"
    port = _switch_port_of(fabric, rail)
    if port is not None:
        port.up, port.counters = False, {}
    return host.name, "", frozenset({"port_not_active", "port_phys_not_linkup", "port_disabled_while_peers_active"})


def pfc_priority_mismatch(fabric: Fabric, rng: random.Random) -> Injected:
    host, rail = _pick(fabric, rng)
    wrong = next(p for p in (3, 4, 5, 2) if p != fabric.site.roce_priority)
    rail.pfc = (wrong,)
    return host.name, rail.netdev, frozenset({"host_pfc_not_roce_priority", "pfc_priority_mismatch_host_switch"})


def trust_pcp(fabric: Fabric, rng: random.Random) -> Injected:
    host, rail = _pick(fabric, rng)
    rail.trust = "pcp"
    return host.name, rail.netdev, frozenset({"host_trust_not_dscp"})


def dscp_not_mapped(fabric: Fabric, rng: random.Random) -> Injected:
    host, rail = _pick(fabric, rng)
    rail.dscp_map = {**rail.dscp_map, fabric.site.roce_dscp: 0}
    return host.name, rail.netdev, frozenset({"host_dscp_not_roce_priority"})


def dcqcn_rp_off(fabric: Fabric, rng: random.Random) -> Injected:
    host, rail = _pick(fabric, rng)
    rail.rp_enabled = tuple(p for p in range(8) if p != fabric.site.roce_priority)
    return host.name, rail.netdev, frozenset({"dcqcn_rp_disabled"})


def dcqcn_np_off(fabric: Fabric, rng: random.Random) -> Injected:
    host, rail = _pick(fabric, rng)
    rail.np_enabled = tuple(p for p in range(8) if p != fabric.site.roce_priority)
    return host.name, rail.netdev, frozenset({"dcqcn_np_disabled", "ecn_marks_without_cnp"})


def shared_lossless_class(fabric: Fabric, rng: random.Random) -> Injected:
    storage = [h for h in fabric.hosts if h.role == "storage"]
    if not storage:
        return None
    host = rng.choice(storage)
    for rail in host.rails:
        rail.pfc = (fabric.site.roce_priority,)
    return host.name, "", frozenset({"training_storage_share_lossless_priority"})


def firmware_drift(fabric: Fabric, rng: random.Random) -> Injected:
    if len(fabric.hosts) < 4:
        return None
    host, _ = _pick(fabric, rng)
    for rail in host.rails:
        rail.fw = "28.36.1010" if fabric.fw != "28.36.1010" else "28.39.2048"
    return host.name, "", frozenset({"firmware_drift"})


def rail_cross_cabling(fabric: Fabric, rng: random.Random) -> Injected:
    host = rng.choice(_compute(fabric))
    a, b = host.rails[:2] if len(host.rails) >= 2 else (None, None)
    # with two hosts one each way there is no majority to tell the miscabled one (both are named): three or more
    if a is None or a.leaf == b.leaf or len(_compute(fabric)) < 3:
        return None
    # rail-optimised only: every host's rail 0 is on one leaf
    if len({h.rails[0].leaf for h in _compute(fabric)}) != 1:
        return None
    pa, pb = _switch_port_of(fabric, a), _switch_port_of(fabric, b)
    pa.peer_port, pb.peer_port = b.netdev, a.netdev
    a.leaf, a.leaf_port, b.leaf, b.leaf_port = b.leaf, b.leaf_port, a.leaf, a.leaf_port
    return host.name, "", frozenset({"rail_miscabled", "host_on_unexpected_leaf"})


def speed_downgrade(fabric: Fabric, rng: random.Random) -> Injected:
    if len(_compute(fabric)) < 3:
        return None
    host, rail = _pick(fabric, rng)
    rail.rate_gbps //= 2
    port = _switch_port_of(fabric, rail)
    if port is not None:
        port.speed_gbps = rail.rate_gbps
    return host.name, "", frozenset({"port_speed_below_fleet", "link_speed_mismatch", "port_width_degraded"})


def mtu_1024(fabric: Fabric, rng: random.Random) -> Injected:
    host, rail = _pick(fabric, rng)
    rail.mtu = 1024
    return host.name, rail.device, frozenset({"active_mtu_below_max"})


def host_rx_drops(fabric: Fabric, rng: random.Random) -> Injected:
    if fabric.snapshots < 2:
        return None
    host, rail = _pick(fabric, rng)
    rail.counters["out_of_buffer"] = Counter(1000, 500)
    rail.counters["rx_out_of_buffer"] = Counter(1000, 500)
    return host.name, "", frozenset({"rx_out_of_buffer", "roce_rx_no_buffer_drops", "host_rx_discards_lossless"})


def storage_overloaded(fabric: Fabric, rng: random.Random) -> Injected:
    storage = [h for h in fabric.hosts if h.role == "storage"]
    if not storage:
        return None
    host = rng.choice(storage)
    host.psi_io, host.load1 = 45.0, 180.0
    return host.name, "", frozenset({"storage_node_overloaded", "storage_node_cpu_starved"})


def pfc_storm(fabric: Fabric, rng: random.Random) -> Injected:
    if fabric.snapshots < 2:
        return None
    host, rail = _pick(fabric, rng)
    prio = fabric.site.roce_priority
    rail.counters[f"tx_prio{prio}_pause"] = Counter(10**6, 60_000)
    rail.counters[f"tx_prio{prio}_pause_duration"] = Counter(10**7, 900_000)
    port = _switch_port_of(fabric, rail)
    if port is not None:
        port.counters[f"rx_pfc{prio}"] = Counter(10**6, 60_000)
        port.counters[f"rx_pfc{prio}_us"] = Counter(10**7, 900_000)
        port.counters[f"ecn{prio}"] = Counter(port.counters[f"ecn{prio}"].base, 0)
    return host.name, rail.netdev, frozenset({"pfc_storm", "host_pause_storm_rate", "host_pause_storm_rate_total"})


def ecn_off_on_switch(fabric: Fabric, rng: random.Random) -> Injected:
    if fabric.snapshots < 2:
        return None
    leaf = rng.choice([s for s in fabric.switches if s.role == "leaf" and any(p.peer for p in s.ports)])
    prio = fabric.site.roce_priority
    leaf.ecn_on = False
    for port in leaf.ports:
        if port.up:
            port.counters[f"ecn{prio}"] = Counter(port.counters[f"ecn{prio}"].base, 0)
            port.counters[f"wred{prio}"] = Counter(0, 50)
            port.counters[f"tx_pfc{prio}"] = Counter(10**4, 2000)
    return leaf.name, "", frozenset({"wred_drops_without_marks", "pfc_without_ecn_marks", "ecn_after_pfc",
                                     "switch_ecn_fires_after_pfc", "switch_ecn_off", "switch_pauses_senders_ecn_late"})


def ecn_late_on_switch(fabric: Fabric, rng: random.Random) -> Injected:
    """ECN on but its thresholds above the pause trigger: the leaf pauses its senders (their received pause time
    grows) while it marks next to nothing. Under load only: an idle fabric has nothing to pause."""
    if fabric.snapshots < 2 or fabric.load < 0.1:
        return None
    leaf = rng.choice([s for s in fabric.switches if s.role == "leaf" and any(p.peer for p in s.ports)])
    prio = fabric.site.roce_priority
    leaf.ecn_min, leaf.ecn_max = 6_000_000, 12_000_000
    for port in leaf.ports:
        if not port.up or not port.peer:
            continue
        port.counters[f"ecn{prio}"] = Counter(port.counters[f"ecn{prio}"].base, 0)
        port.counters[f"tx_pfc{prio}"] = Counter(10**4, 3000)
        port.counters[f"tx_pfc{prio}_us"] = Counter(10**6, 150_000)
        host = next((h for h in fabric.hosts if h.name == port.peer), None)
        for rail in host.rails if host else ():
            if rail.leaf == leaf.name and rail.leaf_port == port.name:
                rail.counters[f"rx_prio{prio}_pause"] = Counter(10**4, 3000)
                rail.counters[f"rx_prio{prio}_pause_duration"] = Counter(10**6, 150_000)
                rail.counters["np_ecn_marked_roce_packets"].rate = 0
                rail.counters["np_cnp_sent"].rate = 0
    return leaf.name, "", frozenset({"switch_pauses_senders_ecn_late", "switch_ecn_fires_after_pfc",
                                     "pfc_without_ecn_marks", "ecn_after_pfc"})


def data_loading(fabric: Fabric, rng: random.Random) -> Injected:
    if fabric.snapshots < 2:  # the network's share of line rate is a rate: two reads
        return None
    host, _ = _pick(fabric, rng)
    host.gpu_util = 7.0
    for rail in host.rails:
        for name, counter in rail.counters.items():
            if counter.rate and ("data" in name or "bytes" in name or "packets" in name):
                rail.counters[name] = Counter(counter.base, counter.rate * 0.001)
    return host.name, "", frozenset({"triage_data_loading"})


def switch_port_pfc_off(fabric: Fabric, rng: random.Random) -> Injected:
    """One host-facing port of a leaf whose NOS keeps PFC per port (SONiC, Onyx, NX-OS) has it off."""
    leaves = [s for s in fabric.switches if s.role == "leaf" and s.nos in ("sonic", "onyx", "nxos")
              and any(p.up and p.peer for p in s.ports)]
    if not leaves:
        return None
    leaf = rng.choice(leaves)
    port = rng.choice([p for p in leaf.ports if p.up and p.peer and p.peer not in {s.name for s in fabric.switches}]
                      or [p for p in leaf.ports if p.up and p.peer])
    port.pfc_on = False
    return leaf.name, port.name, frozenset({"switch_pfc_not_roce_priority", "pfc_priority_mismatch_host_switch"})


def switch_lldp_one_sided(fabric: Fabric, rng: random.Random) -> Injected:
    if not fabric.hosts_run_lldpd:  # neither end would say anything of the cable: nothing to judge
        return None
    host, rail = _pick(fabric, rng)
    port = _switch_port_of(fabric, rail)
    port.lldp_seen = False
    return f"{rail.leaf}|{host.name}", "", frozenset({"neighbor_one_sided"})


def _with_pairs(fabric: Fabric, rng: random.Random) -> bool:
    if not fabric.pairs:
        from tests.generated.generate import _perftest_pairs

        _perftest_pairs(rng, fabric)
    return len({c for c, _s, _d, _g in fabric.pairs}) >= 4


def perf_bad_node(fabric: Fabric, rng: random.Random) -> Injected:
    if not _with_pairs(fabric, rng):
        return None
    bad = rng.choice(_compute(fabric)).name
    fabric.pairs = [(c, s, d, g * 0.35 if bad in (c, s) else g) for c, s, d, g in fabric.pairs]
    return bad, "", frozenset({"perf_bad_node", "perf_bad_rail_nic"})


def slow_inter_leaf(fabric: Fabric, rng: random.Random) -> Injected:
    """Every pair whose ends sit on two given leaves is slow: an uplink between them, not a host."""
    if not _with_pairs(fabric, rng):
        return None
    leaf_of = {h.name: h.rails[0].leaf for h in _compute(fabric)}
    crossing: dict[tuple[str, str], set] = {}
    for c, s, _d, _g in fabric.pairs:
        if leaf_of[c] != leaf_of[s]:  # two hosts tested both ways are one pair of hosts
            crossing.setdefault(tuple(sorted((leaf_of[c], leaf_of[s]))), set()).add(frozenset((c, s)))
    # two leaves crossed by two pairs of hosts or more (one pair alone is a bad link), whose hosts also have fast
    # pairs elsewhere
    candidates = sorted(k for k, pairs in crossing.items() if len(pairs) >= 2)
    if not candidates:
        return None
    a, b = rng.choice(candidates)
    slow = lambda c, s: {leaf_of[c], leaf_of[s]} == {a, b}  # noqa: E731
    if all(slow(c, s) for c, s, _d, _g in fabric.pairs if a in (leaf_of[c], leaf_of[s])):
        return None
    fabric.pairs = [(c, s, d, g * 0.4 if slow(c, s) else g) for c, s, d, g in fabric.pairs]
    return "fabric", "", frozenset({"perf_slow_inter_leaf"})


def _ib_ready(fabric: Fabric) -> bool:
    return fabric.snapshots >= 2 and bool(fabric.sms)


def _ib_switch_port(fabric: Fabric, rng: random.Random, uplink: bool):
    """A cabled port: a switch-to-switch one (uplink) of any tier, or a leaf's port to a host."""
    from tests.generated.ib_subnet_text import ib_switches

    switch_names = {s.name for s in fabric.switches}
    # a switch-to-switch port may be a spine's (or a core's) as well as a leaf's
    leaves = [s for s in ib_switches(fabric) if s.role == "leaf" or uplink]
    ports = [(s, p) for s in leaves for p in s.ports if p.up and p.peer and (p.peer in switch_names) == uplink
             and any(h.name == p.peer for h in fabric.hosts) != uplink]  # (not a SHARP Aggregation Node)
    return rng.choice(ports) if ports else (None, None)


def _named(fabric: Fabric, switch) -> str:
    from tests.generated.ib_subnet_text import expected_name

    return expected_name(fabric, switch)


def ib_switch_symbol_errors(fabric: Fabric, rng: random.Random) -> Injected:
    """A dirty optic on a leaf port: SymbolErrorCounter and link error recoveries grow between the sweeps."""
    if not _ib_ready(fabric):
        return None
    switch, port = _ib_switch_port(fabric, rng, uplink=rng.random() < 0.5)
    if switch is None:
        return None
    port.counters["SymbolErrorCounter"] = Counter(port.counters["SymbolErrorCounter"].base, 40)
    port.counters["LinkErrorRecoveryCounter"] = Counter(1, 0.05)
    return _named(fabric, switch), port.name, frozenset({"ib_switch_port_errors"})


@dataclass
class Saturating(Counter):
    """A legacy counter (16-bit SymbolErrorCounter) that stops at its field's maximum."""

    top: int = 65535

    def at(self, t: float) -> int:
        return min(self.top, super().at(t))


def ib_switch_errors_saturate(fabric: Fabric, rng: random.Random) -> Injected:
    """A port erroring hard enough that its 16-bit SymbolErrorCounter reaches its maximum by the last sweep."""
    if not _ib_ready(fabric):
        return None
    switch, port = _ib_switch_port(fabric, rng, uplink=rng.random() < 0.5)
    if switch is None:
        return None
    port.counters["SymbolErrorCounter"] = Saturating(65535 - 500, 1000)
    return _named(fabric, switch), port.name, frozenset({"ib_switch_port_errors"})


def ib_switch_link_downed(fabric: Fabric, rng: random.Random) -> Injected:
    if not _ib_ready(fabric):
        return None
    switch, port = _ib_switch_port(fabric, rng, uplink=rng.random() < 0.5)
    if switch is None:
        return None
    port.counters["LinkDownedCounter"] = Counter(port.counters["LinkDownedCounter"].base, 0.2)
    return _named(fabric, switch), port.name, frozenset({"ib_switch_link_downed"})


def ib_uplink_narrow(fabric: Fabric, rng: random.Random) -> Injected:
    """A leaf-spine cable trained at 2X or 1X: both ends say it, with `Could be 4X`."""
    switch, port = _ib_switch_port(fabric, rng, uplink=True)
    if switch is None or len([p for s in fabric.switches for p in s.ports if p.up and p.peer in
                              {x.name for x in fabric.switches}]) < 6:  # a majority of full-width links to compare
        return None
    far = fabric.switch(port.peer).port(port.peer_port)
    width = rng.choice(("2X", "1X"))
    port.width = far.width = width
    port.speed_gbps = far.speed_gbps = port.speed_gbps * int(width[0]) // 4
    return f"{_named(fabric, switch)}|{_named(fabric, fabric.switch(port.peer))}", "", frozenset(
        {"ib_switch_link_below_fabric"})


def ib_uplink_congested(fabric: Fabric, rng: random.Random) -> Injected:
    """A routing hot spot: one uplink waits for credits far past the threshold (1e7 ticks/s)."""
    if not _ib_ready(fabric):
        return None
    switch, port = _ib_switch_port(fabric, rng, uplink=True)
    if switch is None:
        return None
    port.counters["PortXmitWait"] = Counter(port.counters["PortXmitWait"].base, 5e7)
    return _named(fabric, switch), port.name, frozenset({"ib_uplink_congested"})


def ib_no_master_sm(fabric: Fabric, rng: random.Random) -> Injected:
    if not fabric.sms:
        return None
    fabric.sms = [(lid, guid, prio, 2 if state == 3 else state) for lid, guid, prio, state in fabric.sms]
    return "subnet", "", frozenset({"ib_no_master_sm"})


def ib_two_master_sms(fabric: Fabric, rng: random.Random) -> Injected:
    if not fabric.sms:
        return None
    lid, _guid, prio, _state = fabric.sms[0]
    fabric.sms = [fabric.sms[0], (lid + 4001, f"0x248a0703{rng.getrandbits(32):08x}", prio, 3)]
    return "subnet", "", frozenset({"ib_several_master_sms"})


def ib_cable_gone(fabric: Fabric, rng: random.Random) -> Injected:
    """A leaf-spine cable pulled during the window: the last sweep sees both ports Down/Polling."""
    if not _ib_ready(fabric):
        return None
    switch, port = _ib_switch_port(fabric, rng, uplink=True)
    if switch is None:
        return None
    far_switch = fabric.switch(port.peer)
    port.gone_last = far_switch.port(port.peer_port).gone_last = True
    return f"{_named(fabric, switch)}|{_named(fabric, far_switch)}", "", frozenset({"ib_cable_gone"})


CATALOGUE: tuple[Fault, ...] = (
    Fault("optic_flapping_host", None, optic_flapping_host),
    Fault("optic_errors_switch", "Ethernet", optic_errors_switch),
    Fault("rail_down", None, rail_down),
    Fault("pfc_priority_mismatch", "Ethernet", pfc_priority_mismatch),
    Fault("trust_pcp", "Ethernet", trust_pcp),
    Fault("dscp_not_mapped", "Ethernet", dscp_not_mapped),
    Fault("dcqcn_rp_off", "Ethernet", dcqcn_rp_off),
    Fault("dcqcn_np_off", "Ethernet", dcqcn_np_off),
    Fault("shared_lossless_class", "Ethernet", shared_lossless_class),
    Fault("firmware_drift", None, firmware_drift),
    Fault("rail_cross_cabling", None, rail_cross_cabling),
    Fault("speed_downgrade", None, speed_downgrade),
    Fault("mtu_1024", None, mtu_1024),
    Fault("host_rx_drops", "Ethernet", host_rx_drops),
    Fault("storage_overloaded", None, storage_overloaded),
    Fault("pfc_storm", "Ethernet", pfc_storm),
    Fault("ecn_off_on_switch", "Ethernet", ecn_off_on_switch),
    Fault("ecn_late_on_switch", "Ethernet", ecn_late_on_switch),
    Fault("data_loading", None, data_loading),
    Fault("switch_lldp_one_sided", "Ethernet", switch_lldp_one_sided),
    Fault("switch_port_pfc_off", "Ethernet", switch_port_pfc_off),
    Fault("perf_bad_node", None, perf_bad_node),
    Fault("slow_inter_leaf", None, slow_inter_leaf),
    # the same cabling and path faults where only the subnet's iblinkinfo shows the cabling
    Fault("ib_rail_cross_cabling", "InfiniBand", rail_cross_cabling),
    Fault("ib_slow_inter_leaf", "InfiniBand", slow_inter_leaf),
    Fault("ib_rail_down", "InfiniBand", rail_down),
    # the subnet sweep's own faults: switch ports (spines included) and the subnet managers
    Fault("ib_switch_symbol_errors", "InfiniBand", ib_switch_symbol_errors),
    Fault("ib_switch_errors_saturate", "InfiniBand", ib_switch_errors_saturate),
    Fault("ib_switch_link_downed", "InfiniBand", ib_switch_link_downed),
    Fault("ib_uplink_narrow", "InfiniBand", ib_uplink_narrow),
    Fault("ib_uplink_congested", "InfiniBand", ib_uplink_congested),
    Fault("ib_no_master_sm", "InfiniBand", ib_no_master_sm, fast=False),
    Fault("ib_two_master_sms", "InfiniBand", ib_two_master_sms, fast=False),
    Fault("ib_cable_gone", "InfiniBand", ib_cable_gone),
)
