"""tcpdump shim: `tcpdump -p -n -U -i IFACE -s SNAP -c COUNT -w - --` streams a pcap on stdout.

The packets are `<state>/captures/<host>.pcap` (a test writes it), cut to COUNT records and SNAP bytes each (the
original length kept), as tcpdump -s / -c would; without that file, a capture with no packets. The interface must
be one of the host's RDMA devices or netdevs. `<state>/captures/<host>.denied` makes it refuse like tcpdump run
without root. Stderr carries tcpdump's own lines (listening on ..., N packets captured).

Not in the fabric's tool list: `install(fabric, host)` puts it in one host's PATH (until the fabric's next reset).
"""

from __future__ import annotations

import os
import struct
import sys

from tests.fabric.shims._base import Ctx, err


def main(ctx: Ctx, argv: list[str]) -> int:
    opts: dict[str, str] = {}
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--":
            break
        if a in ("-i", "-s", "-c", "-w"):
            if not args:
                return err(f"tcpdump: option requires an argument -- '{a[1]}'")
            opts[a] = args.pop(0)
        elif a not in ("-p", "-n", "-U"):
            return err(f"tcpdump: invalid option -- '{a.lstrip('-')}'")
    iface = opts.get("-i", "")
    name = ctx.spec["name"]
    if os.path.exists(f"{ctx.state}/captures/{name}.denied"):
        return err(f"tcpdump: {iface}: You don't have permission to perform this capture on that device\n"
                   "(socket: Operation not permitted)")
    known = {n["device"] for n in ctx.spec.get("nics", [])} | {n["netdev"] for n in ctx.spec.get("nics", [])}
    if iface not in known:
        return err(f"tcpdump: {iface}: No such device exists\n(No such device exists)")
    if opts.get("-w") != "-":
        return err("tcpdump: this shim writes to stdout only (-w -)")
    snap, count = int(opts.get("-s", "262144")), int(opts.get("-c", "0"))
    sys.stderr.write(f"tcpdump: listening on {iface}, link-type EN10MB (Ethernet), snapshot length {snap} bytes\n")
    source = f"{ctx.state}/captures/{name}.pcap"
    out = sys.stdout.buffer
    data = b""
    if os.path.exists(source):
        with open(source, "rb") as f:
            data = f.read()
    endian = "<" if data[:4] in (b"", b"\xd4\xc3\xb2\xa1") else ">"
    out.write(struct.pack(endian + "IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snap, 1))
    sent, at = 0, 24
    while at + 16 <= len(data) and (not count or sent < count):
        sec, usec, caplen, wirelen = struct.unpack(endian + "IIII", data[at:at + 16])
        body = data[at + 16:at + 16 + caplen][:snap]
        out.write(struct.pack(endian + "IIII", sec, usec, len(body), wirelen) + body)
        at += 16 + caplen
        sent += 1
    out.flush()
    sys.stderr.write(f"{sent} packets captured\n{sent} packets received by filter\n0 packets dropped by kernel\n")
    return 0


def install(fabric, host: str) -> None:
    """Put this shim in `host`'s PATH on the simulated fabric (the launcher the fabric makes for its own tools)."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    path = fabric.state / "bin" / host / "tcpdump"
    path.write_text(f"#!{sys.executable} -S\nimport sys\nsys.path.insert(0, {repo!r})\n"
                    "from tests.fabric.shims._base import run\nsys.exit(run('tcpdump', 'tcpdump', sys.argv[1:]))\n")
    path.chmod(0o755)
    (fabric.state / "captures").mkdir(exist_ok=True)
