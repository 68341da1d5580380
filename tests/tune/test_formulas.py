"""rdmatool.tune.formulas against the worked examples of docs/tuning.md (section in each test).

Expected values are computed by hand in the comments, not by calling the code under test.
"""

from __future__ import annotations

import pytest

from rdmatool.tune import formulas as f


# tuning.md §2.3 "Worked BDPs": 100G → 62.5 / 125 / 250 KB, 200G → 125 / 250 / 500 KB, 400G → 250 / 500 / 1000 KB
@pytest.mark.parametrize(("rate", "rtt", "expected"), [
    (100, 5, 62_500), (100, 10, 125_000), (100, 20, 250_000),
    (200, 5, 125_000), (200, 10, 250_000), (200, 20, 500_000),
    (400, 5, 250_000), (400, 10, 500_000), (400, 20, 1_000_000),
])
def test_bdp_table_section_2_3(rate, rtt, expected):
    assert f.bdp_bytes(rate, rtt) == pytest.approx(expected)


def test_bdp_huawei_100ge_20us_section_2_1():
    # §2.1 Huawei row: "BDP(100G, 20 µs) = 250 KB"
    assert f.bdp_bytes(100, 20) == pytest.approx(250_000)


def test_dctcp_lower_bound_section_2_3():
    # §2.3: "At 100G/10 µs → Kmin ≳ 18 KB; 400G/10 µs → ≳ 71 KB": 125000/7 = 17857, 500000/7 = 71429
    assert f.bdp_bytes(100, 10) / 7 == pytest.approx(17_857.14, abs=0.01)
    assert f.bdp_bytes(400, 10) / 7 == pytest.approx(71_428.57, abs=0.01)


# §3.1 worked examples, last column "mlx5 NIC xoff (MTU 9216 / 4200)":
# (301 + 2.16·L)·R + 2.72·MTU, e.g. 100G 5 m: 311.8·100 = 31180; 2.72·9216 = 25067.52 → 56247.52 ("56.2 KB");
# 2.72·4200 = 11424 → 42604 ("42.6 KB").
@pytest.mark.parametrize(("rate", "cable", "mtu", "expected"), [
    (100, 5, 9216, 56_247.52), (100, 5, 4200, 42_604.0),
    (100, 100, 9216, 76_767.52), (100, 100, 4200, 63_124.0),  # 517·100 = 51700
    (200, 5, 9216, 87_427.52), (200, 5, 4200, 73_784.0),  # 311.8·200 = 62360
    (200, 100, 9216, 128_467.52), (200, 100, 4200, 114_824.0),  # 517·200 = 103400
    (400, 5, 9216, 149_787.52), (400, 5, 4200, 136_144.0),  # 311.8·400 = 124720
    (400, 100, 9216, 231_867.52), (400, 100, 4200, 218_224.0),  # 517·400 = 206800
    (400, 300, 9216, 404_667.52), (400, 300, 4200, 391_024.0),  # 949·400 = 379600
])
def test_mlx5_xoff_table_section_3_1(rate, cable, mtu, expected):
    assert f.mlx5_xoff_bytes(rate, cable, mtu) == pytest.approx(expected)
    assert round(f.mlx5_xoff_bytes(rate, cable, mtu) / 1000, 1) == round(expected / 1000, 1)


def test_mlx5_xoff_40g_floor_section_3_1():
    # §3.1: "speed floored at 40G": 25G is computed as 40G → (301 + 15.12)·40 + 2.72·4096 = 12644.8 + 11141.12
    assert f.mlx5_xoff_bytes(25, 7, 4096) == pytest.approx(23_785.92)
    assert f.mlx5_xoff_bytes(25, 7, 4096) == f.mlx5_xoff_bytes(40, 7, 4096)


def test_mlx5_default_cable_section_3_1():
    # §3.1: default cable_len = 7 m
    assert f.mlx5_xoff_bytes(100, mtu=9216) == pytest.approx((301 + 2.16 * 7) * 100 + 2.72 * 9216)


# §3.1 worked examples (SONiC formula, MTU 9216, Spectrum constants, cell_occupancy 1):
# columns round-trip cable bytes, peer response, xoff, xon, headroom/PG/port.
@pytest.mark.parametrize(("rate", "cable", "cable_b", "peer", "xoff", "size_kib"), [
    (100, 5, 631, 25_216, 46_080, 63),
    (100, 100, 12_626, 25_216, 57_344, 74),
    (200, 5, 1_263, 28_992, 50_176, 67),
    (200, 100, 25_253, 28_992, 73_728, 90),
    (400, 5, 2_525, 57_920, 79_872, 96),
    (400, 100, 50_505, 57_920, 128_000, 143),
    (400, 300, 151_515, 57_920, 229_376, 242),
])
def test_sonic_headroom_table_section_3_1(rate, cable, cable_b, peer, xoff, size_kib):
    assert round(f.cable_bytes(rate, cable)) == cable_b
    assert f.peer_response_bytes(rate) == peer
    room = f.sonic_headroom(rate, cable, 9216)
    assert room.xoff_bytes == xoff
    assert room.xon_bytes == 18_432
    assert room.size_bytes == xoff + 18_432
    assert room.size_bytes == size_kib * 1024
    assert f.headroom_bytes(rate, cable, 9216) == size_kib * 1024


def test_headroom_hand_computed_100g_5m_section_3_1():
    # propagation = 9216 + 631.31 + 0.8·1024 (819.2) + 394·64 (25216) = 35882.51;
    # xoff = 9216 + 35882.51 = 45098.51 → rounded up to 1 KiB = 45·1024 = 46080
    assert f.sonic_headroom(100, 5).xoff_bytes == 45 * 1024


def test_headroom_variants_section_3_1():
    # shared headroom pool: size = xon; 8-lane ports add one port MTU
    assert f.sonic_headroom(100, 5, shared_headroom_pool=True).size_bytes == 18_432
    assert f.sonic_headroom(100, 5, eight_lanes=True).size_bytes == 46_080 + 18_432 + 9216
    # SP2 cells (144 B), 100 % small packets: factor 144/64 = 2.25 ("the propagation term is ×2.25")
    assert f.cell_occupancy(144, 100) == pytest.approx(2.25)
    assert f.cell_occupancy(96, 100) == pytest.approx(2 * 96 / 97)
    assert f.cell_occupancy(None, 0) == 1.0
    # 100G 5 m, ×2.25: 9216 + 35882.51·2.25 = 89951.65 → 88·1024 = 90112
    assert f.sonic_headroom(100, 5, cell_bytes=144, small_packet_pct=100).xoff_bytes == 90_112


def test_peer_response_fallback_section_3_1():
    # 10G is not in the pause-quanta table: Spectrum peer_response_time fallback 3.8 KiB = 3891.2 B
    assert f.peer_response_bytes(10) == pytest.approx(3.8 * 1024)
    assert f.peer_response_bytes(800) == 905 * 64


# §3.2 table: 1 quantum and max pause per frame
@pytest.mark.parametrize(("rate", "quantum_ns", "max_pause_us"), [
    (25, 20.48, 1342.16), (100, 5.12, 335.54), (200, 2.56, 167.77), (400, 1.28, 83.88), (800, 0.64, 41.94),
])
def test_pause_time_section_3_2(rate, quantum_ns, max_pause_us):
    assert f.pause_quantum_ns(rate) == pytest.approx(quantum_ns)
    assert f.max_pause_us(rate) == pytest.approx(max_pause_us, abs=0.01)


def test_paused_fraction_section_3_2():
    # Δpause_duration 6,000,000 µs over a 60 s window = 0.1
    assert f.paused_fraction(6_000_000, 60) == pytest.approx(0.1)
    assert f.paused_fraction(90_000_000, 60) == 1.0


def test_dyn_threshold_section_2_4():
    # §2.4: B = 10 MB, α = 1: m = 8 → T ≈ 1.1 MB (10/9 = 1.111); m = 32 → ≈ 0.30 MB (10/33 = 0.303)
    assert f.dyn_threshold(10_000_000, 1, 8) == pytest.approx(1_111_111.1, abs=0.1)
    assert f.dyn_threshold(10_000_000, 1, 32) == pytest.approx(303_030.3, abs=0.1)
    # ... so a static SONiC Kmax of 2 MB (§2.1 AZURE_LOSSLESS 2097152) sits above the PFC trigger
    assert not f.ecn_ordering_ok(1_048_576, 2_097_152, f.dyn_threshold(10_000_000, 1, 8))
    # α = 2^dynamic_th
    assert f.alpha_from_dynamic_th(0) == 1 and f.alpha_from_dynamic_th(-2) == 0.25


def test_tos_section_1_1():
    # §1.1: DSCP 26 with ECT(0) = 26·4 + 2 = 106; without ECN bits 104 (§7 row 5 "TOS 106 not 104")
    assert f.tos_byte(26) == 106
    assert f.tos_byte(26, 0) == 104
    assert f.tos_byte(48, 0) == 192
    with pytest.raises(ValueError):
        f.tos_byte(64)


def test_ecn_thresholds_100g_10us_sonic_xoff_section_2_3():
    # §2.3 suggested computation with T_xoff = 46080 B (§3.1 SONiC xoff, 100G 5 m):
    # BDP = 125000; Kmin = clamp(17857.14, 10000, 23040) = 17857; Kmax = min(250000, 36864) = 36864;
    # ramp: max(36864, 17857.14 + 2·4096 = 26049) = 36864; Pmax default 20 %
    assert f.ecn_thresholds(100, 10, 46_080) == (17_857, 36_864, 20)


def test_ecn_thresholds_400g_10us_mlx5_xoff_section_7_row_6():
    # §7 row 6 with the §3.1 mlx5 xoff for 400G 5 m MTU 9216 = 149787.52:
    # BDP = 500000; Kmin = clamp(71428.57, 10000, 74893.76) = 71429; Kmax = min(1e6, 119830.02) = 119830
    k = f.ecn_thresholds(400, 10, f.mlx5_xoff_bytes(400, 5, 9216))
    assert (k.kmin_bytes, k.kmax_bytes, k.pmax_pct) == (71_429, 119_830, 20)


def test_ecn_thresholds_floor_and_ramp_section_2_3():
    # 25G, 5 µs: BDP = 15625, BDP/7 = 2232 → Kmin floor 10 KB = 10000;
    # T_xoff 1 MB → Kmax = min(31250, 800000) = 31250; ramp 10000 + 2·4096 = 18192 < 31250
    assert f.ecn_thresholds(25, 5, 1_000_000) == (10_000, 31_250, 20)
    # 25G, 2 µs: BDP = 6250 → Kmax = min(12500, 800000) = 12500 < Kmin + 2·MTU = 18192 → Kmax 18192
    assert f.ecn_thresholds(25, 2, 1_000_000) == (10_000, 18_192, 20)


def test_ecn_thresholds_tiny_xoff_hi_bound_wins_section_2_4():
    # T_xoff 16000 B: 0.5·T_xoff = 8000 < 10 KB floor → Kmin 8000 (ECN before PFC is the hard bound);
    # Kmax = min(250000, 0.8·16000 = 12800) = 12800, already above the ramp 8000 + 2·1024 = 10048
    k = f.ecn_thresholds(100, 10, 16_000, mtu=1024)
    assert k == (8_000, 12_800, 20)
    assert f.ecn_ordering_ok(k.kmin_bytes, k.kmax_bytes, 16_000)


def test_ecn_thresholds_pmax_cumulus_style_section_2_1():
    # §2.1 / §7 row 6: Pmax up to 100 % (Cumulus style) when pauses dominate
    assert f.ecn_thresholds(100, 10, 46_080, pmax_pct=100).pmax_pct == 100
    with pytest.raises(ValueError):
        f.ecn_thresholds(100, 10, 46_080, pmax_pct=0)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "100"])
def test_invalid_inputs_raise(bad):
    with pytest.raises(ValueError):
        f.bdp_bytes(bad, 10)
    with pytest.raises(ValueError):
        f.ecn_thresholds(100, 10, bad)


def test_ecn_thresholds_with_the_pfc_trigger_unknown_take_no_bound_of_it():
    # §2.3: Kmin = max(BDP/7, 10 KB), Kmax = max(2·BDP, Kmin + 2·MTU); 200G, 10 µs: BDP 250,000 B
    assert f.ecn_thresholds(200, 10, None) == (35_714, 500_000, 20)
    # the floor and the ramp still hold: 25G, 5 µs: BDP 15,625 → Kmin 10,000; Kmax max(31,250, 18,192)
    assert f.ecn_thresholds(25, 5, None) == (10_000, 31_250, 20)
