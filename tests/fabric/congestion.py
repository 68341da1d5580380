"""The simulated fabric's congestion model: what a many-to-one (incast) load does to goodput and to the pause, ECN
and CNP counters of the hosts and of the switch ports on its path. Stdlib only: the perftest shim imports it.

The model, per receiver (its README section "Congestion model" says the same for the tests' readers):

* Fan-in n is the number of bandwidth servers listening on the receiver when a client starts (a live process
  each; the gate starts all n servers of an incast before any client). n = 1, or a load the receiver's port can
  carry, is no congestion: the shim's pair behaviour, and no counter moves.
* Otherwise the receiver's line rate (x 0.965, perftest's efficiency) is shared, and who controls the queue on
  the switch port toward the receiver decides the rest:
  - `dcqcn`: the switch marks ECN before PFC fires (ECN on, Kmin below XOFF: the single-ingress bound of
    docs/tuning.md §2.4, which the model takes for any fan-in) and the receiver's notification point is on.
    Senders slow down on the CNPs: shares follow the senders' weights (1 each; 3 for a sender whose reaction point
    is off, so it keeps more than its share), 2 % of the packets are marked, one CNP per two marks goes back,
    pauses are rare (0.2 % of the time; 20 % when some sender does not react).
  - `pfc`: ECN fires after PFC (thresholds at or above XOFF, or marking off): no marks, no CNPs; the switch pauses
    the senders for the share of time their offered load exceeds the receiver's rate (1 - capacity / offered).
  - `np_off`: marks but the receiver's notification point is off: 30 % of the packets marked (the queue sits above
    Kmin), no CNP, so nobody slows and PFC pauses as in `pfc`.
  Under PFC the senders share equally (the switch serves its ingress ports round-robin), at 97 % (pause gaps).
* Counters are credited for the simulated duration (-D seconds), spread over the flow's real (scaled-down) run:
  senders' tx bytes/packets and rx pause frames/duration on their priority, their reaction point's CNPs handled (or
  ignored, when it is off); the receiver's rx bytes/packets, marks (ethtool rx_prioN_marked and hw_counters
  np_ecn_marked_roce_packets) and CNPs sent; on the switch, the receiver's port queue packets/bytes/ECN marks and
  tx totals, each sender's port rx totals, the PFC frames and pause time it sent and the CNPs it forwarded.
"""

from __future__ import annotations

EFFICIENCY = 0.965  # perftest's share of the line rate on an unloaded path (the shim's pair figure)
PFC_EFFICIENCY = 0.97  # goodput lost to pause gaps and head-of-line blocking when PFC controls the queue
DCQCN_EFFICIENCY = 0.98  # goodput lost to DCQCN's rate oscillation
SLOW_SENDER_WEIGHT = 3.0  # a sender that ignores CNPs keeps this many shares
PACKET_BYTES = 4096
PAUSE_FRAME_US = 10.0  # pause time one PFC frame stands for (a switch refreshes XOFF well inside its quanta)


def mode(switch_qos: dict | None, np_enabled: bool) -> str:
    """dcqcn, pfc or np_off: which mechanism holds the queue toward the receiver."""
    ecn_first = True
    if switch_qos is not None:
        ecn_first = switch_qos.get("ecn_probability", 100) > 0 and \
            switch_qos["ecn_min_bytes"] < switch_qos["xoff_bytes"]
    if not ecn_first:
        return "pfc"
    return "dcqcn" if np_enabled else "np_off"


def shares(capacity_gbps: float, demand: dict[str, float], weights: dict[str, float], how: str) -> dict[str, float]:
    """Goodput of each sender (Gb/s): weighted max-min fair up to each sender's own demand."""
    total = capacity_gbps * (DCQCN_EFFICIENCY if how == "dcqcn" else PFC_EFFICIENCY)
    if how != "dcqcn":
        weights = dict.fromkeys(demand, 1.0)
    got: dict[str, float] = {}
    left = dict(demand)
    while left:
        unit = total / sum(weights[s] for s in left)
        capped = [s for s in left if left[s] <= unit * weights[s]]
        if not capped:
            got.update({s: unit * weights[s] for s in left})
            break
        for s in capped:
            got[s] = left.pop(s)
            total -= got[s]
    return got


def pause_fraction(how: str, capacity_gbps: float, offered_gbps: float, all_react: bool) -> float:
    if how == "dcqcn":
        return 0.002 if all_react else 0.2
    return max(0.0, 1.0 - capacity_gbps / offered_gbps) if offered_gbps > 0 else 0.0


def mark_ratio(how: str) -> float:
    return {"dcqcn": 0.02, "np_off": 0.3}.get(how, 0.0)


def flow_counters(how: str, gbps: float, seconds: float, paused: float, reacts: bool, sender_prio: int,
                  receiver_prio: int) -> dict[str, dict[str, dict[str, float]]]:
    """One sender's flow as counter increments: {"sender"|"receiver"|"sender_port"|"receiver_port": {table: {name:
    amount}}}, tables "eth" / "hw" on a NIC, "sw" on a switch port."""
    data = gbps * 1e9 / 8 * seconds
    packets = data / PACKET_BYTES
    marks = packets * mark_ratio(how)
    cnps = marks * 0.5 if how == "dcqcn" else 0.0
    pause_us = paused * seconds * 1e6
    frames = pause_us / PAUSE_FRAME_US
    s, r = sender_prio, receiver_prio
    return {
        "sender": {
            "eth": {f"tx_prio{s}_bytes": data, f"tx_prio{s}_packets": packets, "tx_bytes_phy": data,
                    "tx_packets_phy": packets, f"rx_prio{s}_pause": frames, f"rx_prio{s}_pause_duration": pause_us,
                    f"rx_prio{s}_pause_transition": frames / 10},
            "hw": {"rp_cnp_handled" if reacts else "rp_cnp_ignored": cnps},
        },
        "receiver": {
            "eth": {f"rx_prio{r}_bytes": data, f"rx_prio{r}_packets": packets, "rx_bytes_phy": data,
                    "rx_packets_phy": packets, f"rx_prio{r}_marked": marks},
            "hw": {"np_ecn_marked_roce_packets": marks, "np_cnp_sent": cnps, "rx_write_requests": packets},
        },
        "sender_port": {"sw": {"rx_ok": packets, "rx_bytes": data, f"pg{s}_rx_frames": packets,
                               f"tx_pfc{s}": frames, f"tx_pfc{s}_duration": pause_us, "cnp_pkts": cnps}},
        "receiver_port": {"sw": {"tx_ok": packets, "tx_bytes": data, f"q{r}_pkts": packets, f"q{r}_bytes": data,
                                 f"q{r}_ecn_pkts": marks, f"q{r}_ecn_bytes": marks * PACKET_BYTES}},
    }


# --- the steady load of a trial (a scenario's `background_load`): what the ECN / PFC settings do to a fabric that
# is always a little over-subscribed, so that a change of them shows in any collection's counter window.

STEADY_PAUSE = 0.1  # of the over-subscribed share, the time PFC still pauses when ECN marks first at Kmin = XOFF


def steady(switch_qos: dict, roce_prio: int, load: float) -> dict[str, float]:
    """{"pause": share of time a sender is paused, "marks": share of packets marked} under a steady load of `load` x
    the port's rate toward it (above 1: over-subscribed), from the switch's settings for the priority:

    * lossy (the priority not in the switch's PFC list): no pause;
    * ECN after PFC (probability 0, or Kmin at or above XOFF): no marks, the senders paused for the whole
      over-subscribed share (1 - 1/load);
    * ECN first: DCQCN holds the queue near Kmin, and PFC fires for the bursts above it: the pause share grows with
      Kmin / XOFF (STEADY_PAUSE of the over-subscribed share at Kmin = XOFF), the marks fall with it."""
    over = max(0.0, 1.0 - 1.0 / load) if load > 0 else 0.0
    how = mode(switch_qos, True)
    ratio = min(1.0, switch_qos["ecn_min_bytes"] / switch_qos["xoff_bytes"])
    marks = 0.0 if how == "pfc" else over * (0.02 + 0.06 * (1.0 - ratio))
    if roce_prio not in switch_qos.get("pfc", [roce_prio]):
        return {"pause": 0.0, "marks": marks}
    return {"pause": over if how == "pfc" else over * STEADY_PAUSE * ratio, "marks": marks}


def apply_steady(links: list[tuple[str, str, int, str, str]], hosts: dict, switches: dict, load: float) -> None:
    """The steady load's rates on every cabled RoCE port, in place: (host, nic, port, switch, switch port) per
    cable. The host's rx pause time / frames / transitions and marks (ethtool, hw_counters), its CNPs, and on the
    switch port the PFC frames and pause time it sends, its queue's ECN marks."""
    for host, device, num, switch, switch_port in links:
        nic = next((n for n in hosts[host]["nics"] if n["device"] == device), None)
        sw = switches.get(switch)
        if nic is None or sw is None or nic["link_layer"] != "Ethernet":
            continue
        port = next(p for p in nic["ports"] if p["num"] == num)
        sp = next((p for p in sw["ports"] if p["name"] == switch_port), None)
        prio = nic["qos"]["roce_prio"]
        got = steady(sw["qos"], prio, load)
        pkts_s = port["rate_gbps"] * 1e9 / 8 / PACKET_BYTES * 0.3
        pause_us, marks = got["pause"] * 1e6, got["marks"] * pkts_s
        eth, hw = port["counters"]["eth"], port["counters"]["hw"]
        for table, name, rate in ((eth, f"rx_prio{prio}_pause_duration", pause_us),
                                  (eth, f"rx_prio{prio}_pause", pause_us / PAUSE_FRAME_US),
                                  (eth, f"rx_prio{prio}_pause_transition", pause_us / PAUSE_FRAME_US / 10),
                                  (eth, f"rx_prio{prio}_marked", marks), (hw, "np_ecn_marked_roce_packets", marks),
                                  (hw, "np_cnp_sent", marks / 2), (hw, "rp_cnp_handled", marks / 2)):
            table[name] = [table.get(name, [0, 0.0])[0], rate]
        if sp is not None:
            c = sp["counters"]
            for name, rate in ((f"tx_pfc{prio}", pause_us / PAUSE_FRAME_US), (f"tx_pfc{prio}_duration", pause_us),
                               (f"q{prio}_ecn_pkts", marks), (f"q{prio}_ecn_bytes", marks * PACKET_BYTES)):
                c[name] = [c.get(name, [0, 0.0])[0], rate]
