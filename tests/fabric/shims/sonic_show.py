"""SONiC `show` shim (sonic-utilities layouts, python-tabulate "simple" tables, comma-grouped counts).

show pfc counters | show pfc priority | show queue counters | show queue wredcounters | show ecn |
show pfcwd stats | show pfcwd config | show priority-group drop counters | show interfaces counters |
show interfaces status | show version
"""

from __future__ import annotations

from tests.fabric.shims._base import Ctx, err, fmt, simple_table

QUEUES = range(8)


def pfc_counters(ctx: Ctx) -> str:
    out = []
    for label, key in (("Port Rx", "rx_pfc"), ("Port Tx", "tx_pfc")):
        rows = [[p["name"], *(fmt(ctx.val(p["counters"], f"{key}{i}")) for i in range(8))] for p in ctx.spec["ports"]]
        out.append(simple_table([label, *(f"PFC{i}" for i in range(8))], rows))
    return "\n".join(out) + "\n"


def pfc_priority(ctx: Ctx) -> str:
    prios = ",".join(str(p) for p in ctx.spec["qos"]["pfc"]) or "N/A"
    rows = [[p["name"], prios] for p in ctx.spec["ports"]]
    return "\n" + simple_table(["Interface", "Lossless priorities"], rows, left=(0, 1)) + "\n"


def queue_counters(ctx: Ctx, wred: bool) -> str:
    blocks = []
    for p in ctx.spec["ports"]:
        c = p["counters"]
        rows = []
        for kind, offset in (("UC", 0), ("MC", 8)):
            for q in QUEUES:
                if kind == "MC":
                    rows.append([p["name"], f"MC{q + offset}", "0", "0", "0", "0"])
                elif wred:
                    rows.append([p["name"], f"UC{q}", *(fmt(ctx.val(c, f"q{q}_{k}"))
                                                        for k in ("wred_pkts", "wred_bytes", "ecn_pkts", "ecn_bytes"))])
                else:
                    rows.append([p["name"], f"UC{q}", *(fmt(ctx.val(c, f"q{q}_{k}"))
                                                        for k in ("pkts", "bytes", "drop_pkts", "drop_bytes"))])
        headers = (["Port", "TxQ", "WredDrp/pkts", "WredDrp/bytes", "EcnMarked/pkts", "EcnMarked/bytes"] if wred
                   else ["Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes"])
        blocks.append("For namespace :\n" + simple_table(headers, rows))
    return "\n".join(blocks) + "\n"


def ecn(ctx: Ctx) -> str:
    q = ctx.spec["qos"]
    rows = [["red_max_threshold", str(q["ecn_max_bytes"])], ["wred_green_enable", "true"], ["ecn", "ecn_all"],
            ["green_min_threshold", str(q["ecn_min_bytes"])], ["red_min_threshold", str(q["ecn_min_bytes"])],
            ["wred_yellow_enable", "true"], ["yellow_min_threshold", str(q["ecn_min_bytes"])],
            ["green_max_threshold", str(q["ecn_max_bytes"])], ["green_drop_probability", str(q["ecn_probability"])],
            ["yellow_max_threshold", str(q["ecn_max_bytes"])], ["wred_red_enable", "true"],
            ["yellow_drop_probability", str(q["ecn_probability"])], ["red_drop_probability", str(q["ecn_probability"])]]
    w0, w1 = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows)
    dashes = f"{'-' * w0}  {'-' * w1}"
    body = "\n".join(f"{k.ljust(w0)}  {v}" for k, v in rows)
    return f"Profile: AZURE_LOSSLESS\n{dashes}\n{body}\n{dashes}\n\n"


def pfcwd_stats(ctx: Ctx) -> str:
    rows = []
    for p in ctx.spec["ports"]:
        c = p["counters"]
        for prio in ctx.spec["qos"]["pfc"]:
            stormed = prio in p["stormed"]
            detected = ctx.val(c, "pfcwd_detected") + (1 if stormed else 0)
            restored = ctx.val(c, "pfcwd_detected")
            drops = ctx.val(c, f"q{prio}_drop_pkts") if stormed else 0
            tx_ok = ctx.val(c, f"q{prio}_pkts")
            rows.append([f"{p['name']}:{prio}", "stormed" if stormed else "operational", f"{detected}/{restored}",
                         f"{tx_ok}/{drops}", f"{ctx.val(c, 'rx_ok')}/{drops}", f"0/{drops}", f"0/{drops}"])
    headers = ["QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP", "TX LAST OK/DROP",
               "RX LAST OK/DROP"]
    return simple_table(headers, rows)


def pfcwd_config(ctx: Ctx) -> str:
    q = ctx.spec["qos"]
    rows = [[p["name"], "drop", str(q["pfcwd_detection_ms"]), str(q["pfcwd_restoration_ms"]), "disable"]
            for p in ctx.spec["ports"]]
    return "Changed polling interval to 200ms\n" + simple_table(
        ["PORT", "ACTION", "DETECTION TIME", "RESTORATION TIME", "HISTORY"], rows)


def pg_drop(ctx: Ctx) -> str:
    rows = [[p["name"], *(fmt(ctx.val(p["counters"], f"pg{i}_drop")) for i in range(8))] for p in ctx.spec["ports"]]
    return "Ingress PG dropped packets:\n" + simple_table(["Port", *(f"PG{i}" for i in range(8))], rows)


def _rate(bytes_s: float) -> str:
    for unit, div in (("MB/s", 1e6), ("KB/s", 1e3)):
        if bytes_s >= div:
            return f"{bytes_s / div:.2f} {unit}"
    return f"{bytes_s:.2f} B/s"


def portstat(ctx: Ctx) -> str:
    rows = []
    for p in ctx.spec["ports"]:
        c = p["counters"]
        up = p["up"]
        rx_bps = c["rx_bytes"][1] if up else 0.0
        tx_bps = c["tx_bytes"][1] if up else 0.0
        speed = p["speed_gbps"] * 1e9 / 8
        rows.append([p["name"], "U" if up else "D", fmt(ctx.val(c, "rx_ok")), _rate(rx_bps),
                     f"{rx_bps / speed * 100:.2f}%", fmt(ctx.val(c, "rx_err")), fmt(ctx.val(c, "rx_drp")), "N/A",
                     fmt(ctx.val(c, "tx_ok")), _rate(tx_bps), f"{tx_bps / speed * 100:.2f}%",
                     fmt(ctx.val(c, "tx_err")), fmt(ctx.val(c, "tx_drp")), "N/A"])
    headers = ["IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR", "TX_OK", "TX_BPS",
               "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR"]
    return simple_table(headers, rows)


def interface_status(ctx: Ctx) -> str:
    """`show interfaces status` (intfutil): a port that is up shows its operational speed, one that is down its
    configured speed, as intfutil does (the scenario's port speed either way)."""
    rows = []
    for i, p in enumerate(ctx.spec["ports"]):
        lanes = ",".join(str(8 * i + lane) for lane in range(8 if p["speed_gbps"] >= 400 else 4))
        up = p["up"]
        rows.append([p["name"], lanes, f"{p['speed_gbps']}G", "9100", "rs", p.get("alias", f"etp{i + 1}"), "routed",
                     "up" if up else "down", "up", "QSFP-DD or later" if up else "N/A", "off"])
    headers = ["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC"]
    return simple_table(headers, rows)


def version(ctx: Ctx) -> str:
    return ("\nSONiC Software Version: SONiC.202311.1\nSONiC OS Version: 12\nDistribution: Debian 12.5\n"
            "Kernel: 6.1.0-11-2-amd64\nBuild commit: 3b9a6d0f1\nPlatform: x86_64-mlnx_msn4600c-r0\n"
            "HwSKU: Mellanox-SN4600C-C64\nASIC: mellanox\nASIC Count: 1\n"
            f"Serial Number: MT2312X0{ctx.spec['name'][-2:]}\nUptime: 10:21:07 up 21 days,  3:02,  1 user\n")


COMMANDS = {
    ("pfc", "counters"): pfc_counters,
    ("pfc", "priority"): pfc_priority,
    ("queue", "counters"): lambda ctx: queue_counters(ctx, wred=False),
    ("queue", "wredcounters"): lambda ctx: queue_counters(ctx, wred=True),
    ("ecn",): ecn,
    ("pfcwd", "stats"): pfcwd_stats,
    ("pfcwd", "config"): pfcwd_config,
    ("priority-group", "drop", "counters"): pg_drop,
    ("interfaces", "counters"): portstat,
    ("interfaces", "status"): interface_status,
    ("version",): version,
}


def main(ctx: Ctx, argv: list[str]) -> int:
    words = tuple(a for a in argv if not a.startswith("-"))
    fn = COMMANDS.get(words)
    if fn is None:
        return err(f"Usage: show [OPTIONS] COMMAND [ARGS]...\nTry \"show -h\" for help.\n\n"
                   f"Error: No such command \"{' '.join(words) or '?'}\".", 2)
    print(fn(ctx), end="")
    return 0
