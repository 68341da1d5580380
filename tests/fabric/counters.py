"""Counter model shared by the scenario loader and the shims: names, default profiles, value at a time.

A counter is `[base, rate]`: its value at time t is `int(base + rate * (t - epoch))`, so two reads some seconds
apart give realistic deltas. Stdlib only: the shims import this on every connection.
"""

from __future__ import annotations

# sysfs /sys/class/infiniband/<dev>/ports/<p>/counters (PMA) names, in `ls` order.
IB_COUNTERS = (
    "VL15_dropped", "excessive_buffer_overrun_errors", "link_downed", "link_error_recovery",
    "local_link_integrity_errors", "multicast_rcv_packets", "multicast_xmit_packets",
    "port_rcv_constraint_errors", "port_rcv_data", "port_rcv_errors", "port_rcv_packets",
    "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_constraint_errors",
    "port_xmit_data", "port_xmit_discards", "port_xmit_packets", "port_xmit_wait", "symbol_error",
    "unicast_rcv_packets", "unicast_xmit_packets",
)
# sysfs hw_counters (mlx5 driver) names, in `ls` order.
HW_COUNTERS = (
    "duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err", "np_cnp_sent",
    "np_ecn_marked_roce_packets", "out_of_buffer", "out_of_sequence", "packet_seq_err", "req_cqe_error",
    "req_cqe_flush_error", "req_remote_access_errors", "req_remote_invalid_request", "resp_cqe_error",
    "resp_cqe_flush_error", "resp_local_length_error", "resp_remote_access_errors", "rnr_nak_retry_err",
    "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_cnps",
    "roce_slow_restart_trans", "rp_cnp_handled", "rp_cnp_ignored", "rx_atomic_requests", "rx_icrc_encapsulated",
    "rx_read_requests", "rx_write_requests",
)
# perfquery -x field name -> sysfs counter name.
PERFQUERY_DATA = (
    ("PortXmitData", "port_xmit_data"), ("PortRcvData", "port_rcv_data"),
    ("PortXmitPkts", "port_xmit_packets"), ("PortRcvPkts", "port_rcv_packets"),
    ("PortUnicastXmitPkts", "unicast_xmit_packets"), ("PortUnicastRcvPkts", "unicast_rcv_packets"),
    ("PortMulticastXmitPkts", "multicast_xmit_packets"), ("PortMulticastRcvPkts", "multicast_rcv_packets"),
)
PERFQUERY_ERRORS = (
    ("SymbolErrorCounter", "symbol_error"), ("LinkErrorRecoveryCounter", "link_error_recovery"),
    ("LinkDownedCounter", "link_downed"), ("PortRcvErrors", "port_rcv_errors"),
    ("PortRcvRemotePhysicalErrors", "port_rcv_remote_physical_errors"),
    ("PortRcvSwitchRelayErrors", "port_rcv_switch_relay_errors"), ("PortXmitDiscards", "port_xmit_discards"),
    ("PortXmitConstraintErrors", "port_xmit_constraint_errors"),
    ("PortRcvConstraintErrors", "port_rcv_constraint_errors"),
    ("LocalLinkIntegrityErrors", "local_link_integrity_errors"),
    ("ExcessiveBufferOverrunErrors", "excessive_buffer_overrun_errors"), ("VL15Dropped", "VL15_dropped"),
    ("PortXmitWait", "port_xmit_wait"),
)


def _ethtool_names() -> tuple[str, ...]:
    names = [
        "rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "rx_csum_complete", "rx_out_of_buffer",
        "rx_vport_unicast_packets", "rx_vport_unicast_bytes", "tx_vport_unicast_packets", "tx_vport_unicast_bytes",
        "rx_vport_rdma_unicast_packets", "rx_vport_rdma_unicast_bytes", "tx_vport_rdma_unicast_packets",
        "tx_vport_rdma_unicast_bytes", "rx_packets_phy", "rx_bytes_phy", "tx_packets_phy", "tx_bytes_phy",
        "rx_discards_phy", "tx_discards_phy", "tx_errors_phy", "rx_crc_errors_phy", "rx_symbol_err_phy",
        "rx_corrected_bits_phy", "rx_pcs_symbol_err_phy", "rx_fec_corrected_blocks_phy",
        "rx_fec_uncorrectable_blocks_phy", "rx_pause_ctrl_phy", "tx_pause_ctrl_phy", "link_down_events_phy",
        "rx_buffer_passed_thres_phy", "rx_out_of_buffer_phy",
    ]
    for p in range(8):
        names += [f"rx_prio{p}_bytes", f"rx_prio{p}_packets", f"rx_prio{p}_discards", f"tx_prio{p}_bytes",
                  f"tx_prio{p}_packets"]
    for p in range(8):
        names += [f"rx_prio{p}_pause", f"rx_prio{p}_pause_duration", f"tx_prio{p}_pause",
                  f"tx_prio{p}_pause_duration", f"rx_prio{p}_pause_transition"]
    for p in range(8):
        names += [f"rx_prio{p}_buf_discard", f"rx_prio{p}_cong_discard", f"rx_prio{p}_marked"]
    names += ["tx_pause_storm_warning_events", "tx_pause_storm_error_events", "module_unplug", "module_bus_stuck",
              "module_high_temp", "module_bad_shorted"]
    return tuple(names)


ETHTOOL_COUNTERS = _ethtool_names()


def _switch_names() -> tuple[str, ...]:
    # rx_err: frames received with errors (a bad FCS); rx_symbol_err: PHY symbol errors (where the NOS counts them)
    names = ["rx_ok", "tx_ok", "rx_bytes", "tx_bytes", "rx_err", "tx_err", "rx_drp", "tx_drp", "rx_symbol_err"]
    for p in range(8):
        names += [f"rx_pfc{p}", f"tx_pfc{p}", f"rx_pfc{p}_duration", f"tx_pfc{p}_duration", f"pg{p}_drop",
                  f"pg{p}_rx_frames"]
    for q in range(8):
        names += [f"q{q}_pkts", f"q{q}_bytes", f"q{q}_drop_pkts", f"q{q}_drop_bytes", f"q{q}_wred_pkts",
                  f"q{q}_wred_bytes", f"q{q}_ecn_pkts", f"q{q}_ecn_bytes"]
    names += ["pfcwd_detected", "pfcwd_restored", "cnp_pkts"]
    return tuple(names)


SWITCH_COUNTERS = _switch_names()


def seed(*parts: object) -> int:
    """A stable integer from names, so every port gets its own but reproducible base values."""
    import hashlib  # lazily: the shims import this module on every command and never call seed()

    return int(hashlib.md5("/".join(map(str, parts)).encode()).hexdigest()[:8], 16)


PERIODIC = "periodic"  # a load `(PERIODIC, period_s, width_s, rate)`: the periodic_spike fault's bursts


def periodic(period_s: float, width_s: float, rate: float) -> tuple:
    return (PERIODIC, float(period_s), float(width_s), float(rate))


def in_burst(burst: list | tuple | None, now: float, epoch: float) -> bool:
    """Whether `now` is within a burst of `[period_s, width_s, ...]` (each period's first width_s since epoch)."""
    return bool(burst) and (now - epoch) % burst[0] < burst[1]


def value(spec: list | tuple | None, now: float, epoch: float) -> int:
    """`[base, rate, *loads]` at `now`: each load `(t0, t1, amount)` (the congestion model's, see `with_load`) adds
    its amount linearly over [t0, t1]; a periodic load `(PERIODIC, period_s, width_s, rate)` adds `rate` a second
    during the first width_s of every period since epoch."""
    if not spec:
        return 0
    total = spec[0] + spec[1] * max(0.0, now - epoch)
    for load in spec[2:]:
        if len(load) == 4 and load[0] == PERIODIC:
            _, period_s, width_s, rate = load
            t = max(0.0, now - epoch)
            total += rate * (int(t // period_s) * width_s + min(t % period_s, width_s))
            continue
        t0, t1, amount = load
        if now >= t1:
            total += amount
        elif now > t0:
            total += amount * (now - t0) / (t1 - t0)
    return int(total)


LOAD_DIR = "load"  # <state>/load/<flow>.bin: the counter increments of one flow under congestion


def with_load(spec: dict, state: str) -> dict:
    """The target's spec with the recorded loads (tests/fabric/congestion.py) added to its counters, in place.

    A load file is {"t0", "t1", "adds": {address: {key: {counter: amount}}}}, key `<device>/<port>/<eth|hw>` on a
    host, the port name on a switch. Runs on every connection: one listdir when nothing was loaded."""
    import marshal
    import os

    try:
        names = os.listdir(f"{state}/{LOAD_DIR}")
    except FileNotFoundError:
        return spec
    address = spec.get("address")
    for name in sorted(names):
        if not name.endswith(".bin"):
            continue
        try:
            with open(f"{state}/{LOAD_DIR}/{name}", "rb") as f:
                load = marshal.load(f)
        except (OSError, EOFError, ValueError):
            continue  # a load file being written: the next connection sees it
        for key, amounts in load["adds"].get(address, {}).items():
            table = _counter_table(spec, key)
            if table is None:
                continue
            for counter, amount in amounts.items():
                entry = table.get(counter) or [0, 0.0]
                table[counter] = [*entry, (load["t0"], load["t1"], amount)]
    return spec


def _counter_table(spec: dict, key: str) -> dict | None:
    if spec["kind"] == "switch":
        return next((p["counters"] for p in spec["ports"] if p["name"] == key), None)
    device, port, ns = key.split("/")
    for nic in spec["nics"]:
        for p in nic["ports"] if nic["device"] == device else ():
            if str(p["num"]) == port:
                return p["counters"].get(ns)
    return None


def _running(key: str, speed_gbps: float) -> tuple[float, float, float]:
    """(bytes/s, packets/s, seconds the counters have been running) of a port at 25..35 % utilisation."""
    s = seed(key)
    bytes_s = speed_gbps * 1e9 / 8 * (0.25 + (s % 100) / 1000)
    return bytes_s, bytes_s / 4096, 86400.0 * (20 + s % 40)


def host_profile(link_layer: str, rate_gbps: float, roce_prio: int, key: str) -> dict[str, dict[str, list]]:
    """Healthy counters of one NIC port: {"ib": sysfs counters, "hw": hw_counters, "eth": ethtool -S}."""
    bytes_s, pkts_s, age = _running(key, rate_gbps)

    def up(rate: float) -> list:
        return [round(rate * age), rate]

    ib = {n: [0, 0.0] for n in IB_COUNTERS}
    ib.update(port_xmit_data=up(bytes_s / 4), port_rcv_data=up(bytes_s / 4 * 0.98), port_xmit_packets=up(pkts_s),
              port_rcv_packets=up(pkts_s * 0.98), unicast_xmit_packets=up(pkts_s * 0.999),
              unicast_rcv_packets=up(pkts_s * 0.979), multicast_xmit_packets=up(0.5), multicast_rcv_packets=up(0.4),
              port_xmit_wait=up(2000.0), link_downed=[seed(key, "ld") % 2, 0.0])
    hw = {n: [0, 0.0] for n in HW_COUNTERS}
    hw.update(rx_write_requests=up(pkts_s * 0.6), rx_read_requests=up(pkts_s * 0.1), lifespan=[12, 0.0],
              out_of_sequence=[seed(key, "oos") % 40, 0.0], duplicate_request=[seed(key, "dup") % 9, 0.0])
    out = {"ib": ib, "hw": hw}
    if link_layer != "Ethernet":
        return out
    hw.update(np_ecn_marked_roce_packets=up(40.0), np_cnp_sent=up(38.0), rp_cnp_handled=up(35.0),
              rp_cnp_ignored=up(0.05))
    eth = {n: [0, 0.0] for n in ETHTOOL_COUNTERS}
    p = roce_prio
    eth.update({
        "rx_packets": up(1000.0), "rx_bytes": up(250000.0), "tx_packets": up(900.0), "tx_bytes": up(200000.0),
        "rx_csum_complete": up(990.0), "rx_packets_phy": up(pkts_s), "rx_bytes_phy": up(bytes_s),
        "tx_packets_phy": up(pkts_s), "tx_bytes_phy": up(bytes_s),
        "rx_vport_rdma_unicast_packets": up(pkts_s * 0.99), "rx_vport_rdma_unicast_bytes": up(bytes_s * 0.99),
        "tx_vport_rdma_unicast_packets": up(pkts_s * 0.99), "tx_vport_rdma_unicast_bytes": up(bytes_s * 0.99),
        "rx_corrected_bits_phy": up(3.0), "rx_fec_corrected_blocks_phy": up(2.0),
        "rx_prio0_bytes": up(250000.0), "rx_prio0_packets": up(1000.0),
        "tx_prio0_bytes": up(200000.0), "tx_prio0_packets": up(900.0),
        f"rx_prio{p}_bytes": up(bytes_s * 0.99), f"rx_prio{p}_packets": up(pkts_s),
        f"tx_prio{p}_bytes": up(bytes_s * 0.99), f"tx_prio{p}_packets": up(pkts_s),
        f"rx_prio{p}_pause": up(2.0), f"rx_prio{p}_pause_duration": up(6.0),
        f"rx_prio{p}_pause_transition": up(1.0), f"tx_prio{p}_pause": up(1.0),
        f"tx_prio{p}_pause_duration": up(3.0), f"rx_prio{p}_marked": up(40.0),
    })
    out["eth"] = eth
    return out


def switch_profile(speed_gbps: float, roce_prio: int, key: str) -> dict[str, list]:
    """Healthy counters of one switch port carrying RoCE on `roce_prio` (traffic class == priority)."""
    bytes_s, pkts_s, age = _running(key, speed_gbps)

    def up(rate: float) -> list:
        return [round(rate * age), rate]

    p = roce_prio
    c = {n: [0, 0.0] for n in SWITCH_COUNTERS}
    c.update({
        "rx_ok": up(pkts_s), "tx_ok": up(pkts_s), "rx_bytes": up(bytes_s), "tx_bytes": up(bytes_s),
        "q0_pkts": up(1000.0), "q0_bytes": up(250000.0), "pg0_rx_frames": up(1000.0), "cnp_pkts": up(38.0),
        f"q{p}_pkts": up(pkts_s), f"q{p}_bytes": up(bytes_s), f"q{p}_ecn_pkts": up(40.0),
        f"q{p}_ecn_bytes": up(40.0 * 4096), f"rx_pfc{p}": up(1.0), f"tx_pfc{p}": up(2.0),
        f"rx_pfc{p}_duration": up(3.0), f"tx_pfc{p}_duration": up(6.0), f"pg{p}_rx_frames": up(pkts_s),
    })
    return c
