"""Show-command answers of the fake Onyx, Arista EOS and Cisco NX-OS CLIs (fakecli.py drives them).

Each platform is a function `answer(ctx, command) -> str | None` (None: not a command this platform knows) plus a
`show version` banner. Outputs follow the layouts the project's parsers document (rdmatool/parsers/switch/*), since
no public verbatim captures exist for most of these commands; NX-OS `| json` uses the TABLE_/ROW_ convention.
"""

from __future__ import annotations

import json
import re

from tests.fabric.shims._base import Ctx, fmt


def _kb(n: int) -> str:
    return f"{n // 1024} KB"


def _lldp_rows(ctx: Ctx) -> list[tuple[dict, dict]]:
    return [(p, p["neighbor"]) for p in ctx.spec["ports"] if p.get("neighbor") and p["up"]]


def _port_id(neighbor: dict) -> str:
    """The neighbour's port as its LLDP advertises it (a SONiC switch's alias: tests/fabric/uplinks.py)."""
    return neighbor.get("port_id", neighbor["port"])


# ------------------------------------------------------------------------------------------------------------- Onyx

ONYX_VERSION = """Product name:      Onyx
Product release:   3.10.4006
Build ID:          #1-dev
Build date:        2023-09-12 16:12:33
Target arch:       x86_64
Target hw:         x86_64
Built by:          sw-r2d2-bot@e8e9a6f1b3d9
Version summary:   X86_64 3.10.4006 2023-09-12 16:12:33 x86_64

Product model:     x86onie
Host ID:           0C42A1000300
System serial num: MT2318X01203
System UUID:       0f7a7a36-5b4f-11ee-8000-0c42a1000300

Uptime:            21d 3h 2m 11.520s
CPU load averages: 0.21 / 0.18 / 0.16
Number of CPUs:    4
System memory:     3412 MB used / 4409 MB free / 7821 MB total
Swap:              0 MB used / 0 MB free / 0 MB total
"""


def onyx(ctx: Ctx, cmd: str) -> str | None:
    q = ctx.spec["qos"]
    if cmd == "show version":
        return ONYX_VERSION
    if cmd == "show lldp remote":
        rows = [f"{p['name']:<20}{nb['mac']:<20}{_port_id(nb):<20}{nb['name']}" for p, nb in _lldp_rows(ctx)]
        head = f"{'Local Interface':<20}{'Device ID':<20}{'Port ID':<20}System Name"
        return "\n".join([head, "-" * 78, *rows]) + "\n"
    if cmd == "show dcb priority-flow-control":
        on = " ".join(map(str, q["pfc"]))
        off = " ".join(str(p) for p in range(8) if p not in q["pfc"])
        rows = [f"{p['name']:<17}{'Auto':<17}{'Enabled' if p['up'] else 'Disabled'}" for p in ctx.spec["ports"]]
        dash = "-" * 49
        return "\n".join(["", "PFC: enabled", f"Priority Enabled List: {on}", f"Priority Disabled List: {off}", "",
                          dash, f"{'Interface':<17}{'PFC admin':<17}PFC oper", dash, *rows]) + "\n"
    m = re.fullmatch(r"show interfaces ethernet (\d+/\d+) congestion-control", cmd)
    if m:
        p = ctx.port(f"Eth{m.group(1)}")
        if p is None:
            return "% Unrecognized interface\n"
        c = p["counters"]
        lines = [f"Interface ethernet {m.group(1)}",
                 f"  ECN marked packets  : {fmt(sum(ctx.val(c, f'q{t}_ecn_pkts') for t in range(8)))}"]
        for tc in range(8):
            lines.append(f"  Traffic class {tc}:")
            if tc == q["roce_prio"]:
                lines += ["    Congestion control  : ecn", "    Threshold mode      : absolute",
                          f"    Minimum threshold   : {_kb(q['ecn_min_bytes'])}",
                          f"    Maximum threshold   : {_kb(q['ecn_max_bytes'])}",
                          f"    Mark probability    : {q['ecn_probability']}%"]
            else:
                lines.append("    Congestion control  : none")
        return "\n".join(lines) + "\n"
    m = re.fullmatch(r"show interfaces ethernet (\d+/\d+) counters pfc prio ([0-7])", cmd)
    if m:
        p = ctx.port(f"Eth{m.group(1)}")
        if p is None:
            return "% Unrecognized interface\n"
        c, prio = p["counters"], int(m.group(2))
        out = []
        for label, d in (("Rx", "rx"), ("Tx", "tx")):
            pkts = ctx.val(c, f"q{prio}_pkts") if prio in (0, q["roce_prio"]) else 0
            octets = ctx.val(c, f"q{prio}_bytes") if prio in (0, q["roce_prio"]) else 0
            out += [f"{label}:", f"  {fmt(pkts):<20} packets", f"  {fmt(octets):<20} bytes",
                    f"  {fmt(ctx.val(c, f'{d}_pfc{prio}')):<20} pause packets",
                    f"  {fmt(ctx.val(c, f'{d}_pfc{prio}_duration')):<20} pause duration", ""]
        return "\n".join(out)
    m = re.fullmatch(r"show interfaces ethernet (\d+/\d+) counters", cmd)
    if m:
        p = ctx.port(f"Eth{m.group(1)}")
        return "% Unrecognized interface\n" if p is None else _onyx_counters(ctx, p)
    if cmd == "show interfaces ethernet status":
        rows = [f"{p['name']:<20}{'Up' if p['up'] else 'Down':<28}{str(p['speed_gbps']) + ' Gbps' if p['up'] else '-':<16}"
                "Auto" for p in ctx.spec["ports"]]
        return "\n".join(["", f"{'Port':<20}{'Operational state':<28}{'Speed':<16}Negotiation",
                          f"{'----':<20}{'-----------------':<28}{'-----':<16}-----------", *rows]) + "\n"
    return None


def _onyx_counters(ctx: Ctx, p: dict) -> str:
    """`show interfaces ethernet 1/N counters`: the port's traffic, its receive (FCS) and PHY symbol errors."""
    c = p["counters"]

    def block(title: str, rows: list[tuple[int, str]]) -> list[str]:
        return [f"{title}:", *(f"  {fmt(n):<20} {label}" for n, label in rows), ""]

    def pause(d: str) -> int:
        return sum(ctx.val(c, f"{d}_pfc{i}") for i in range(8))

    rx = [(ctx.val(c, "rx_ok"), "packets"), (ctx.val(c, "rx_ok"), "unicast packets"), (0, "multicast packets"),
          (0, "broadcast packets"), (ctx.val(c, "rx_bytes"), "bytes"), (ctx.val(c, "rx_err"), "error packets"),
          (ctx.val(c, "rx_drp"), "discard packets"), (ctx.val(c, "rx_ok"), "packets Jumbo"),
          (ctx.val(c, "rx_err"), "fcs errors"), (0, "undersize packets"), (0, "oversize packets"),
          (pause("rx"), "pause packets"), (0, "unknown control opcode"),
          (ctx.val(c, "rx_symbol_err"), "symbol errors"), (0, "discard packets by storm control")]
    tx = [(ctx.val(c, "tx_ok"), "packets"), (ctx.val(c, "tx_ok"), "unicast packets"), (0, "multicast packets"),
          (0, "broadcast packets"), (ctx.val(c, "tx_bytes"), "bytes"), (ctx.val(c, "tx_err"), "error packets"),
          (ctx.val(c, "tx_drp"), "discard packets"), (0, "hoq discard packets"),
          (pause("tx"), "pause packets")]
    return "\n".join(block("Rx", rx) + block("Tx", tx))


# -------------------------------------------------------------------------------------------------------------- EOS

EOS_VERSION = """Arista DCS-7060DX5-64S
Hardware version: 11.02
Serial number: JPE23110412
Hardware MAC address: 0c42.a100.0400
System MAC address: 0c42.a100.0400

Software image version: 4.31.2F
Architecture: x86_64
Internal build version: 4.31.2F-35442176.4312F
Internal build ID: 1a2b3c4d-0000-4000-8000-000000000000
Image format version: 3.0
Image optimization: Strata-4GB

Uptime: 3 weeks, 0 days, 3 hours and 2 minutes
Total memory: 32428300 kB
Free memory: 26104852 kB
"""


def eos(ctx: Ctx, cmd: str) -> str | None:
    q = ctx.spec["qos"]
    ports = ctx.spec["ports"]
    if cmd == "show version":
        return EOS_VERSION
    if cmd == "show lldp neighbors | json":
        nbrs = [{"port": p["name"], "neighborDevice": nb["name"], "neighborPort": _port_id(nb), "ttl": 120}
                for p, nb in _lldp_rows(ctx)]
        return json.dumps({"tablesLastChangeTime": ctx.epoch, "tablesAgeOuts": 0, "tablesInserts": len(nbrs),
                           "tablesDeletes": 0, "tablesDrops": 0, "lldpNeighbors": nbrs}, indent=4) + "\n"
    if cmd == "show lldp neighbors":
        rows = [f"{p['name']:<14}{nb['name']:<25}{_port_id(nb):<23}120" for p, nb in _lldp_rows(ctx)]
        return "\n".join(["Last table change time   : 0:12:31 ago", f"Number of table inserts  : {len(rows)}",
                          "Number of table deletes  : 0", "Number of table drops    : 0",
                          "Number of table age-outs : 0", "",
                          f"{'Port':<14}{'Neighbor Device ID':<25}{'Neighbor Port ID':<23}TTL",
                          f"{'-' * 13} {'-' * 24} {'-' * 22} ---", *rows]) + "\n"
    if cmd == "show priority-flow-control counters | json":
        data = {}
        for p in ports:
            c = p["counters"]
            pri = {str(i): {"rxFrames": ctx.val(c, f"rx_pfc{i}"), "txFrames": ctx.val(c, f"tx_pfc{i}")}
                   for i in range(8)}
            data[p["name"]] = {"rxFrames": sum(v["rxFrames"] for v in pri.values()),
                               "txFrames": sum(v["txFrames"] for v in pri.values()), "priorities": pri}
        return json.dumps({"interfaceCounters": data}, indent=4) + "\n"
    if cmd == "show priority-flow-control counters":
        rows = []
        for p in ports:
            c = p["counters"]
            rows.append(f"{p['name'].replace('Ethernet', 'Et'):<12}"
                        f"{fmt(sum(ctx.val(c, f'rx_pfc{i}') for i in range(8))):>10}"
                        f"{fmt(sum(ctx.val(c, f'tx_pfc{i}') for i in range(8))):>14}")
        return "\n".join([f"{'Port':<12}{'RxPfc':>10}{'TxPfc':>14}", *rows]) + "\n"
    if cmd == "show qos interfaces ecn counters queue | json":
        data = {}
        for p in ports:
            c = p["counters"]
            data[p["name"]] = {"txQueues": {str(t): {
                "ecnEnabled": t == q["roce_prio"], "minThreshold": q["ecn_min_bytes"] // 1024,
                "maxThreshold": q["ecn_max_bytes"] // 1024, "unit": "kbytes",
                "maxMarkProbability": q["ecn_probability"], "ecnMarkedPackets": ctx.val(c, f"q{t}_ecn_pkts")}
                for t in range(8)}}
        return json.dumps({"interfaces": data}, indent=4) + "\n"
    if cmd == "show qos interfaces ecn counters queue":
        rows = [f"{p['name'].replace('Ethernet', 'Et'):<11}{t:<6}{fmt(ctx.val(p['counters'], f'q{t}_ecn_pkts'))}"
                for p in ports for t in range(8)]
        return "\n".join([f"{'Port':<11}{'TxQ':<6}ECN Marked Packets", *rows]) + "\n"
    if cmd in ("show interfaces counters errors | json", "show interfaces counters errors"):
        return _eos_errors(ctx, as_json=cmd.endswith("| json"))
    if cmd == "show interfaces status | json":
        return _eos_status(ctx)
    m = re.fullmatch(r"show qos interfaces (?:ethernet ?|Ethernet)(\d+(?:/\d+)*) ecn", cmd, re.IGNORECASE)
    if m:
        p = ctx.port(f"Ethernet{m.group(1)}")
        if p is None:
            return "% Invalid input\n"
        rows = [f"   {t:<10}{'enabled' if t == q['roce_prio'] else 'disabled':<10}"
                f"{str(q['ecn_min_bytes'] // 1024) + ' kbytes':<17}{str(q['ecn_max_bytes'] // 1024) + ' kbytes':<17}"
                f"{q['ecn_probability']}%" for t in range(8)]
        return "\n".join([f"{p['name']}:", "   Tx-Queue  ECN       Min Threshold    Max Threshold    "
                          "Max Mark Probability", *rows]) + "\n"
    return None


def _eos_status(ctx: Ctx) -> str:
    """`show interfaces status | json`: link status and bandwidth (bit/s; a port not connected keeps its configured
    one) of every port, and the management port."""
    statuses = {"Management1": {"description": "", "linkStatus": "connected", "lineProtocolStatus": "up",
                                "bandwidth": 1000000000, "interfaceType": "10/100/1000", "duplex": "duplexFull",
                                "autoNegotiateActive": True}}
    for p in ctx.spec["ports"]:
        statuses[p["name"]] = {
            "description": p["neighbor"]["name"] if p.get("neighbor") else "",
            "linkStatus": "connected" if p["up"] else "notconnect",
            "lineProtocolStatus": "up" if p["up"] else "notPresent", "bandwidth": p["speed_gbps"] * 10**9,
            "interfaceType": f"{p['speed_gbps']}GBASE-CR4", "duplex": "duplexFull", "autoNegotiateActive": False,
            "vlanInformation": {"interfaceMode": "routed", "interfaceForwardingModel": "routed"}}
    return json.dumps({"interfaceStatuses": statuses}, indent=4) + "\n"


def _eos_errors(ctx: Ctx, as_json: bool) -> str:
    """`show interfaces counters errors`: FCS and all receive errors from the port's receive errors, symbol errors
    of its PHY, transmit errors."""
    rows = {}
    for p in ctx.spec["ports"]:
        c = p["counters"]
        rx = ctx.val(c, "rx_err")
        rows[p["name"]] = {"fcsErrors": rx, "alignmentErrors": 0, "symbolErrors": ctx.val(c, "rx_symbol_err"),
                           "inErrors": rx, "frameTooShorts": 0, "frameTooLongs": 0, "outErrors": ctx.val(c, "tx_err")}
    if as_json:
        return json.dumps({"interfaceErrorCounters": rows}, indent=4) + "\n"
    head = f"{'Port':<14}" + "".join(f"{h:>10}" for h in ("FCS", "Align", "Symbol", "Rx", "Runts", "Giants", "Tx"))
    keys = ("fcsErrors", "alignmentErrors", "symbolErrors", "inErrors", "frameTooShorts", "frameTooLongs", "outErrors")
    lines = [f"{name.replace('Ethernet', 'Et'):<14}" + "".join(f"{r[k]:>10}" for k in keys) for name, r in rows.items()]
    return "\n".join([head, *lines]) + "\n"


# ------------------------------------------------------------------------------------------------------------ NX-OS

NXOS_VERSION = """Cisco Nexus Operating System (NX-OS) Software
TAC support: http://www.cisco.com/tac
Copyright (C) 2002-2023, Cisco and/or its affiliates.
All rights reserved.

Software
  BIOS: version 05.47
  NXOS: version 10.3(4a) [Maintenance Release]
  NXOS image file is: bootflash:///nxos64-cs.10.3.4a.M.bin

Hardware
  cisco Nexus9000 C9364D-GX2A Chassis
  Intel(R) Xeon(R) CPU D-1633N @ 2.50GHz with 32803588 kB of memory.

Kernel uptime is 21 day(s), 3 hour(s), 2 minute(s), 11 second(s)
"""


def _nx_rows(table: str, rows: list[dict]) -> dict:
    return {f"TABLE_{table}": {f"ROW_{table}": rows[0] if len(rows) == 1 else rows}}


def nxos(ctx: Ctx, cmd: str) -> str | None:
    q = ctx.spec["qos"]
    ports = ctx.spec["ports"]
    if cmd == "show version":
        return NXOS_VERSION
    if cmd == "show lldp neighbors | json":
        rows = [{"chassis_id": nb["mac"].replace(":", "")[:4] + "." + nb["mac"].replace(":", "")[4:8] + "."
                 + nb["mac"].replace(":", "")[8:], "sys_name": nb["name"],
                 "l_port_id": p["name"].replace("Ethernet", "Eth"), "hold_time": 120, "system_capability": "S",
                 "enabled_capability": "S", "port_id": _port_id(nb)} for p, nb in _lldp_rows(ctx)]
        return json.dumps({**_nx_rows("nbor", rows), "neigh_count": len(rows)}, indent=2) + "\n"
    if cmd == "show interface priority-flow-control | json":
        bmap = f"{sum(1 << i for i in q['pfc']):x}"
        rows = [{"ifname": p["name"], "adminmode": "On", "opermode": "On" if p["up"] else "Off", "vl_bmap": bmap,
                 "rxppp": str(sum(ctx.val(p["counters"], f"rx_pfc{i}") for i in range(8))),
                 "txppp": str(sum(ctx.val(p["counters"], f"tx_pfc{i}") for i in range(8)))} for p in ports]
        return json.dumps(_nx_rows("qosmgr_ifs", rows), indent=2) + "\n"
    if cmd == "show queuing interface | json":
        rows = []
        for p in ports:
            c = p["counters"]
            groups = []
            for g in range(8):
                entries = [{"eq-stat-type": t, "eq-stat-units": u, "eq-uc-stat-value": str(ctx.val(c, k)),
                            "eq-oobfc-uc-stat-value": "0", "eq-mc-stat-value": "0"}
                           for t, u, k in (("Tx", "Pkts", f"q{g}_pkts"), ("Tx", "Byts", f"q{g}_bytes"),
                                           ("WRED/AFD & Tail Drop", "Pkts", f"q{g}_drop_pkts"),
                                           ("ECN", "Pkts", f"q{g}_ecn_pkts"))]
                groups.append({"eq-qosgrp": str(g), **_nx_rows("qosgrp_egress_stats_entry", entries)})
            pfc = [{"pfc-cos": str(i), "pfc-qos-group": str(i), "pfc-pg": str(i),
                    "pfc-tx-pause": "Active" if i in p["stormed"] else "Inactive",
                    "pfc-tx-count": str(ctx.val(c, f"tx_pfc{i}")), "pfc-rx-pause": "Inactive",
                    "pfc-rx-count": str(ctx.val(c, f"rx_pfc{i}"))} for i in range(8)]
            rows.append({"if_name_str": p["name"], **_nx_rows("qosgrp_egress_stats", groups),
                         **_nx_rows("pfc_stats", pfc)})
        return json.dumps(_nx_rows("queuing_interface", rows), indent=2) + "\n"
    if cmd == "show interface | json":
        rows = []
        for p in ports:
            c = p["counters"]
            rx_rate, tx_rate = (c["rx_bytes"][1], c["tx_bytes"][1]) if p["up"] else (0.0, 0.0)
            rows.append({
                "interface": p["name"], "state": "up" if p["up"] else "down", "admin_state": "up",
                "eth_hw_desc": "100/200/400/800 Ethernet", "eth_mtu": "9216", "eth_duplex": "full",
                "eth_speed": f"{p['speed_gbps']} Gb/s", "eth_inrate1_bits": str(int(rx_rate * 8)),
                "eth_inrate1_pkts": str(int(rx_rate / 4096)), "eth_outrate1_bits": str(int(tx_rate * 8)),
                "eth_outrate1_pkts": str(int(tx_rate / 4096)), "eth_inpkts": str(ctx.val(c, "rx_ok")),
                "eth_inbytes": str(ctx.val(c, "rx_bytes")), "eth_outpkts": str(ctx.val(c, "tx_ok")),
                "eth_outbytes": str(ctx.val(c, "tx_bytes")), "eth_crc": str(ctx.val(c, "rx_err")),
                "eth_inerr": str(ctx.val(c, "rx_err")), "eth_outerr": str(ctx.val(c, "tx_err")),
                "eth_indiscard": str(ctx.val(c, "rx_drp")), "eth_outdiscard": str(ctx.val(c, "tx_drp")),
                "eth_inpause": str(sum(ctx.val(c, f"rx_pfc{i}") for i in range(8))),
                "eth_outpause": str(sum(ctx.val(c, f"tx_pfc{i}") for i in range(8))), "eth_reset_cntr": "2"})
        return json.dumps(_nx_rows("interface", rows), indent=2) + "\n"
    return None


PLATFORMS = {"onyx": onyx, "eos": eos, "nxos": nxos}
