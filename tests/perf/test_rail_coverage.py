"""Every RDMA rail of a host is tested or named with why: discovery says which NICs perftest cannot run on (port
down, no usable GID), the session names every NIC a run does not test, and a NIC down on one host while the NIC of
the same name runs on the others is that host's rail down — a bad NIC, never "all pairs at speed"."""

from __future__ import annotations

import pytest

from rdmatool.model import Target
from rdmatool.perf import discovery, engine
from rdmatool.perf.model import PerfOptions
from rdmatool.perf.remote import RunResult


def roce(device: str, octet: int, state: str = "4: ACTIVE", gid: bool = True) -> list[str]:
    base = f"/sys/class/infiniband/{device}/ports/1"
    lines = [f"{base}/link_layer:Ethernet", f"{base}/state:{state}", f"{base}/rate:200 Gb/sec (4X HDR)"]
    if gid:
        lines += [f"{base}/gid_attrs/types/3:RoCE v2", f"{base}/gids/3:0000:0000:0000:0000:0000:ffff:0a00:00{octet:02x}",
                  f"{base}/gid_attrs/ndevs/3:eth{device[-1]}"]
    return lines


def ib(device: str, state: str = "4: ACTIVE") -> list[str]:
    base = f"/sys/class/infiniband/{device}/ports/1"
    return [f"{base}/link_layer:InfiniBand", f"{base}/state:{state}", f"{base}/rate:400 Gb/sec (4X NDR)"]


def text(*ports: list[str]) -> str:
    return "\n".join(line for port in ports for line in port) + "\n"


def test_discovery_says_why_a_nic_cannot_be_tested() -> None:
    found = discovery.unusable(text(roce("mlx5_0", 1), roce("mlx5_1", 2, state="1: DOWN"), roce("mlx5_2", 3, gid=False),
                                    ib("mlx5_3", state="2: INIT")))
    assert found == {"mlx5_1": ("Ethernet", "port 1 DOWN"),
                     "mlx5_2": ("Ethernet", "port 1: no RoCE v2 GID with an IPv4 address"),
                     "mlx5_3": ("InfiniBand", "port 1 INIT")}


class Discovered:
    """A stand-in for the SSH side: each host's discovery answers with its scripted ports."""

    answers: dict[str, str] = {}

    def __init__(self, target: Target, known, timeout: float, jumps=None) -> None:
        self.name = target.name

    def run(self, command, timeout, stdin=None, stop=None) -> RunResult:
        return RunResult(0, Discovered.answers[self.name], "")

    def close(self) -> None:
        pass


@pytest.fixture
def session(monkeypatch):
    monkeypatch.setattr(engine, "Remote", Discovered)
    monkeypatch.setattr(engine, "KnownHosts", lambda *a: None)

    def make(answers: dict[str, str], **options) -> engine.PerfSession:
        Discovered.answers = answers
        s = engine.PerfSession([Target(name, f"10.0.0.{i}") for i, name in enumerate(answers, 1)],
                               PerfOptions(forks=1, **options))
        s.open()
        return s

    return make


def fleet(down_on_gpu02: str = "1: DOWN") -> dict[str, str]:
    """Three hosts with two RoCE rails (mlx5_0, mlx5_1) and an InfiniBand NIC; gpu02's mlx5_1 in `down_on_gpu02`;
    every host's mlx5_4 never cabled."""
    return {name: text(roce("mlx5_0", 10 + k), roce("mlx5_1", 20 + k, state=down_on_gpu02 if name == "gpu02"
                                                       else "4: ACTIVE"), ib("mlx5_2"), ib("mlx5_4", "1: DOWN"))
            for k, name in enumerate(("gpu01", "gpu02", "gpu03"))}


def test_a_rail_down_on_one_host_is_a_down_rail_and_every_untested_nic_is_named(session) -> None:
    s = session(fleet())
    assert s.rails == {"gpu01": ["mlx5_0", "mlx5_1"], "gpu02": ["mlx5_0"], "gpu03": ["mlx5_0", "mlx5_1"]}
    assert s.down_rails() == {("gpu02", "mlx5_1"): "Ethernet port 1 DOWN"}  # mlx5_4 is down everywhere: no rail
    untested = s.untested(rail_aligned=True)
    assert untested["gpu02"] == {"mlx5_1": "Ethernet port 1 DOWN", "mlx5_2": "InfiniBand: the run tests Ethernet NICs",
                                 "mlx5_4": "InfiniBand port 1 DOWN"}
    assert untested["gpu01"] == {"mlx5_2": "InfiniBand: the run tests Ethernet NICs",
                                 "mlx5_4": "InfiniBand port 1 DOWN"}
    one_nic = s.untested(rail_aligned=False)["gpu01"]
    assert one_nic["mlx5_1"] == "Ethernet: one NIC per host in this run (mlx5_0)"


def test_all_rails_up_is_no_down_rail(session) -> None:
    s = session(fleet(down_on_gpu02="4: ACTIVE"))
    assert s.down_rails() == {}
    assert "mlx5_1" not in s.untested(rail_aligned=True).get("gpu02", {})


def test_a_fixed_device_names_the_others_and_blames_none(session) -> None:
    s = session(fleet(), device="mlx5_0")
    assert s.down_rails() == {}  # the run was told to test mlx5_0 alone
    assert s.untested(rail_aligned=False)["gpu01"]["mlx5_1"] == "Ethernet: not the run's device mlx5_0"
