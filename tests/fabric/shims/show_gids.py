"""show_gids shim (mlnx-tools script): TAB-separated GID table and the `n_gids_found=N` trailer."""

from __future__ import annotations

from tests.fabric.shims._base import Ctx


def main(ctx: Ctx, argv: list[str]) -> int:
    want = argv[0] if argv else None
    out = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n",
           "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n"]
    found = 0
    for nic in ctx.spec["nics"]:
        if want not in (None, nic["device"]) or nic["link_layer"] != "Ethernet":
            continue
        for p in nic["ports"]:
            for i, (gid, kind, v4) in enumerate(p["gids"]):
                ver = "v2" if kind == "RoCE v2" else "v1"
                out.append(f"{nic['device']}\t{p['num']}\t{i}\t{gid}\t{v4}  \t{ver}\t{nic['netdev']}\n")
                found += 1
    out.append(f"n_gids_found={found}\n")
    print("".join(out), end="")
    return 0
