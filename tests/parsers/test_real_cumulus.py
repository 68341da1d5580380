"""The Cumulus NVUE parsers over every real sample in real-outputs/switch/cumulus, plus lldpctl edge cases.

Values asserted here were read by eye from the sample files (CumulusNetworks/docs captures, see SOURCES.md).
"""

from __future__ import annotations

import pytest

from rdmatool.errors import ParseError
from tests.helpers import one, pick, real_output, real_output_files, run

FOLDER = ("switch", "cumulus")
# Every file of the folder must be claimed here: an unmapped sample fails the test below.
PARSER_OF = {
    "counters_drops": "cumulus_counters_drops",
    "counters_qos": "cumulus_counters_qos",
    "egress_queue_stats": "cumulus_egress_queue",
    "ingress_buffer_stats": "cumulus_ingress_buffer",
    "nv_show_interface_qos_roce_counters": "cumulus_roce_counters",
    "nv_show_interface_qos_roce_status": "cumulus_roce_status",
    "nv_show_qos_roce": "cumulus_roce",
    "pfc_stats": "cumulus_pfc_stats",
    "port_stats": "cumulus_port_stats",
}


def _parse(stem: str):
    return run(PARSER_OF[stem], real_output(*FOLDER, f"{stem}__1.txt"))


def test_every_real_sample_is_mapped_and_parses() -> None:
    for path in real_output_files(*FOLDER):
        stem = path.stem.rsplit("__", 1)[0]
        assert stem in PARSER_OF, f"{path.name} is not mapped to a parser"
        samples = run(PARSER_OF[stem], path.read_text(encoding="utf-8"))
        assert samples, path.name
        assert not pick(samples, metric="tool_error"), path.name


def test_pfc_stats_eight_zero_priorities() -> None:
    samples = _parse("pfc_stats")
    assert len(samples) == 32
    assert sorted({s.priority for s in samples}) == list(range(8))
    assert one(samples, "port", "rx_pause_duration_us", priority=3).value == 0
    assert {s.value for s in samples} == {0}


def test_egress_queue_per_traffic_class() -> None:
    samples = _parse("egress_queue_stats")
    assert len(pick(samples, metric="tx_packets")) == 8
    assert one(samples, "port", "queue_drop_bytes", priority=7).value == 0
    assert one(samples, "port", "wred_drops", priority=3).raw_key == "wred-discards"


def test_ingress_buffer_per_priority_group() -> None:
    samples = _parse("ingress_buffer_stats")
    assert len(samples) == 24
    assert one(samples, "port", "pg_shared_drop_bytes", priority=7).value == 0


def test_port_stats_skips_receive_na() -> None:
    samples = _parse("port_stats")
    assert [(s.metric, s.value) for s in samples] == [
        ("ecn_marked_packets", 0),
        ("mc_buffer_discards", 0),
        ("rx_pause_frames", 0),
        ("tx_pause_frames", 0),
    ]


def test_counters_drops_na_cells() -> None:
    samples = _parse("counters_drops")
    assert {s.metric for s in samples} == {
        "acl_drops", "rx_discards", "non_queue_drops", "queue_drops", "rx_drops_total", "tx_drops_total"
    }
    assert one(samples, "port", "queue_drops").raw_key == "Queue Drops"


def test_counters_qos_three_sections_of_the_docs_copy() -> None:
    samples = _parse("counters_qos")
    assert len(pick(samples, metric="tx_bytes")) == 8  # Egress Queue Statistics
    assert len(pick(samples, metric="tx_pause_duration_us")) == 8  # PFC Statistics
    assert one(samples, "port", "ecn_marked_packets").raw_key == "ecn-marked-packets"  # lower-case port section
    assert one(samples, "port", "rx_pause_frames", priority=None).value == 0
    assert not pick(samples, metric="rx_packets")  # the docs' copy has no ingress section


def test_roce_counters_pfc_not_engaging() -> None:
    samples = _parse("nv_show_interface_qos_roce_counters")
    assert one(samples, "port", "ecn_marked_packets").value == 693777677344
    assert one(samples, "port", "roce_tx_buffer_discards").value == 663060754115
    assert one(samples, "port", "roce_tx_packets").value == 803785675319
    assert one(samples, "port", "non_roce_rx_buffer_discards").value == 55
    assert one(samples, "port", "non_roce_rx_packets").value == 462975
    assert one(samples, "port", "rx_pause_frames").value == 0
    assert one(samples, "port", "tx_pause_frames").value == 0
    assert one(samples, "port", "roce_tx_pool_usage_bytes").value == round(7.29 * 1024**2)
    assert one(samples, "port", "roce_tx_bytes").value == round(92824.38 * 1024**3)
    assert one(samples, "port", "cnp_tx_pool_max_usage_bytes").value == round(16.02 * 1024**2)
    assert len(samples) == 33


def test_roce_status_lossless_port() -> None:
    samples = _parse("nv_show_interface_qos_roce_status")
    assert one(samples, "port", "roce_mode").text == "lossless"
    assert one(samples, "port", "trust_mode").text == "pcp,dscp"
    assert one(samples, "port", "congestion_mode").text == "ecn, absolute"
    assert [s.value for s in pick(samples, "port", "pfc_enabled")] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert [s.priority for s in pick(samples, "port", "ecn_enabled", value=1)] == [0, 3]
    assert one(samples, "port", "ecn_min_threshold_bytes", priority=3).value == 153 * 1024
    assert one(samples, "port", "ecn_max_threshold_bytes", priority=3).value == round(1.43 * 1024**2)
    assert one(samples, "port", "dscp_to_priority", text="26").value == 3
    assert one(samples, "port", "dscp_to_priority", text="48").raw_key == "cnp.dscp48"
    assert one(samples, "port", "tc_tsa", priority=6).text == "strict"
    assert one(samples, "port", "tc_bandwidth_pct", priority=3).value == 50
    assert one(samples, "roce-reserved-egress", "buffer_pool_usage_bytes").value == round(7.29 * 1024**2)
    assert one(samples, "roce-reserved-egress", "buffer_pool_max_usage_bytes").value == round(13.47 * 1024**2)
    assert one(samples, "roce-reserved-egress", "buffer_pool_size_bytes").text == "inf"
    assert one(samples, "roce-reserved-ingress", "buffer_pool_usage_bytes").value == round(7.30 * 1024**2)
    assert len(pick(samples, metric="buffer_pool_size_bytes")) == 4


def test_global_roce_config() -> None:
    samples = _parse("nv_show_qos_roce")
    assert one(samples, "qos", "roce_mode").text == "lossless-single-ipool"
    assert one(samples, "qos", "roce_enabled").value == 1
    assert one(samples, "qos", "pfc_enabled", priority=3).value == 1
    assert one(samples, "qos", "cable_length_m").value == 100
    assert one(samples, "qos", "ecn_min_threshold_bytes", priority=3).value == round(146.48 * 1024)
    assert one(samples, "qos", "ecn_max_probability_pct", priority=0).value == 100
    assert len(pick(samples, "qos", "dscp_to_priority")) == 64
    assert one(samples, "qos", "dscp_to_priority", text="26").value == 3
    assert one(samples, "qos", "priority_to_tc", priority=4).value == 0
    assert one(samples, "qos", "tc_tsa", priority=6).text == "strict"
    assert one(samples, "roce-reserved-egress", "buffer_pool_size_pct").text == "inf"
    assert one(samples, "lossy-default-ingress", "buffer_pool_size_pct").value == 100


# --- format variants the corpus does not show ------------------------------------------------------------------


def test_crlf_tabs_and_thousands_separators() -> None:
    text = "\r\n".join(
        [
            "\tswitch-priority  rx-pause-frames  rx-pause-duration  tx-pause-frames  tx-pause-duration",
            "\t---------------  ---------------  -----------------  ---------------  -----------------",
            "\t3\t1,234\t5\tN/A\t0",
        ]
    )
    samples = run("cumulus_pfc_stats", text + "\r\n")
    assert [(s.metric, s.value) for s in samples] == [
        ("rx_pause_frames", 1234),
        ("rx_pause_duration_us", 5),
        ("tx_pause_duration_us", 0),
    ]


def test_crlf_tree() -> None:
    text = real_output(*FOLDER, "nv_show_interface_qos_roce_status__1.txt").replace("\n", "\r\n")
    assert one(run("cumulus_roce_status", text), "port", "roce_mode").text == "lossless"


def test_partial_output_then_tool_error_keeps_samples() -> None:
    text = "Counter  Receive  Transmit\n-------  -------  --------\nPause Frames  3  4\nError: Connection reset\n"
    samples = run("cumulus_port_stats", text)
    assert [s.metric for s in samples] == ["rx_pause_frames", "tx_pause_frames", "tool_error"]
    assert samples[-1].text == "Error: Connection reset"


def test_empty_output_is_no_samples() -> None:
    assert run("cumulus_pfc_stats", "") == []
    assert run("lldpctl", "") == []


def test_lldpctl_json_without_neighbours() -> None:
    assert run("lldpctl", '{\n  "lldp": {\n\n  }\n}\n') == []


def test_lldpctl_vlan_subinterface_and_missing_fields() -> None:
    samples = run("lldpctl", "lldp.bond0.100.via=LLDP\nlldp.bond0.100.port.descr=p1\n")
    assert [(s.entity, s.text) for s in samples] == [("bond0.100", "|p1")]


@pytest.mark.parametrize(
    ("name", "text", "line_no"),
    [
        ("cumulus_roce_counters", '{"tx-stats": {"tx-ecn-stats": [1]}}', 1),
        ("cumulus_pfc_stats", '{\n "3": {"rx-pause-frames": "x"}\n}', 2),
        ("lldpctl", '{"lldp": {"chassis": {}}}', 1),
        ("cumulus_egress_queue", "{\n  \"3\": \n", 2),
    ],
)
def test_bad_json_is_a_located_parse_error(name: str, text: str, line_no: int) -> None:
    with pytest.raises(ParseError) as caught:
        run(name, text)
    assert caught.value.line_no == line_no
