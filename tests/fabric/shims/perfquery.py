"""perfquery shim: `perfquery [-x] [-C <ca>] [-P <port>] [lid [port]]` with the dotted PMA layout."""

from __future__ import annotations

from tests.fabric.counters import PERFQUERY_DATA, PERFQUERY_ERRORS
from tests.fabric.shims._base import Ctx, err

SAT32 = 0xFFFFFFFF
LEGACY_WIDTH = {"SymbolErrorCounter": 16, "LinkErrorRecoveryCounter": 8, "LinkDownedCounter": 8,
                "PortRcvErrors": 16, "PortRcvRemotePhysicalErrors": 16, "PortRcvSwitchRelayErrors": 16,
                "PortXmitDiscards": 16, "PortXmitConstraintErrors": 8, "PortRcvConstraintErrors": 8,
                "LocalLinkIntegrityErrors": 4, "ExcessiveBufferOverrunErrors": 4, "VL15Dropped": 16,
                "PortXmitWait": 32}


def row(key: str, value: object) -> str:
    return f"{key}:".ljust(33, ".") + f"{value}\n"


def main(ctx: Ctx, argv: list[str]) -> int:
    extended = "-x" in argv or "--extended" in argv
    ca = port = None
    positional: list[str] = []
    it = iter(argv)
    for a in it:
        if a in ("-C", "--Ca"):
            ca = next(it, None)
        elif a in ("-P", "--Port"):
            port = int(next(it, "1"))
        elif not a.startswith("-"):
            positional.append(a)
    ib = [n for n in ctx.spec["nics"] if n["link_layer"] == "InfiniBand"]
    nic = ctx.nic(ca) if ca else (ib[0] if ib else None)
    port = port or (int(positional[1]) if len(positional) > 1 else 1)
    if nic is None or nic["link_layer"] != "InfiniBand":
        name = ca or "(null)"
        sys_port = port if ca else 0
        return err(f"ibwarn: [4242] mad_rpc_open_port: can't open UMAD port ({name}:{sys_port})\n"
                   f"perfquery: iberror: failed: Failed to open '{name}' port '{sys_port}'", 255)
    p = next((p for p in nic["ports"] if p["num"] == port), None)
    if p is None:
        return err(f"perfquery: iberror: failed: Failed to open '{nic['device']}' port '{port}'", 255)
    lid = int(positional[0], 0) if positional else p["lid"]
    c = p["counters"]["ib"]
    out = []
    if extended:
        out.append(f"# Port extended counters: Lid {lid} port {port} (CapMask: 0x5A00 CapMask2: 0x0000002)\n")
        out += [row("PortSelect", port), row("CounterSelect", "0x0000")]
        out += [row(k, ctx.val(c, n)) for k, n in PERFQUERY_DATA]
        out.append(row("CounterSelect2", "0x00000000"))
        out += [row(k, ctx.val(c, n)) for k, n in PERFQUERY_ERRORS]
        out.append(row("QP1Dropped", 0))
    else:
        out.append(f"# Port counters: Lid {lid} port {port} (CapMask: 0x5A00)\n")
        out += [row("PortSelect", port), row("CounterSelect", "0x0000")]
        for k, n in PERFQUERY_ERRORS[:-1]:
            out.append(row(k, min(ctx.val(c, n), (1 << LEGACY_WIDTH[k]) - 1)))
        for k, n in PERFQUERY_DATA[:4]:
            out.append(row(k, min(ctx.val(c, n), SAT32)))
        out.append(row("PortXmitWait", min(ctx.val(c, "port_xmit_wait"), SAT32)))
    print("".join(out), end="")
    return 0
