"""perftest and nccl_tests over every real capture in ../shared/real-outputs/host (skipped when the corpus is absent).

The expected numbers were read by eye from the files; bandwidths are converted the way the parsers document it
(perftest MB/sec = 2^20 B/s, nccl-tests GB/s x 8).
"""

from __future__ import annotations

import pytest

from rdmatool.model import Sample
from tests.helpers import one, pick, real_output, real_output_files, run

PERFTEST_FOLDERS = ("ib_write_bw", "ib_read_lat")
NCCL_FOLDERS = ("nccl_all_reduce_perf",)


def _mib_to_gbps(mib_per_s: float) -> float:
    return mib_per_s * 1048576 * 8 / 1e9


def _check_common(name: str, text: str) -> list[Sample]:
    """Parse a capture; CRLF endings and a provenance comment in front must not change a single sample."""
    samples = run(name, text)
    assert samples
    assert not pick(samples, metric="tool_error")
    assert run(name, text.replace("\n", "\r\n")) == samples
    assert run(name, "# collected from a public source, see SOURCES.md\n" + text) == samples
    return samples


@pytest.mark.parametrize("folder", PERFTEST_FOLDERS)
def test_every_perftest_capture_parses_to_its_test(folder: str) -> None:
    for path in real_output_files("host", folder):
        samples = _check_common("perftest", path.read_text(encoding="utf-8"))
        assert {s.entity for s in samples if s.metric != "parse_skipped_lines"} == {folder}, path.name
        assert pick(samples, metric="iterations"), path.name
        # interleaved server/client output must not duplicate facts or rows
        keys = [(s.entity, s.metric, s.size_bytes) for s in samples]
        assert len(keys) == len(set(keys)), path.name


@pytest.mark.parametrize("folder", NCCL_FOLDERS)
def test_every_nccl_capture_parses(folder: str) -> None:
    for path in real_output_files("host", folder):
        samples = _check_common("nccl_tests", path.read_text(encoding="utf-8"))
        assert one(samples, "nccl", "avg_busbw_gbps").value is not None, path.name
        assert {s.entity for s in samples if s.metric != "parse_skipped_lines"} == {"out_of_place", "in_place", "nccl"}, path.name


def test_superbench_write_bw_8m_loopback() -> None:
    samples = run("perftest", real_output("host", "ib_write_bw", "superbench-loopback-8M__1.txt"))
    assert one(samples, metric="perftest_test").text == "RDMA_Write BW Test"
    assert one(samples, metric="perftest_device").text == "ib0"
    assert one(samples, metric="perftest_qps").value == 1
    assert one(samples, metric="perftest_connection").text == "RC"
    assert one(samples, metric="perftest_mtu").value == 4096
    assert one(samples, metric="perftest_link_type").text == "IB"
    assert one(samples, metric="perftest_data_exchange").text == "Ethernet"
    assert not pick(samples, metric="perftest_gid_index")  # IB: perftest prints no GID index
    # the server and the client both print the 8 MiB row: it is emitted once
    assert one(samples, metric="iterations", size_bytes=8388608).value == 20000
    avg = one(samples, metric="bw_avg_gbps", size_bytes=8388608)
    assert avg.raw_key == "BW average[MB/sec]"
    assert avg.value == pytest.approx(_mib_to_gbps(24056.72), abs=1e-6)
    assert avg.value == pytest.approx(201.80, abs=0.01)  # loopback is not bound by the wire rate
    assert one(samples, metric="bw_peak_gbps").value == pytest.approx(_mib_to_gbps(24056.74), abs=1e-6)
    assert one(samples, metric="msg_rate_mpps").value == 0.003007


def test_superbench_write_bw_all_sizes_sweep() -> None:
    samples = run("perftest", real_output("host", "ib_write_bw", "superbench-loopback-allsizes__1.txt"))
    sizes = [s.size_bytes for s in pick(samples, metric="bw_avg_gbps")]
    assert sizes == [2**n for n in range(1, 24)]  # 2 B .. 8 MiB, the repeated last row dropped
    assert {s.value for s in pick(samples, metric="iterations")} == {2000}
    assert one(samples, metric="bw_avg_gbps", size_bytes=2).value == pytest.approx(
        _mib_to_gbps(5.30), abs=1e-6
    )
    assert one(samples, metric="bw_avg_gbps", size_bytes=4096).value == pytest.approx(
        _mib_to_gbps(9948.41), abs=1e-6
    )
    assert one(samples, metric="bw_peak_gbps", size_bytes=16384).value == pytest.approx(
        _mib_to_gbps(23115.27), abs=1e-6
    )
    assert one(samples, metric="msg_rate_mpps", size_bytes=8192).value == 1.636168
    assert one(samples, metric="bw_avg_gbps", size_bytes=8388608).value == pytest.approx(194.96, abs=0.01)
    assert one(samples, metric="perftest_device").text == "ib0"


@pytest.mark.parametrize(
    ("name", "device", "link", "mtu", "gid_index", "latencies"),
    [
        # t_min, t_max, t_typical, t_avg, t_stdev, 99%, 99.9% as printed for the 2-byte row
        (
            "spiderpool-roce-macvlan__1.txt",
            "mlx5_0",
            "Ethernet",
            1024,
            12,
            (6.88, 16.81, 7.04, 7.06, 0.31, 7.38, 16.81),
        ),
        (
            "spiderpool-roce-sriov-vf__2.txt",
            "mlx5_5",
            "Ethernet",
            1024,
            2,
            (6.66, 20.37, 6.74, 6.82, 0.78, 7.15, 20.37),
        ),
        ("wiki-mlx4-ib-fdr__3.txt", "mlx4_0", "IB", 2048, None, (1.76, 6.12, 1.79, 1.80, 0.06, 1.88, 6.12)),
    ],
)
def test_read_lat_captures(name, device, link, mtu, gid_index, latencies) -> None:
    samples = run("perftest", real_output("host", "ib_read_lat", name))
    assert one(samples, metric="perftest_test").text == "RDMA_Read Latency Test"
    assert one(samples, metric="perftest_device").text == device
    assert one(samples, metric="perftest_link_type").text == link
    assert one(samples, metric="perftest_mtu").value == mtu
    gid = pick(samples, metric="perftest_gid_index")
    assert [s.value for s in gid] == ([] if gid_index is None else [gid_index])
    assert one(samples, metric="iterations", size_bytes=2).value == 1000
    metrics = (
        "lat_min_us",
        "lat_max_us",
        "lat_typical_us",
        "lat_avg_us",
        "lat_stdev_us",
        "lat_p99_us",
        "lat_p999_us",
    )
    got = tuple(one(samples, "ib_read_lat", metric, size_bytes=2).value for metric in metrics)
    assert got == latencies


def test_superbench_all_reduce_8x_a100() -> None:
    samples = run(
        "nccl_tests", real_output("host", "nccl_all_reduce_perf", "superbench-allreduce-8xA100__1.txt")
    )
    out_of_place = pick(samples, "out_of_place", "busbw_gbps")
    # 0 B is printed twice, then 4 B .. 8 GiB doubling: 34 rows, each with an in-place half
    assert [s.size_bytes for s in out_of_place] == [0, 0] + [4 * 2**n for n in range(32)]
    assert len(pick(samples, "in_place", "busbw_gbps")) == 34
    largest = 8589934592
    assert one(samples, "out_of_place", "busbw_gbps", size_bytes=largest).value == pytest.approx(235.26 * 8)
    assert one(samples, "in_place", "busbw_gbps", size_bytes=largest).value == pytest.approx(235.03 * 8)
    assert one(samples, "out_of_place", "algbw_gbps", size_bytes=largest).value == pytest.approx(134.44 * 8)
    assert one(samples, "out_of_place", "nccl_time_us", size_bytes=largest).value == 63896
    assert one(samples, "in_place", "nccl_time_us", size_bytes=1073741824).value == 8176.5
    assert one(samples, "in_place", "nccl_time_us", size_bytes=128).value == 43.78
    # validation was off (-c 0): the old `error` column reads N/A
    errors = pick(samples, metric="nccl_max_error")
    assert len(errors) == 68 and {s.value for s in errors} == {None}
    assert one(samples, "nccl", "nccl_out_of_bounds").value == 0
    assert one(samples, "nccl", "avg_busbw_gbps").value == pytest.approx(68.4048 * 8)
