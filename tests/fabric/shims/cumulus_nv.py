"""Cumulus Linux NVUE `nv` shim (CL 5.5+ command names, text layout; `-o json` for the per-port views).

nv show qos roce | nv show interface <if> counters qos pfc-stats|port-stats|egress-queue-stats|ingress-buffer-stats
| nv show interface <if> qos roce counters|status | nv show interface <if> counters errors | nv show interface
"""

from __future__ import annotations

import json

from tests.fabric.shims._base import Ctx, err, human_bytes, nv_table


def _roce_cfg(q: dict) -> dict:
    return {"mode": "lossless", "pfc-priority": ",".join(map(str, q["pfc"])),
            "min": human_bytes(q["ecn_min_bytes"]), "max": human_bytes(q["ecn_max_bytes"]),
            "prob": str(q["ecn_probability"]), "trust": "pcp,dscp" if q["trust"] == "dscp" else "pcp"}


def _tree(rows: list[tuple[str, str, str, str]], columns: tuple[str, ...]) -> str:
    """Key tree with operational/applied[/description] columns: (indent level, key, operational, applied[, descr])."""
    keys = [("  " * lvl + k) for lvl, k, *_ in rows]
    w = [max(len(k) for k in keys), *(max([len(c)] + [len(r[2 + i]) for r in rows]) for i, c in enumerate(columns))]
    head = " " * w[0] + "  " + "  ".join(c.ljust(w[1 + i]) for i, c in enumerate(columns))
    out = [head.rstrip(), "  ".join("-" * x for x in w)]
    for key, r in zip(keys, rows, strict=True):
        cells = [key.ljust(w[0]), *(r[2 + i].ljust(w[1 + i]) for i in range(len(columns)))]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out) + "\n"


def qos_roce(ctx: Ctx) -> str:
    c = _roce_cfg(ctx.spec["qos"])
    rows = [(0, "enable", "", "on"), (0, "mode", c["mode"], c["mode"]), (0, "pfc", "", ""),
            (1, "pfc-priority", c["pfc-priority"], ""), (1, "rx-enabled", "enabled", ""),
            (1, "tx-enabled", "enabled", ""), (1, "cable-length", "100", ""), (0, "congestion-control", "", ""),
            (1, "congestion-mode", "ECN", ""), (1, "enabled-tc", "0,3", ""), (1, "min-threshold", c["min"], ""),
            (1, "max-threshold", c["max"], ""), (1, "probability", c["prob"], ""), (0, "trust", "", ""),
            (1, "trust-mode", c["trust"], ""), (0, "lldp-app-tlv", "", ""), (1, "priority", "3", ""),
            (1, "protocol-id", "4791", ""), (1, "selector", "UDP", "")]
    out = _tree(rows, ("operational", "applied"))
    out += "RoCE PCP/DSCP->SP mapping configurations\n" + "=" * 43 + "\n"
    out += nv_table(["", "pcp", "dscp", "switch-prio"],
                    [[str(i), str(i), ",".join(str(d) for d in range(8 * i, 8 * i + 8)), str(i)] for i in range(8)],
                    indent="    ")
    out += "RoCE SP->TC mapping and ETS configurations\n" + "=" * 45 + "\n"
    tc = {3: "3", 6: "6"}
    out += nv_table(["", "switch-prio", "traffic-class", "scheduler-weight"],
                    [[str(i), str(i), tc.get(i, "0"), "strict-priority" if i == 6 else "DWRR-50%"] for i in range(8)],
                    indent="    ")
    out += "RoCE pool config\n" + "=" * 19 + "\n"
    out += nv_table(["", "name", "mode", "size", "switch-priorities", "traffic-class"],
                    [["0", "lossy-default-ingress", "Dynamic", "100%", "0,1,2,4,5,6,7", "-"],
                     ["1", "roce-reserved-ingress", "Dynamic", "100%", "3", "-"],
                     ["2", "lossy-default-egress", "Dynamic", "100%", "-", "0,6"],
                     ["3", "roce-reserved-egress", "Dynamic", "inf", "-", "3"]], indent="    ")
    out += "Exception List\n" + "=" * 17 + "\nNo Data\n"
    return out


def pfc_stats(ctx: Ctx, p: dict, as_json: bool) -> str:
    c = p["counters"]
    data = {str(i): {"rx-pause-frames": ctx.val(c, f"rx_pfc{i}"), "rx-pause-duration": ctx.val(c, f"rx_pfc{i}_duration"),
                     "tx-pause-frames": ctx.val(c, f"tx_pfc{i}"), "tx-pause-duration": ctx.val(c, f"tx_pfc{i}_duration")}
            for i in range(8)}
    if as_json:
        return json.dumps(data, indent=2) + "\n"
    rows = [[k, *(str(v) for v in d.values())] for k, d in data.items()]
    return nv_table(["switch-priority", "rx-pause-frames", "rx-pause-duration", "tx-pause-frames",
                     "tx-pause-duration"], rows)


def port_stats(ctx: Ctx, p: dict, as_json: bool) -> str:
    c = p["counters"]
    ecn = sum(ctx.val(c, f"q{q}_ecn_pkts") for q in range(8))
    rx_pause = sum(ctx.val(c, f"rx_pfc{i}") for i in range(8))
    tx_pause = sum(ctx.val(c, f"tx_pfc{i}") for i in range(8))
    if as_json:
        return json.dumps({"ecn-marked-packets": {"transmit": ecn}, "mc-buffer-discards": {"transmit": 0},
                           "pause-frames": {"receive": rx_pause, "transmit": tx_pause}}, indent=2) + "\n"
    return nv_table(["Counter", "Receive", "Transmit"], [["ECN Marked Packets", "n/a", str(ecn)],
                                                         ["MC Buffer Discards", "n/a", "0"],
                                                         ["Pause Frames", str(rx_pause), str(tx_pause)]])


def errors(ctx: Ctx, p: dict, as_json: bool) -> str:
    """`counters errors`: FCS and total receive errors from the port's receive errors, symbol errors of its PHY."""
    c = p["counters"]
    rx, symbol, tx = ctx.val(c, "rx_err"), ctx.val(c, "rx_symbol_err"), ctx.val(c, "tx_err")
    receive = {"Alignment Errors": 0, "FCS Errors": rx, "Jabber Errors": 0, "Length Errors": 0,
               "Oversize Errors": 0, "Symbol Errors": symbol, "Total Errors": rx, "Undersize Errors": 0}
    if as_json:
        return json.dumps({"rx-stats": {k.lower().replace(" ", "-"): v for k, v in receive.items()},
                           "tx-stats": {"total-errors": tx}}, indent=2) + "\n"
    return nv_table(["Counter", "Receive", "Transmit"],
                    [[k, str(v), str(tx) if k == "Total Errors" else "n/a"] for k, v in receive.items()])


def egress_queue(ctx: Ctx, p: dict, as_json: bool) -> str:
    c = p["counters"]
    rows = [[str(q), str(ctx.val(c, f"q{q}_pkts")), human_bytes(ctx.val(c, f"q{q}_bytes")),
             human_bytes(ctx.val(c, f"q{q}_drop_bytes")), str(ctx.val(c, f"q{q}_wred_pkts"))] for q in range(8)]
    if as_json:
        return json.dumps({r[0]: {"tx-frames": int(r[1]), "tx-bytes": ctx.val(c, f"q{r[0]}_bytes"),
                                  "tx-uc-buffer-discards": ctx.val(c, f"q{r[0]}_drop_bytes"),
                                  "wred-discards": int(r[4])} for r in rows}, indent=2) + "\n"
    return nv_table(["traffic-class", "tx-frames", "tx-bytes", "tx-uc-buffer-discards", "wred-discards"], rows)


def ingress_buffer(ctx: Ctx, p: dict, as_json: bool) -> str:
    c = p["counters"]
    rows = [[str(i), str(ctx.val(c, f"pg{i}_rx_frames")), human_bytes(ctx.val(c, f"pg{i}_drop") * 1024), "0 Bytes"]
            for i in range(8)]
    if as_json:
        return json.dumps({r[0]: {"rx-frames": int(r[1]), "rx-buffer-discards": ctx.val(c, f"pg{r[0]}_drop") * 1024,
                                  "rx-shared-buffer-discards": 0} for r in rows}, indent=2) + "\n"
    return nv_table(["priority-group", "rx-frames", "rx-buffer-discards", "rx-shared-buffer-discards"], rows)


def roce_counters(ctx: Ctx, p: dict, as_json: bool) -> str:
    c = p["counters"]
    prio = ctx.spec["qos"]["roce_prio"]
    v = ctx.val
    roce_pkts, roce_bytes = v(c, f"q{prio}_pkts"), v(c, f"q{prio}_bytes")
    rows = [
        (0, "rx-stats", "", "", ""), (1, "rx-non-roce-stats", "", "", ""),
        (2, "buffer-max-usage", "144 Bytes", "", "Max Ingress Pool-buffer usage for non-RoCE traffic"),
        (2, "buffer-usage", "0 Bytes", "", "Current Ingress Pool-buffer usage for non-RoCE traffic"),
        (2, "no-buffer-discard", "0", "", "Rx buffer discards for non-RoCE traffic"),
        (2, "non-roce-bytes", human_bytes(v(c, "q0_bytes")), "", "non-roce rx bytes"),
        (2, "non-roce-packets", str(v(c, "q0_pkts")), "", "non-roce rx packets"),
        (2, "pg-max-usage", "144 Bytes", "", "Max PG-buffer usage for non-RoCE traffic"),
        (2, "pg-usage", "0 Bytes", "", "Current PG-buffer usage for non-RoCE traffic"),
        (1, "rx-pfc-stats", "", "", ""),
        (2, "pause-duration", str(v(c, f"rx_pfc{prio}_duration")), "", "Rx PFC pause duration for RoCE traffic"),
        (2, "pause-packets", str(v(c, f"rx_pfc{prio}")), "", "Rx PFC pause packets for RoCE traffic"),
        (1, "rx-roce-stats", "", "", ""),
        (2, "buffer-max-usage", "1.02 MB", "", "Max Ingress Pool-buffer usage for RoCE traffic"),
        (2, "buffer-usage", "0 Bytes", "", "Current Ingress Pool-buffer usage for RoCE traffic"),
        (2, "no-buffer-discard", str(v(c, f"pg{prio}_drop")), "", "Rx buffer discards for RoCE traffic"),
        (2, "pg-max-usage", "1.02 MB", "", "Max PG-buffer usage for RoCE traffic"),
        (2, "pg-usage", "0 Bytes", "", "Current PG-buffer usage for RoCE traffic"),
        (2, "roce-bytes", human_bytes(roce_bytes), "", "Rx RoCE Bytes"),
        (2, "roce-packets", str(roce_pkts), "", "Rx RoCE Packets"),
        (0, "tx-stats", "", "", ""), (1, "tx-cnp-stats", "", "", ""),
        (2, "buffer-max-usage", "16.02 MB", "", "Max Egress Pool-buffer usage for CNP traffic"),
        (2, "buffer-usage", "0 Bytes", "", "Current Egress Pool-buffer usage for CNP traffic"),
        (2, "cnp-bytes", human_bytes(v(c, "cnp_pkts") * 64), "", "Tx CNP Packet Bytes"),
        (2, "cnp-packets", str(v(c, "cnp_pkts")), "", "Tx CNP Packets"),
        (2, "tc-max-usage", "0 Bytes", "", "Max TC-buffer usage for CNP traffic"),
        (2, "tc-usage", "0 Bytes", "", "Current TC-buffer usage for CNP traffic"),
        (2, "unicast-no-buffer-discard", "0", "", "Tx buffer discards for CNP traffic"),
        (1, "tx-ecn-stats", "", "", ""),
        (2, "ecn-marked-packets", str(v(c, f"q{prio}_ecn_pkts")), "", "Tx ECN marked packets"),
        (1, "tx-pfc-stats", "", "", ""),
        (2, "pause-duration", str(v(c, f"tx_pfc{prio}_duration")), "", "Tx PFC pause duration for RoCE traffic"),
        (2, "pause-packets", str(v(c, f"tx_pfc{prio}")), "", "Tx PFC pause packets for RoCE traffic"),
        (1, "tx-roce-stats", "", "", ""),
        (2, "buffer-max-usage", "13.47 MB", "", "Max Egress Pool-buffer usage for RoCE traffic"),
        (2, "buffer-usage", "7.29 MB", "", "Current Egress Pool-buffer usage for RoCE traffic"),
        (2, "roce-bytes", human_bytes(roce_bytes), "", "Tx RoCE Packet bytes"),
        (2, "roce-packets", str(roce_pkts), "", "Tx RoCE Packets"),
        (2, "tc-max-usage", "16.02 MB", "", "Max TC-buffer usage for RoCE traffic"),
        (2, "tc-usage", "7.29 MB", "", "Current TC-buffer usage for RoCE traffic"),
        (2, "unicast-no-buffer-discard", str(v(c, f"q{prio}_drop_pkts")), "", "Tx buffer discards for RoCE traffic"),
    ]
    if as_json:
        return _tree_json(rows)
    return _tree(rows, ("operational", "applied", "description"))


def _tree_json(rows: list[tuple]) -> str:
    root: dict = {}
    stack = [root]
    for lvl, key, op, *_ in rows:
        del stack[lvl + 1:]
        if op == "":
            stack[lvl][key] = {}
            stack.append(stack[lvl][key])
        else:
            stack[lvl][key] = int(op) if op.isdigit() else op
    return json.dumps(root, indent=2) + "\n"


def roce_status(ctx: Ctx, p: dict, as_json: bool) -> str:
    c = _roce_cfg(ctx.spec["qos"])
    rows = [(0, "congestion-control", "", "", ""),
            (1, "congestion-mode", "ecn, absolute", "", "Congestion config mode"),
            (1, "enabled-tc", "0,3", "", "Congestion config enabled Traffic Class"),
            (1, "max-threshold", c["max"], "", "Congestion config max-threshold"),
            (1, "min-threshold", c["min"], "", "Congestion config min-threshold"),
            (1, "probability", c["prob"], "", ""), (0, "lldp-app-tlv", "", "", ""), (1, "priority", "3", "", ""),
            (1, "protocol-id", "4791", "", ""), (1, "selector", "UDP", "", ""), (0, "pfc", "", "", ""),
            (1, "pfc-priority", c["pfc-priority"], "", "switch-prio on which PFC is enabled"),
            (1, "rx-enabled", "yes", "", "PFC Rx Enabled status"), (1, "tx-enabled", "yes", "", "PFC Tx Enabled status"),
            (0, "trust", "", "", ""),
            (1, "trust-mode", c["trust"], "", "Trust Setting on the port for packet classification"),
            (0, "mode", c["mode"], "", "Roce Mode")]
    if as_json:
        return _tree_json(rows)
    out = _tree(rows, ("operational", "applied", "description"))
    out += " \n \nRoCE PCP/DSCP->SP mapping configurations\n" + "=" * 43 + "\n"
    out += nv_table(["", "pcp", "dscp", "switch-prio"], [["cnp", "6", "48", "6"], ["roce", "3", "26", "3"]],
                    indent="    ")
    out += " \n \nRoCE SP->TC mapping and ETS configurations\n" + "=" * 45 + "\n"
    out += nv_table(["", "switch-prio", "traffic-class", "scheduler-weight"],
                    [["cnp", "6", "6", "strict priority"], ["roce", "3", "3", "dwrr-50%"]], indent="    ")
    return out


def interfaces(ctx: Ctx, as_json: bool) -> str:
    """`nv show interface`: every switch port with its link (speed only while it is up, as NVUE prints it), and
    the management port and loopback beside them."""
    data: dict = {"eth0": {"ifindex": 2, "link": {"mtu": 1500, "speed": "1G", "state": {"up": {}}}, "type": "eth"},
                  "lo": {"ifindex": 1, "link": {"mtu": 65536, "state": {"up": {}}}, "type": "loopback"}}
    for i, p in enumerate(ctx.spec["ports"]):
        link: dict = {"auto-negotiate": "off", "duplex": "full", "mtu": 9216,
                      "state": {"up": {}} if p["up"] else {"down": {}}}
        if p["up"]:
            link["speed"] = f"{p['speed_gbps']}G"
        data[p["name"]] = {"ifindex": 3 + i, "link": link, "type": "swp"}
    if as_json:
        return json.dumps(data, indent=2) + "\n"
    rows = [[name, next(iter(d["link"]["state"])), d["link"].get("speed", ""), str(d["link"]["mtu"]), d["type"]]
            for name, d in data.items()]
    return nv_table(["Interface", "State", "Speed", "MTU", "Type"], rows)


PER_PORT = {
    ("counters", "qos", "pfc-stats"): pfc_stats,
    ("counters", "qos", "port-stats"): port_stats,
    ("counters", "errors"): errors,
    ("counters", "qos", "egress-queue-stats"): egress_queue,
    ("counters", "qos", "ingress-buffer-stats"): ingress_buffer,
    ("qos", "roce", "counters"): roce_counters,
    ("qos", "roce", "status"): roce_status,
}


def main(ctx: Ctx, argv: list[str]) -> int:
    as_json = False
    words: list[str] = []
    it = iter(argv)
    for a in it:
        if a in ("-o", "--output"):
            as_json = next(it, "") == "json"
        else:
            words.append(a)
    if words[:1] != ["show"]:
        return err("Error: this simulated switch only answers `nv show ...`", 2)
    rest = words[1:]
    if rest == ["qos", "roce"]:
        print(qos_roce(ctx), end="")
        return 0
    if rest == ["interface"]:
        print(interfaces(ctx, as_json), end="")
        return 0
    if len(rest) >= 2 and rest[0] == "interface":
        port = ctx.port(rest[1])
        fn = PER_PORT.get(tuple(rest[2:]))
        if port is None:
            return err(f"Error: The requested item does not exist: interface {rest[1]}", 1)
        if fn is not None:
            print(fn(ctx, port, as_json), end="")
            return 0
    return err(f"Error: Invalid command: nv {' '.join(words)}", 2)
