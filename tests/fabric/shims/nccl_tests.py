"""nccl-tests shim: `all_reduce_perf` alone (one process, its GPUs over NVLink) and `mpirun` running it on several
simulated hosts, one app context per node (`-np 1 -host <address or name> [env K=V ...] all_reduce_perf ARGS`,
contexts separated by `:`), as the gate's nccl stage starts it.

The mpirun shim plays every rank itself from the hosts' specs (no second SSH hop): a node whose PATH lacks the
binary (fault missing_tool) stops the launch with Open MPI's message. Each node's NCCL follows its environment:
NCCL_IB_HCA (`=` exact names, `^` exclusion, else prefixes; `dev:port`) picks its devices among the active ports,
none left (or NCCL_IB_DISABLE=1) is the fallback to sockets; NCCL_IB_GID_INDEX on a RoCE device picks that row of
the port's GID table, unset the RoCE v2 IPv4 one (NCCL 2.21 and later); a row that is no RoCE v2 IPv4 GID does not
route, and the run fails with the transport's retry error after NCCL logged the GID it used. The bus bandwidth is
the slowest node's: the summed rates of the devices it uses, times its slow-node and slow-NIC factors (faults
slow_node, slow_nic: a degraded rail), times EFFICIENCY; sockets give SOCKET_GBPS. With NCCL_DEBUG=INFO every node
prints the NCCL INFO records a real run prints (bootstrap, env, `NET/IB : Using`, GID, Init COMPLETE).
"""

from __future__ import annotations

import os
import sys
import time

from tests.fabric.shims._base import Ctx, err

EFFICIENCY = 0.92  # a healthy ring all_reduce at one large size, of the slowest node's summed rail rate
SOCKET_GBPS = 18.0  # NCCL over TCP sockets on the hosts' Ethernet
NVLINK_GBPS = 3600.0  # one node alone: its GPUs over NVLink
WITH_VALUE = {"-b", "-e", "-f", "-g", "-n", "-w", "-c", "-t", "-i", "-o", "-d", "-r", "-m", "-a", "-p", "-z", "-G"}
DASH = "-" * 74


def _args(argv: list[str]) -> dict[str, str]:
    out, it = {}, iter(argv)
    for a in it:
        if a in WITH_VALUE:
            out[a] = next(it, "")
    return out


def _size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text and text[-1].upper() in units else int(text or 33554432)


def _selected(nic: dict, hca: str | None) -> bool:
    """Whether NCCL_IB_HCA takes this device (NCCL's rules: `^` excludes, `=` exact names, else name prefixes)."""
    if not hca:
        return True
    exclude, spec = hca.startswith("^"), hca.lstrip("^")
    exact, spec = spec.startswith("="), spec.lstrip("=")
    names = [entry.split(":")[0] for entry in spec.split(",") if entry]
    hit = any(nic["device"] == n if exact else nic["device"].startswith(n) for n in names)
    return hit != exclude


def _gid(port: dict, env: dict) -> tuple[int | None, bool]:
    """(the GID index NCCL uses on a RoCE port, whether it routes: a RoCE v2 GID with an IPv4 address)."""
    gids = port["gids"]
    if "NCCL_IB_GID_INDEX" in env:
        index = int(env["NCCL_IB_GID_INDEX"])
        row = gids[index] if 0 <= index < len(gids) else None
        return index, bool(row and row[1] == "RoCE v2" and row[2])
    found = next((i for i, (_, kind, v4) in enumerate(gids) if kind == "RoCE v2" and v4), None)
    return found, found is not None


def _node(spec: dict, env: dict) -> dict:
    """What NCCL does on one node with this environment: its network, devices, GIDs, bandwidth, failure."""
    usable = [n for n in spec["nics"] if n["ports"][0]["state"] == "Active"]
    chosen = [] if env.get("NCCL_IB_DISABLE") == "1" else [n for n in usable if _selected(n, env.get("NCCL_IB_HCA"))]
    perf = spec["perf"]
    view = {"name": spec["name"], "socket": not chosen, "devices": chosen, "gids": {}, "broken": False}
    for n in chosen:
        if n["link_layer"] == "Ethernet":
            index, routes = _gid(n["ports"][0], env)
            view["gids"][n["device"]] = index
            view["broken"] = view["broken"] or not routes
    if chosen:
        rate = sum(n["ports"][0]["rate_gbps"] * perf.get("nic_factor", {}).get(n["device"], 1.0) for n in chosen)
        view["gbps"] = rate * perf["factor"] * EFFICIENCY
    else:
        view["gbps"] = SOCKET_GBPS * perf["factor"]
    view["bootstrap"] = next((n for n in spec["nics"] if n["ipv4"]), None)
    return view


def _records(view: dict, env: dict, pid: int, rank: int, nranks: int, gpus: int) -> list[str]:
    """The NCCL INFO records of one node's first GPU, as NCCL_DEBUG=INFO prints them."""
    if env.get("NCCL_DEBUG", "").upper() != "INFO":
        return []
    head = f"{view['name']}:{pid}:{pid} [0] NCCL INFO "
    boot = view["bootstrap"]
    oob = f"{boot['netdev']}:{boot['ipv4']}<0>" if boot else "eth0:10.0.0.1<0>"
    out = [f"{head}Bootstrap : Using {oob}"]
    if rank == 0:
        out.append("NCCL version 2.21.5+cuda12.4")
    out += [f"{head}{k} set by environment to {v}." for k, v in env.items()
            if k.startswith("NCCL_") and k not in ("NCCL_DEBUG", "NCCL_DEBUG_SUBSYS")]
    if view["socket"]:
        out += [f"{head}NET/IB : No device found.", f"{head}NET/Socket : Using [0]{oob}", f"{head}Using network Socket"]
    else:
        devices = " ".join(f"[{i}]{n['device']}:1/{'RoCE' if n['link_layer'] == 'Ethernet' else 'IB'}"
                           for i, n in enumerate(view["devices"]))
        out += [f"{head}NET/IB : Using {devices} [RO]; OOB {oob}", f"{head}Using network IB"]
    thread = f"{view['name']}:{pid}:{pid + 60} [0] NCCL INFO "
    out.append(f"{thread}comm 0x55d0c09a2b30 rank {rank * gpus} nranks {nranks} cudaDev 0 nvmlDev 0 busId 18000 "
               "commId 0x7b3c6d1ff3a9c0e1 - Init START")
    for i, n in enumerate(view["devices"]):
        index = view["gids"].get(n["device"])
        if index is not None:
            out.append(f"{thread}NET/IB: NCCL Dev {i} IbDev {i} Port 1 qpn {1100 + i} mtu 5 GID {index} "
                       f"(0/{index})")
    if not view["broken"]:
        via = "NET/Socket/0" if view["socket"] else "NET/IB/0/GDRDMA"
        out += [f"{thread}Channel 00/0 : {nranks - 1}[{gpus - 1}] -> {rank * gpus}[0] [receive] via {via}",
                f"{thread}Connected all rings", f"{thread}comm 0x55d0c09a2b30 rank {rank * gpus} nranks {nranks} "
                "cudaDev 0 nvmlDev 0 busId 18000 commId 0x7b3c6d1ff3a9c0e1 - Init COMPLETE"]
    return out


def _table(args: dict, nranks: int, gbps: float, names: list[str], gpus: int, pids: list[int]) -> list[str]:
    size = _size(args.get("-e", "32M"))
    warmup, iters, check = args.get("-w", "5"), args.get("-n", "20"), args.get("-c", "1")
    busbw = gbps / 8  # GB/s, as nccl-tests prints it
    algbw = busbw / (2 * (nranks - 1) / nranks) if nranks > 1 else busbw
    time_us = size / (algbw * 1e3) if algbw else 0.0
    wrong = "N/A" if check == "0" else "0"
    out = [f"# nThread 1 nGpus {gpus} minBytes {_size(args.get('-b', '32M'))} maxBytes {size} step: 2(factor) "
           f"warmup iters: {warmup} iters: {iters} agg iters: 1 validation: {0 if check == '0' else 1} graph: 0", "#",
           "# Using devices"]
    for r, name in enumerate(names):
        for g in range(gpus):
            out.append(f"#  Rank {r * gpus + g:2d} Group  0 Pid {pids[r]:6d} on {name:>10s} device  {g} "
                       f"[0x{0x18 + 0x10 * g:02x}] NVIDIA H100 80GB HBM3")
    out += ["#", "#                                                              out-of-place                       "
            "in-place          ",
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
            "busbw #wrong",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
            "(GB/s)       ",
            f"{size:12d} {size // 4:13d}     float     sum      -1 {time_us:8.1f} {algbw:7.2f} {busbw:7.2f} "
            f"{wrong:>6s} {time_us * 1.001:8.1f} {algbw / 1.001:7.2f} {busbw / 1.001:7.2f} {wrong:>6s}",
            "# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {busbw * 0.9995:.4f}", "#"]
    return out


def _contexts(argv: list[str]) -> list[dict]:
    """mpirun's app contexts: host, environment (`env K=V`), program and its arguments."""
    contexts, current = [], []
    for a in [*argv, ":"]:
        if a != ":":
            current.append(a)
            continue
        ctx, it = {"np": 1, "host": None, "env": {}, "program": None, "args": []}, iter(current)
        for a2 in it:
            if ctx["program"] is not None:
                ctx["args"].append(a2)
            elif a2 in ("-np", "-n"):
                ctx["np"] = int(next(it, "1"))
            elif a2 in ("-host", "-H", "--host", "-hosts"):
                ctx["host"] = next(it, None)
            elif a2 == "env":
                continue
            elif "=" in a2 and not a2.startswith("-"):
                k, v = a2.split("=", 1)
                ctx["env"][k] = v
            elif not a2.startswith("-"):
                ctx["program"] = a2
        contexts.append(ctx)
        current = []
    return contexts


def _resolve(index: dict, host: str) -> tuple[str, dict] | None:
    for addr, h in index["hosts"].items():
        if host in (addr, h["name"]):
            return addr, h
    return None


def mpirun(ctx: Ctx, argv: list[str]) -> int:
    contexts = _contexts(argv)
    index = ctx.index()
    views, envs, args, pids = [], [], {}, []
    for rank, c in enumerate(contexts):
        found = _resolve(index, c["host"] or ctx.address)
        if found is None or found[1].get("unreachable"):
            return err(f"ssh: Could not resolve hostname {c['host']}: Name or service not known\n"
                       "ORTE was unable to reliably start one or more daemons.", 1)
        addr, host = found
        program = os.path.basename(c["program"] or "")
        if not os.path.exists(f"{ctx.state}/bin/{host['name']}/{program}"):
            print(DASH + "\nmpirun was unable to launch the specified application as it could not access\nor execute "
                  f"an executable:\n\nExecutable: {c['program']}\nNode: {host['name']}\n\nwhile attempting to start "
                  f"process rank {rank}.\n" + DASH, file=sys.stderr)
            return 1
        spec = ctx.target_spec(addr)
        envs.append(c["env"])
        views.append(_node(spec, c["env"]))
        args = _args(c["args"])
        pids.append(2000 + sum(map(ord, host["name"])) * 7 % 30000)
    gpus = int(args.get("-g", "1"))
    nranks = gpus * len(views)
    out = []
    for rank, (view, env) in enumerate(zip(views, envs, strict=True)):
        out += _records(view, env, pids[rank], rank, nranks, gpus)
    for rank, view in enumerate(views):
        count = ctx.target_spec(_resolve(index, view["name"])[0])["gpu"]["count"]
        if gpus > count:
            out.append(f"{view['name']}: Test CUDA failure common.cu:892 'invalid device ordinal'")
            out.append(f" .. {view['name']} pid {pids[rank]}: Test failure common.cu:844")
            print("\n".join(out))
            return 1
    broken = [v for v in views if v["broken"]]
    time.sleep(0.2)  # the run, scaled down
    if broken:
        v = broken[0]
        pid = pids[views.index(v)]
        out.append(f"{v['name']}:{pid}:{pid + 60} [0] NCCL WARN NET/IB : Got completion from peer with status=12 "
                   "opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:0.0.0.0 remoteGid ::ffff:0.0.0.0")
        out.append(f"{v['name']}: Test NCCL failure common.cu:1005 'remote process exited or there was a network "
                   "error / '")
        out.append(f" .. {v['name']} pid {pid}: Test failure common.cu:891")
        print("\n".join(out))
        return 1
    gbps = min(v["gbps"] for v in views)
    print("\n".join(_table(args, nranks, gbps, [v["name"] for v in views], gpus, pids)[:3] + out
                    + _table(args, nranks, gbps, [v["name"] for v in views], gpus, pids)[3:]))
    return 0


def main(ctx: Ctx, argv: list[str]) -> int:
    if ctx.tool == "mpirun":
        return mpirun(ctx, argv)
    args = _args(argv)  # all_reduce_perf alone: one process, its GPUs over NVLink
    gpus = int(args.get("-g", "1"))
    if gpus > ctx.spec["gpu"]["count"]:
        return err(f"{ctx.spec['name']}: Test CUDA failure common.cu:892 'invalid device ordinal'", 1)
    time.sleep(0.1)
    print("\n".join(_table(args, gpus, NVLINK_GBPS, [ctx.spec["name"]], gpus, [os.getpid()])))
    return 0
