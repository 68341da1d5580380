"""perfquery, sysfs_counters and dcqcn_sysfs over every real sample in ../shared/real-outputs/host.

The expected values were read by eye from the sample files. PSI has no real sample (its golden pairs cover it).
"""

from __future__ import annotations

import pytest

from tests.helpers import one, pick, real_output, real_output_files, run

PERFQUERY = ("host", "perfquery")
SYSFS = ("host", "sysfs_infiniband")
DCQCN = ("host", "sysfs_ecn_dcqcn")


def _names(folder: tuple[str, str]) -> list[str]:
    try:
        return [p.name for p in real_output_files(*folder)]
    except pytest.skip.Exception:
        return []


@pytest.mark.parametrize(
    ("parser", "folder"), [("perfquery", PERFQUERY), ("sysfs_counters", SYSFS), ("dcqcn_sysfs", DCQCN)]
)
def test_every_real_sample_parses_with_crlf_too(parser: str, folder: tuple[str, str]) -> None:
    for path in real_output_files(*folder):
        text = path.read_text(encoding="utf-8")
        samples = run(parser, text)
        assert samples, path.name
        assert not pick(samples, metric="tool_error"), path.name
        assert run(parser, text.replace("\n", "\r\n")) == samples, path.name


def _perfquery(name: str):
    return run("perfquery", real_output(*PERFQUERY, name))


def test_perfquery_extended_two_ports() -> None:
    samples = _perfquery("treydock-ext-2port__1.txt")
    assert {s.entity for s in samples} == {"lid1719/1", "lid1719/2"}
    assert len(samples) == 44  # 25 lines per block minus PortSelect, CounterSelect, CounterSelect2
    assert one(samples, "lid1719/1", "port_xmit_wait").value == 22730501
    assert one(samples, "lid1719/2", "port_xmit_wait").value == 36510964
    xmit = one(samples, "lid1719/1", "port_xmit_data_bytes")
    assert xmit.value == 36298026860928 * 4 and isinstance(xmit.value, int)
    assert xmit.raw_key == "PortXmitData"
    assert one(samples, "lid1719/1", "port_multicast_rcv_packets").value == 5584846741
    assert one(samples, "lid1719/2", "port_multicast_xmit_packets").value == 0
    assert not pick(samples, metric="counter_saturated")


def test_perfquery_extended_with_errors() -> None:
    samples = _perfquery("treydock-ext-errors__2.txt")
    assert {s.entity for s in samples} == {"lid2052/1"}
    assert one(samples, metric="link_downed").value == 1
    assert one(samples, metric="port_rcv_switch_relay_errors").value == 7
    assert one(samples, metric="port_xmit_discards").value == 20046
    assert one(samples, metric="port_xmit_wait").value == 41864608
    assert one(samples, metric="port_rcv_data_bytes").value == 178762341961629 * 4
    assert one(samples, metric="qp1_dropped").value == 0


def test_perfquery_other_capmask() -> None:
    samples = _perfquery("treydock-ext-capmask5A00__3.txt")
    assert {s.entity for s in samples} == {"lid133/1"}
    assert one(samples, metric="port_xmit_wait").value == 0
    assert one(samples, metric="port_multicast_rcv_packets").value == 3732373137
    assert one(samples, metric="port_unicast_xmit_packets").value == 96916572630


def test_perfquery_rcv_error_details() -> None:
    samples = _perfquery("treydock-rcverrdetails__4.txt")
    assert [s.metric for s in samples] == [
        "port_local_physical_errors",
        "port_malformed_packet_errors",
        "port_buffer_overrun_errors",
        "port_dlid_mapping_errors",
        "port_vl_mapping_errors",
        "port_looping_errors",
    ]
    assert {s.entity for s in samples} == {"lid1719/1"}
    assert all(s.value == 0 for s in samples)


def _sysfs(name: str):
    return run("sysfs_counters", real_output(*SYSFS, name))


def test_sysfs_h100_node() -> None:
    samples = _sysfs("gpud-h100-8x-ib-plus-bond__2.txt")
    ib = [f"mlx5_{i}/1" for i in (0, 1, 4, 5, 6, 7, 8, 9)]
    assert {s.entity for s in pick(samples, metric="port_state")} == {*ib, "mlx5_bond_0/1"}
    assert {s.text for s in pick(samples, metric="port_state")} == {"Active"}
    assert {s.text for s in pick(samples, metric="phys_state")} == {"LinkUp"}
    for entity in ib:
        assert one(samples, entity, "link_rate_gbps").value == 400
        assert one(samples, entity, "link_width").text == "4X"
        assert one(samples, entity, "link_layer").text == "InfiniBand"
    assert one(samples, "mlx5_bond_0/1", "link_rate_gbps").value == 200
    assert one(samples, "mlx5_bond_0/1", "link_width_lanes").value == 2
    assert one(samples, "mlx5_bond_0/1", "link_speed").text == "NDR"
    assert one(samples, "mlx5_bond_0/1", "link_layer").text == "Ethernet"
    assert one(samples, "mlx5_bond_0", "fw_version").text == "32.38.3056"
    assert one(samples, "mlx5_bond_0", "ca_type").text == "MT41692"
    assert one(samples, "mlx5_4", "fw_version").text == "28.41.1000"
    assert one(samples, "mlx5_0/1", "port_xmit_wait").value == 2489603687
    assert one(samples, "mlx5_0/1", "port_rcv_errors").value == 14
    assert one(samples, "mlx5_0/1", "port_rcv_data_bytes").value == 230539874932483 * 4
    assert one(samples, "mlx5_0/1", "roce_adp_retrans").value == 3
    # link_downed pinned at 255 on mlx5_1 only; the 4-bit excessive_buffer_overrun_errors at 15 everywhere.
    assert one(samples, "mlx5_1/1", "link_downed").value == 255
    saturated = pick(samples, metric="counter_saturated")
    assert [(s.entity, s.text) for s in saturated if s.text == "link_downed"] == [("mlx5_1/1", "link_downed")]
    assert len([s for s in saturated if s.text == "excessive_buffer_overrun_errors"]) == 9
    # hw_counters without a canonical metric (rx_dct_connect, lifespan ...) are skipped on purpose.
    assert not pick(samples, raw_key="rx_dct_connect")


def test_sysfs_hfi1_mlx4_mlx5_fixture() -> None:
    samples = _sysfs("procfs-hfi1-mlx4-mlx5__1.txt")
    assert {s.entity for s in pick(samples, metric="port_state")} == {
        "hfi1_0/1",
        "mlx4_0/1",
        "mlx4_0/2",
        "mlx5_0/1",
    }
    assert one(samples, "hfi1_0", "board_id").text.startswith("HPE 100Gb 1-port OP101")
    assert one(samples, "mlx4_0/1", "port_xmit_wait").value == 3599
    assert one(samples, "mlx4_0/2", "port_xmit_wait").value == 3846
    assert one(samples, "mlx4_0/2", "link_speed").text == "QDR"
    # Width degradation: one lane of four left.
    assert one(samples, "mlx5_0/1", "link_rate_gbps").value == 25
    assert one(samples, "mlx5_0/1", "link_width_lanes").value == 1
    # The quirk "4: ACTIVE" in phys_state is mapped on its number (4 = PortConfigurationTraining).
    assert one(samples, "mlx5_0/1", "phys_state").text == "PortConfigurationTraining"
    assert one(samples, "mlx5_0/1", "port_state").text == "Active"
    assert one(samples, "mlx5_0/1", "local_ack_timeout_err").value == 131
    assert one(samples, "mlx5_0/1", "out_of_sequence").value == 1
    assert one(samples, "mlx5_0/1", "req_cqe_error").value == 3481
    assert one(samples, "mlx5_0/1", "resp_cqe_error").value == 8109
    assert one(samples, "mlx5_0/1", "duplicate_request").value == 41
    assert one(samples, "mlx5_0/1", "port_xmit_data_bytes").value == 2880761508848 * 4
    assert one(samples, "mlx5_0", "node_guid").text == "0a7f:bc12:45ef:d23b"
    assert not pick(samples, metric="counter_saturated")


def test_dcqcn_eth0_knobs() -> None:
    samples = run("dcqcn_sysfs", real_output(*DCQCN, "procfs-eth0-ecn__1.txt"))
    assert len(samples) == 35 and {s.entity for s in samples} == {"eth0"}
    np_enabled = {s.priority: s.value for s in pick(samples, metric="roce_np_enabled")}
    rp_enabled = {s.priority: s.value for s in pick(samples, metric="roce_rp_enabled")}
    assert np_enabled == {0: 1, 1: 1, 2: 0, 3: 1, 4: 1, 5: 0, 6: 1, 7: 1}
    assert rp_enabled == {0: 1, 1: 1, 2: 0, 3: 1, 4: 1, 5: 0, 6: 1, 7: 0}
    assert one(samples, metric="cnp_dscp").value == 48
    assert one(samples, metric="cnp_802p_prio").value == 6
    params = {s.raw_key: s.value for s in pick(samples, metric="dcqcn_param")}
    assert params["roce_rp/rpg_time_reset"] == 300
    assert params["roce_rp/rate_to_set_on_first_cnp"] == 10
    assert params["roce_rp/dce_tcp_g"] == 1019
    assert params["roce_np/min_time_between_cnps"] == 4
    assert len(params) == 17


def test_real_corpus_is_complete() -> None:
    # A new sample in these folders is run by the CRLF test above; this pins the ones asserted here by name.
    names = {*_names(PERFQUERY), *_names(SYSFS), *_names(DCQCN)}
    if not names:
        pytest.skip("real-output corpus not present")
    assert {
        "treydock-ext-2port__1.txt",
        "treydock-ext-errors__2.txt",
        "treydock-ext-capmask5A00__3.txt",
        "treydock-rcverrdetails__4.txt",
        "gpud-h100-8x-ib-plus-bond__2.txt",
        "procfs-hfi1-mlx4-mlx5__1.txt",
        "procfs-eth0-ecn__1.txt",
    } <= names
