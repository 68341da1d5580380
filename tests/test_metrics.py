from __future__ import annotations

import re
from pathlib import Path

from rdmatool import metrics
from rdmatool.model import MetricKind

DESIGN_NAMES = """
port_state phys_state link_layer link_rate_gbps link_width active_mtu fw_version board_id
symbol_errors link_error_recovery link_downed port_rcv_errors port_rcv_remote_physical_errors
port_rcv_switch_relay_errors port_xmit_discards port_xmit_constraint_errors port_rcv_constraint_errors
local_link_integrity_errors excessive_buffer_overrun_errors vl15_dropped port_xmit_wait port_xmit_data_bytes
port_rcv_data_bytes port_xmit_packets port_rcv_packets rx_pause_frames tx_pause_frames rx_pause_duration_us
tx_pause_duration_us rx_discards rx_out_of_buffer rx_crc_errors ecn_marked_packets cnp_sent cnp_handled cnp_ignored
out_of_sequence packet_seq_err local_ack_timeout_err implied_nak_seq_err rnr_nak_retry_err fec_corrected_blocks
fec_uncorrectable_blocks queue_drops pfc_watchdog_storms rx_bytes tx_bytes rx_packets tx_packets load1
psi_io_some_avg10 psi_cpu_some_avg10 pfc_enabled trust_mode ecn_min_threshold_bytes ecn_max_threshold_bytes
ecn_max_probability_pct roce_np_enabled roce_rp_enabled roce_tos bw_avg_gbps bw_peak_gbps msg_rate_mpps lat_min_us
lat_typical_us lat_avg_us lat_max_us lat_stdev_us lat_p99_us lat_p999_us algbw_gbps busbw_gbps avg_busbw_gbps
tool_error lldp_neighbor
""".split()  # noqa: SIM905 - the design guide's list, pasted as written


def test_glossary_covers_the_design_vocabulary() -> None:
    missing = [name for name in DESIGN_NAMES if name not in metrics.GLOSSARY]
    assert not missing


def test_glossary_entries_are_well_formed() -> None:
    for name, metric in metrics.GLOSSARY.items():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name), name
        assert not name.endswith(metrics.RATE_SUFFIX), f"{name}: rates are derived, not listed"
        assert isinstance(metric.kind, MetricKind)
        assert metric.meaning.strip(), f"{name} has no meaning"


def test_rate_names_are_known_only_for_counters() -> None:
    assert metrics.is_known("symbol_errors_per_s")
    assert not metrics.is_known("port_state_per_s")
    assert not metrics.is_known("no_such_metric")


def test_every_metric_a_parser_module_names_is_in_the_glossary() -> None:
    # Static guard beside the dynamic golden/hypothesis ones: a quoted metric name in a parser that is not in the
    # glossary is almost always a typo that the fixtures happen not to reach.
    root = Path(metrics.__file__).parent / "parsers"
    pattern = re.compile(r"""metric\s*=\s*["']([a-z0-9_]+)["']""")
    unknown = {
        (path.name, name)
        for path in root.rglob("*.py")
        for name in pattern.findall(path.read_text())
        if not metrics.is_known(name)
    }
    assert not unknown
