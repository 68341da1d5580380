"""The watch's light snapshot (commands.SNAPSHOT_WATCH) and the subset a watch keeps of it (rdmatool.watch.light)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rdmatool import commands
from rdmatool.model import CommandResult, Target
from rdmatool.transport import host_framing
from rdmatool.transport.local import LocalSession
from rdmatool.watch import light, lines
from rdmatool.watch.light import HostReader, reading_of


def _parsers(mode: str) -> list[str]:
    token = commands.new_token()
    session = LocalSession(Target("node1", "localhost"))
    text, error = session._run_script(commands.local_entry_argv(10, mode), commands.host_script(token).encode(),
                                      time.monotonic() + 30, None)
    sections, broken = host_framing.split_sections(text, token, mode)
    assert error is None and broken is None
    return [s.parser for s in sections]


def test_the_watch_snapshot_stops_after_the_port_views() -> None:
    assert "loadavg" in _parsers(commands.SNAPSHOT_COUNTERS)  # what the counters snapshot reads besides the ports
    assert not {"loadavg", "lldpctl", "psi", "nvidia_smi"} & set(_parsers(commands.SNAPSHOT_WATCH))
    assert commands.host_entry_command(20, commands.SNAPSHOT_WATCH) == "sh -s -- 20 watch"


def _result(parser: str, qualifier: str, stdout: str) -> CommandResult:
    return CommandResult("gpu01", parser, parser, stdout, 0, "", qualifier, "", 0.1, None)


def test_the_light_subset_named_as_the_bundle_names_it() -> None:
    ethtool = "NIC statistics:\n     rx_prio3_pause: 120\n     rx_bytes: 99999\n     rx_discards_phy: 4\n"
    reading = reading_of("gpu01", 5.0, [_result("ethtool_stats", "ens1f0np0", ethtool)])
    assert reading.counters[("ens1f0np0", "rx_pause_frames", 3)] == 120.0  # the netdev, not the parser's placeholder
    assert ("ens1f0np0", "rx_bytes", None) not in reading.counters  # byte counts are not watched
    broken = reading_of("gpu01", 5.0, [_result("ethtool_stats", "eth2", "rx_prio3_pause: lots\n")])
    assert broken.counters == {}  # an output its parser refuses is left out, not an error


class _Broken:
    def run_snapshot(self, *args):
        raise OSError("connection reset")

    def close(self):
        raise OSError("already gone")


def test_a_host_whose_session_breaks_is_a_gap_and_is_opened_again() -> None:
    opened = []
    reader = HostReader(Target("gpu01", "127.0.0.1"), lambda t, deadline: opened.append(t) or _Broken())
    assert reader.read(time.monotonic() + 5) == (None, "OSError: connection reset")
    reader.read(time.monotonic() + 5)
    assert len(opened) == 2  # a broken session is closed (whatever its close says) and opened again next time


@pytest.mark.parametrize("parser", ["ethtool_stats", "sysfs_counters", "perfquery"])
def test_reading_only_the_kept_lines_reads_the_same(parser: str, monkeypatch) -> None:
    """Every fixture of the parsers read through rdmatool.watch.lines: the watch's reading of the lines it keeps, and of the values
    alone once their shape is known (rdmatool.watch.lines), is its reading of the whole output (a fixture the parser
    refuses is refused both ways)."""
    folder = Path(__file__).resolve().parents[1] / "fixtures" / "parsers" / parser
    fixtures = sorted(folder.glob("*.txt"))
    assert len(fixtures) >= 3
    for fixture in fixtures:
        qualifier = "mlx5_0.1" if parser == "perfquery" else "ens1f0np0"
        result = CommandResult("gpu01", parser, "x", fixture.read_text(), qualifier=qualifier)
        lines.clear()
        filtered = light.reading_of("gpu01", 1.0, [result])
        monkeypatch.setattr(light, "FILTERED", frozenset())
        whole = light.reading_of("gpu01", 1.0, [result])
        monkeypatch.undo()
        if fixture.with_suffix(".error").exists():
            assert filtered.counters == whole.counters == {}, fixture.name
        assert (filtered.counters, filtered.states) == (whole.counters, whole.states), fixture.name
        again = light.reading_of("gpu01", 2.0, [result])  # the shape learnt: read by its values alone
        assert (again.counters, again.states) == (whole.counters, whole.states), fixture.name
