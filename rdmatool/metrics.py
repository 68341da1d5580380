"""The one glossary of canonical metric names: unit, kind (counter | gauge | state) and a one-line meaning.

These names are the public contract of every `--json` output and of the bundle analysis: extend freely, never
rename. Vendor names map onto them in the parsers and survive only as a sample's `raw_key`. A test fails when any
parser emits a metric that is not listed here.

A rate derived from a counter is named `<metric>_per_s` (see `rate_name`); those names are implied, not listed.
"""

from __future__ import annotations

from dataclasses import dataclass

from rdmatool.model import MetricKind

COUNTER, GAUGE, STATE = MetricKind.COUNTER, MetricKind.GAUGE, MetricKind.STATE


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    kind: MetricKind
    meaning: str


_DEFINITIONS: list[tuple[str, str, MetricKind, str]] = [
    # --- port and device state -------------------------------------------------------------------------------
    ("port_state", "", STATE, "logical port state: Down, Initializing, Armed, Active"),
    ("phys_state", "", STATE, "physical port state: Polling, Disabled, LinkUp, LinkErrorRecovery ..."),
    ("link_layer", "", STATE, "InfiniBand or Ethernet"),
    ("link_rate_gbps", "Gb/s", GAUGE, "negotiated port rate (width x lane speed); meaningless when not Active"),
    ("link_width", "", STATE, "active link width as printed (1X, 2X, 4X, 8X)"),
    ("link_width_lanes", "lanes", GAUGE, "active link width as a lane count"),
    ("link_speed", "", STATE, "active lane speed generation or text (EDR, HDR, NDR, 25.0 Gbps ...)"),
    ("lane_speed_gbps", "Gb/s", GAUGE, "active per-lane signalling speed"),
    ("active_mtu", "bytes", GAUGE, "active (negotiated) IB/RoCE MTU"),
    ("max_mtu", "bytes", GAUGE, "largest MTU the port supports"),
    ("fw_version", "", STATE, "adapter firmware version"),
    ("board_id", "", STATE, "board identifier / PSID"),
    ("psid", "", STATE, "Mellanox/NVIDIA parameter-set identifier of the firmware image"),
    ("ca_type", "", STATE, "channel adapter model code (MT4123 = ConnectX-6 ...)"),
    ("hw_version", "", STATE, "adapter hardware revision"),
    ("num_ports", "ports", GAUGE, "number of ports on the adapter"),
    ("node_guid", "", STATE, "node GUID"),
    ("sys_image_guid", "", STATE, "system image GUID"),
    ("port_guid", "", STATE, "port GUID"),
    ("base_lid", "", GAUGE, "port base LID (0 on RoCE)"),
    ("sm_lid", "", GAUGE, "LID of the subnet manager this port sees (0: none, or RoCE)"),
    ("lmc", "", GAUGE, "LID mask control"),
    ("capability_mask", "", STATE, "port capability mask (hex)"),
    ("gid", "", STATE, "a GID table entry; priority column unused, entity carries the index"),
    ("gid_type", "", STATE, "GID type: IB/RoCE v1 or RoCE v2"),
    ("netdev", "", STATE, "the Linux network device bound to an RDMA port or GID"),
    ("ipv4_address", "", STATE, "IPv4 address carried by a RoCE GID"),
    ("transport", "", STATE, "verbs transport (InfiniBand, iWARP ...)"),
    ("vendor_part_id", "", STATE, "PCI device id of the adapter"),
    ("driver", "", STATE, "kernel driver name"),
    ("driver_version", "", STATE, "kernel driver version"),
    ("bus_info", "", STATE, "PCI address of the device"),
    ("fec_mode", "", STATE, "active forward error correction mode"),
    ("speed", "", STATE, "link speed as the tool prints it (e.g. IB-HDR, 100G)"),
    ("tool_error", "", STATE, "the tool reported its own failure; text carries its message"),
    ("counter_saturated", "", STATE, "a legacy fixed-width counter is pinned at its maximum; text names the metric"),
    # --- InfiniBand port counters (cumulative) ---------------------------------------------------------------
    ("symbol_errors", "errors", COUNTER, "minor link errors detected on a physical lane"),
    ("link_error_recovery", "events", COUNTER, "link error recovery processes completed"),
    ("link_downed", "events", COUNTER, "times the link went down (flaps)"),
    ("port_rcv_errors", "packets", COUNTER, "packets received with errors"),
    ("port_rcv_remote_physical_errors", "packets", COUNTER, "packets received marked bad upstream (EBP)"),
    ("port_rcv_switch_relay_errors", "packets", COUNTER, "packets discarded because they could not be forwarded"),
    ("port_xmit_discards", "packets", COUNTER, "outbound packets discarded (link down, congestion, HOQ timeout)"),
    ("port_xmit_constraint_errors", "packets", COUNTER, "packets not sent because of partition/constraint rules"),
    ("port_rcv_constraint_errors", "packets", COUNTER, "packets received but dropped by constraint rules"),
    ("local_link_integrity_errors", "events", COUNTER, "times local physical errors exceeded the threshold"),
    ("excessive_buffer_overrun_errors", "events", COUNTER, "consecutive flow-control update periods with overrun"),
    ("vl15_dropped", "packets", COUNTER, "subnet-management packets dropped"),
    ("qp1_dropped", "packets", COUNTER, "QP1 (GSI) packets dropped"),
    ("port_xmit_wait", "ticks", COUNTER, "ticks with data to send but no credits: congestion back-pressure"),
    ("port_xmit_data_bytes", "bytes", COUNTER, "data transmitted (converted from 4-octet words)"),
    ("port_rcv_data_bytes", "bytes", COUNTER, "data received (converted from 4-octet words)"),
    ("port_xmit_packets", "packets", COUNTER, "packets transmitted"),
    ("port_rcv_packets", "packets", COUNTER, "packets received"),
    ("port_unicast_xmit_packets", "packets", COUNTER, "unicast packets transmitted"),
    ("port_unicast_rcv_packets", "packets", COUNTER, "unicast packets received"),
    ("port_multicast_xmit_packets", "packets", COUNTER, "multicast packets transmitted"),
    ("port_multicast_rcv_packets", "packets", COUNTER, "multicast packets received"),
    ("port_local_physical_errors", "packets", COUNTER, "receive errors: local physical errors (perfquery -E)"),
    ("port_malformed_packet_errors", "packets", COUNTER, "receive errors: malformed packets (perfquery -E)"),
    ("port_buffer_overrun_errors", "packets", COUNTER, "receive errors: buffer overruns (perfquery -E)"),
    ("port_dlid_mapping_errors", "packets", COUNTER, "receive errors: DLID mapping (perfquery -E)"),
    ("port_vl_mapping_errors", "packets", COUNTER, "receive errors: VL mapping (perfquery -E)"),
    ("port_looping_errors", "packets", COUNTER, "receive errors: looping packets (perfquery -E)"),
    # --- RoCE / Ethernet (cumulative; priority column where per-priority) -------------------------------------
    ("rx_pause_frames", "frames", COUNTER, "PFC/global pause frames received (peer asks us to stop)"),
    ("tx_pause_frames", "frames", COUNTER, "PFC/global pause frames sent (we ask the peer to stop)"),
    ("rx_pause_duration_us", "us", COUNTER, "time spent paused by received pause frames"),
    ("tx_pause_duration_us", "us", COUNTER, "time we kept the peer paused"),
    ("rx_pause_transitions", "events", COUNTER, "transitions into the paused state"),
    ("rx_discards", "packets", COUNTER, "received packets dropped for lack of buffer (lossless violation on PFC prios)"),
    ("tx_discards", "packets", COUNTER, "packets dropped on transmit"),
    ("rx_out_of_buffer", "packets", COUNTER, "packets dropped because the receive queue had no descriptor"),
    ("rx_crc_errors", "packets", COUNTER, "frames received with a bad FCS"),
    ("rx_symbol_errors", "errors", COUNTER, "PHY symbol errors"),
    ("rx_corrected_bits", "bits", COUNTER, "bits corrected by FEC"),
    ("link_down_events", "events", COUNTER, "physical link-down events (Ethernet)"),
    ("ecn_marked_packets", "packets", COUNTER, "packets carrying or given the ECN CE mark"),
    ("cnp_sent", "packets", COUNTER, "congestion notification packets sent (notification point)"),
    ("cnp_handled", "packets", COUNTER, "CNPs received and acted on by the rate limiter (reaction point)"),
    ("cnp_ignored", "packets", COUNTER, "CNPs received and ignored"),
    ("out_of_sequence", "packets", COUNTER, "out-of-sequence packets received (loss upstream)"),
    ("packet_seq_err", "packets", COUNTER, "NAK sequence errors received"),
    ("local_ack_timeout_err", "events", COUNTER, "retransmission timer expiries (lost packets or ACKs)"),
    ("implied_nak_seq_err", "events", COUNTER, "implied NAK sequence errors"),
    ("rnr_nak_retry_err", "events", COUNTER, "receiver-not-ready NAK retries exhausted"),
    ("duplicate_request", "packets", COUNTER, "duplicate requests received (retransmissions arriving)"),
    ("roce_adp_retrans", "events", COUNTER, "adaptive retransmissions"),
    ("req_cqe_error", "events", COUNTER, "requester completions with error"),
    ("resp_cqe_error", "events", COUNTER, "responder completions with error"),
    ("fec_corrected_blocks", "blocks", COUNTER, "FEC blocks corrected"),
    ("fec_uncorrectable_blocks", "blocks", COUNTER, "FEC blocks that could not be corrected (post-FEC errors)"),
    ("queue_drops", "packets", COUNTER, "packets dropped in an egress queue or priority group"),
    ("pfc_watchdog_storms", "events", COUNTER, "PFC storms detected by the watchdog"),
    ("pause_storm_events", "events", COUNTER, "NIC pause-storm protection events (warning and error)"),
    ("rx_bytes", "bytes", COUNTER, "bytes received"),
    ("tx_bytes", "bytes", COUNTER, "bytes transmitted"),
    ("rx_packets", "packets", COUNTER, "packets received"),
    ("tx_packets", "packets", COUNTER, "packets transmitted"),
    # --- host load -------------------------------------------------------------------------------------------
    ("load1", "", GAUGE, "1-minute load average"),
    ("load5", "", GAUGE, "5-minute load average"),
    ("load15", "", GAUGE, "15-minute load average"),
    ("psi_io_some_avg10", "%", GAUGE, "share of time some task stalled on I/O over the last 10 s"),
    ("psi_io_full_avg10", "%", GAUGE, "share of time all tasks stalled on I/O over the last 10 s"),
    ("psi_cpu_some_avg10", "%", GAUGE, "share of time some task waited for CPU over the last 10 s"),
    # --- configuration (per priority where it applies) ---------------------------------------------------------
    ("pfc_enabled", "bool", GAUGE, "PFC enabled on this priority (1) or not (0)"),
    ("trust_mode", "", STATE, "QoS trust: pcp or dscp"),
    ("ecn_min_threshold_bytes", "bytes", GAUGE, "WRED/ECN minimum threshold (Kmin)"),
    ("ecn_max_threshold_bytes", "bytes", GAUGE, "WRED/ECN maximum threshold (Kmax)"),
    ("ecn_max_probability_pct", "%", GAUGE, "marking probability at Kmax (Pmax)"),
    ("ecn_enabled", "bool", GAUGE, "ECN marking enabled on this queue or profile"),
    ("roce_np_enabled", "bool", GAUGE, "DCQCN notification point enabled on this priority"),
    ("roce_rp_enabled", "bool", GAUGE, "DCQCN reaction point enabled on this priority"),
    ("roce_tos", "", GAUGE, "default RoCE ToS byte of RDMA-CM connections"),
    ("dcqcn_param", "", GAUGE, "a DCQCN tuning parameter; raw_key names it"),
    ("cnp_dscp", "", GAUGE, "DSCP the NIC puts on CNPs"),
    ("cnp_802p_prio", "", GAUGE, "802.1p priority the NIC puts on CNPs"),
    ("dcbx_mode", "", STATE, "who owns DCB settings: OS or firmware"),
    ("dscp_to_priority", "", GAUGE, "priority a DSCP value maps to; raw_key/text carry the DSCP"),
    ("priority_to_tc", "", GAUGE, "traffic class a priority maps to"),
    ("priority_buffer", "", GAUGE, "receive buffer a priority maps to"),
    ("rx_buffer_size_bytes", "bytes", GAUGE, "size of a receive buffer; priority column holds the buffer index"),
    ("cable_length_m", "m", GAUGE, "cable length used for headroom calculation"),
    ("tc_bandwidth_pct", "%", GAUGE, "ETS bandwidth share of a traffic class; priority column holds the TC"),
    ("tc_tsa", "", STATE, "transmission selection algorithm of a traffic class (ets, strict, vendor)"),
    ("tc_ratelimit", "", STATE, "rate limit of a traffic class"),
    ("default_priority", "", GAUGE, "priority given to untagged / unmapped traffic"),
    # --- perftest ----------------------------------------------------------------------------------------------
    ("bw_avg_gbps", "Gb/s", GAUGE, "average bandwidth (10^9 bit/s)"),
    ("bw_peak_gbps", "Gb/s", GAUGE, "peak bandwidth (10^9 bit/s)"),
    ("msg_rate_mpps", "Mpps", GAUGE, "message rate"),
    ("lat_min_us", "us", GAUGE, "minimum latency"),
    ("lat_typical_us", "us", GAUGE, "typical (median) latency"),
    ("lat_avg_us", "us", GAUGE, "average latency"),
    ("lat_max_us", "us", GAUGE, "maximum latency"),
    ("lat_stdev_us", "us", GAUGE, "latency standard deviation"),
    ("lat_p99_us", "us", GAUGE, "99th percentile latency"),
    ("lat_p999_us", "us", GAUGE, "99.9th percentile latency"),
    ("iterations", "", GAUGE, "iterations of a perftest or nccl-tests row"),
    ("perftest_device", "", STATE, "RDMA device perftest used"),
    ("perftest_link_type", "", STATE, "link type perftest reports (IB or Ethernet)"),
    ("perftest_mtu", "bytes", GAUGE, "MTU perftest used"),
    ("perftest_gid_index", "", GAUGE, "GID index perftest used"),
    ("perftest_qps", "", GAUGE, "number of queue pairs"),
    ("perftest_connection", "", STATE, "connection type (RC, UC, UD ...)"),
    ("perftest_data_exchange", "", STATE, "data exchange method (Ethernet, rdma_cm)"),
    ("perftest_test", "", STATE, "test title (RDMA_Write BW Test ...)"),
    # --- NCCL tests ----------------------------------------------------------------------------------------------
    ("algbw_gbps", "Gb/s", GAUGE, "algorithm bandwidth (converted from GB/s)"),
    ("busbw_gbps", "Gb/s", GAUGE, "bus bandwidth (converted from GB/s)"),
    ("avg_busbw_gbps", "Gb/s", GAUGE, "average bus bandwidth over all sizes (converted from GB/s)"),
    ("nccl_time_us", "us", GAUGE, "time of one collective at this size"),
    ("nccl_wrong", "", GAUGE, "values that failed validation (#wrong); > 0 is data corruption"),
    ("nccl_out_of_bounds", "", GAUGE, "out-of-bounds values reported by nccl-tests"),
    # --- host-parser additions (ibstat, ibv_devinfo, perfquery, sysfs, dcqcn) ------------------------------------
    ("psi_io_some_avg60", "%", GAUGE, "share of time some task stalled on I/O over the last 60 s"),
    ("psi_io_some_avg300", "%", GAUGE, "share of time some task stalled on I/O over the last 300 s"),
    ("psi_io_some_total_us", "us", COUNTER, "total time some task stalled on I/O (PSI some total)"),
    ("psi_io_full_avg60", "%", GAUGE, "share of time all tasks stalled on I/O over the last 60 s"),
    ("psi_io_full_avg300", "%", GAUGE, "share of time all tasks stalled on I/O over the last 300 s"),
    ("psi_io_full_total_us", "us", COUNTER, "total time all tasks stalled on I/O (PSI full total)"),
    ("psi_cpu_some_avg60", "%", GAUGE, "share of time some task waited for CPU over the last 60 s"),
    ("psi_cpu_some_avg300", "%", GAUGE, "share of time some task waited for CPU over the last 300 s"),
    ("psi_cpu_some_total_us", "us", COUNTER, "total time some task waited for CPU (PSI some total)"),
    ("psi_cpu_full_avg10", "%", GAUGE, "share of time all non-idle tasks waited for CPU over the last 10 s"),
    ("psi_cpu_full_avg60", "%", GAUGE, "share of time all non-idle tasks waited for CPU over the last 60 s"),
    ("psi_cpu_full_avg300", "%", GAUGE, "share of time all non-idle tasks waited for CPU over the last 300 s"),
    ("psi_cpu_full_total_us", "us", COUNTER, "total time all non-idle tasks waited for CPU (PSI full total)"),
    ("psi_memory_some_avg10", "%", GAUGE, "share of time some task stalled on memory over the last 10 s"),
    ("psi_memory_some_avg60", "%", GAUGE, "share of time some task stalled on memory over the last 60 s"),
    ("psi_memory_some_avg300", "%", GAUGE, "share of time some task stalled on memory over the last 300 s"),
    ("psi_memory_some_total_us", "us", COUNTER, "total time some task stalled on memory (PSI some total)"),
    ("psi_memory_full_avg10", "%", GAUGE, "share of time all tasks stalled on memory over the last 10 s"),
    ("psi_memory_full_avg60", "%", GAUGE, "share of time all tasks stalled on memory over the last 60 s"),
    ("psi_memory_full_avg300", "%", GAUGE, "share of time all tasks stalled on memory over the last 300 s"),
    ("psi_memory_full_total_us", "us", COUNTER, "total time all tasks stalled on memory (PSI full total)"),
    ("psi_irq_full_avg10", "%", GAUGE, "share of time a CPU was stalled on IRQ/softirq work over the last 10 s"),
    ("psi_irq_full_avg60", "%", GAUGE, "share of time a CPU was stalled on IRQ/softirq work over the last 60 s"),
    ("psi_irq_full_avg300", "%", GAUGE, "share of time a CPU was stalled on IRQ/softirq work over the last 300 s"),
    ("psi_irq_full_total_us", "us", COUNTER, "total time stalled on IRQ/softirq work (PSI irq full total)"),
    # --- host-parser additions (ethtool, mlnx_qos, show_gids, mlxlink, fw_query, loadavg, psi) -------------------
    ("rx_buffer_total_bytes", "bytes", GAUGE, "total NIC receive buffer of the port (mlnx_qos total_size)"),
    ("effective_ber", "", GAUGE, "post-FEC bit error rate (mlxlink Effective Physical BER)"),
    ("raw_ber", "", GAUGE, "pre-FEC bit error rate (mlxlink Raw Physical BER); entity port/laneN when per lane"),
    ("symbol_ber", "", GAUGE, "symbol error rate (mlxlink Symbol BER)"),
    ("effective_physical_errors", "errors", COUNTER, "errors left after FEC (mlxlink Effective Physical Errors)"),
    ("raw_physical_errors", "errors", COUNTER, "pre-FEC physical errors of one lane; entity port/laneN"),
    ("link_recommendation", "", STATE, "mlxlink troubleshooting recommendation text"),
    ("link_status_opcode", "", GAUGE, "mlxlink troubleshooting status opcode (0: no issue observed)"),
    ("fw_version_running", "", STATE, "firmware version running now (differs from fw_version until a reset)"),
    ("fw_version_available", "", STATE, "firmware version of the image mlxfwmanager could install"),
    ("fw_release_date", "", STATE, "release date of the burnt firmware image"),
    ("fw_update_status", "", STATE, "mlxfwmanager verdict: Up to date, Update required, No matching image found"),
    ("product_version", "", STATE, "product version of the firmware image"),
    ("rom_version", "", STATE, "expansion ROM version (PXE, UEFI ...); raw_key names the ROM"),
    ("part_number", "", STATE, "adapter part number (OPN)"),
    ("device_type", "", STATE, "adapter family as the firmware tools name it (ConnectX6 ...)"),
    ("device_description", "", STATE, "adapter description from the firmware tools"),
    ("base_guid", "", STATE, "first GUID of the adapter's GUID range"),
    ("base_mac", "", STATE, "first MAC of the adapter's MAC range"),
    # --- perftest / nccl additions -----------------------------------------------------------------------------
    # --- switch: SONiC additions ---------------------------------------------------------------------------------
    # --- switch: Cumulus and lldpctl additions ------------------------------------------------------------------------
    ("lldp_neighbor", "", STATE, "LLDP neighbour of a local port: text = <remote system>|<remote port>"),
    # --- switch: Onyx, EOS, NX-OS additions ------------------------------------------------------------------------
    ("rx_errors", "packets", COUNTER, "frames received with any error (switch `input errors`)"),
    ("tx_errors", "packets", COUNTER, "frames that failed to transmit (switch `output errors`)"),
    ("interface_resets", "events", COUNTER, "times the switch reset the interface (flaps, errors); NX-OS"),
    ("pfc_mode", "", STATE, "per-port PFC admin mode as configured on the switch (On, Off, Auto)"),
]

GLOSSARY: dict[str, Metric] = {}
for _name, _unit, _kind, _meaning in _DEFINITIONS:
    if _name in GLOSSARY:  # a duplicate would silently shadow a meaning
        raise ValueError(f"metric {_name!r} defined twice in the glossary")
    GLOSSARY[_name] = Metric(_name, _unit, _kind, _meaning)

RATE_SUFFIX = "_per_s"


def rate_name(metric: str) -> str:
    return metric + RATE_SUFFIX


def is_known(metric: str) -> bool:
    if metric.endswith(RATE_SUFFIX):
        base = GLOSSARY.get(metric[: -len(RATE_SUFFIX)])
        return base is not None and base.kind is COUNTER
    return metric in GLOSSARY


def kind_of(metric: str) -> MetricKind:
    return GLOSSARY[metric].kind
