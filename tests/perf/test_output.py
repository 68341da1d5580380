"""Outputs: the matrix CSV, a valid PNG heatmap, the attribution JSON; discovery parsing; command validation."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from rdmatool import commands
from rdmatool.perf import discovery
from rdmatool.perf.attribution import attribute
from rdmatool.perf.model import PairResult
from rdmatool.perf.output import heatmaps, write_results


def result(s: str, c: str, bw: float | None, error: str | None = None, test: str = "ib_write_bw",
           lat: dict | None = None) -> PairResult:
    return PairResult(s, c, test, 65536, bw, None, lat, error, 0, "server says\n", "client says\n", 1.0)


def test_matrix_csv_heatmap_png_and_attribution(tmp_path: Path) -> None:
    results = [result("a", "b", 193.0), result("c", "a", 60.0), result("b", "c", None, "client c: Couldn't connect"),
               result("a", "b", 180.0),
               result("a", "b", None, test="ib_write_lat", lat={"lat_typical_us": 1.7, "lat_p99_us": 2.2})]
    attribution = attribute(results, 200.0)
    write_results(results, attribution, tmp_path)
    rows = list(csv.reader((tmp_path / "matrix_ib_write_bw_bw_avg_gbps.csv").open()))
    assert rows[0] == ["node", "a", "b", "c"]
    assert rows[1] == ["a", "-", "180.00", "60.00"]  # worst passing value, symmetric
    assert rows[2] == ["b", "180.00", "-", "error"]
    assert rows[3] == ["c", "60.00", "error", "-"]
    lat = list(csv.reader((tmp_path / "matrix_ib_write_lat_lat_p99_us.csv").open()))
    assert lat[1] == ["a", "-", "2.20"]
    for name in ("heatmap_ib_write_bw.png", "heatmap_ib_write_lat.png"):
        image = decoded((tmp_path / name).read_bytes())
        height, width = image.shape[:2]
        assert width > height > 100  # the matrix and, beside it, the colour bar
    data = json.loads((tmp_path / "attribution.json").read_text())
    assert data["errors"][0]["error"] == "client c: Couldn't connect"
    pairs = list(csv.DictReader((tmp_path / "pairs.csv").open()))
    assert len(pairs) == 5 and pairs[0]["bw_avg_gbps"] == "193.00"
    assert (tmp_path / "raw" / "0000_r0_a_b.client.txt").read_text() == "client says\n"


def decoded(png: bytes):
    from matplotlib.image import imread

    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return imread(io.BytesIO(png), format="png")


def pixels_like(image, rgb: tuple[float, float, float], tolerance: float = 0.04) -> int:
    return int((abs(image[:, :, :3] - rgb) < tolerance).all(axis=2).sum())


def test_heatmap_colours_a_slow_pair_red_and_an_errored_pair_dark() -> None:
    """Same nodes, same layout: a pair far below its line rate adds red cells, an errored pair dark grey ones (the
    colour bar and the legend are in both images, so only the cells make the difference)."""
    healthy = [result("a", "b", 190.0), result("b", "c", 191.0), result("a", "c", 189.0)]
    slow = [result("a", "b", 190.0), result("b", "c", 191.0), result("a", "c", 60.0)]
    broken = [result("a", "b", 190.0), result("b", "c", None, "client c: timed out"), result("a", "c", 189.0)]
    images = {name: decoded(heatmaps(r, attribute(r, 200.0))["ib_write_bw"])
              for name, r in (("healthy", healthy), ("slow", slow), ("broken", broken))}
    red, dark = (0.78, 0.16, 0.16), (0.27, 0.27, 0.27)
    assert pixels_like(images["slow"], red) > pixels_like(images["healthy"], red) + 1000
    assert pixels_like(images["broken"], dark) > pixels_like(images["healthy"], dark) + 1000
    assert images["slow"].shape == images["healthy"].shape


DISCOVERY = """\
/sys/class/infiniband/mlx5_0/ports/1/link_layer:InfiniBand
/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE
/sys/class/infiniband/mlx5_0/ports/1/rate:400 Gb/sec (4X NDR)
/sys/class/infiniband/mlx5_0/ports/1/gids/0:fe80:0000:0000:0000:b83f:d203:0000:0000
netdev:mlx5_0:ibp24s0
ipv4:ibp24s0:5: ibp24s0    inet 10.9.0.7/16 brd 10.9.255.255 scope global ibp24s0
/sys/class/infiniband/mlx5_1/ports/1/link_layer:Ethernet
/sys/class/infiniband/mlx5_1/ports/1/state:4: ACTIVE
/sys/class/infiniband/mlx5_1/ports/1/rate:200 Gb/sec (4X HDR)
/sys/class/infiniband/mlx5_1/ports/1/gid_attrs/types/0:IB/RoCE v1
/sys/class/infiniband/mlx5_1/ports/1/gid_attrs/types/1:RoCE v2
/sys/class/infiniband/mlx5_1/ports/1/gid_attrs/types/2:IB/RoCE v1
/sys/class/infiniband/mlx5_1/ports/1/gid_attrs/types/3:RoCE v2
/sys/class/infiniband/mlx5_1/ports/1/gids/1:fe80:0000:0000:0000:ba3f:d2ff:fe00:0001
/sys/class/infiniband/mlx5_1/ports/1/gids/3:0000:0000:0000:0000:0000:ffff:c0a8:0203
/sys/class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/3:ens1f0np0
/sys/class/infiniband/mlx5_2/ports/1/link_layer:Ethernet
/sys/class/infiniband/mlx5_2/ports/1/state:1: DOWN
"""


def test_discovery_finds_roce_gid_index_and_ipoib_address() -> None:
    found = discovery.candidates("h1", "172.16.0.1", DISCOVERY)
    roce = next(c for c in found if c.link_layer == "Ethernet")
    ib = next(c for c in found if c.link_layer == "InfiniBand")
    assert (roce.device, roce.gid_index, roce.fabric_address, roce.rate_gbps) == ("mlx5_1", 3, "192.168.2.3", 200.0)
    assert (ib.device, ib.gid_index, ib.fabric_address, ib.address_source) == ("mlx5_0", None, "10.9.0.7", "netdev")
    assert len(found) == 2  # the DOWN port is not offered
    chosen = discovery.choose({"h1": found, "h2": [ib]})
    assert chosen["h1"].link_layer == chosen["h2"].link_layer == "InfiniBand"  # the layer both hosts have
    assert isinstance(discovery.choose({"h1": [ib]}, device="mlx5_9")["h1"], str)


def test_perftest_commands_are_bounded_and_validated() -> None:
    server = commands.perftest_command("ib_write_bw", "mlx5_1", 1, 3, 18515, 25, duration_s=10, size_bytes=65536, qps=2)
    assert "exec timeout -k 2 25 ib_write_bw -d mlx5_1 -i 1 -x 3 -F --report_gbits -D 10" in server
    assert server.endswith("-s 65536 -p 18515")
    client = commands.perftest_command("ib_send_lat", "mlx5_0", 1, None, 18516, 20, iterations=1000,
                                      server_address="10.0.0.1")
    assert " -x " not in client and "-n 1000" in client and client.endswith("-p 18516 10.0.0.1")
    for bad in ({"tool": "rm"}, {"device": "mlx5_0;reboot"}, {"server_address": "$(reboot)"}):
        args = {"tool": "ib_write_bw", "device": "mlx5_0", "server_address": "10.0.0.1", **bad}
        with pytest.raises(ValueError):
            commands.perftest_command(args["tool"], args["device"], 1, None, 18515, 10,
                                     server_address=args["server_address"])
    assert commands.perftest_kill_command(4242).count("4242") == 2
