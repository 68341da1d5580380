"""InfiniBand PMA port counters shared by `perfquery` and `sysfs_counters`: names, canonical metrics, widths.

The IBTA PortCounters attribute gives most error counters very few bits (LinkDowned 8, LocalLinkIntegrity 4 ...).
They do not wrap: they stick at their maximum. A pinned counter means "at least this many" and must never feed a
rate computation, so both parsers emit a `counter_saturated` sample beside the reading (see `saturation`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rdmatool.model import Sample

UNBOUNDED = 64  # a 64-bit counter never reaches its maximum in practice: no saturation check


@dataclass(frozen=True)
class PmaCounter:
    perfquery_name: str  # as perfquery prints it (`LinkDownedCounter`)
    sysfs_name: str | None  # file name under ports/<n>/counters/, None when the kernel has no such file
    metric: str  # canonical metric
    pma_bits: int  # width in the legacy PortCounters attribute (and for error counters in every form)
    extended_bits: int  # width when read through PortCountersExtended (`perfquery -x`, mlx5 sysfs)
    words: bool = False  # counted in 4-octet words: multiply by 4 for bytes
    sysfs_bits: int | None = None  # width of the sysfs file when it differs from extended_bits

    @property
    def sysfs_width(self) -> int:
        return self.sysfs_bits if self.sysfs_bits is not None else self.extended_bits


# Widths: the PortCounters / PortCountersExtended / PortRcvErrorDetails attributes of the InfiniBand Architecture
# Specification (performance management).
PMA_COUNTERS: tuple[PmaCounter, ...] = (
    PmaCounter("SymbolErrorCounter", "symbol_error", "symbol_errors", 16, 16),
    PmaCounter("LinkErrorRecoveryCounter", "link_error_recovery", "link_error_recovery", 8, 8),
    PmaCounter("LinkDownedCounter", "link_downed", "link_downed", 8, 8),
    PmaCounter("PortRcvErrors", "port_rcv_errors", "port_rcv_errors", 16, 16),
    PmaCounter(
        "PortRcvRemotePhysicalErrors",
        "port_rcv_remote_physical_errors",
        "port_rcv_remote_physical_errors",
        16,
        16,
    ),
    PmaCounter(
        "PortRcvSwitchRelayErrors", "port_rcv_switch_relay_errors", "port_rcv_switch_relay_errors", 16, 16
    ),
    PmaCounter("PortXmitDiscards", "port_xmit_discards", "port_xmit_discards", 16, 16),
    PmaCounter(
        "PortXmitConstraintErrors", "port_xmit_constraint_errors", "port_xmit_constraint_errors", 8, 8
    ),
    PmaCounter("PortRcvConstraintErrors", "port_rcv_constraint_errors", "port_rcv_constraint_errors", 8, 8),
    PmaCounter(
        "LocalLinkIntegrityErrors", "local_link_integrity_errors", "local_link_integrity_errors", 4, 4
    ),
    PmaCounter(
        "ExcessiveBufferOverrunErrors",
        "excessive_buffer_overrun_errors",
        "excessive_buffer_overrun_errors",
        4,
        4,
    ),
    PmaCounter("VL15Dropped", "VL15_dropped", "vl15_dropped", 16, 16),
    PmaCounter("QP1Dropped", None, "qp1_dropped", 16, 16),
    # The extended attribute widens PortXmitWait to 64 bits, but the kernel's sysfs file reads the 32-bit
    # PortCounters field even where its data counters are 64-bit.
    PmaCounter("PortXmitWait", "port_xmit_wait", "port_xmit_wait", 32, UNBOUNDED, sysfs_bits=32),
    PmaCounter("PortXmitData", "port_xmit_data", "port_xmit_data_bytes", 32, UNBOUNDED, words=True),
    PmaCounter("PortRcvData", "port_rcv_data", "port_rcv_data_bytes", 32, UNBOUNDED, words=True),
    PmaCounter("PortXmitPkts", "port_xmit_packets", "port_xmit_packets", 32, UNBOUNDED),
    PmaCounter("PortRcvPkts", "port_rcv_packets", "port_rcv_packets", 32, UNBOUNDED),
    PmaCounter(
        "PortUnicastXmitPkts", "unicast_xmit_packets", "port_unicast_xmit_packets", UNBOUNDED, UNBOUNDED
    ),
    PmaCounter("PortUnicastRcvPkts", "unicast_rcv_packets", "port_unicast_rcv_packets", UNBOUNDED, UNBOUNDED),
    PmaCounter(
        "PortMulticastXmitPkts", "multicast_xmit_packets", "port_multicast_xmit_packets", UNBOUNDED, UNBOUNDED
    ),
    PmaCounter(
        "PortMulticastRcvPkts", "multicast_rcv_packets", "port_multicast_rcv_packets", UNBOUNDED, UNBOUNDED
    ),
    # PortRcvErrorDetails (perfquery -E): 16-bit each, a breakdown of PortRcvErrors.
    PmaCounter("PortLocalPhysicalErrors", None, "port_local_physical_errors", 16, 16),
    PmaCounter("PortMalformedPktErrors", None, "port_malformed_packet_errors", 16, 16),
    PmaCounter("PortBufferOverrunErrors", None, "port_buffer_overrun_errors", 16, 16),
    PmaCounter("PortDLIDMappingErrors", None, "port_dlid_mapping_errors", 16, 16),
    PmaCounter("PortVLMappingErrors", None, "port_vl_mapping_errors", 16, 16),
    PmaCounter("PortLoopingErrors", None, "port_looping_errors", 16, 16),
    # PortXmitDiscardDetails (perfquery -D, ibqueryerrors --details): 16-bit each, a breakdown of PortXmitDiscards.
    PmaCounter("PortInactiveDiscards", None, "port_inactive_discards", 16, 16),
    PmaCounter("PortNeighborMTUDiscards", None, "port_neighbor_mtu_discards", 16, 16),
    PmaCounter("PortSwLifetimeLimitDiscards", None, "port_sw_lifetime_limit_discards", 16, 16),
    PmaCounter("PortSwHOQLifetimeLimitDiscards", None, "port_sw_hoq_lifetime_limit_discards", 16, 16),
)

BY_PERFQUERY_NAME: dict[str, PmaCounter] = {c.perfquery_name: c for c in PMA_COUNTERS}
BY_SYSFS_NAME: dict[str, PmaCounter] = {c.sysfs_name: c for c in PMA_COUNTERS if c.sysfs_name}
# The names older libibmad releases (OFED 1.x) gave the PortCounters fields, as perfquery and ibqueryerrors print
# them there: same fields, same widths.
LEGACY_NAMES: dict[str, str] = {
    "SymbolErrors": "SymbolErrorCounter", "LinkRecovers": "LinkErrorRecoveryCounter",
    "LinkDowned": "LinkDownedCounter", "RcvErrors": "PortRcvErrors", "RcvRemotePhysErrors": "PortRcvRemotePhysicalErrors",
    "RcvSwRelayErrors": "PortRcvSwitchRelayErrors", "XmtDiscards": "PortXmitDiscards",
    "XmtConstraintErrors": "PortXmitConstraintErrors", "RcvConstraintErrors": "PortRcvConstraintErrors",
    "LinkIntegrityErrors": "LocalLinkIntegrityErrors", "ExcBufOverrunErrors": "ExcessiveBufferOverrunErrors",
    "XmtData": "PortXmitData", "RcvData": "PortRcvData", "XmtPkts": "PortXmitPkts", "RcvPkts": "PortRcvPkts",
    "XmtWait": "PortXmitWait",
}


def by_printed_name(name: str) -> PmaCounter | None:
    """The counter a tool's printed field name stands for, in the current or the legacy spelling."""
    return BY_PERFQUERY_NAME.get(name) or BY_PERFQUERY_NAME.get(LEGACY_NAMES.get(name, ""))


def counter_samples(
    entity: str, counter: PmaCounter, raw_key: str, value: int | None, bits: int
) -> list[Sample]:
    """The reading in canonical units, followed by a `counter_saturated` marker when it is pinned at its maximum."""
    scaled = value * 4 if counter.words and value is not None else value
    samples = [Sample(entity, counter.metric, scaled, raw_key=raw_key)]
    marker = saturation(entity, counter.metric, raw_key, value, bits)
    if marker is not None:
        samples.append(marker)
    return samples


def saturation(entity: str, metric: str, raw_key: str, value: int | None, bits: int) -> Sample | None:
    """A `counter_saturated` sample when `value` (as the hardware counts it) is the maximum of a `bits`-wide field."""
    if bits >= UNBOUNDED or not isinstance(value, int) or value != (1 << bits) - 1:
        return None
    return Sample(entity, "counter_saturated", 1, text=metric, raw_key=raw_key)
