"""iblinkinfo shim (infiniband-diags): every link of the simulated InfiniBand subnet, node by node.

`iblinkinfo [-C <ca> -P <port>]`: the switches first, every port of each, then the CAs, in the default layout of
iblinkinfo.c (print_node_header, print_port) that rdmatool.parsers.iblinkinfo reads. The subnet comes from the
fabric's index (tests/fabric/subnet.py). A `-C`/`-P` naming no Active InfiniBand port of this host fails as the
real tool does when it cannot open the port.
"""

from __future__ import annotations

from tests.fabric.shims._base import Ctx, err

DOWN = "==(                {state}/{phys:>8})==>             [  ] \"\" ( )"


def _link(link: dict) -> str:
    if link["state"] != "Active":
        return DOWN.format(state=link["state"], phys=link["phys"])
    return f"==( {link['width']:>2} {link['lane']:>13} Gbps {link['state']:>6}/{link['phys']:>8})==>"


def _remote(remote: dict | None) -> str:
    return f"{remote['lid']:>8} {remote['port']:>4}[  ] \"{remote['desc']}\" ( )" if remote else ""


def render(subnet: dict) -> str:
    out = []
    for sw in subnet["switches"]:
        out.append(f"Switch: {sw['guid']} {sw['desc']}:")
        for p in sw["ports"]:
            out.append(f"{sw['lid']:>12} {p['num']:>4}[  ] {_link(p['link'])}{_remote(p['remote'])}")
    for ca in subnet["cas"]:
        out.append(f"CA: {ca['desc']}:")
        out.append(f"      {ca['guid']} {ca['lid']:>6} {ca['num']:>4}[  ] {_link(ca['link'])}{_remote(ca['remote'])}")
    return "".join(line + "\n" for line in out)


def _opened(ctx: Ctx, argv: list[str]) -> str | None:
    """The `<ca>:<port>` the command names, when this host has no Active InfiniBand port there."""
    ca = argv[argv.index("-C") + 1] if "-C" in argv[:-1] else None
    number = argv[argv.index("-P") + 1] if "-P" in argv[:-1] else None
    for nic in ctx.spec.get("nics", []):
        if nic["link_layer"] != "InfiniBand" or ca not in (None, nic["device"]):
            continue
        for p in nic["ports"]:
            if number in (None, str(p["num"])) and p["state"] == "Active":
                return None
    return f"{ca or 'mlx5_0'}:{number or 1}"


def main(ctx: Ctx, argv: list[str]) -> int:
    subnet = ctx.index().get("subnet")
    closed = _opened(ctx, argv)
    if closed is not None or not subnet:
        device, _, port = (closed or "mlx5_0:1").partition(":")
        return err(f"ibwarn: [4242] mad_rpc_open_port: can't open UMAD port ({closed})\n"
                   f"Failed to open {device} port {port}", 255)
    print(render(subnet), end="")
    return 0
