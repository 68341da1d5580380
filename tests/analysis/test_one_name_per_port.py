"""One name per RDMA port whichever tool read it: sysfs, perfquery, ibstat / ibv_devinfo and mlxlink all say
`mlx5_0/1`, so a port whose errors every tool sees is reported once, under that name."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from rdmatool.diagnose.pipeline import diagnose_analysis
from rdmatool.table.analysis import analyse_path
from rdmatool.table.sample_columns import entity_namer
from tests.bundle_sides import put_output
from tests.pods import bundle as pods


def _mlxlink(symbol_errors: int) -> str:
    """`mlxlink -d mlx5_0 -p 1 -c` of a 400G NDR port (the text form)."""
    rows = [("State", "Active"), ("Physical state", "LinkUp"), ("Speed", "IB-NDR"), ("Width", "4x")]
    counters = [("Symbol Errors", symbol_errors), ("Link Down Counter", 1), ("Link Error Recovery Counter", 0)]
    return ("Operational Info\n----------------\n" + "".join(f"{k:<32}: {v}\n" for k, v in rows)
            + "\nPhysical Counters and BER Info\n------------------------------\n"
            + "".join(f"{k:<32}: {v}\n" for k, v in counters))


def _add_mlxlink(path: Path, host: str, qualifier: str, symbol_errors: list[int]) -> None:
    for snapshot in (0, 1):
        started = (pods.T0 + timedelta(seconds=pods.WINDOW_S * snapshot, milliseconds=200)).isoformat()
        side = {"command": "mlxlink -d mlx5_0 -p 1 -c", "exit_code": 0, "stderr": "", "started": started,
                "duration_s": 0.1, "error": None, "qualifier": qualifier}
        put_output(path, snapshot, host, f"mlxlink.{qualifier}", _mlxlink(pods.value(symbol_errors, snapshot)), side)


def test_port_seen_by_every_tool_is_reported_once(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    pods.bump(pod.host("gpu01").port("mlx5_0").pma, "symbol_error", 40)  # sysfs and perfquery both read it
    path = pods.write(pod, tmp_path / "pod")
    _add_mlxlink(path, "gpu01", "mlx5_0.1", [3, 40])
    analysis = analyse_path(path)
    facts = analysis.facts
    seen = facts[(facts["target"] == "gpu01") & (facts["metric"] == "symbol_errors_per_s") & (facts["delta"] > 0)]
    assert len(seen) == 3 and set(seen["entity"]) == {"mlx5_0/1"}  # sysfs, perfquery and mlxlink: one name
    states = facts[(facts["target"] == "gpu01") & (facts["metric"] == "port_state")]
    assert set(states["entity"]) == {"mlx5_0/1", "mlx5_1/1"}
    found = [(f.target, f.entity) for f in diagnose_analysis(analysis).findings if f.rule == "ib_symbol_errors_growing"]
    assert found == [("gpu01", "mlx5_0/1")]


def test_qualifier_names_the_port_of_tools_that_do_not() -> None:
    mlxlink = entity_namer("mlxlink", "mlx5_0.1")
    assert [mlxlink(e) for e in ("port", "port/lane2", "host")] == ["mlx5_0/1", "mlx5_0/1/lane2", "host"]
    assert entity_namer("mlxlink", "mlx5_2")("port") == "mlx5_2/1"  # mlxlink without -p reads port 1
    assert entity_namer("perfquery", "mlx5_0.2")("lid12/2") == "mlx5_0/2"
    assert entity_namer("ethtool_stats", "ens1f0np0")("netdev") == "ens1f0np0"
    assert entity_namer("perftest", "ib_write_bw@gpu02")("ib_write_bw") == "ib_write_bw@gpu02"
    assert entity_namer("perftest", "ib_write_bw")("ib_write_bw") == "ib_write_bw"
    assert entity_namer("sysfs_counters", None) is None
