"""mlnx_qos shim: `mlnx_qos -i <netdev>` (MLNX_OFED 5.x layout: trust, dscp2prio, buffers, PFC, TCs)."""

from __future__ import annotations

from tests.fabric.shims._base import Ctx, err


def render(nic: dict) -> str:
    q = nic["qos"]
    out = ["DCBX mode: OS controlled\n", f"Priority trust state: {q['trust']}\n"]
    if q["trust"] == "dscp":
        out.append("dscp2prio mapping:\n")
        for prio in range(8):
            dscps = [d for d in range(64) if d // 8 == prio]
            out.append(f"\tprio:{prio} dscp:{','.join(f'{d:02d}' for d in reversed(dscps))},\n")
    out.append("default priority:\n")
    buffers = ["130944", "130944"] + ["0"] * 6
    out.append(f"Receive buffer size (bytes): {','.join(buffers)},\n")
    out.append("Cable len: 7\n")
    out.append("PFC configuration:\n")
    out.append("\tpriority    " + "   ".join(str(p) for p in range(8)) + "\n")
    out.append("\tenabled     " + "   ".join("1" if p in q["pfc"] else "0" for p in range(8)) + "   \n")
    out.append("\tbuffer      " + "   ".join("1" if p in q["pfc"] else "0" for p in range(8)) + "   \n")
    tc_of = {0: 1, 1: 0}
    for tc in range(8):
        out.append(f"tc: {tc} ratelimit: unlimited, tsa: vendor\n")
        for prio in range(8):
            if tc_of.get(prio, prio) == tc:
                out.append(f"\t priority:  {prio}\n")
    return "".join(out)


def main(ctx: Ctx, argv: list[str]) -> int:
    if "-i" not in argv or argv.index("-i") + 1 >= len(argv):
        return err("Usage: mlnx_qos -i <interface> [options]", 2)
    ifname = argv[argv.index("-i") + 1]
    nic = ctx.nic(netdev=ifname)
    if nic is None:
        return err(f"Netlink error: Bad value. see man (interface {ifname} not found)", 1)
    if nic["link_layer"] != "Ethernet":
        return err(f"{ifname}: DCB is not supported on this interface (no such device)", 1)
    if len(argv) > 2:
        return err("mlnx_qos: this simulator is read-only", 1)
    print(render(nic), end="")
    return 0
