"""One port under every spelling the two ends of its cable give it (rdmatool.platforms.port_names), and two different ports
never under one."""

from __future__ import annotations

import pytest

from rdmatool.platforms.port_names import PortNames, ca_of, node_description, port_key


@pytest.mark.parametrize(("one", "other"), [
    ("Et1/1", "Ethernet1/1"),  # EOS
    ("Ethernet1", "Et1"),  # EOS, a fixed port
    ("Eth1/1", "Ethernet1/1"),  # NX-OS
    ("Eth1/1", "1/1"),  # Onyx
    ("ethernet 1/1", "Ethernet1/1"),  # with a blank, in another case
    ("Ethernet1/1/2", "Eth1/1/2"),  # an NX-OS breakout lane
    ("swp1s0", "SWP1S0"),  # a Cumulus breakout
])
def test_spellings_of_one_port_share_a_key(one: str, other: str) -> None:
    assert port_key(one) == port_key(other)


@pytest.mark.parametrize(("one", "other"), [
    ("swp1s0", "swp1"),  # a breakout lane is not its parent port
    ("swp1s0", "swp1s1"),
    ("Ethernet1/1", "Ethernet1/10"),
    ("etp1", "Ethernet1"),  # a SONiC alias is not a port number: `etp1` is not `p1`, nor `1`
    ("Ethernet0", "Ethernet4"),
])
def test_different_ports_keep_different_keys(one: str, other: str) -> None:
    assert port_key(one) != port_key(other)


def sonic() -> PortNames:
    """A SONiC leaf's ports (their Alias column) and an EOS spine's (from its own port status)."""
    aliases = [("leaf01", "Ethernet0", "etp1"), ("leaf01", "Ethernet4", "etp2"),
               ("leaf02", "Ethernet0", "fortyGigE0/0"), ("leaf03", "Ethernet0", "Eth1/1"),
               ("leaf03", "Ethernet4", "Eth1/2")]
    return PortNames.build([("spine01", "Ethernet1/1"), ("spine01", "Ethernet1/2"), ("leaf01", "Ethernet0")], aliases)


@pytest.mark.parametrize(("switch", "advertised", "name"), [
    ("leaf01", "etp1", "Ethernet0"),  # Mellanox SONiC alias
    ("leaf01", "ETP2", "Ethernet4"),
    ("leaf02", "fortyGigE0/0", "Ethernet0"),  # Force10-style alias
    ("leaf03", "Eth1/2", "Ethernet4"),  # an alias spelled like another NOS's port: the alias wins on SONiC
    ("leaf01", "Ethernet0", "Ethernet0"),  # the name itself
    ("spine01", "Et1/2", "Ethernet1/2"),  # EOS short form, to the switch's own spelling
    ("spine01", "Ethernet9/9", "Ethernet9/9"),  # a port the switch does not list: as given
    ("unknown", "etp1", "etp1"),  # a switch the bundle does not hold: as given
])
def test_a_port_resolves_to_the_name_its_switch_gives_it(switch: str, advertised: str, name: str) -> None:
    names = sonic()
    assert names.name(switch, advertised) == name
    assert names.key(switch, advertised) == port_key(name)


def test_an_alias_of_one_switch_is_not_a_port_of_another() -> None:
    assert sonic().name("leaf02", "etp1") == "etp1"


def test_a_switch_s_own_name_wins_over_an_alias_that_looks_like_it() -> None:
    """Some SONiC platforms alias `Ethernet0` as `Ethernet4`... while another port is named `Ethernet4`."""
    names = PortNames.build([("s", "Ethernet0"), ("s", "Ethernet4")], [("s", "Ethernet0", "Ethernet4")])
    assert names.name("s", "Ethernet4") == "Ethernet4"


@pytest.mark.parametrize(("description", "plain", "ca"), [
    ("gpu01 mlx5_0", "gpu01 mlx5_0", ("gpu01", "mlx5_0")),
    ("gpu01 mlx5_0 (0xb83fd20300000001)", "gpu01 mlx5_0", ("gpu01", "mlx5_0")),
    ('"gpu01 mlx5_0"', "gpu01 mlx5_0", ("gpu01", "mlx5_0")),
    ("MF0;ib-leaf01:MQM9790/U1 (0x0c42a10300a1b2c0)", "MF0;ib-leaf01:MQM9790/U1", None),
    ("site's own description", "site's own description", None),
])
def test_infiniband_node_descriptions_with_and_without_the_guid(description: str, plain: str, ca) -> None:
    assert node_description(description) == plain
    assert ca_of(description) == ca


def test_a_neighbours_system_name_is_found_whatever_its_domain_and_case() -> None:
    from rdmatool.platforms.port_names import system_name

    names = {"leaf01", "gpu01", "spine.a"}
    assert system_name("leaf01", names) == "leaf01"
    assert system_name("leaf01.pod1.example.net", names) == "leaf01"
    assert system_name("LEAF01", names) == "leaf01"
    assert system_name("LEAF01.POD1.EXAMPLE.NET", names) == "leaf01"
    assert system_name("spine.a", names) == "spine.a"  # a target whose name has a dot is itself
    assert system_name("oob-sw01.mgmt", names) == "oob-sw01"  # no target: the first label, as before
    assert system_name("Gpu01", {"gpu01", "GPU01"}) in {"gpu01", "GPU01"}
