"""What a packet capture shows: RoCEv2 flows, CNPs, ECN marks, PFC pause frames and their periodicity."""

from __future__ import annotations

from rdmatool.model import MetricKind

COUNTER, GAUGE, STATE = MetricKind.COUNTER, MetricKind.GAUGE, MetricKind.STATE

DEFINITIONS: list[tuple[str, str, MetricKind, str]] = [
    # --- packet captures (rdmatool.capture: `rdmatool pcap`, capture.<device>.pcap in a bundle) -------------------
    ("capture_packets", "packets", GAUGE, "records in a packet capture"),
    ("capture_duration_s", "s", GAUGE, "time between the first and the last packet of a capture"),
    ("capture_roce_packets", "packets", GAUGE, "RoCEv2 packets in a capture (UDP 4791 with a BTH), CNPs apart"),
    ("capture_roce_bytes", "bytes", GAUGE, "wire bytes of the RoCEv2 packets in a capture, CNPs apart"),
    ("capture_roce_flows", "flows", GAUGE, "distinct (source IP, destination IP, destination QP) in a capture"),
    ("capture_roce_priority_packets", "packets", GAUGE,
     "RoCEv2 packets of a capture on a priority (VLAN PCP, else the DSCP's priority)"),
    ("capture_roce_off_dscp_packets", "packets", GAUGE, "RoCEv2 packets of a capture not on the RoCE DSCP"),
    ("capture_cnp_packets", "packets", GAUGE, "CNPs (BTH opcode 0x81) in a capture"),
    ("capture_ecn_ce_packets", "packets", GAUGE, "RoCEv2 packets of a capture marked ECN CE"),
    ("capture_ecn_ce_share", "ratio", GAUGE, "share of a capture's RoCEv2 packets (CNPs apart) marked ECN CE"),
    ("capture_naks", "packets", GAUGE, "RoCE acknowledgements with a NAK syndrome in a capture"),
    ("capture_psn_gaps", "events", GAUGE, "forward PSN jumps within a RoCE flow of a capture"),
    ("capture_retransmissions", "packets", GAUGE, "RoCE packets of a capture whose PSN its flow had already sent"),
    ("capture_other_on_roce_class_packets", "packets", GAUGE,
     "non-RoCE packets of a capture carrying the RoCE DSCP or the RoCE priority"),
    ("capture_other_on_roce_class_bytes", "bytes", GAUGE,
     "wire bytes of the non-RoCE packets of a capture on the RoCE class"),
    ("capture_pfc_frames", "frames", GAUGE, "PFC frames of a capture with this priority's enable bit set"),
    ("capture_pfc_quanta", "quanta", GAUGE, "sum of this priority's pause quanta over a capture's PFC frames"),
    ("capture_pfc_pause_time_s", "s", GAUGE, "pause time the PFC quanta of a capture ask for (512 bit times each)"),
    ("capture_pfc_paused_fraction", "ratio", GAUGE,
     "share of a capture this priority was paused: the union of the intervals its PFC frames ask for"),
    ("capture_global_pause_frames", "frames", GAUGE, "legacy 802.3x PAUSE frames (opcode 0x0001) in a capture"),
    ("capture_burst_period_s", "s", GAUGE, "period of a traffic class's bursts in a capture; raw_key = the class"),
    ("capture_burst_strength", "", GAUGE, "autocorrelation at that period (1: strictly periodic); raw_key = class"),
    ("capture_burst_coincidence", "", GAUGE,
     "fraction of a class's bursts that meet a pause or ECN-CE peak of the capture; raw_key = the class"),
]
