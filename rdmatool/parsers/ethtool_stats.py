"""`ethtool -S <if>`: NIC port counters (mlx5 / mlx4): pauses, discards, PHY errors, per-priority traffic.

Command: `ethtool -S <netdev>` (the collector runs it once per RoCE interface and stores each output per interface).
Emits (entity `netdev`, a placeholder: ethtool -S does not name the interface, so the bundle analysis replaces it
with the interface the output was stored under; all counters, ints):
    per priority (priority column 0-7): `rx_pause_frames` / `tx_pause_frames` (rx|tx_prioN_pause,
    mlx4 rx|tx_pause_prio_N), `rx_pause_duration_us` / `tx_pause_duration_us` (..._pause_duration),
    `rx_pause_transitions` (rx_prioN_pause_transition), `rx_bytes` / `tx_bytes` / `rx_packets` / `tx_packets`
    (rx|tx_prioN_bytes|packets, mlx4 rx|tx_prio_N_bytes|packets), `rx_discards` (rx_prioN_discards, else
    _buf_discard, else _cong_discard), `ecn_marked_packets` (rx_prioN_marked);
    port level (priority None): `rx_pause_frames` / `tx_pause_frames` (global pause: rx|tx_pause_ctrl_phy, else
    rx|tx_global_pause, mlx4 rx|tx_pause), `rx_pause_duration_us` / `tx_pause_duration_us` (global),
    `rx_discards` (rx_discards_phy), `tx_discards` (tx_discards_phy), `rx_out_of_buffer`, `rx_crc_errors`
    (rx_crc_errors_phy), `rx_symbol_errors` (rx_symbol_err_phy), `rx_corrected_bits` (rx_corrected_bits_phy),
    `link_down_events` (link_down_events_phy), `fec_corrected_blocks` / `fec_uncorrectable_blocks`,
    `pause_storm_events` (tx_pause_storm_warning_events, else tx_pause_storm_error_events),
    `ecn_marked_packets` (rx_ecn_mark), `rx_bytes` / `tx_bytes` / `rx_packets` / `tx_packets` (the *_phy wire
    counters, else the software ones); a `tool_error` sample when ethtool reports its own failure.
Example:
    NIC statistics:
         rx_packets: 1208361
         rx_prio3_pause: 1,234
         rx_discards_phy: 0
Caveats: each (metric, priority) is emitted once: when several raw counters map onto it, the wire (`_phy`) counter
wins over the software one and the first name listed above wins otherwise; raw_key says which one was kept.
Per-queue (rx0_*, tx3_*, ch_*) and the hundreds of other well-formed `name: number` lines are accepted and not
emitted; any other line is a ParseError. `N/A` gives value None. No verbatim dump was available here: the fixtures
follow the kernel's mlx5 counters.rst names and the mlx4 driver's names (NVIDIA "Understanding mlx5 ethtool
Counters").
An empty output (nothing, or white space only) is a ParseError, `empty output: ethtool -S printed nothing`, on which
`rdmatool parse` exits 2: ethtool -S always prints its `NIC statistics:` header when it succeeds, so an empty answer
is missing data, not "nothing wrong".
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines, refuse_empty
from rdmatool.parsers._nic import NETDEV, is_noise, nic_tool_error, strip_ansi
from rdmatool.parsers._samples import counter, tool_error

NAME = "ethtool_stats"

_HEADER = re.compile(
    r"^\s*(?:NIC statistics|Standard stats for \S+|Statistics for \S+)\s*:\s*$", re.IGNORECASE
)
# What a counter line is; `_counter_fields` reads it the same way without the expression (a test holds them equal).
_COUNTER = re.compile(r"^\s*(?P<name>[^:\s][^:]*?)\s*:\s*(?P<value>\S+)\s*$")


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    metric: str  # may contain {dir}; filled from the `dir` group
    rank: int  # lower wins when several raw counters map onto the same (metric, priority)


def _rule(pattern: str, metric: str, rank: int = 0) -> _Rule:
    return _Rule(re.compile(pattern), metric, rank)


# Order matters only for readability; `rank` decides duplicates. The `prio` group, when present, is the priority.
_RULES: tuple[_Rule, ...] = (
    # mlx5 per priority
    _rule(r"^(?P<dir>rx|tx)_prio(?P<prio>[0-7])_pause$", "{dir}_pause_frames"),
    _rule(r"^(?P<dir>rx|tx)_prio(?P<prio>[0-7])_pause_duration$", "{dir}_pause_duration_us"),
    _rule(r"^rx_prio(?P<prio>[0-7])_pause_transition$", "rx_pause_transitions"),
    _rule(r"^(?P<dir>rx|tx)_prio(?P<prio>[0-7])_bytes$", "{dir}_bytes"),
    _rule(r"^(?P<dir>rx|tx)_prio(?P<prio>[0-7])_packets$", "{dir}_packets"),
    _rule(r"^rx_prio(?P<prio>[0-7])_discards$", "rx_discards", 0),
    _rule(r"^rx_prio(?P<prio>[0-7])_buf_discard$", "rx_discards", 1),
    _rule(r"^rx_prio(?P<prio>[0-7])_cong_discard$", "rx_discards", 2),
    _rule(r"^rx_prio(?P<prio>[0-7])_marked$", "ecn_marked_packets"),
    # mlx4 per priority
    _rule(r"^(?P<dir>rx|tx)_pause_prio_(?P<prio>[0-7])$", "{dir}_pause_frames"),
    _rule(r"^(?P<dir>rx|tx)_pause_duration_prio_(?P<prio>[0-7])$", "{dir}_pause_duration_us"),
    _rule(r"^rx_pause_transition_prio_(?P<prio>[0-7])$", "rx_pause_transitions"),
    _rule(r"^(?P<dir>rx|tx)_prio_(?P<prio>[0-7])_bytes$", "{dir}_bytes"),
    _rule(r"^(?P<dir>rx|tx)_prio_(?P<prio>[0-7])_packets$", "{dir}_packets"),
    # global (802.3x) pause: the PHY control-frame counter first, then the mlx5 / mlx4 global ones
    _rule(r"^(?P<dir>rx|tx)_pause_ctrl_phy$", "{dir}_pause_frames", 0),
    _rule(r"^(?P<dir>rx|tx)_global_pause$", "{dir}_pause_frames", 1),
    _rule(r"^(?P<dir>rx|tx)_pause$", "{dir}_pause_frames", 2),
    _rule(r"^(?P<dir>rx|tx)_global_pause_duration$", "{dir}_pause_duration_us", 0),
    _rule(r"^(?P<dir>rx|tx)_pause_duration$", "{dir}_pause_duration_us", 1),
    _rule(r"^rx_global_pause_transition$", "rx_pause_transitions", 0),
    _rule(r"^rx_pause_transition$", "rx_pause_transitions", 1),
    # port level
    _rule(r"^rx_discards_phy$", "rx_discards"),
    _rule(r"^tx_discards_phy$", "tx_discards"),
    _rule(r"^rx_out_of_buffer$", "rx_out_of_buffer"),
    _rule(r"^rx_crc_errors_phy$", "rx_crc_errors", 0),
    _rule(r"^rx_crc_errors$", "rx_crc_errors", 1),
    _rule(r"^rx_symbol_err_phy$", "rx_symbol_errors", 0),
    _rule(r"^rx_pcs_symbol_err_phy$", "rx_symbol_errors", 1),
    _rule(r"^rx_corrected_bits_phy$", "rx_corrected_bits"),
    _rule(r"^link_down_events_phy$", "link_down_events"),
    _rule(r"^(?:rx_)?fec_corrected_blocks(?:_phy)?$", "fec_corrected_blocks"),
    _rule(r"^(?:rx_)?fec_uncorrect(?:able|ed)_blocks(?:_phy)?$", "fec_uncorrectable_blocks"),
    # every error event is preceded by warning events, so the warning count is the earlier and fuller signal
    _rule(r"^tx_pause_storm_warning_events$", "pause_storm_events", 0),
    _rule(r"^tx_pause_storm_error_events$", "pause_storm_events", 1),
    _rule(r"^rx_ecn_mark$", "ecn_marked_packets"),
    # wire counters beat the software ones of the same name
    _rule(r"^(?P<dir>rx|tx)_bytes_phy$", "{dir}_bytes", 0),
    _rule(r"^(?P<dir>rx|tx)_packets_phy$", "{dir}_packets", 0),
    _rule(r"^(?P<dir>rx|tx)_bytes$", "{dir}_bytes", 1),
    _rule(r"^(?P<dir>rx|tx)_packets$", "{dir}_packets", 1),
)


@functools.lru_cache(maxsize=4096)
def _map(name: str) -> tuple[str, int | None, int] | None:
    """(metric, priority, rank) for a raw counter name, or None when it is not one we emit.

    Cached: a fleet's NICs print the same few hundred names, and trying the rules in order for each would be the
    costliest step of parsing a large bundle."""
    for rule in _RULES:
        match = rule.pattern.match(name)
        if match:
            groups = match.groupdict()
            metric = rule.metric.format(dir=groups.get("dir") or "")
            priority = int(groups["prio"]) if groups.get("prio") is not None else None
            return metric, priority, rule.rank
    return None


def _counter_fields(line: str) -> tuple[str, str] | None:
    """(name, value) of a `name: value` line, exactly as `_COUNTER` reads it (the name runs to the first colon, the
    value is one word), without the expression: 300,000 lines of a fleet's outputs pass here."""
    name, colon, rest = line.partition(":")
    name, value = name.strip(), rest.strip()
    if not colon or not name or not value or len(value.split()) != 1:
        return None
    return name, value


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "ethtool -S", text)
    # (metric, priority) -> (rank, input position, sample): duplicates resolved by rank, output in input order
    chosen: dict[tuple[str, int | None], tuple[int, int, Sample]] = {}
    errors: list[tuple[int, Sample]] = []
    for line_no, raw_line in lines(text):
        line = strip_ansi(raw_line)
        if is_noise(line) or (line.rstrip().endswith(":") and _HEADER.match(line)):  # a header ends with its colon
            continue
        message = nic_tool_error(line)
        if message is not None:
            errors.append((line_no, tool_error(NETDEV, message)))
            continue
        fields = _counter_fields(line)
        if fields is None:
            raise ParseError(NAME, line_no, raw_line)
        name, raw_value = fields
        value = counter(NAME, line_no, raw_line, raw_value, fraction="a counter must be an integer")
        mapped = _map(name)
        if mapped is None:
            continue
        metric, priority, rank = mapped
        key = (metric, priority)
        if key in chosen and chosen[key][0] <= rank:
            continue
        chosen[key] = (rank, line_no, Sample(NETDEV, metric, value, priority=priority, raw_key=name))
    ordered = sorted([(pos, s) for _, pos, s in chosen.values()] + errors, key=lambda item: item[0])
    return [sample for _, sample in ordered]
