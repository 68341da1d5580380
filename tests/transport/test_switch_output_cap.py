"""A switch printing without end fails at the run's snapshot cap, its command named and what it sent kept, and the
collector's memory stays bounded (rdmatool.transport.switch, rdmatool.limits).

netmiko's real driver and its real `send_command` read loop run here; only the SSH channel under it is a stand-in
(netmiko's `auto_connect=False`), one that answers the prompt and then sends lines for ever.
"""

from __future__ import annotations

import tracemalloc

import pytest
from netmiko import ConnectHandler

from rdmatool import commands, limits
from rdmatool.model import Platform, Target, TargetKind
from rdmatool.transport import switch


class _EndlessChannel:
    """An SSH channel whose switch prints its prompt, then (after a `show` command) lines without end."""

    def __init__(self, line: bytes = b"Ethernet1/1  up  100G  " + b"x" * 200 + b"\n") -> None:
        self.line = line.decode()
        self.flooding = False
        self.pending = ""

    def write_channel(self, data: str) -> None:
        if data.strip().startswith("show"):
            self.pending += data  # the CLI echoes the command, as netmiko waits for it to
            self.flooding = True
        else:
            self.pending += "\nleaf01# "

    def read_channel(self) -> str:
        out, self.pending = self.pending, ""
        return out + (self.line * 256 if self.flooding else "")

    def read_buffer(self) -> str:
        return self.read_channel()


def _session() -> switch.SwitchSession:
    conn = ConnectHandler(device_type="cisco_nxos", host="leaf01", username="u", password="p",  # noqa: S106
                          auto_connect=False, fast_cli=True)
    conn.channel = _EndlessChannel()
    conn.base_prompt = "leaf01"
    session = switch.SwitchSession.__new__(switch.SwitchSession)  # connected already: no login to a real switch
    session.target = Target(name="leaf01", address="127.0.0.1", kind=TargetKind.SWITCH, platform=Platform.NXOS)
    session.conn = conn
    return session


@pytest.fixture
def small_cap():
    limits.configure({"snapshot_bytes": 2 * limits.MIB})
    yield 2 * limits.MIB
    limits.configure({})


def _plan(*texts: str) -> list[commands.PlannedCommand]:
    return [commands.PlannedCommand(parser="nxos_interface", qualifier=None, command=text) for text in texts]


def test_an_endless_switch_output_stops_at_the_cap_naming_the_command(small_cap) -> None:
    session = _session()
    tracemalloc.start()
    results = session.run(_plan("show interface", "show queuing interface"), command_timeout=60, deadline=1e12)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(results) == 1  # the CLI is stuck mid-output: the next command would read its leftovers
    first = results[0]
    assert first.error.startswith("show interface: the switch sent more than 2097152 bytes for one snapshot")
    assert "Ethernet1/1  up  100G" in first.stdout[:200] and len(first.stdout) <= small_cap
    assert peak < 12 * small_cap, peak  # bounded by the cap, not by what the switch sends
    assert session.conn.read_channel.__self__ is session.conn  # netmiko's own reader is back after the run


def test_a_switch_within_the_cap_is_read_whole() -> None:
    session = _session()
    session.conn.channel = channel = _EndlessChannel()
    calls = {"n": 0}

    def bounded() -> str:  # 40 pieces, then the prompt
        calls["n"] += 1
        if channel.flooding and calls["n"] > 40:
            channel.flooding = False
            return "\nleaf01# "
        return _EndlessChannel.read_channel(channel)

    channel.read_channel = bounded
    results = session.run(_plan("show interface"), command_timeout=60, deadline=1e12)
    assert results[0].error is None
    assert results[0].stdout.count("Ethernet1/1") >= 30 * 256
