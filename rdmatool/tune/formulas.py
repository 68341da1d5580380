"""Pure tuning arithmetic: BDP, PFC headroom / XOFF, dynamic thresholds, pause time and ECN thresholds.

Every function cites the section of docs/tuning.md it implements (bare `§N.N` below means that document; source
labels such as [C4] are listed in its §8). Units are in the names: bytes, Gb/s (10^9 bit/s), µs, metres. "KB" in
its ECN tables is 1000 bytes; "KiB" in its headroom tables is 1024 bytes. Nothing here reads facts or renders
commands.
"""

from __future__ import annotations

import math
from typing import NamedTuple

KB = 1000
KIB = 1024

# §3.1: IEEE 802.3 Annex 31B peer response time in pause quanta per port speed, as used by SONiC's
# buffer_headroom_mellanox.lua [C4].
PAUSE_QUANTA = {25: 80, 40: 118, 50: 147, 100: 394, 200: 453, 400: 905, 800: 905}
# §3.1: Spectrum constants of SONiC's ASIC_TABLE [C5].
SPECTRUM_PIPELINE_LATENCY_BYTES = 18 * KIB
SPECTRUM_MAC_PHY_DELAY_BYTES = 0.8 * KIB
SPECTRUM_PEER_RESPONSE_FALLBACK_BYTES = 3.8 * KIB
CABLE_PROPAGATION_M_PER_S = 1.98e8  # §3.1: v ≈ 1.98×10⁸ m/s in cable
MLX5_DEFAULT_CABLE_LEN_M = 7  # §3.1 / §1.3 item 5: MLX5E_DEFAULT_CABLE_LEN
PAUSE_QUANTUM_BITS = 512  # §3.2: 1 quantum = 512 bit-times
MAX_PAUSE_QUANTA = 65535  # §3.2

ECN_KMIN_FLOOR_BYTES = 10 * KB  # §2.3 / §7 row 6: Kmin = clamp(BDP/7, 10 KB, 0.5·T_xoff)
ECN_DEFAULT_PMAX_PCT = 20  # §2.3: Pmax 10–20 % for throughput jobs; §7 row 6 raises 5 % to 20 %


def _positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return float(value)


def _non_negative(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    return float(value)


def bdp_bytes(rate_gbps: float, rtt_us: float) -> float:
    """Bandwidth-delay product in bytes: R × RTT / 8 (§2.3, helper list at the end of §7).

    100 Gb/s × 10 µs = 125,000 B ("125 KB" in the §2.3 table).
    """
    return _positive("rate_gbps", rate_gbps) * 1e9 * _positive("rtt_us", rtt_us) * 1e-6 / 8


def mlx5_xoff_bytes(rate_gbps: float, cable_m: float = MLX5_DEFAULT_CABLE_LEN_M, mtu: int = 9216) -> float:
    """mlx5 NIC XOFF headroom: (301 + 2.16·L)·max(R, 40) + 2.72·MTU bytes (§3.1, Linux commit 0696d60853d5
    "net/mlx5e: Receive buffer configuration" with the 40G floor of "Update xoff formula" [C11]).

    The real-valued form, as §3.1 writes it: 56.2 KB for 100G, 5 m, MTU 9216 in its worked examples.
    """
    rate = max(_positive("rate_gbps", rate_gbps), 40.0)
    return (301 + 2.16 * _non_negative("cable_m", cable_m)) * rate + 2.72 * _positive("mtu", mtu)


def dyn_threshold(buffer_bytes: float, alpha: float, m: int) -> float:
    """Steady-state per-PG (or per-queue) limit of a dynamic-threshold shared buffer: α·B / (1 + m·α)
    (§2.4, classic Choudhury–Hahne; SONiC `dynamic_th` gives α = 2^dynamic_th).

    B = 10 MB, α = 1: m = 8 → ≈ 1.1 MB; m = 32 → ≈ 0.30 MB.
    """
    a = _positive("alpha", alpha)
    if isinstance(m, bool) or not isinstance(m, int) or m < 0:
        raise ValueError(f"m (congested PGs) must be a non-negative int, got {m!r}")
    return a * _positive("buffer_bytes", buffer_bytes) / (1 + m * a)


def alpha_from_dynamic_th(dynamic_th: int) -> float:
    """SONiC `dynamic_th` → α = 2^dynamic_th (§2.4)."""
    return 2.0 ** dynamic_th


def pause_quantum_ns(rate_gbps: float) -> float:
    """Duration of one pause quantum (512 bit-times) in ns: 512 / R_Gbps (§3.2 and §7 helpers).

    100G → 5.12 ns, 400G → 1.28 ns.
    """
    return PAUSE_QUANTUM_BITS / _positive("rate_gbps", rate_gbps)


def max_pause_us(rate_gbps: float) -> float:
    """Longest pause one PFC frame can request (65535 quanta) in µs (§3.2): 100G → 335.5 µs."""
    return MAX_PAUSE_QUANTA * pause_quantum_ns(rate_gbps) / 1000


def paused_fraction(pause_duration_delta_us: float, window_s: float) -> float:
    """Share of a window spent paused: Δpause_duration_µs / window_µs, capped at 1 (§3.2, §7)."""
    return min(1.0, _non_negative("pause_duration_delta_us", pause_duration_delta_us) / (
        _positive("window_s", window_s) * 1e6))


def cable_bytes(rate_gbps: float, cable_m: float) -> float:
    """Bytes in flight on the cable in both directions: 2·L·R / v / 8 with v = 1.98e8 m/s (§3.1).

    100G, 5 m → 631 B; 400G, 300 m → 151,515 B.
    """
    return 2 * _non_negative("cable_m", cable_m) * _positive("rate_gbps", rate_gbps) * 1e9 / (
        CABLE_PROPAGATION_M_PER_S * 8)


def peer_response_bytes(rate_gbps: float) -> float:
    """Peer response time in bytes: pause_quanta(R)·512/8 (§3.1, 802.3 31B.3.7). Speeds outside the
    table fall back to Spectrum's 3.8 KiB `peer_response_time` [C5]. 100G → 394 quanta → 25,216 B.
    """
    rate = _positive("rate_gbps", rate_gbps)
    quanta = PAUSE_QUANTA.get(int(rate)) if rate.is_integer() else None
    if quanta is None:
        return SPECTRUM_PEER_RESPONSE_FALLBACK_BYTES
    return quanta * PAUSE_QUANTUM_BITS / 8


def cell_occupancy(cell_bytes: int | None = None, small_packet_pct: float = 0) -> float:
    """Buffer cells consumed per byte of traffic (§3.1, SONiC-Mellanox form):
    (100 − s + s·f) / 100 with f = cell/64 if cell > 128 else 2·cell/(1 + cell).

    With no small packets (s = 0) this is 1, the large-packet case of the §3.1 worked examples.
    """
    s = _non_negative("small_packet_pct", small_packet_pct)
    if s == 0 or cell_bytes is None:
        return 1.0
    cell = _positive("cell_bytes", cell_bytes)
    factor = cell / 64 if cell > 128 else 2 * cell / (1 + cell)
    return (100 - s + s * factor) / 100


class Headroom(NamedTuple):
    xoff_bytes: int
    xon_bytes: int
    size_bytes: int


def _round_up(value: float, unit: int) -> int:
    return int(math.ceil(value / unit - 1e-9)) * unit


def sonic_headroom(
    rate_gbps: float,
    cable_m: float,
    mtu: int = 9216,
    lossless_mtu: int | None = None,
    gearbox_bytes: float = 0,
    mac_phy_delay_bytes: float = SPECTRUM_MAC_PHY_DELAY_BYTES,
    pipeline_latency_bytes: float = SPECTRUM_PIPELINE_LATENCY_BYTES,
    cell_bytes: int | None = None,
    small_packet_pct: float = 0,
    eight_lanes: bool = False,
    shared_headroom_pool: bool = False,
) -> Headroom:
    """Per-PG headroom of one lossless priority on one port, SONiC-Mellanox dynamic-buffer form (§3.1,
    `cfgmgr/buffer_headroom_mellanox.lua` [C4], Spectrum constants [C5]):

        propagation = port_MTU + cable_bytes + 2·gearbox + mac_phy_delay + peer_response
        xoff = lossless_MTU + propagation·cell_occupancy       (rounded up to 1 KiB)
        xon  = pipeline_latency                               (rounded up to 1 KiB)
        size = xoff + xon (+ port_MTU on 8-lane ports); with a shared headroom pool size = xon

    100G, 5 m, MTU 9216 → xoff 46,080 B, xon 18,432 B, size 64,512 B (≈ 63 KiB).
    """
    port_mtu = _positive("mtu", mtu)
    lossless = port_mtu if lossless_mtu is None else _positive("lossless_mtu", lossless_mtu)
    propagation = (port_mtu + cable_bytes(rate_gbps, cable_m) + 2 * _non_negative("gearbox_bytes", gearbox_bytes)
                   + _non_negative("mac_phy_delay_bytes", mac_phy_delay_bytes) + peer_response_bytes(rate_gbps))
    xoff = _round_up(lossless + propagation * cell_occupancy(cell_bytes, small_packet_pct), KIB)
    xon = _round_up(_non_negative("pipeline_latency_bytes", pipeline_latency_bytes), KIB)
    size = xon if shared_headroom_pool else xoff + xon + (int(port_mtu) if eight_lanes else 0)
    return Headroom(xoff, xon, size)


def headroom_bytes(rate_gbps: float, cable_m: float, mtu: int = 9216, **kwargs) -> int:
    """Headroom size in bytes for one lossless PG (§3.1); see `sonic_headroom` for the terms."""
    return sonic_headroom(rate_gbps, cable_m, mtu, **kwargs).size_bytes


def tos_byte(dscp: int, ecn: int = 2) -> int:
    """IP TOS byte for a DSCP with ECN bits: DSCP×4 + ECN (§1.1). DSCP 34 with ECT(0) → 138."""
    if isinstance(dscp, bool) or not isinstance(dscp, int) or not 0 <= dscp <= 63:
        raise ValueError(f"dscp must be an int 0..63, got {dscp!r}")
    if isinstance(ecn, bool) or not isinstance(ecn, int) or not 0 <= ecn <= 3:
        raise ValueError(f"ecn must be an int 0..3, got {ecn!r}")
    return dscp * 4 + ecn


class EcnThresholds(NamedTuple):
    kmin_bytes: int
    kmax_bytes: int
    pmax_pct: int


def ecn_thresholds(
    rate_gbps: float,
    rtt_us: float,
    xoff_bytes: float | None,
    mtu: int = 4096,
    pmax_pct: int = ECN_DEFAULT_PMAX_PCT,
    kmin_floor_bytes: float = ECN_KMIN_FLOOR_BYTES,
) -> EcnThresholds:
    """Kmin / Kmax / Pmax for the lossless egress queue (§2.3 "Suggested computation", §2.4 and §7 row 6):

        BDP  = R·RTT/8
        Kmin = clamp(BDP/7, lo = 10 KB, hi = 0.5·T_xoff)     # DCTCP K > BDP/7, but well below the PFC trigger
        Kmax = min(2·BDP, 0.8·T_xoff)                          # full-rate marking before PFC (Huawei 2–3·BDP)
        Kmax = max(Kmax, Kmin + 2·MTU)                         # keep a ramp
        Pmax = 20 % by default (0.1 … 0.2 for throughput jobs; up to 100 % when PFC pauses dominate)

    When the hi bound of the clamp is below its lo bound (T_xoff < 20 KB) the hi bound wins: ECN before PFC is the
    hard constraint. The ramp rule may lift Kmax above 0.8·T_xoff; `ecn_ordering_ok` tells whether it did.
    `xoff_bytes` None: the PFC trigger is not known (it is the switch's, never a NIC's headroom size), so neither
    bound of T_xoff applies: Kmin = max(BDP/7, 10 KB), Kmax = max(2·BDP, Kmin + 2·MTU). Bytes are rounded to the
    nearest integer.

    100G, RTT 10 µs, T_xoff 200,000 B (a static XOFF threshold of the lossless PG) → Kmin 17,857 B, Kmax 160,000 B.
    """
    bdp = bdp_bytes(rate_gbps, rtt_us)
    xoff = math.inf if xoff_bytes is None else _positive("xoff_bytes", xoff_bytes)
    ramp_mtu = _positive("mtu", mtu)
    if isinstance(pmax_pct, bool) or not isinstance(pmax_pct, int) or not 1 <= pmax_pct <= 100:
        raise ValueError(f"pmax_pct must be an int 1..100, got {pmax_pct!r}")
    kmin = min(max(bdp / 7, _non_negative("kmin_floor_bytes", kmin_floor_bytes)), 0.5 * xoff)
    kmax = min(2 * bdp, 0.8 * xoff)
    kmax = max(kmax, kmin + 2 * ramp_mtu)
    return EcnThresholds(int(round(kmin)), int(round(kmax)), pmax_pct)


def ecn_ordering_ok(kmin_bytes: float, kmax_bytes: float, xoff_bytes: float) -> bool:
    """§2.4 / §7 row 9: ECN must fire before PFC, i.e. Kmin < Kmax < T_xoff (n = 1 worst case)."""
    return kmin_bytes < kmax_bytes < xoff_bytes
