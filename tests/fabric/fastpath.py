"""Fast path for host tools: answers rendered ahead of time, served by a generated `sh` case script.

Starting Python for every tool call costs 40-70 ms on a busy 2-core machine, and one host snapshot runs some
fifteen tools: too slow for the 128-host benchmark. So, for the argument lists the collector and the tests use:
- outputs that never change (ibstat, ibv_devinfo, ethtool -i, mlnx_qos, show_gids, lldpctl) are rendered once at
  fabric start into <state>/out/<host>/<tool>.<i>;
- counter outputs (perfquery, ethtool -S) are rendered by the wrapper on every connection, in-process, into the
  connection's temp dir ($FABRIC_DYN), with the same `now` as the sysfs counter files.
The tool in the host's bin/ is then a `case "$*" in` script that cats the right file and exits with the right
status; any other argument list falls through to the Python shim. Output is byte-identical to the Python shim's.
"""

from __future__ import annotations

import io
import sys

from tests.fabric.shims._base import Ctx


def arg_lists(spec: dict) -> dict[str, list[tuple[list[str], bool]]]:
    """tool -> [(argv, dynamic)] served from files for this host."""
    nics = spec["nics"]
    devs = [n["device"] for n in nics]
    nds = [n["netdev"] for n in nics]
    ib_ports = [(n["device"], str(p["num"])) for n in nics if n["link_layer"] == "InfiniBand" for p in n["ports"]]
    return {
        "ibstat": [([], False), (["-l"], False), *(([d], False) for d in devs),
                   *(([n["device"], str(p["num"])], False) for n in nics for p in n["ports"])],
        "ibv_devinfo": [([], False), (["-v"], False), (["-l"], False),
                        *((a, False) for d in devs for a in (["-d", d], ["-v", "-d", d], ["-d", d, "-v"]))],
        "show_gids": [([], False), *(([d], False) for d in devs)],
        # a neighbour changing after the first read (fault recabled_between_snapshots) is the Python shim's
        "lldpctl": [] if any("neighbor_later" in p for n in nics for p in n["ports"]) else
        [([], False), (["-f", "json"], False), (["-f", "keyvalue"], False)],
        "mlnx_qos": [(["-i", nd], False) for nd in nds],
        "ethtool": [(a, dyn) for nd in nds for a, dyn in ((["-i", nd], False), ([nd], False),
                                                          (["--show-fec", nd], False), (["-S", nd], True))],
        "perfquery": [([], True), (["-x"], True),
                      *((a, True) for d, p in ib_ports for a in (["-x", "-C", d, "-P", p], ["-C", d, "-P", p]))],
    }


def capture(tool: str, ctx: Ctx, argv: list[str]) -> tuple[str, str, int]:
    """(stdout, stderr, exit status) of the Python shim for `tool argv`."""
    mod = __import__(f"tests.fabric.shims.{tool}", fromlist=["main"])
    ctx.tool = tool
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        rc = mod.main(ctx, argv)
    finally:
        sys.stdout, sys.stderr = saved
    return out.getvalue(), err.getvalue(), rc


def _quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def write_static(ctx: Ctx, outdir: str, launchers: str) -> dict[str, str]:
    """Render the static answers into outdir; return tool -> the text of its sh case script."""
    import os

    os.makedirs(outdir, exist_ok=True)
    scripts = {}
    for tool, cases in arg_lists(ctx.spec).items():
        lines = ["#!/bin/sh", 'case "$*" in']
        for i, (argv, dynamic) in enumerate(cases):
            out, err, rc = capture(tool, ctx, argv)
            base = f"{outdir}/{tool}.{i}"
            with open(base, "w") as f:
                f.write(out)
            actions = [f'cat "$FABRIC_DYN/{tool}.{i}"' if dynamic else f"cat {_quote(base)}"]
            if err:
                with open(f"{base}.err", "w") as f:
                    f.write(err)
                actions.append(f"cat {_quote(base + '.err')} >&2")
            lines.append(f"{_quote(' '.join(argv))}) {'; '.join(actions)}; exit {rc} ;;")
        lines += [f'*) exec {_quote(f"{launchers}/{tool}")} "$@" ;;', "esac", ""]
        scripts[tool] = "\n".join(lines)
    return scripts


def write_dynamic(ctx: Ctx, tmp: str) -> None:
    """Per connection: the counter outputs as of ctx.now into tmp (the wrapper's $FABRIC_DYN)."""
    for tool, cases in arg_lists(ctx.spec).items():
        for i, (argv, dynamic) in enumerate(cases):
            if dynamic:
                with open(f"{tmp}/{tool}.{i}", "w") as f:
                    f.write(capture(tool, ctx, argv)[0])
