"""The SONiC parsers against every verbatim sample in real-outputs/switch/sonic (skipped when the corpus is absent).

Every file in that folder must map to exactly one parser (an unmapped file fails), parse without error, and the
values asserted below were read by eye from the files.
"""

from __future__ import annotations

from collections import Counter

import pytest

from rdmatool import metrics
from tests.helpers import data, one, pick, real_output, real_output_files, run

SONIC = ("switch", "sonic")

# File-name prefix -> owning parser. Order matters: the first matching prefix wins.
OWNERS: tuple[tuple[str, str], ...] = (
    ("pfc_counters_history__", "sonic_pfc_counters"),
    ("pfc_counters__", "sonic_pfc_counters"),
    ("pfc_priority__", "sonic_pfc_priority"),
    ("pfc_asymmetric__", "sonic_pfc_priority"),
    ("ecn_show__", "sonic_ecn"),
    ("queue_counters__", "sonic_queue_counters"),
    ("queue_watermark_", "sonic_queue_counters"),
    ("queue_wredcounters__", "sonic_wred_counters"),
    ("pfcwd_stats__", "sonic_pfcwd_stats"),
    ("pfcwd_config__", "sonic_pfcwd_config"),
    ("pg_drop_counters__", "sonic_pg_drop"),
    ("pg_watermark_", "sonic_pg_drop"),
    ("pg_persistent_watermark_", "sonic_pg_drop"),
    ("interfaces_counters_detailed__", "sonic_portstat"),
    ("interfaces_counters__", "sonic_portstat"),
)


def owner(file_name: str) -> str | None:
    return next((parser for prefix, parser in OWNERS if file_name.startswith(prefix)), None)


def parsed(name: str):
    return data(run(owner(name), real_output(*SONIC, name)))


def test_every_sonic_sample_has_an_owner_and_parses() -> None:
    files = real_output_files(*SONIC)
    unmapped = [path.name for path in files if owner(path.name) is None]
    assert not unmapped, f"real SONiC samples with no owning parser: {unmapped}"
    for path in files:
        samples = run(owner(path.name), path.read_text(encoding="utf-8"))
        assert samples, f"{path.name}: no samples"
        assert all(metrics.is_known(s.metric) for s in samples), path.name
        assert not pick(samples, metric="tool_error"), path.name
        counters = [
            s
            for s in samples
            if s.metric in metrics.GLOSSARY and metrics.kind_of(s.metric) is metrics.COUNTER
        ]
        keys = Counter((s.entity, s.metric, s.priority, s.size_bytes) for s in counters)
        assert max(keys.values(), default=1) == 1, f"{path.name}: repeated counter keys"


def test_every_sonic_sample_parses_with_crlf_too() -> None:
    for path in real_output_files(*SONIC):
        text = path.read_text(encoding="utf-8")
        crlf = text.replace("\r\n", "\n").replace("\n", "\r\n")
        assert run(owner(path.name), crlf) == run(owner(path.name), text), path.name


def test_every_sonic_sample_tolerates_a_provenance_comment() -> None:
    for path in real_output_files(*SONIC):
        text = path.read_text(encoding="utf-8")
        noted = "# collected from a public test vector\n" + text
        assert run(owner(path.name), noted) == run(owner(path.name), text), path.name


# --- pfc counters --------------------------------------------------------------------------------------------


def test_pfc_counters_comma_and_direction() -> None:
    samples = parsed("pfc_counters__1.txt")
    assert len(samples) == 3 * 8 * 2
    assert one(samples, "Ethernet0", "rx_pause_frames", priority=0).value == 1200
    assert one(samples, "Ethernet8", "rx_pause_frames", priority=7).value == 807
    assert one(samples, "Ethernet4", "tx_pause_frames", priority=0).value == 1410
    assert one(samples, "Ethernet4", "tx_pause_frames", priority=3).raw_key == "Tx PFC3"


def test_pfc_counters_multi_asic_backplane_na() -> None:
    samples = parsed("pfc_counters__2.txt")
    assert {s.entity for s in samples} == {
        "Ethernet0", "Ethernet4", "Ethernet-BP0", "Ethernet-BP4", "Ethernet-BP256", "Ethernet-BP260",
    }  # fmt: skip
    assert one(samples, "Ethernet-BP4", "tx_pause_frames", priority=0).value == 1810
    assert all(s.value is None for s in pick(samples, "Ethernet-BP256"))
    assert len(pick(samples, "Ethernet-BP260", "rx_pause_frames")) == 8


def test_pfc_counters_cleared_and_old_format() -> None:
    assert {s.value for s in parsed("pfc_counters__3.txt")} == {0}
    old = parsed("pfc_counters__4.txt")
    assert one(old, "Ethernet4", "rx_pause_frames", priority=2).value == 402
    assert one(old, "Ethernet8", "tx_pause_frames", priority=0).value == 800


def test_pfc_counters_real_device_captures() -> None:
    plain = parsed("pfc_counters__5.txt")  # pre-2021: no separators, prompt line above
    assert [s.value for s in pick(plain, "Ethernet124")] == [137407, 0, 45659, 45660, 0, 45662, 0, 0]
    assert {s.entity for s in plain} == {"Ethernet116", "Ethernet120", "Ethernet124"}
    cleared = parsed("pfc_counters__6.txt")  # CRLF, Last cached time, hand-written `<-----` note
    assert [s.value for s in pick(cleared, "Ethernet124")] == [25007, 0, 25006, 25006, 0, 25007, 0, 0]
    abutting = parsed("pfc_counters__7.txt")  # `Ethernet124 137,407`: one space only
    assert [s.value for s in pick(abutting, "Ethernet124")] == [137407, 0, 45659, 45660, 0, 45662, 0, 0]
    assert not pick(abutting, metric="tx_pause_frames")


def test_pfc_counters_doc_sample_with_ragged_indent() -> None:
    samples = parsed("pfc_counters__8.txt")
    assert {s.entity for s in samples} == {"Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"}
    assert len(samples) == 4 * 8 * 2 and {s.value for s in samples} == {0}


def test_pfc_counters_history() -> None:
    samples = parsed("pfc_counters_history__1.txt")
    assert one(samples, "Ethernet0", "rx_pause_transitions", priority=0).value == 12
    assert one(samples, "Ethernet4", "rx_pause_duration_us", priority=3).value == 40_000_003
    assert one(samples, "Ethernet8", "rx_pause_last_duration_us", priority=7).value == 8_000_007
    assert one(samples, "Ethernet0", "rx_pause_last_time", priority=0).text == "01/10/2008, 21:20:00"
    assert len(pick(samples, metric="rx_pause_duration_us")) == 24
    multi = parsed("pfc_counters_history__2.txt")
    assert one(multi, "Ethernet-BP0", "rx_pause_duration_us", priority=1).value == 60_000_001
    assert all(s.value is None and s.text is None for s in pick(multi, "Ethernet-BP260"))


# --- pfc priority / asymmetric ----------------------------------------------------------------------------------


def test_pfc_priority_lossless_lists() -> None:
    samples = parsed("pfc_priority__1.txt")
    for port in ("Ethernet0", "Ethernet4"):
        assert [s.value for s in pick(samples, port, "pfc_enabled")] == [0, 0, 0, 1, 1, 0, 0, 0]
    added = parsed("pfc_priority__2.txt")
    assert [s.priority for s in added if s.value == 1] == [3, 4, 5]
    multi = parsed("pfc_priority__3.txt")  # `Namespace asic0` header
    assert len({s.entity for s in multi}) == 7
    assert one(multi, "Ethernet-BP260", "pfc_enabled", priority=4).value == 1


def test_pfc_asymmetric_all_off() -> None:
    samples = parsed("pfc_asymmetric__1.txt")
    assert len(samples) == 32
    assert {s.text for s in samples} == {"off"}
    assert one(samples, "Ethernet124", "pfc_asymmetric").raw_key == "Asymmetric"


# --- ecn -----------------------------------------------------------------------------------------------------


def test_ecn_azure_lossless_defaults() -> None:
    for name in ("ecn_show__1.txt", "ecn_show__3.txt", "ecn_show__4.txt"):
        samples = parsed(name)
        assert one(samples, "AZURE_LOSSLESS", "ecn_min_threshold_bytes").value == 1_048_576
        assert one(samples, "AZURE_LOSSLESS", "ecn_max_threshold_bytes").value == 2_097_152
        assert one(samples, "AZURE_LOSSLESS", "ecn_max_probability_pct").value == 5
        assert one(samples, "AZURE_LOSSLESS", "ecn_mode").text == "ecn_all"
        assert one(samples, "AZURE_LOSSLESS", "ecn_enabled").value == 1
    red = one(parsed("ecn_show__1.txt"), "AZURE_LOSSLESS", "wred_param", raw_key="red_max_threshold")
    assert red.value == 2_097_152


def test_ecn_partial_profiles() -> None:
    two = parsed("ecn_show__2.txt")
    assert one(two, "AZURE_LOSSY", "ecn_min_threshold_bytes").value == 4095
    assert one(two, "AZURE_LOSSY", "ecn_max_threshold_bytes").value == 32760
    assert one(two, "AZURE_LOSSY", "wred_param", raw_key="yellow_drop_probability").value == 2
    assert not pick(two, "AZURE_LOSSY", "ecn_mode")
    doc = parsed("ecn_show__4.txt")  # bold names, prompt, 2-space doc indent
    assert [(s.metric, s.raw_key, s.value) for s in pick(doc, "wredprofileabcd")] == [
        ("wred_param", "red_max_threshold", 100)
    ]
    assert one(doc, "AZURE_LOSSLESS", "wred_param", raw_key="wred_green_enable").value == 1


# --- queue counters ------------------------------------------------------------------------------------------


def test_queue_counters_namespace_and_old_format_agree() -> None:
    new, old = parsed("queue_counters__1.txt"), parsed("queue_counters__2.txt")
    assert new == old
    assert {s.entity for s in new} == {"Ethernet0", "Ethernet4", "Ethernet8"}
    assert len(new) == 3 * 10 * 4  # UC0..UC9 only: MC10-19 and ALL20-29 are skipped
    assert one(new, "Ethernet0", "tx_packets", priority=2).value == 82
    assert one(new, "Ethernet4", "queue_drops", priority=4).value == 82
    assert one(new, "Ethernet8", "queue_drop_bytes", priority=9).value == 61
    assert one(new, "Ethernet0", "tx_bytes", priority=1).raw_key == "UC1 Counter/bytes"


def test_queue_counters_nonzero_voq_and_json() -> None:
    nonzero = parsed("queue_counters__3.txt")
    assert sorted({s.priority for s in nonzero}) == list(range(1, 10))
    assert one(nonzero, "Ethernet8", "tx_packets", priority=9).value == 80
    voq = parsed("queue_counters__4.txt")
    assert {s.entity for s in voq} == {"testsw|Ethernet0", "testsw|Ethernet4", "testsw|Ethernet8"}
    assert one(voq, "testsw|Ethernet0", "queue_credit_wd_drops", priority=7).value == 73
    assert one(voq, "testsw|Ethernet4", "tx_packets", priority=0).value == 54
    as_json = parsed("queue_counters__5.txt")
    assert one(as_json, "Ethernet8", "tx_packets", priority=1).value == 38
    assert one(as_json, "Ethernet8", "queue_drop_bytes", priority=6).value == 85
    assert len(as_json) == 10 * 4
    table = {(s.entity, s.metric, s.priority, s.value) for s in parsed("queue_counters__1.txt")}
    assert {(s.entity, s.metric, s.priority, s.value) for s in as_json} <= table


def test_queue_watermark_unicast() -> None:
    samples = parsed("queue_watermark_unicast__1.txt")
    assert one(samples, "Ethernet0", "queue_watermark_bytes", priority=0).value == 2_057_328
    assert one(samples, "Ethernet8", "queue_watermark_bytes", priority=8).value == 8528
    assert len(samples) == 30


# --- wred counters -------------------------------------------------------------------------------------------


def test_wred_counters_per_port_summary_and_nonzero() -> None:
    full = parsed("queue_wredcounters__1.txt")
    assert one(full, "Ethernet0", "ecn_marked_packets", priority=7).value == 94
    assert one(full, "Ethernet4", "queue_drops", priority=2).raw_key == "UC2 WredDrp/pkts"
    summary = parsed("queue_wredcounters__2.txt")
    assert {s.entity for s in summary} == {"host"}
    assert one(summary, "host", "ecn_marked_packets", priority=9).value == 270
    nonzero = parsed("queue_wredcounters__3.txt")
    assert one(nonzero, "Ethernet8", "ecn_marked_bytes", priority=1).value == 91


def test_wred_counters_real_collapsed_capture() -> None:
    samples = parsed("queue_wredcounters__4.txt")
    assert one(samples, "Ethernet0", "ecn_marked_packets", priority=0).value == 20
    assert one(samples, "Ethernet8", "ecn_marked_packets", priority=0).value == 30
    assert one(samples, "Ethernet8", "queue_drop_bytes", priority=1).value == 2048
    assert one(samples, "Ethernet0", "ecn_marked_bytes", priority=0).value is None  # N/A on UC queues
    assert one(samples, "host", "ecn_marked_packets", priority=0).value == 50
    assert one(samples, "host", "queue_drops", priority=1).value == 3


def test_wred_counters_hand_edited_doc() -> None:
    samples = parsed("queue_wredcounters__5.txt")
    assert {s.entity for s in samples} == {"Ethernet0"}
    assert len(samples) == 10 * 4 and {s.value for s in samples} == {0}


# --- pfc watchdog --------------------------------------------------------------------------------------------


def test_pfcwd_stats_storm() -> None:
    samples = parsed("pfcwd_stats__1.txt")
    assert one(samples, "Ethernet0", "pfc_watchdog_status", priority=3).text == "stormed"
    assert one(samples, "Ethernet4", "pfc_watchdog_status", priority=3).text == "operational"
    assert one(samples, "Ethernet8", "pfc_watchdog_storms", priority=4).value == 3
    assert one(samples, "Ethernet8", "pfc_watchdog_restorations", priority=4).value == 2
    assert one(samples, "Ethernet0", "pfc_watchdog_tx_drops", priority=3).value == 300


def test_pfcwd_stats_watchdog_stopped_sixteen_queues() -> None:
    samples = parsed("pfcwd_stats__2.txt")
    statuses = pick(samples, metric="pfc_watchdog_status")
    assert len(statuses) == 6 * 16 and all(s.text is None for s in statuses)
    assert one(samples, "Ethernet0", "pfc_watchdog_storms", priority=2).value == 1
    assert one(samples, "Ethernet0", "pfc_watchdog_rx_drops", priority=0).value == 47
    assert one(samples, "Ethernet4", "pfc_watchdog_tx_drops", priority=10).value == 17


def test_pfcwd_config_variants() -> None:
    single = parsed("pfcwd_config__1.txt")
    assert one(single, "host", "pfc_watchdog_poll_interval_ms").value == 600
    assert one(single, "Ethernet8", "pfc_watchdog_detection_time_ms").value == 600
    assert one(single, "Ethernet4", "pfc_watchdog_history").text == "disable"
    multi = parsed("pfcwd_config__2.txt")
    assert one(multi, "asic1", "pfc_watchdog_poll_interval_ms").value == 199
    assert one(multi, "asic0", "pfc_watchdog_big_red_switch").text == "enable"
    assert one(multi, "Ethernet-BP256", "pfc_watchdog_restoration_time_ms").value == 200
    mixed = parsed("pfcwd_config__3.txt")
    assert one(mixed, "Ethernet0", "pfc_watchdog_action").text == "forward"
    assert one(mixed, "Ethernet4", "pfc_watchdog_restoration_time_ms").value == 301
    assert one(mixed, "Ethernet8", "pfc_watchdog_action").text == "drop"


# --- priority groups -----------------------------------------------------------------------------------------


def test_pg_drop_counters() -> None:
    samples = parsed("pg_drop_counters__1.txt")
    assert one(samples, "Ethernet0", "queue_drops", priority=3).value == 803
    assert one(samples, "Ethernet8", "queue_drops", priority=7).raw_key == "PG7"
    multi = parsed("pg_drop_counters__2.txt")  # PG0..PG15
    assert len(multi) == 6 * 16
    assert one(multi, "Ethernet-BP4", "queue_drops", priority=15).value == 0
    assert one(multi, "Ethernet0", "queue_drops", priority=12).value is None
    doc = parsed("pg_drop_counters__3.txt")
    assert len({s.entity for s in doc}) == 4 and {s.value for s in doc} == {0}


def test_pg_watermarks() -> None:
    shared = parsed("pg_watermark_shared__1.txt")
    assert {s.metric for s in shared} == {"pg_shared_watermark_bytes"}
    assert one(shared, "Ethernet4", "pg_shared_watermark_bytes", priority=3).value == 403
    persistent = parsed("pg_persistent_watermark_shared__1.txt")
    assert one(persistent, "Ethernet8", "pg_shared_watermark_bytes", priority=0).value == 900
    headroom = parsed("pg_watermark_headroom__1.txt")
    assert one(headroom, "Ethernet0", "pg_headroom_watermark_bytes", priority=7).value == 107


# --- portstat ------------------------------------------------------------------------------------------------


def test_portstat_rates_and_na() -> None:
    samples = parsed("interfaces_counters__1.txt")
    assert one(samples, "Ethernet0", "oper_state").text == "Down"
    assert one(samples, "Ethernet0", "rx_bandwidth_gbps").value == 16.0  # 2000.00 MB/s
    assert one(samples, "Ethernet0", "rx_util_pct").value == 64.0
    assert one(samples, "Ethernet4", "rx_discards").value == 1000
    assert one(samples, "Ethernet8", "tx_bandwidth_gbps").value == pytest.approx(0.10696)  # 13.37 MB/s
    assert one(samples, "Ethernet8", "rx_errors").value == 100
    assert one(samples, "Ethernet9", "tx_errors").value is None
    assert one(samples, "Ethernet4", "oper_state").text is None


def test_portstat_real_congested_port() -> None:
    samples = parsed("interfaces_counters__2.txt")
    assert one(samples, "Ethernet124", "tx_discards").value == 429_517
    assert one(samples, "Ethernet124", "tx_packets").value == 363_470
    assert one(samples, "Ethernet4", "rx_packets").value == 804_864
    assert one(samples, "Ethernet0", "oper_state").text == "Disabled"
    assert one(samples, "Ethernet120", "oper_state").text == "Up"


def test_portstat_detailed() -> None:
    samples = parsed("interfaces_counters_detailed__1.txt")
    assert {s.entity for s in samples} == {"port"}  # the output does not name its port
    assert one(samples, metric="rx_packets").value == 4
    assert one(samples, metric="tx_packets").value == 40
    assert one(samples, metric="queue_drops").value == 101
