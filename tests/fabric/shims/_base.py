"""What every shim shares: the target's spec from the state dir, counter values now, table layouts.

A shim is a module with `main(ctx, argv) -> int`; the launcher generated into <state>/launchers/<tool> calls
`run(module, tool, argv)`. Cheap imports only (marshal, no json/yaml/dataclasses): this runs on every command of
every simulated session.
"""

from __future__ import annotations

import marshal
import os
import sys
import time

from tests.fabric.counters import value, with_load


class Ctx:
    """The simulated target a shim runs on: `spec` (its dict from the state dir), `now`, counter values."""

    def __init__(self, state: str, address: str, spec: dict, tool: str, now: float) -> None:
        self.state, self.address, self.spec, self.tool, self.now = state, address, spec, tool, now

    @property
    def epoch(self) -> float:
        return self.spec["epoch"]

    def val(self, table: dict, name: str) -> int:
        return value(table.get(name), self.now, self.epoch)

    def index(self) -> dict:
        with open(f"{self.state}/index.bin", "rb") as f:
            return marshal.load(f)

    def target_spec(self, address: str) -> dict:
        with open(f"{self.state}/targets/{address}.bin", "rb") as f:
            return marshal.load(f)

    def nic(self, device: str | None = None, netdev: str | None = None) -> dict | None:
        for n in self.spec.get("nics", []):
            if (device is None or n["device"] == device) and (netdev is None or n["netdev"] == netdev):
                return n
        return None

    def port(self, name: str) -> dict | None:
        """A switch port by name, case-insensitively (CLIs accept `ethernet1/1` for `Ethernet1/1`)."""
        for p in self.spec.get("ports", []):
            if p["name"].lower() == name.lower():
                return p
        return None


def load_ctx(tool: str, state: str | None = None, address: str | None = None) -> Ctx:
    state = state or os.environ["FABRIC_STATE"]
    address = address or os.environ["FABRIC_TARGET"]
    with open(f"{state}/targets/{address}.bin", "rb") as f:
        spec = marshal.load(f)
    return Ctx(state, address, with_load(spec, state), tool, time.time())


def run(module: str, tool: str, argv: list[str]) -> int:
    mod = __import__(f"tests.fabric.shims.{module}", fromlist=["main"])
    try:
        return mod.main(load_ctx(tool), argv)
    except BrokenPipeError:
        return 141


def err(message: str, code: int = 1) -> int:
    sys.stderr.write(message + "\n")
    return code


def fmt(n: int) -> str:
    return f"{n:,}"


def simple_table(headers: list[str], rows: list[list[str]], left: tuple[int, ...] = ()) -> str:
    """Python-tabulate "simple" layout as SONiC prints it: right-aligned columns (except `left`), two spaces
    between columns, a dashes row under the header."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        return "  ".join(str(c).ljust(w) if i in left else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([line(headers), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]) + "\n"


def nv_table(headers: list[str], rows: list[list[str]], indent: str = "") -> str:
    """NVUE table layout: left-aligned columns, two spaces apart, trailing spaces kept except on the last row."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        return indent + "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True))

    out = [line(headers), indent + "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    out[-1] = out[-1].rstrip()
    return "\n".join(out) + "\n"


def human_bytes(n: float) -> str:
    """NVUE's human-formatted byte counts: `0 Bytes`, `146.48 KB`, `1.43 MB`, `92824.38 GB`."""
    if n < 1024:
        return f"{int(n)} Bytes"
    for unit, div in (("KB", 1024), ("MB", 1024**2)):
        if n < div * 1024:
            return f"{n / div:.2f} {unit}"
    return f"{n / 1024**3:.2f} GB"
