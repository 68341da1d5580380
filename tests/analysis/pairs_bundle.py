"""Per-peer perftest results added to a hand-made pod's bundle: one `ib_write_bw` client output per pair, on the
client, qualified `<test>@<server>` (`perftest.ib_write_bw_gpu02.txt` with `"qualifier": "ib_write_bw@gpu02"` in its
side data), as the bundle format keeps one output per command and qualifier."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from rdmatool.bundle.names import file_stem
from tests.bundle_sides import put_output
from tests.pods import bundle as pods


def perftest_output(bw_gbps: float | None, error: str | None = None) -> str:
    """What an `ib_write_bw --report_gbits` client prints for 64 KiB messages (or its failure)."""
    host = pods.Host("client", "compute", [], bw=None if bw_gbps is None else {65536: bw_gbps},
                     perftest_error=error)
    return pods._perftest(host)


def add_pair_results(path: Path, pairs: dict[tuple[str, str], float | None], test: str = "ib_write_bw",
                     snapshot: int = 1, errors: dict[tuple[str, str], str] | None = None) -> Path:
    """Write one perftest output per (client, server) pair into the bundle's snapshot: its average bandwidth in
    Gb/s, or the failure message of `errors`."""
    errors = errors or {}
    started = (pods.T0 + timedelta(seconds=pods.WINDOW_S * snapshot)).isoformat()
    for (client, server), bw in {**dict.fromkeys(errors), **pairs}.items():
        qualifier = f"{test}@{server}"
        error = errors.get((client, server))
        side = {"command": f"{test} --report_gbits {server}", "exit_code": 1 if error else 0, "stderr": "",
                "started": started, "duration_s": 10.0, "error": None, "qualifier": qualifier}
        put_output(path, snapshot, client, file_stem("perftest", qualifier), perftest_output(bw, error), side)
    return path
