"""A host whose port discovery was not read to its end is missing (the verdict inconclusive), never a host with no
port (which names it a bad node): the session's reading of discovery, with a stand-in for the SSH side."""

from __future__ import annotations

import pytest

from rdmatool.model import Target
from rdmatool.perf import engine
from rdmatool.perf.model import PerfOptions
from rdmatool.perf.remote import RunResult

# what the discovery script prints for one active RoCE port with an IPv4 RoCE v2 GID (index 3, 10.0.0.1)
PORT = "\n".join([
    "/sys/class/infiniband/mlx5_0/ports/1/link_layer:Ethernet",
    "/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE",
    "/sys/class/infiniband/mlx5_0/ports/1/rate:100 Gb/sec (4X EDR)",
    "/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/3:RoCE v2",
    "/sys/class/infiniband/mlx5_0/ports/1/gids/3:0000:0000:0000:0000:0000:ffff:0a00:0001",
    "/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/3:eth2",
    "netdev:mlx5_0:eth2",
]) + "\n"


class StandInRemote:
    """Answers each discovery with the next of the host's scripted results."""

    answers: dict[str, list[RunResult]] = {}
    calls: dict[str, int] = {}

    def __init__(self, target: Target, known, timeout: float, jumps=None) -> None:
        self.name = target.name

    def run(self, command, timeout, stdin=None, stop=None) -> RunResult:
        StandInRemote.calls[self.name] = StandInRemote.calls.get(self.name, 0) + 1
        return StandInRemote.answers[self.name].pop(0)

    def close(self) -> None:
        pass


@pytest.fixture
def session(monkeypatch):
    monkeypatch.setattr(engine, "Remote", StandInRemote)
    monkeypatch.setattr(engine, "KnownHosts", lambda *a: None)
    StandInRemote.calls = {}

    def make(answers: dict[str, list[RunResult]]) -> engine.PerfSession:
        StandInRemote.answers = {k: list(v) for k, v in answers.items()}
        targets = [Target(name, f"10.0.0.{i}") for i, name in enumerate(answers, 1)]
        s = engine.PerfSession(targets, PerfOptions(forks=1))
        s.open()
        return s

    return make


def test_a_discovery_cut_by_its_bound_twice_makes_the_host_missing_not_portless(session) -> None:
    s = session({"gpu01": [RunResult(0, PORT, "")], "gpu02": [RunResult(None, "", ""), RunResult(None, "", "")]})
    assert StandInRemote.calls["gpu02"] == 2  # tried once more
    assert set(s.missing) == {"gpu02"}
    assert "discovery not read" in s.missing["gpu02"] and "2 tries" in s.missing["gpu02"]
    assert s.reachable == ["gpu01"] and s.hosts["gpu02"].unusable is None
    assert s.devices == {"gpu01": "mlx5_0"}


def test_a_discovery_answered_on_its_second_try_is_used(session) -> None:
    s = session({"gpu01": [RunResult(0, PORT, "")], "gpu02": [RunResult(None, "", ""), RunResult(0, PORT, "")]})
    assert s.missing == {}
    assert s.devices == {"gpu01": "mlx5_0", "gpu02": "mlx5_0"}


def test_a_failed_shell_makes_the_host_missing_with_what_it_said(session) -> None:
    s = session({"gpu01": [RunResult(0, PORT, "")],
                 "gpu02": [RunResult(255, "", "warming up\nsh: fork: Resource temporarily unavailable\n")]})
    assert StandInRemote.calls["gpu02"] == 1  # a failure, not a timeout: not tried again
    assert s.missing["gpu02"] == ("gpu02: discovery not read: the shell exited with status 255: "
                                  "sh: fork: Resource temporarily unavailable")


def test_a_discovery_read_to_its_end_with_no_port_is_a_host_without_one(session) -> None:
    # the other side of the line: the script ran to `exit 0` and found nothing, a real finding about the host
    s = session({"gpu01": [RunResult(0, PORT, "")], "gpu02": [RunResult(0, "", "")]})
    assert s.missing == {}
    assert "no active Ethernet port usable for perftest (found: none)" in s.hosts["gpu02"].unusable


def test_a_channel_that_fails_during_discovery_makes_the_host_missing(session, monkeypatch) -> None:
    def broken(self, *a, **k):
        raise EOFError("channel closed")

    monkeypatch.setattr(StandInRemote, "run", broken)
    s = session({"gpu01": []})
    assert s.missing == {"gpu01": "gpu01: discovery failed: EOFError: channel closed"}
