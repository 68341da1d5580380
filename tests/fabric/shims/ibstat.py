"""ibstat shim: `ibstat`, `ibstat -l`, `ibstat <ca> [port]`, in infiniband-diags' tab-indented layout."""

from __future__ import annotations

from tests.fabric.shims._base import Ctx, err

STATE = {"Active": "Active", "Down": "Down", "Initializing": "Initializing", "Armed": "Armed"}


def port_block(nic: dict, p: dict, indent: str) -> str:
    eth = nic["link_layer"] == "Ethernet"
    lid = 0 if eth else (p["lid"] if p["state"] == "Active" else 65535)
    return "".join([
        f"{indent}Port {p['num']}:\n",
        f"{indent}\tState: {STATE[p['state']]}\n",
        f"{indent}\tPhysical state: {p['phys_state']}\n",
        f"{indent}\tRate: {p['rate_gbps']}\n",
        f"{indent}\tBase lid: {lid}\n",
        f"{indent}\tLMC: 0\n",
        f"{indent}\tSM lid: {0 if eth else p['sm_lid']}\n",
        f"{indent}\tCapability mask: {'0x00010000' if eth else '0xa751e848'}\n",
        f"{indent}\tPort GUID: {p['port_guid']}\n",
        f"{indent}\tLink layer: {nic['link_layer']}\n",
    ])


def ca_block(nic: dict, port: int | None = None) -> str:
    head = "".join([
        f"CA '{nic['device']}'\n",
        f"\tCA type: {nic['hca_type']}\n",
        f"\tNumber of ports: {len(nic['ports'])}\n",
        f"\tFirmware version: {nic['firmware']}\n",
        "\tHardware version: 0\n",
        f"\tNode GUID: 0x{nic['node_guid']}\n",
        f"\tSystem image GUID: 0x{nic['node_guid']}\n",
    ])
    return head + "".join(port_block(nic, p, "\t") for p in nic["ports"] if port in (None, p["num"]))


def main(ctx: Ctx, argv: list[str]) -> int:
    nics = ctx.spec["nics"]
    if not nics:
        return err("ibpanic: [4242] main: stat of IB device 'mlx5_0' failed: No such file or directory", 255)
    args = [a for a in argv if not a.startswith("-")]
    if "-l" in argv or "--list_of_cas" in argv:
        print("\n".join(n["device"] for n in nics))
        return 0
    if not args:
        print("".join(ca_block(n) for n in nics), end="")
        return 0
    nic = ctx.nic(args[0])
    if nic is None:
        return err(f"ibpanic: [4242] main: '{args[0]}' IB device can't be found: No such file or directory", 255)
    port = int(args[1]) if len(args) > 1 else None
    if port is not None:
        p = next((p for p in nic["ports"] if p["num"] == port), None)
        if p is None:
            return err(f"ibpanic: [4242] main: stat of IB device '{args[0]}' port {port} failed", 255)
        print(port_block(nic, p, "").replace("\n\t", "\n"), end="")
        return 0
    print(ca_block(nic), end="")
    return 0
