"""sminfo, ibnetdiscover and ibqueryerrors shims (infiniband-diags): the simulated InfiniBand subnet as the subnet
sweep reads it from one host (iblinkinfo has its own module, which answers through `answer` too).

The text is tests/fabric/subnet.py's `sweep_texts` for the fabric's subnet: counters at the seconds since the fabric
started, cables as the how-many-th read of this tool sees them (each tool counts its reads in `<state>/reads/`, so a
collection's second snapshot sees a cable of fault ib_cable_gone gone). Fault ib_slow_sweep makes each tool that walks
the subnet (not sminfo, which asks one SM) wait before it answers: a subnet whose management agents answer slowly. A `-C`/`-P` naming no Active InfiniBand port of
this host fails as the real tools do when they cannot open the port.
"""

from __future__ import annotations

import os
import sys
import time

from tests.fabric import subnet as subnet_mod
from tests.fabric.shims._base import Ctx, err


def _reads_before(ctx: Ctx) -> int:
    """How many times this tool read the subnet before, fabric-wide (this read counted)."""
    os.makedirs(f"{ctx.state}/reads", exist_ok=True)
    with open(f"{ctx.state}/reads/subnet.{ctx.tool}", "ab") as f:
        before = f.tell()
        f.write(b".")
    return before


def answer(ctx: Ctx, argv: list[str], opened) -> int:  # noqa: ANN001 - `opened`: the port check of iblinkinfo's shim
    """Print this tool's view of the subnet, or fail as the tool does on a port it cannot open."""
    subnet = ctx.index().get("subnet")
    closed = opened(ctx, argv)
    if closed is not None or not subnet:
        device, _, port = (closed or "mlx5_0:1").partition(":")
        return err(f"ibwarn: [4242] mad_rpc_open_port: can't open UMAD port ({closed})\n"
                   f"{ctx.tool}: iberror: failed: Failed to open {device} port {port}", 255)
    if subnet.get("slow_s") and ctx.tool != "sminfo":  # the tools that walk every node; sminfo asks one SM
        time.sleep(float(subnet["slow_s"]))
    text = subnet_mod.sweep_texts(subnet, ctx.now - ctx.epoch, _reads_before(ctx))[ctx.tool]
    sys.stdout.write(text)
    # ibqueryerrors exits 1 when it found a counter above its threshold (its manual's EXIT STATUS)
    return 1 if ctx.tool == "ibqueryerrors" and " 0 ports have errors" not in text else 0


def main(ctx: Ctx, argv: list[str]) -> int:
    from tests.fabric.shims.iblinkinfo import _opened

    return answer(ctx, argv, _opened)
