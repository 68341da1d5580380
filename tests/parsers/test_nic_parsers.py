"""Behaviour of the NIC-side host parsers beyond the golden pairs: precision, duplicate resolution, noise lines."""

from __future__ import annotations

import pytest

from rdmatool.errors import ParseError
from tests.helpers import one, pick, run


def test_ethtool_stats_keeps_64_bit_counters_exact() -> None:
    samples = run("ethtool_stats", "NIC statistics:\n     rx_bytes_phy: 18446744073709551615\n")
    assert one(samples, "netdev", "rx_bytes").value == 2**64 - 1


def test_ethtool_stats_prefers_the_wire_counter_whatever_the_order() -> None:
    text = "NIC statistics:\n     rx_packets_phy: 900\n     rx_packets: 12\n     rx_prio3_buf_discard: 4\n"
    samples = run("ethtool_stats", text)
    assert one(samples, "netdev", "rx_packets", priority=None).raw_key == "rx_packets_phy"
    assert one(samples, "netdev", "rx_discards", priority=3).raw_key == "rx_prio3_buf_discard"


def test_ethtool_stats_skips_provenance_comment_and_prompt() -> None:
    text = (
        "# collected from host a\n[root@a ~]# ethtool -S ens1f0np0\nNIC statistics:\n     rx_prio3_pause: 5\n"
    )
    assert one(run("ethtool_stats", text), "netdev", "rx_pause_frames", priority=3).value == 5


def test_ethtool_stats_rejects_a_float_counter() -> None:
    with pytest.raises(ParseError) as caught:
        run("ethtool_stats", "NIC statistics:\n     rx_prio3_pause: 1.5\n")
    assert caught.value.line_no == 2


def test_mlxlink_json_accepts_plain_lane_lists_and_numbers() -> None:
    text = (
        '{"result": {"output": {"Physical Counters and BER Info": '
        '{"Raw Physical Errors Per Lane": [5, 0], "Effective Physical Errors": 7}}}}'
    )
    samples = run("mlxlink", text)
    assert one(samples, "port/lane0", "raw_physical_errors").value == 5
    assert one(samples, "port", "effective_physical_errors").value == 7


def test_mlxlink_na_ber_is_none() -> None:
    samples = run("mlxlink", "Effective Physical BER          : N/A\n")
    assert one(samples, "port", "effective_ber").value is None


def test_mlnx_qos_wrapped_dscp_rows_all_count() -> None:
    text = "Priority trust state: dscp\ndscp2prio mapping:\n\tprio:0 dscp:07,06,05,04,03,02,01,00,\n\tprio:0 dscp:26,\n"
    samples = run("mlnx_qos", text)
    assert one(samples, "netdev", "dscp_to_priority", raw_key="dscp26").value == 0
    assert len(pick(samples, metric="dscp_to_priority")) == 9


def test_fw_query_unnamed_block_keeps_placeholder_entity() -> None:
    text = "Device #1:\n----------\n  Device Type:  ConnectX5\n  Versions:  Current  Available\n     FW  16.35.2000  N/A\n"
    samples = run("fw_query", text)
    assert one(samples, "device", "fw_version").text == "16.35.2000"
    assert not pick(samples, metric="fw_version_available")
