"""The simulated perftest's incast count (tests/fabric/shims/perftest.py): which servers a new flow shares its
receiver's NIC with. A unit test of the simulator, so that the perf tests' figures do not depend on the machine's
load."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.fabric.shims.perftest import live_bw_servers


def _listen(pdir: Path, marker: str, pid: int, tool: str = "ib_write_bw", device: str = "mlx5_1") -> None:
    (pdir / f"{marker}.listen").write_text(f"{pid} {tool} 1700000000.0 {device}\n")


def test_a_server_whose_flow_is_over_is_not_counted_while_it_exits(tmp_path: Path) -> None:
    me = os.getpid()  # alive: every marker below names a live process
    _listen(tmp_path, "gpu01_18515", me)  # receiving now
    _listen(tmp_path, "gpu01_18516", me)  # the round before: its client handed over, the server still printing
    (tmp_path / "gpu01_18516.conn").write_bytes(b"")
    _listen(tmp_path, "gpu01_18517", me, tool="ib_write_lat")  # a latency server carries no bandwidth
    _listen(tmp_path, "gpu01_18518", me, device="mlx5_2")  # another NIC of the host
    _listen(tmp_path, "gpu02_18519", me)  # another host
    assert live_bw_servers(str(tmp_path), "gpu01", "mlx5_1") == 1
    (tmp_path / "gpu01_18515.conn").write_bytes(b"")
    assert live_bw_servers(str(tmp_path), "gpu01", "mlx5_1") == 0


def test_a_server_killed_before_its_client_came_is_not_counted(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    _listen(tmp_path, "gpu01_18515", int(gone.stdout))
    _listen(tmp_path, "gpu01_18516", os.getpid())
    assert live_bw_servers(str(tmp_path), "gpu01", "mlx5_1") == 1
