"""The tool-error check every line passes: its fast path (a lowercased ASCII line against a case-sensitive copy of
the alternation) answers exactly what trying each case-insensitive pattern in turn answers; likewise the ethtool
counter line read without its expression."""

from __future__ import annotations

import re

import pytest

from rdmatool.parsers import _common, _ibinfo, _nic

LINES = [
    "Couldn't connect to 10.0.0.2:18515",
    "COULDN'T CONNECT TO 10.0.0.2",
    "ibpanic: [1234] main: stat of IB device 'mlx5_9' failed",
    "IB device mlx5_3 Not Found",
    "bash: ibstat: command NOT found",
    "     rx_packets: 6825541931",
    "     rx_crc_errors_phy: 0",
    "-E- Failed to open device",
    "-e- lower-case prefix",
    "error: something",
    "Error : something",
    "errors: 5",
    "netlink error: Operation not supported",
    "Cannot get stats: No such device",
    "mlxlink: bad port",
    # non-ASCII lines take the case-insensitive expression itself: the Kelvin sign folds to k, the dotless i does not
    "no such device \u212a",
    "\u212aouldn't connect to x",
    "no such dev\u0131ce",
    "Completion with error \u00e9",
    "failed status 12",
    "",
]


def one_by_one(patterns, line: str) -> bool:
    return any(p.search(line) for p in patterns)


@pytest.mark.parametrize("line", LINES)
def test_the_shared_alternation_answers_as_each_pattern(line: str) -> None:
    stripped = line.strip()
    expected = one_by_one(_common.TOOL_ERROR_PATTERNS, stripped)
    assert (_common.tool_error_message(line) is not None) == expected


@pytest.mark.parametrize("line", LINES)
def test_the_nic_tools_alternation_answers_as_each_pattern(line: str) -> None:
    stripped = line.strip()
    expected = one_by_one((*_common.TOOL_ERROR_PATTERNS, *_nic._LOCAL_TOOL_ERRORS), stripped)
    assert (_nic.nic_tool_error(line) is not None) == expected


@pytest.mark.parametrize("line", ["IB device 'mlx5_7' wasn't found", "  Failed to query port", "fine: 1", "x"])
def test_the_verbs_tools_alternation_answers_as_one_expression(line: str) -> None:
    original = re.compile(r"IB device '[^']*' wasn'?t found|^\s*failed to (?:open|query) |^\s*libibverbs: fatal"
                          r"|error while loading shared libraries", re.IGNORECASE)
    assert _ibinfo._EXTRA_TOOL_ERRORS.search(line) == bool(original.search(line))


def test_an_uppercase_literal_keeps_the_case_insensitive_search() -> None:
    found = _common.any_of([re.compile(r"^-E-", re.IGNORECASE)])
    assert found.lowered is None  # the lowercased line would never hold `E`
    assert found.search("-e- x") and found.search("-E- x") and not found.search("x -E-")
    coded = _common.any_of([re.compile(r"\x41bc", re.IGNORECASE)])  # `A` by its code
    assert coded.lowered is None and coded.search("abc")


def test_the_patterns_of_every_line_take_the_fast_path() -> None:
    # the speed of a large parse depends on it: a pattern written with an uppercase literal would silently lose it
    assert _common._ANY_TOOL_ERROR.lowered is not None
    assert _nic._ANY_LOCAL_TOOL_ERROR.lowered is not None
    assert _ibinfo._EXTRA_TOOL_ERRORS.lowered is not None


@pytest.mark.parametrize("line", [
    "     rx_packets: 6825541931", "rx_prio3_pause: 1,234", "  name with spaces  :  12  ", "x:1", ":5", "x:", "x: ",
    "x: 1 2", "x: a:b", "no colon here", "  \u00a0rx\u00a0: 7\u00a0", "a:b: c", "x :\t9\t", "",
])
def test_ethtool_counter_lines_read_as_the_expression_reads_them(line: str) -> None:
    from rdmatool.parsers import ethtool_stats

    match = ethtool_stats._COUNTER.match(line)
    assert ethtool_stats._counter_fields(line) == ((match["name"], match["value"]) if match else None)
