"""perftest shim: ib_write_bw / ib_read_bw / ib_send_bw / ib_write_lat / ib_send_lat / ib_read_lat.

Server mode without a host argument: announces itself with a marker file in <state>/perftest/, waits for a
client, then prints its report. Client mode with a host argument (address, name or RoCE IP of a simulated host):
finds the server's marker (else `Couldn't connect to <ip>:<port>`, exit 1), computes the bandwidth from the two
NICs' rates (its own `-d`, the server's the NIC whose address it dials, else the one of the same name), the hosts'
slow-node factors, the two NICs' slow-NIC factors (fault slow_nic) and the slow-link factor, sleeps a scaled-down time (0.05 s per second
requested with -D, at least 0.05 s) and prints the report. A host with `perftest_hung_server` never answers.

A bandwidth client toward a receiver NIC on which several bandwidth servers listen is part of an incast (servers on
the host's other NICs are other rails, not the same queue): its goodput and
the counters its flow moves come from the congestion model (tests/fabric/congestion.py). It registers its flow in
<state>/flows/<receiver>/, runs, then takes its share among the flows registered there meanwhile and records the
counter increments in <state>/load/ for every later connection to see.
"""

from __future__ import annotations

import marshal
import os
import sys
import time

from tests.fabric import congestion
from tests.fabric.counters import LOAD_DIR, in_burst
from tests.fabric.shims._base import Ctx, err

SCALE = 0.05  # real seconds slept per simulated second
INCAST_RUN_S = 2.0  # the least real time one flow of an incast runs
WITH_VALUE = {"-d", "-i", "-x", "-D", "-n", "-s", "-p", "-q", "-m", "-t", "-S", "-I", "-u", "-c", "-M", "-T",
              "--ib-dev", "--ib-port", "--gid-index", "--duration", "--iters", "--size", "--port", "--qp", "--mtu",
              "--tx-depth", "--sl", "--inline_size", "--tos", "--connection", "--source_ip"}
TITLES = {"ib_write_bw": "RDMA_Write BW Test", "ib_read_bw": "RDMA_Read BW Test", "ib_send_bw": "Send BW Test",
          "ib_write_lat": "RDMA_Write Latency Test", "ib_send_lat": "Send Latency Test",
          "ib_read_lat": "RDMA_Read Latency Test"}
DASH = "-" * 87 + "\n"
BANNER = "\n************************************\n* Waiting for client to connect... *\n************************************\n"


def parse_args(argv: list[str]) -> tuple[dict, str | None]:
    opts: dict[str, str] = {}
    server = None
    it = iter(argv)
    for a in it:
        if a in WITH_VALUE:
            opts[a] = next(it, "")
        elif a.startswith("--") and "=" in a:
            k, v = a.split("=", 1)
            opts[k] = v
        elif a.startswith("-"):
            opts[a] = ""
        else:
            server = a
    return opts, server


def opt(opts: dict, *names: str, default: str | None = None) -> str | None:
    for n in names:
        if n in opts:
            return opts[n]
    return default


def resolve(index: dict, target: str) -> tuple[str, dict] | None:
    for addr, h in index["hosts"].items():
        if target in (addr, h["name"], *h.get("ips", [])):
            return addr, h
    return None


def gid_bytes(nic: dict) -> str:
    v4 = nic.get("ipv4") or "0.0.0.0"
    return "00:00:00:00:00:00:00:00:00:00:255:255:" + ":".join(f"{int(x):02d}" for x in v4.split("."))


def header(tool: str, nic: dict, port: dict, opts: dict, me: dict, peer: dict, peer_nic: dict) -> str:
    eth = nic["link_layer"] == "Ethernet"
    lines = [DASH, f"                    {TITLES[tool]}\n",
             f" Dual-port       : OFF\t\tDevice         : {nic['device']}\n",
             f" Number of qps   : {opt(opts, '-q', '--qp', default='1')}\t\tTransport type : IB\n",
             " Connection type : RC\t\tUsing SRQ      : OFF\n", " PCIe relax order: ON\n",
             " ibv_wr* API     : ON\n"]
    if tool.endswith("_bw"):
        lines += [" TX depth        : 128\n", " CQ Moderation   : 100\n"]
    lines += [f" Mtu             : {port['mtu']}[B]\n", f" Link type       : {'Ethernet' if eth else 'IB'}\n"]
    if eth:
        lines.append(f" GID index       : {opt(opts, '-x', '--gid-index', default='3')}\n")
    lines += [" Max inline data : 0[B]\n", " rdma_cm QPs\t : OFF\n", " Data ex. method : Ethernet\n", DASH]
    for label, who, n in (("local", me, nic), ("remote", peer, peer_nic)):
        lid = "0000" if eth else f"0x{n['ports'][0]['lid']:02x}"
        seed = sum(map(ord, who["name"]))
        lines.append(f" {label} address: LID {lid} QPN 0x{0x100 + seed % 0xff:04x} PSN 0x{seed * 7919 % 0xFFFFFF:06x}"
                     f" RKey 0x{0x200000 + seed:06x} VAddr 0x007f{seed * 104729 % 0xFFFFFFFF:08x}000\n")
        if eth:
            lines.append(f" GID: {gid_bytes(n)}\n")
    lines.append(DASH)
    return "".join(lines)


def report(tool: str, opts: dict, gbps: float, lat_factor: float, eth: bool) -> tuple[str, float]:
    """(table text, simulated seconds) for the measured bandwidth / latency."""
    duration = opt(opts, "-D", "--duration")
    gbits = "--report_gbits" in opts
    if tool.endswith("_bw"):
        size = int(opt(opts, "-s", "--size", default="65536"))
        bytes_s = gbps * 1e9 / 8
        seconds = float(duration) if duration else int(opt(opts, "-n", "--iters", default="5000")) * size / bytes_s
        iters = int(bytes_s * seconds / size) if duration else int(opt(opts, "-n", "--iters", default="5000"))
        unit = "Gb/sec" if gbits else "MB/sec"
        avg = gbps if gbits else bytes_s / 1048576
        peak = 0.0 if duration else avg * 1.0004
        rate = bytes_s / size / 1e6
        text = ("" if not duration else "WARNING: BW peak won't be measured in this run.\n") + \
            f" #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]   MsgRate[Mpps]\n" + \
            f" {size:<10d} {iters:<10d}       {peak:.2f}            {avg:.2f}\t\t   {rate:.6f}\n" + DASH
        return text, seconds
    size = int(opt(opts, "-s", "--size", default="2"))
    iters = int(opt(opts, "-n", "--iters", default="1000"))
    base = (1.62 if eth else 1.05) * lat_factor
    vals = [base, base * 3.1, base * 1.04, base * 1.06, base * 0.05, base * 1.3, base * 3.1]
    text = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
            "   99% percentile[usec]   99.9% percentile[usec] \n"
            f" {size:<6d} {iters:<10d}    {vals[0]:<14.2f} {vals[1]:<12.2f} {vals[2]:<18.2f} {vals[3]:<16.2f}"
            f" {vals[4]:<15.2f} {vals[5]:<23.2f} {vals[6]:.2f}\t\n" + DASH)
    seconds = float(duration) if duration else iters * base * 2e-6
    return text, seconds


def main(ctx: Ctx, argv: list[str]) -> int:
    tool = ctx.tool
    opts, server = parse_args(argv)
    me = {"name": ctx.spec["name"]}
    dev = opt(opts, "-d", "--ib-dev")
    nic = ctx.nic(dev) if dev else ctx.spec["nics"][0]
    if nic is None:
        return err(f" IB device {dev} not found\n Unable to find the Infiniband/RoCE device", 1)
    tcp_port = opt(opts, "-p", "--port", default="18515")
    index = ctx.index()
    pdir = f"{ctx.state}/perftest"
    port = nic["ports"][0]
    if port["state"] != "Active":
        return err(" Port number 1 state is PORT_DOWN\n Couldn't set the link layer\n Couldn't get context for the "
                   "device", 1)
    if server is None:
        return serve(ctx, tool, opts, nic, f"{pdir}/{ctx.spec['name']}_{tcp_port}")
    found = resolve(index, server)
    reachable = found is not None and not found[1]["perf"]["no_server"]
    marker = f"{pdir}/{found[1]['name']}_{tcp_port}" if reachable else ""
    # A server started a moment ago may not listen yet. Real perftest servers listen within milliseconds; this one
    # starts through sshd and a Python interpreter, which take seconds when the suite's workers share the cores.
    deadline = time.time() + 30.0
    while reachable and not os.path.exists(f"{marker}.listen") and time.time() < deadline:
        time.sleep(0.05)
    if not reachable or not os.path.exists(f"{marker}.listen"):
        print(f"Couldn't connect to {server}:{tcp_port}")
        print("Unable to open file descriptor for socket connection Unable to init the socket connection")
        return 1
    peer_addr, peer = found
    if peer["perf"]["hung_server"]:
        time.sleep(600)
        return 1
    peer_spec = ctx.target_spec(peer_addr)
    peer_nic = next((n for n in peer_spec["nics"] if n["ipv4"] and n["ipv4"] == server), None) or \
        next((n for n in peer_spec["nics"] if n["device"] == nic["device"]), peer_spec["nics"][0])
    link = index["slow_links"].get("|".join(sorted((me["name"], peer["name"]))), 1.0)
    nics = ctx.spec["perf"].get("nic_factor", {}).get(nic["device"], 1.0) * \
        peer["perf"].get("nic_factor", {}).get(peer_nic["device"], 1.0)
    factor = ctx.spec["perf"]["factor"] * peer["perf"]["factor"] * link * nics
    # fault periodic_spike: latency (only) multiplied while either end is in a burst
    spike = max([burst[2] for burst in (ctx.spec["perf"].get("lat_spike"), peer["perf"].get("lat_spike"))
                 if in_burst(burst, ctx.now, ctx.epoch)] or [1.0])
    gbps = min(port["rate_gbps"], peer_nic["ports"][0]["rate_gbps"]) * congestion.EFFICIENCY * factor
    head = header(tool, nic, port, opts, me, peer, peer_nic)
    peer_head = header(tool, peer_nic, peer_nic["ports"][0], opts, peer, me, nic)
    if tool.endswith("_bw"):  # alone or one flow of an incast: run first, then the congestion model says how fast
        _, seconds = report(tool, opts, gbps, 1 / factor, nic["link_layer"] == "Ethernet")
        gbps = run_flow(ctx, nic, peer_spec, peer_nic, gbps, seconds, pdir, f"{marker}.listen")
        text, seconds = report(tool, opts, gbps, 1 / factor, nic["link_layer"] == "Ethernet")
        hand_over(marker, peer_head + text, 0.0)
        sys.stdout.write(head + text)
        return 0
    text, seconds = report(tool, opts, gbps, spike / factor, nic["link_layer"] == "Ethernet")
    hand_over(marker, peer_head + text, seconds)
    time.sleep(max(0.05, seconds * SCALE))
    sys.stdout.write(head + text)
    return 0


def hand_over(marker: str, text: str, seconds: float) -> None:
    """The server's report, and how long (simulated) it still has to run before printing it."""
    with open(f"{marker}.conn.tmp", "wb") as f:
        marshal.dump({"text": text, "seconds": seconds}, f)
    os.replace(f"{marker}.conn.tmp", f"{marker}.conn")


def live_bw_servers(pdir: str, host: str, device: str) -> int:
    """Bandwidth servers receiving on NIC `device` of `host` now: its listen markers whose process is alive (a
    server killed by its `timeout` leaves its marker behind) and whose client has not handed over yet. A server
    whose flow is over (its `.conn` is there) carries no traffic, however long it takes to print and exit: under
    load the one of the round before was still alive when the next round's flow started, and halved it."""
    count = 0
    for name in os.listdir(pdir):
        if not (name.startswith(f"{host}_") and name.endswith(".listen")):
            continue
        if os.path.exists(f"{pdir}/{name[:-len('.listen')]}.conn"):
            continue
        try:
            with open(f"{pdir}/{name}") as f:
                pid, tool, _started, on = f.read().split()
            os.kill(int(pid), 0)
        except (OSError, ValueError):
            continue
        count += tool.endswith("_bw") and on == device
    return count


def run_flow(ctx: Ctx, nic: dict, peer_spec: dict, peer_nic: dict, demand: float, seconds: float, pdir: str,
             listen: str) -> float:
    """Run this flow (scaled down), then its goodput: `demand` alone, else the congestion model's share; the counter
    increments of an incast flow go to <state>/load/ for the sender, the receiver and their switch ports.

    The flow's incast is every bandwidth server listening on the receiver when it starts (the gate starts them all
    before any client) and every flow registered toward the receiver since this flow's own server started: a
    client that the SSH start-up delayed until the others were done still counts them, and a pair's server, alone
    on its host, sees none."""
    fan_in = live_bw_servers(pdir, peer_spec["name"], peer_nic["device"])
    with open(listen) as f:
        since = float(f.read().split()[2])
    me, prio = ctx.spec["name"], nic["qos"]["roce_prio"]
    reacts = prio in nic["qos"]["rp_enable"]
    flows = f"{ctx.state}/flows/{peer_spec['name']}/{peer_nic['device']}"
    os.makedirs(flows, exist_ok=True)
    # At least INCAST_RUN_S of real time, so that every flow of the incast (their clients start over SSH one by one)
    # overlaps the others and finds them registered.
    t0, run = time.time(), max(INCAST_RUN_S if fan_in > 1 else 0.05, seconds * SCALE)
    with open(f"{flows}/{me}.tmp", "wb") as f:
        marshal.dump({"t0": t0, "demand": demand, "weight": 1.0 if reacts else congestion.SLOW_SENDER_WEIGHT,
                      "reacts": reacts}, f)
    os.replace(f"{flows}/{me}.tmp", f"{flows}/{me}.bin")
    time.sleep(run)
    others = {}
    for name in os.listdir(flows):  # this incast's other flows (an older one started before this server)
        if name.endswith(".bin") and name != f"{me}.bin":
            try:
                with open(f"{flows}/{name}", "rb") as f:
                    flow = marshal.load(f)
            except (OSError, EOFError, ValueError):
                continue
            if since <= flow["t0"] <= time.time():
                others[name[:-4]] = flow
    for i in range(fan_in - 1 - len(others)):  # a server whose client has not registered yet: a sender like this one
        others[f"unregistered{i}"] = {"demand": demand, "weight": 1.0, "reacts": True}
    demands = {me: demand, **{k: v["demand"] for k, v in others.items()}}
    weights = {me: 1.0 if reacts else congestion.SLOW_SENDER_WEIGHT, **{k: v["weight"] for k, v in others.items()}}
    capacity = peer_nic["ports"][0]["rate_gbps"] * congestion.EFFICIENCY
    offered = sum(demands.values())
    if offered <= capacity:
        return demand
    q = peer_nic["qos"]
    sw = peer_nic["ports"][0].get("neighbor")
    how = congestion.mode(ctx.target_spec(sw["address"])["qos"] if sw else None, q["roce_prio"] in q["np_enable"])
    gbps = congestion.shares(capacity, demands, weights, how)[me]
    paused = congestion.pause_fraction(how, capacity, offered, all(v["reacts"] for v in others.values()) and reacts)
    amounts = congestion.flow_counters(how, gbps, seconds, paused, reacts, prio, q["roce_prio"])
    adds: dict[str, dict[str, dict]] = {}
    for who, spec, n in (("sender", ctx.spec, nic), ("receiver", peer_spec, peer_nic)):
        port = n["ports"][0]
        for table, counters in amounts[who].items():
            adds.setdefault(spec["address"], {})[f"{n['device']}/{port['num']}/{table}"] = counters
        nb = port.get("neighbor")
        if nb:
            adds.setdefault(nb["address"], {})[nb["port"]] = amounts[f"{who}_port"]["sw"]
    loads = f"{ctx.state}/{LOAD_DIR}"
    os.makedirs(loads, exist_ok=True)
    name = f"{me}-{peer_spec['name']}-{int(t0 * 1e6)}"
    with open(f"{loads}/{name}.tmp", "wb") as f:
        marshal.dump({"t0": t0, "t1": t0 + run, "adds": adds}, f)
    os.replace(f"{loads}/{name}.tmp", f"{loads}/{name}.bin")
    return gbps


def serve(ctx: Ctx, tool: str, opts: dict, nic: dict, marker: str) -> int:
    listen, conn = f"{marker}.listen", f"{marker}.conn"
    sys.stdout.write(BANNER)
    sys.stdout.flush()
    with open(listen, "w") as f:  # who listens since when, for a client counting an incast's fan-in
        f.write(f"{os.getpid()} {tool} {time.time()!r} {nic['device']}\n")
    read = None  # the inode of the hand-over this server read: only that one is its own to remove
    try:
        if ctx.spec["perf"]["hung_server"]:  # listens, never answers: its clients hang too
            time.sleep(600)
            return 1
        deadline = time.time() + 600
        while not os.path.exists(conn):
            if time.time() > deadline:
                return err(" Failed to exchange data between server and clients", 1)
            time.sleep(0.02)
        time.sleep(0.02)
        with open(conn, "rb") as f:
            read = os.fstat(f.fileno()).st_ino
            data = marshal.load(f)
        time.sleep(max(0.05, data["seconds"] * SCALE))
        sys.stdout.write(data["text"])
        return 0
    finally:
        # Under load this server may still be printing when the next round's server on the same host and port has
        # written its listen marker (the same name) and that round's client its hand-over: remove only what is ours.
        # Removing theirs left the next pair waiting for a server that had gone, and a marker removed between the
        # check and the unlink was a traceback in the pair's output.
        _remove_own(listen, lambda: _listening_pid(listen) == os.getpid())
        _remove_own(conn, lambda: os.stat(conn).st_ino == read)


def _listening_pid(listen: str) -> int:
    with open(listen) as f:
        return int(f.read().split()[0])


def _remove_own(path: str, owned) -> None:
    """Remove `path` if `owned()` says it is this process's; gone already or another's: left as it is."""
    try:
        if owned():
            os.unlink(path)
    except (OSError, ValueError, IndexError):
        pass
