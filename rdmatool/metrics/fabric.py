"""The fabric as one: the InfiniBand subnet's sweep from one host, and the cabling and per-cable verdicts of the topology judges."""

from __future__ import annotations

from rdmatool.model import MetricKind

COUNTER, GAUGE, STATE = MetricKind.COUNTER, MetricKind.GAUGE, MetricKind.STATE

DEFINITIONS: list[tuple[str, str, MetricKind, str]] = [
    # --- the cabling judge's facts (rdmatool.topology.cabling), judged by playbooks/15-topology.yaml -------------
    ("cabling_verdict", "", STATE, "a cabling problem of a host NIC or switch port: off_rail, unexpected_leaf, "
     "one_sided, no_neighbor, speed_mismatch, neighbor_changed, wrong_switch, wrong_port, missing_link"),
    ("cabling_switch", "", STATE, "the switch (and port) a host NIC reaches, as the cabling judge saw it"),
    ("cabling_switch_port", "", STATE, "the switch port at the other end of a judged cable"),
    ("cabling_expected", "", STATE, "where the cable should go: the peers' switch, the topology file's port ..."),
    ("cabling_peers", "", STATE, "the hosts of the same pod whose NIC of that name reaches the expected switch"),
    ("cabling_seen_back", "", STATE, "what the other end of a one-sided cable sees on that port"),
    ("cabling_far_end", "", STATE, "the other end of a one-sided cable: a switch port or a host NIC"),
    ("cabling_netdev", "", STATE, "the netdev of an RDMA port without an LLDP neighbour"),
    ("cabling_rate_gbps", "Gb/s", GAUGE, "the host port's rate on a cable whose two ends differ"),
    ("cabling_switch_rate_gbps", "Gb/s", GAUGE, "the switch port's rate on a cable whose two ends differ"),
    ("cabling_previous", "", STATE, "a port's LLDP neighbour in the bundle's first snapshot"),
    ("cabling_topology_file", "", STATE, "the expected-topology file a cable was compared with"),
    # --- physical errors per cable (rdmatool.topology.link_errors), judged by playbooks/10-links.yaml ----------
    ("link_error_verdict", "", STATE, "which end of a cable counted physical errors in the window: both_ends, "
     "host_end, switch_end"),
    ("link_host", "", STATE, "the host at one end of a cable with physical errors"),
    ("link_host_port", "", STATE, "the host's RDMA port (mlx5_1/1) at that end"),
    ("link_switch", "", STATE, "the switch at the other end of a cable with physical errors"),
    ("link_switch_port", "", STATE, "the switch port at that end"),
    ("link_far_end", "", STATE, "the host port at the far end of a switch port with errors, or that it is not known"),
    ("link_host_errors", "errors", GAUGE, "the largest growth among the host port's physical error counters"),
    ("link_switch_errors", "errors", GAUGE, "the growth of the switch port's CRC / input errors in the window"),
    ("link_host_counters", "", STATE, "the host port's physical error counters that grew, and by how much"),
    ("link_switch_counters", "", STATE, "the switch port's error counters that grew (none, or not reported)"),
    ("path_class_verdict", "", STATE, "perftest pairs of one path class (same_leaf, cross_leaf, cross_spine) "
     "through a leaf: slow when systematically below the other classes"),
    ("path_class_median_gbps", "Gb/s", GAUGE, "median bandwidth of a leaf's perftest pairs of one path class"),
    ("path_class_reference_gbps", "Gb/s", GAUGE, "median bandwidth of the fastest path class of the run"),
    ("path_class_pairs", "pairs", GAUGE, "perftest pairs of a leaf's path class"),
    ("path_class", "", STATE, "the path class a slow set of pairs took (same_leaf, cross_leaf, cross_spine)"),
    ("path_class_record", "", STATE, "each path class's pairs and medians, JSON"),
    # --- iblinkinfo: the InfiniBand subnet's links (rdmatool.parsers.iblinkinfo) ----------------------------------
    ("ib_link_neighbor", "", STATE, "the node and port at the far end of an InfiniBand port: text = <node "
     "description>|<port>; raw_key = Switch or CA (the local node's type)"),
    ("ib_link_state", "", STATE, "logical state of a port in the subnet (Active, Down, Init, Armed)"),
    ("ib_link_phys_state", "", STATE, "physical state of a port in the subnet (LinkUp, Polling, Disabled ...)"),
    ("ib_link_rate_gbps", "Gb/s", GAUGE, "a subnet port's active width x lane speed"),
    ("ib_link_capable", "", STATE, "what iblinkinfo says the link could run at (`Could be ...`)"),
    # --- the subnet sweep from one host: ibnetdiscover, ibqueryerrors, sminfo, iblinkinfo (rdmatool.parsers.*) ----
    ("ib_node_type", "", STATE, "type of the subnet node a port belongs to: Switch, CA or Router"),
    ("ib_node_guid", "", STATE, "GUID of the subnet node a port belongs to (0x...): tells apart nodes of one name"),
    ("ib_port_guid", "", STATE, "GUID of a subnet port (0x...; a switch's ports all carry the switch's)"),
    ("ib_link_neighbor_guid", "", STATE,
     "GUID of the far end of a subnet port (a CA's port GUID, a switch's GUID): tells apart far ends of one name"),
    ("ib_lid", "", GAUGE, "LID of a subnet port (a switch port: the switch's LID); unique within one subnet only"),
    ("ib_link_width", "", STATE, "active width of a subnet port as the sweep prints it (1X, 2X, 4X, 8X, 12X)"),
    ("ib_link_speed", "", STATE,
     "active lane speed of a subnet port by name (SDR ... NDR, XDR, FDR10); `???`, `Extended speed` or "
     "`undefined (N)` where the tool could not tell, and then no ib_link_rate_gbps"),
    ("ib_error_threshold", "", GAUGE,
     "ibqueryerrors' reporting threshold for a counter (entity = the canonical counter): a count at or below it "
     "is not printed, so it reads as zero"),
    ("ib_errors_suppressed", "", STATE, "the counters ibqueryerrors was told not to report (text, space-separated)"),
    ("ib_nodes_checked", "nodes", GAUGE, "subnet nodes ibqueryerrors read (its summary)"),
    ("ib_bad_nodes", "nodes", GAUGE, "subnet nodes with a counter above its threshold (ibqueryerrors' summary)"),
    ("ib_ports_checked", "ports", GAUGE, "subnet ports ibqueryerrors read (its summary)"),
    ("ib_bad_ports", "ports", GAUGE, "subnet ports with a counter above its threshold (ibqueryerrors' summary)"),
    ("pma_query_failures", "queries", GAUGE,
     "performance-management queries that got no answer during a sweep: the sweep is partial"),
    ("sm_guid", "", STATE, "port GUID of a subnet manager (sminfo; entity lid<LID> of the SM)"),
    ("sm_priority", "", GAUGE, "a subnet manager's priority, 0-15 (sminfo)"),
    ("sm_state", "", STATE, "a subnet manager's state: master, standby, discovering, not_active (sminfo)"),
    ("sm_activity_count", "", COUNTER, "a subnet manager's activity counter: a live master's keeps growing"),
    # what the sweep's judge states (rdmatool.topology.ib_fabric; playbooks/17-ib-fabric.yaml)
    ("ib_fabric_verdict", "", STATE,
     "what the sweep's judge found on a switch port or the subnet: link_downed, below_fabric, congested, "
     "vl15_dropped, cable_gone, no_master, several_masters (rdmatool.topology.ib_fabric)"),
    ("ib_fabric_far_end", "", STATE, "the far end of a judged switch port: `<switch> port N` or `<host> <device> port N`"),
    ("ib_fabric_errors", "errors", GAUGE, "growth in the window of the counter a switch-port verdict is about"),
    ("ib_fabric_counters", "", STATE, "the counters of a judged switch port that grew in the window, with their growth"),
    ("ib_fabric_link", "", STATE, "a judged link's width, speed and rate (`2X NDR (200 Gb/s)`)"),
    ("ib_fabric_rate_gbps", "Gb/s", GAUGE, "the rate a judged switch-to-switch link runs at"),
    ("ib_fabric_expected", "", STATE, "the rate most switch-to-switch links of the fabric run at"),
    ("ib_fabric_xmit_wait_rate", "ticks/s", GAUGE, "PortXmitWait growth per second of a congested switch port"),
    ("ib_fabric_oversubscription", "", STATE,
     "a leaf's host-facing capacity over its uplink capacity (`3:1 (leaf01: 4800 Gb/s to hosts, 1600 Gb/s up)`)"),
    ("ib_fabric_state", "", STATE, "the link state a switch port reports once its cable is gone"),
    ("ib_fabric_masters", "SMs", GAUGE, "subnet managers in the master state, as sminfo read them"),
    ("ib_fabric_sms", "", STATE, "each subnet manager sminfo read: LID, state, priority, GUID"),
    ("ib_fabric_host", "", STATE, "the host that read the subnet (ran the sweep)"),
]
