"""The fan-out benchmark's event-loop contender: the host script over asyncssh, one thread, one asyncio loop.

    python benchmarks/asyncssh_script.py --hosts ADDR,ADDR,... --port P --key KEY --known-hosts KH \
        --script SCRIPT [--forks 64] [--deadline 120] [--x25519]

What `clush-script` measures, with asyncssh instead of one OpenSSH process per host: the same batched script on
stdin (`sh -s -- 20 full`), the same key, known_hosts (verified: an unknown or changed key fails the host) and
concurrency, every host's output printed as clush prints it (`ADDR: line`). Transport only: nothing parsed or
written. It answers the issue's question of whether an event-loop transport would beat paramiko's thread per
session by a wide margin; asyncssh is a benchmark dependency (`pip install asyncssh`), not the product's.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path


async def one(address: str, args, script: str, gate: asyncio.Semaphore, out: list[str]) -> bool:
    import asyncssh

    async with gate:
        try:
            async with asyncssh.connect(
                address, port=args.port, username="root", client_keys=[args.key], known_hosts=args.known_hosts,
                agent_path=None, config=None, connect_timeout=10,
                kex_algs=["curve25519-sha256"] if args.x25519 else (),
            ) as conn:
                result = await asyncio.wait_for(conn.run("sh -s -- 20 full", input=script), args.deadline)
        except (OSError, asyncssh.Error, asyncio.TimeoutError) as exc:
            out.append(f"{address}: asyncssh: {type(exc).__name__}: {exc}\n")
            return False
    out.append("".join(f"{address}: {line}\n" for line in str(result.stdout).splitlines()))
    return result.exit_status == 0


async def main_async(args) -> int:
    script = Path(args.script).read_text()
    gate = asyncio.Semaphore(args.forks)
    out: list[str] = []
    oks = await asyncio.gather(*(one(a, args, script, gate, out) for a in args.hosts.split(",")))
    sys.stdout.write("".join(out))
    return 0 if all(oks) else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", required=True, help="comma-separated addresses")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--known-hosts", required=True)
    ap.add_argument("--script", required=True)
    ap.add_argument("--forks", type=int, default=64)
    ap.add_argument("--deadline", type=float, default=120)
    ap.add_argument("--x25519", action="store_true", help="curve25519-sha256 key exchange only")
    return asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
