"""The simulated fabric's iblinkinfo (tests/fabric/subnet.py + shims/iblinkinfo.py) in the layout the real parser
reads: every line parses, each cable is named from both ends, a dark host port is a Down switch port."""

from __future__ import annotations

import pytest

from rdmatool.parsers import iblinkinfo as parser
from tests.e2e.test_ib_subnet import leaf_spine
from tests.fabric import subnet
from tests.fabric.shims.iblinkinfo import render


def samples(faults=None) -> dict[tuple[str, str], str]:
    eff = leaf_spine(faults).effective()
    out = {}
    for s in parser.parse(render(eff["index"]["subnet"])):
        out[(s.entity, s.metric)] = s.text if s.text is not None else s.value
    return out


def test_every_cable_is_seen_from_both_ends_at_its_rate() -> None:
    got = samples()
    assert got[("MF0;ib-leaf01:MQM9790/U1/2", "ib_link_neighbor")] == "gpu02 mlx5_0|1"
    assert got[("gpu02 mlx5_0/1", "ib_link_neighbor")] == "MF0;ib-leaf01:MQM9790/U1|2"
    assert got[("MF0;ib-leaf02:MQM9790/U1/8", "ib_link_neighbor")] == "MF0;ib-spine01:MQM9790/U1|2"
    assert got[("MF0;ib-spine01:MQM9790/U1/2", "ib_link_neighbor")] == "MF0;ib-leaf02:MQM9790/U1|8"
    assert got[("gpu03 mlx5_0/1", "ib_link_rate_gbps")] == 400.0
    assert got[("MF0;ib-leaf01:MQM9790/U1/3", "ib_link_state")] == "Down"  # an uncabled port
    assert ("MF0;ib-leaf01:MQM9790/U1/3", "ib_link_neighbor") not in got


def test_a_dark_host_port_and_a_narrow_one() -> None:
    got = samples([{"kind": "port_down", "target": "gpu04", "nic": "mlx5_0"},
                   {"kind": "width_downgrade", "target": "gpu01", "nic": "mlx5_0"}])
    assert got[("MF0;ib-leaf02:MQM9790/U1/2", "ib_link_state")] == "Down"
    assert ("MF0;ib-leaf02:MQM9790/U1/2", "ib_link_neighbor") not in got
    assert not any(entity.startswith("gpu04") for entity, _ in got)  # nothing reaches a CA behind a dark port
    assert got[("gpu01 mlx5_0/1", "ib_link_rate_gbps")] == 100.0  # 1X at the lane's 100 Gb/s


def test_only_the_subnet_members_get_iblinkinfo_and_a_port_is_cabled_once() -> None:
    eff = leaf_spine().effective()
    assert subnet.members(eff["index"]["subnet"]) == {"gpu01", "gpu02", "gpu03", "gpu04"}
    assert all(spec.get("ib_subnet") for spec in eff["targets"].values())
    clash = leaf_spine()
    clash.links[0].switch_port = "8"  # the leaf's uplink port
    with pytest.raises(AssertionError, match="on a used port"):
        clash.effective()
