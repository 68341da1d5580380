"""iblinkinfo shim (infiniband-diags): every link of the simulated InfiniBand subnet, node by node.

`iblinkinfo [-C <ca> -P <port>]`: the switches first, every port of each, then the CAs, in the default layout of
iblinkinfo.c (print_node_header, print_port) that rdmatool.parsers.iblinkinfo reads. The subnet comes from the
fabric's index (tests/fabric/subnet.py), as the sweep's other shims give theirs (shims/ibsweep.py: counted reads,
a cable gone between snapshots, a slow subnet). A `-C`/`-P` naming no Active InfiniBand port of this host fails as
the real tool does when it cannot open the port.
"""

from __future__ import annotations

from tests.fabric import subnet as subnet_mod
from tests.fabric.shims._base import Ctx


def render(subnet: dict) -> str:
    """The subnet in iblinkinfo's layout (tests/fabric/subnet.py renders every sweep tool's text)."""
    return subnet_mod.render_iblinkinfo(subnet)


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
    from tests.fabric.shims.ibsweep import answer

    return answer(ctx, argv, _opened)
