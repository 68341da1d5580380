"""A generated switch's outputs as each NOS prints them: SONiC and Cumulus text and NVUE tables, Onyx's CLI, EOS and
NX-OS `| json`. name -> (parser, qualifier, command, text), for one snapshot at time t."""

from __future__ import annotations

import json

from tests.generated.model import Fabric, Switch, SwitchPort, advertised_port_id


def _lldp_entry(fabric: Fabric, switch: Switch, port: SwitchPort, rid: int) -> dict:
    """lldpd's JSON view of the neighbour on one port (SONiC and Cumulus run lldpd)."""
    peer_switch = next((s for s in fabric.switches if s.name == port.peer), None)
    if peer_switch is not None:
        peer_port = next(p for p in peer_switch.ports if p.peer == switch.name
                         and advertised_port_id(switch, port) == p.peer_port)
        port_id = advertised_port_id(peer_switch, peer_port)
        descr = peer_port.name if peer_switch.nos == "sonic" else f"to {switch.name}"
        kind = "local" if peer_switch.nos == "sonic" else "ifname"
    else:
        port_id, descr, kind = port.peer_port, "Mellanox ConnectX-7", "ifname"
    return {port.name: {"via": "LLDP", "rid": str(rid), "age": "40 day, 01:02:03",
                        "chassis": {fabric.lldp_name(port.peer): {"id": {"type": "mac", "value": f"b8:3f:d2:00:{rid // 256:02x}:{rid % 256:02x}"}}},
                        "port": {"id": {"type": kind, "value": port_id}, "descr": descr}}}


def _lldpctl(fabric: Fabric, switch: Switch) -> str:
    seen = [p for p in switch.ports if p.up and p.peer and p.lldp_seen]
    return json.dumps({"lldp": {"interface": [_lldp_entry(fabric, switch, p, i + 1) for i, p in enumerate(seen)]}},
                      indent=2) + "\n"


def _up(switch: Switch) -> list[SwitchPort]:
    return [p for p in switch.ports if p.up]


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.rjust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows]) + "\n"


def sonic(fabric: Fabric, switch: Switch, t: float) -> list[tuple[str, str, str, str]]:
    prio = fabric.site.roce_priority
    status = _table(["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC"],
                    [[p.name, ",".join(str(4 * i + k) for k in range(4)), f"{p.speed_gbps}G", "9100", "rs", p.alias,
                      "routed", "up" if p.up else "down", "up", "QSFP-DD or later" if p.up else "N/A", "off"]
                     for i, p in enumerate(switch.ports)])
    pfc = ""
    for way in ("Rx", "Tx"):
        key = "rx_pfc" if way == "Rx" else "tx_pfc"
        backplane = [[f"Ethernet-BP{4 * i}"] + ["N/A"] * 8 for i in range(2 if switch.chassis else 0)]
        pfc += _table([f"Port {way}"] + [f"PFC{i}" for i in range(8)],
                      [[p.name] + [f"{p.counters[f'{key}{prio}'].at(t):,}" if i == prio else "0" for i in range(8)]
                       for p in _up(switch)] + backplane) + "\n"
    lossless = _table(["Interface", "Lossless priorities"],
                      [[p.name, (",".join(map(str, switch.pfc)) if p.pfc_on else "") or "N/A"] for p in _up(switch)])
    ecn = ("Profile: AZURE_LOSSLESS\n-----------------------  -------\n"
           f"red_max_threshold        {switch.ecn_max}\nred_min_threshold        {switch.ecn_min}\n"
           f"ecn                      {'ecn_all' if switch.ecn_on else 'ecn_none'}\n"
           f"green_max_threshold      {switch.ecn_max}\ngreen_min_threshold      {switch.ecn_min}\n"
           f"green_drop_probability   {switch.ecn_prob}\nwred_green_enable        true\n"
           "-----------------------  -------\n")
    wred = _table(["Port", "TxQ", "WredDrp/pkts", "WredDrp/bytes", "EcnMarked/pkts", "EcnMarked/bytes"],
                  [[p.name, f"UC{prio}", f"{p.counters[f'wred{prio}'].at(t):,}", "0",
                    f"{p.counters[f'ecn{prio}'].at(t):,}", "N/A"] for p in _up(switch)])
    portstat = _table(["IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR", "TX_OK", "TX_BPS",
                       "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR"],
                      [[p.name, "U" if p.up else "D"] + _portstat_cells(p, t) for p in switch.ports])
    return [("sonic_interface_status", "", "show interfaces status", status),
            ("lldpctl", "", "lldpctl -f json", _lldpctl(fabric, switch)),
            ("sonic_pfc_counters", "", "show pfc counters", pfc),
            ("sonic_pfc_priority", "", "show pfc priority", lossless),
            ("sonic_ecn", "", "show ecn", ecn),
            ("sonic_wred_counters", "", "show queue wredcounters", wred),
            ("sonic_portstat", "", "show interfaces counters", portstat)]


def _portstat_cells(p: SwitchPort, t: float) -> list[str]:
    if not p.up:
        return ["0", "0.00 B/s", "0.00%", "0", "0", "0", "0", "0.00 B/s", "0.00%", "0", "0", "0"]
    c = p.counters
    return [f"{c['rx_ok'].at(t):,}", f"{c['rx_bytes'].rate / 1e6:.2f} MB/s", "1.00%", f"{c['fcs'].at(t):,}",
            f"{c['rx_drp'].at(t):,}", "0", f"{c['tx_ok'].at(t):,}", f"{c['tx_bytes'].rate / 1e6:.2f} MB/s", "1.00%",
            f"{c['tx_err'].at(t):,}", f"{c['tx_drp'].at(t):,}", "0"]


def cumulus(fabric: Fabric, switch: Switch, t: float) -> list[tuple[str, str, str, str]]:
    prio = fabric.site.roce_priority
    status = {"lo": {"type": "loopback", "link": {"mtu": 65536, "state": {"up": {}}}},
              "eth0": {"type": "eth", "link": {"mtu": 1500, "speed": "1G", "state": {"up": {}}}}}
    for p in switch.ports:
        link = {"mtu": 9216, "state": {"up": {}} if p.up else {"down": {}}}
        if p.up:
            link["speed"] = f"{p.speed_gbps}G"
        status[p.name] = {"type": "swp", "link": link}
    roce = {"enable": "on", "mode": "lossless",
            "pfc": {"pfc-priority": ",".join(map(str, switch.pfc)), "rx-enabled": "enabled", "tx-enabled": "enabled",
                    "cable-length": 100},
            "congestion-control": {"congestion-mode": "ECN" if switch.ecn_on else "disabled",
                                   "enabled-tc": str(prio), "min-threshold": switch.ecn_min,
                                   "max-threshold": switch.ecn_max, "probability": switch.ecn_prob},
            "trust": {"trust-mode": "pcp,dscp"}}
    out = [("lldpctl", "", "lldpctl -f json", _lldpctl(fabric, switch)),
           ("cumulus_roce", "", "nv show qos roce -o json", json.dumps(roce, indent=2) + "\n"),
           ("cumulus_interface_status", "", "nv show interface -o json", json.dumps(status, indent=2) + "\n")]
    for p in _up(switch):
        c = p.counters
        stats = {str(i): {"rx-pause-duration": c[f"rx_pfc{prio}_us"].at(t) if i == prio else 0,
                          "rx-pause-frames": c[f"rx_pfc{prio}"].at(t) if i == prio else 0,
                          "tx-pause-duration": c[f"tx_pfc{prio}_us"].at(t) if i == prio else 0,
                          "tx-pause-frames": c[f"tx_pfc{prio}"].at(t) if i == prio else 0} for i in range(8)}
        port_stats = ("Counter             Receive  Transmit\n------------------  -------  --------\n"
                      f"ECN Marked Packets  n/a      {c[f'ecn{prio}'].at(t):,}\n"
                      f"MC Buffer Discards  n/a      0\nPause Frames        {c[f'rx_pfc{prio}'].at(t)}     "
                      f"{c[f'tx_pfc{prio}'].at(t)}\n")
        errors = ("Counter           Receive  Transmit\n----------------  -------  --------\n"
                  "Alignment Errors  0        n/a\n"
                  f"FCS Errors        {c['fcs'].at(t):,}        n/a\nJabber Errors     0        n/a\n"
                  f"Symbol Errors     {c['symbol'].at(t)}        n/a\n"
                  f"Total Errors      {c['fcs'].at(t)}        {c['tx_err'].at(t)}\n")
        out += [("cumulus_pfc_stats", p.name, f"nv show interface {p.name} counters qos pfc-stats -o json",
                 json.dumps(stats, indent=2) + "\n"),
                ("cumulus_port_stats", p.name, f"nv show interface {p.name} counters qos port-stats", port_stats),
                ("cumulus_counters_errors", p.name, f"nv show interface {p.name} counters errors", errors)]
    return out


def onyx(fabric: Fabric, switch: Switch, t: float) -> list[tuple[str, str, str, str]]:
    prio = fabric.site.roce_priority
    prompt = f"{switch.name} [standalone: master] # "
    rows = ["-" * 85, f"{'Local Interface':<20}{'Device ID':<20}{'Port ID':<20}System Name", "-" * 85]
    for p in _up(switch):
        if p.peer and p.lldp_seen:
            rows.append(f"{p.name:<20}{'0c:42:a1:de:5a:10':<20}{_peer_port_id(fabric, switch, p):<20}{fabric.lldp_name(p.peer)}")
    lldp = prompt + "show lldp remote\n" + "\n".join(rows) + "\n"
    status = [prompt + "show interfaces ethernet status", "",
              f"{'Port':<20}{'Operational state':<28}{'Speed':<16}Negotiation",
              f"{'----':<20}{'-----------------':<28}{'-----':<16}-----------"]
    status += [f"{p.name:<20}{'Up' if p.up else 'Down':<28}{(f'{p.speed_gbps} Gbps' if p.up else '-'):<16}Auto"
               for p in switch.ports]
    pfc = [prompt + "show dcb priority-flow-control", "", "PFC: enabled",
           "Priority Enabled List: " + " ".join(map(str, switch.pfc)),
           "Priority Disabled List: " + " ".join(str(i) for i in range(8) if i not in switch.pfc), "",
           "-" * 49, f"{'Interface':<17}{'PFC admin':<17}PFC oper", "-" * 49]
    pfc += [f"{p.name:<17}{'Auto':<17}{'Enabled' if p.up and p.pfc_on else 'Disabled'}" for p in switch.ports]
    out = [("onyx_lldp_neighbors", "", "show lldp remote", lldp),
           ("onyx_interface_status", "", "show interfaces ethernet status", "\n".join(status) + "\n"),
           ("onyx_dcb_pfc", "", "show dcb priority-flow-control", "\n".join(pfc) + "\n")]
    for p in _up(switch):
        c, arg = p.counters, p.name[3:]
        ecn = (f"{prompt}show interfaces ethernet {arg} congestion-control\nInterface ethernet {arg}\n"
               f"  ECN marked packets  : {c[f'ecn{prio}'].at(t):,}\n  Traffic class {prio}:\n"
               f"    Congestion control  : {'ecn' if switch.ecn_on else 'none'}\n    Threshold mode      : absolute\n"
               f"    Minimum threshold   : {switch.ecn_min // 1000} KB\n    Maximum threshold   : {switch.ecn_max // 1000} KB\n"
               f"    Mark probability    : {switch.ecn_prob}%\n    ECN marked packets  : {c[f'ecn{prio}'].at(t):,}\n"
               "    RED dropped packets : 0\n")
        out.append(("onyx_ecn", p.name, f"show interfaces ethernet {arg} congestion-control", ecn))
        for i in range(8):
            rx = (c[f"rx_pfc{prio}"].at(t), c[f"rx_pfc{prio}_us"].at(t)) if i == prio else (0, 0)
            tx = (c[f"tx_pfc{prio}"].at(t), c[f"tx_pfc{prio}_us"].at(t)) if i == prio else (0, 0)
            text = (f"{prompt}show interfaces ethernet {arg} counters pfc prio {i}\n\nRx:\n"
                    f"  {c['rx_ok'].at(t) if i == prio else 0:<21,}packets\n  {rx[0]:<21,}pause packets\n"
                    f"  {rx[1]:<21,}pause duration\n\nTx:\n  {c['tx_ok'].at(t) if i == prio else 0:<21,}packets\n"
                    f"  {tx[0]:<21,}pause packets\n  {tx[1]:<21,}pause duration\n")
            out.append(("onyx_pfc_counters", f"{p.name}.prio{i}", f"show interfaces ethernet {arg} counters pfc prio {i}", text))
        counters = (f"{prompt}show interfaces ethernet {arg} counters\nRx:\n  {c['rx_ok'].at(t):<21,}packets\n"
                    f"  {c['rx_bytes'].at(t):<21,}bytes\n  {c['fcs'].at(t):<21,}error packets\n  {0:<21,}discard packets\n"
                    f"  {c['fcs'].at(t):<21,}fcs errors\n  {c['symbol'].at(t):<21,}symbol errors\n\nTx:\n"
                    f"  {c['tx_ok'].at(t):<21,}packets\n  {c['tx_bytes'].at(t):<21,}bytes\n"
                    f"  {c['tx_err'].at(t):<21,}error packets\n  {c['tx_drp'].at(t):<21,}discard packets\n")
        out.append(("onyx_interface_counters", p.name, f"show interfaces ethernet {arg} counters", counters))
    return out


def _peer_port_id(fabric: Fabric, switch: Switch, port: SwitchPort) -> str:
    entry = _lldp_entry(fabric, switch, port, 1)[port.name]
    return entry["port"]["id"]["value"]


def eos(fabric: Fabric, switch: Switch, t: float) -> list[tuple[str, str, str, str]]:
    prio = fabric.site.roce_priority
    up = _up(switch)
    lldp = {"tablesLastChangeTime": 1733000000.5, "tablesAgeOuts": 0, "tablesInserts": len(up), "tablesDeletes": 0,
            "tablesDrops": 0,
            "lldpNeighbors": [{"port": p.name, "neighborDevice": fabric.lldp_name(p.peer), "neighborPort": _peer_port_id(fabric, switch, p),
                               "ttl": 120} for p in up if p.peer and p.lldp_seen]}
    pfc = {"interfaceCounters": {p.name: {"rxFrames": p.counters[f"rx_pfc{prio}"].at(t),
                                          "txFrames": p.counters[f"tx_pfc{prio}"].at(t),
                                          "priorities": {str(prio): {"rxFrames": p.counters[f"rx_pfc{prio}"].at(t),
                                                                     "txFrames": p.counters[f"tx_pfc{prio}"].at(t)}}}
                                 for p in up}}
    ecn = {"interfaces": {p.name: {"txQueues": {str(prio): {
        "ecnEnabled": switch.ecn_on, "minThreshold": switch.ecn_min, "maxThreshold": switch.ecn_max, "unit": "bytes",
        "maxMarkProbability": switch.ecn_prob, "ecnMarkedPackets": p.counters[f"ecn{prio}"].at(t)}}} for p in up}}
    errors = {"interfaceErrorCounters": {p.name: {"inErrors": p.counters["fcs"].at(t), "frameTooLongs": 0,
                                                  "outErrors": p.counters["tx_err"].at(t), "frameTooShorts": 0,
                                                  "fcsErrors": p.counters["fcs"].at(t), "alignmentErrors": 0,
                                                  "symbolErrors": p.counters["symbol"].at(t)} for p in up}}
    status = {"interfaceStatuses": {p.name: {
        "description": f"{p.peer} {p.peer_port}".strip(), "linkStatus": "connected" if p.up else "notconnect",
        "lineProtocolStatus": "up" if p.up else "notPresent", "bandwidth": p.speed_gbps * 10**9,
        "interfaceType": f"{p.speed_gbps}GBASE-CR4" if p.up else "Not Present", "duplex": "duplexFull",
        "autoNegotiateActive": False, "vlanInformation": {"interfaceMode": "routed", "interfaceForwardingModel": "routed"},
    } for p in switch.ports}}
    dump = lambda d: json.dumps(d, indent=2) + "\n"  # noqa: E731
    return [("eos_lldp_neighbors", "", "show lldp neighbors | json", dump(lldp)),
            ("eos_pfc_counters", "", "show priority-flow-control counters | json", dump(pfc)),
            ("eos_ecn", "", "show qos interfaces ecn counters queue | json", dump(ecn)),
            ("eos_interface_errors", "", "show interfaces counters errors | json", dump(errors)),
            ("eos_interface_status", "", "show interfaces status | json", dump(status))]


def nxos(fabric: Fabric, switch: Switch, t: float) -> list[tuple[str, str, str, str]]:
    prio = fabric.site.roce_priority
    up = _up(switch)
    rows = [{"chassis_type": "Mac Address", "chassis_id": "6c8b.d3a1.9900", "l_port_id": "Eth" + p.name[8:],
             "hold_time": 120, "system_capability": "BR", "enabled_capability": "BR", "port_type": "Interface name",
             "port_id": _peer_port_id(fabric, switch, p), "sys_name": fabric.lldp_name(p.peer)} for p in up if p.peer and p.lldp_seen]
    lldp = {"neigh_hdr": "neigh_hdr", "TABLE_nbor": {"ROW_nbor": rows}, "neigh_count": len(rows)}
    bmap = sum(1 << i for i in switch.pfc)
    pfc = {"TABLE_qosmgr_ifs": {"ROW_qosmgr_ifs": [
        {"ifname": p.name, "adminmode": "On", "opermode": "On" if p.up and p.pfc_on else "Off",
         "vl_bmap": str(bmap) if p.up and p.pfc_on else "",
         "rxppp": str(p.counters[f"rx_pfc{prio}"].at(t)) if p.up else "0",
         "txppp": str(p.counters[f"tx_pfc{prio}"].at(t)) if p.up else "0"} for p in switch.ports]}}
    queuing = {"TABLE_module": {"ROW_module": {"module": "1", "TABLE_queuing_interface": {"ROW_queuing_interface": [
        {"if_name_str": p.name, "TABLE_qosgrp_egress_stats": {"ROW_qosgrp_egress_stats": [{
            "eq-qosgrp": str(prio), "TABLE_qosgrp_egress_stats_entry": {"ROW_qosgrp_egress_stats_entry": [
                {"eq-stat-type": "Tx", "eq-stat-units": "Pkts", "eq-uc-stat-value": str(p.counters[f"qtx{prio}"].at(t)),
                 "eq-mc-stat-value": "0"},
                {"eq-stat-type": "WRED/AFD & Tail Drop", "eq-stat-units": "Pkts",
                 "eq-uc-stat-value": str(p.counters[f"wred{prio}"].at(t)), "eq-mc-stat-value": "0"},
                {"eq-stat-type": "ECN Mark", "eq-stat-units": "Pkts",
                 "eq-uc-stat-value": str(p.counters[f"ecn{prio}"].at(t)), "eq-mc-stat-value": "0"}]}}]},
         "TABLE_pfc_stats": {"ROW_pfc_stats": [{"pfc-cos": str(prio), "pfc-tx-count": str(p.counters[f"tx_pfc{prio}"].at(t)),
                                                "pfc-rx-count": str(p.counters[f"rx_pfc{prio}"].at(t))}]}}
        for p in up]}}}}
    interface = {"TABLE_interface": {"ROW_interface": [_nxos_interface(p, t) for p in switch.ports]}}
    dump = lambda d: json.dumps(d, indent=2) + "\n"  # noqa: E731
    return [("nxos_lldp_neighbors", "", "show lldp neighbors | json", dump(lldp)),
            ("nxos_pfc", "", "show interface priority-flow-control | json", dump(pfc)),
            ("nxos_queuing", "", "show queuing interface | json", dump(queuing)),
            ("nxos_interface", "", "show interface | json", dump(interface))]


def _nxos_interface(p: SwitchPort, t: float) -> dict:
    if not p.up:
        return {"interface": p.name, "state": "down", "admin_state": "up", "eth_mtu": "9216", "eth_speed": "auto-speed"}
    c = p.counters
    return {"interface": p.name, "state": "up", "admin_state": "up", "eth_mtu": "9216",
            "eth_speed": f"{p.speed_gbps} Gb/s", "eth_reset_cntr": 1, "eth_inpkts": c["rx_ok"].at(t),
            "eth_inbytes": str(c["rx_bytes"].at(t)), "eth_crc": str(c["fcs"].at(t)), "eth_inerr": str(c["fcs"].at(t)),
            "eth_indiscard": str(c["rx_drp"].at(t)), "eth_inpause": "0", "eth_outpkts": c["tx_ok"].at(t),
            "eth_outbytes": c["tx_bytes"].at(t), "eth_outerr": str(c["tx_err"].at(t)),
            "eth_outdiscard": str(c["tx_drp"].at(t)), "eth_outpause": "0"}


RENDER = {"sonic": sonic, "cumulus": cumulus, "onyx": onyx, "eos": eos, "nxos": nxos}


def outputs(fabric: Fabric, switch: Switch, t: float) -> list[tuple[str, str, str, str]]:
    return RENDER[switch.nos](fabric, switch, t)
