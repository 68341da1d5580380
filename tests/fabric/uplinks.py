"""Switch-to-switch cables of the simulated fabric (a leaf's uplinks to its spines), and what LLDP says of a port.

A scenario's `switch_links` ({switch, switch_port, peer, peer_port}) cable two switches of the scenario; each end's
port is an ordinary switch port (counters, state, speed: add it to the switch's `ports`), and each end's LLDP sees
the other in its NOS's own output. What a port advertises as its LLDP port ID is the NOS's choice: SONiC's lldpd
advertises the port's alias (`etp1`, the Alias column of `show interfaces status`) with the subtype `local` and the
port name (`Ethernet0`) as the port description; the others advertise the port name. Hosts see SONiC ports that
way too.

Fault `uplink_one_sided` (target: a switch, value: one of its ports): that port's LLDP does not see its peer
(LLDP receive off on one end of an uplink).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SwitchLink:
    switch: str
    switch_port: str
    peer: str
    peer_port: str


def sonic_alias(index: int) -> str:
    """The alias of a SONiC switch's index-th front-panel port (Mellanox SONiC names them `etp1`, `etp2`, ...)."""
    return f"etp{index + 1}"


def advertised(switch: dict, port: dict) -> dict:
    """What the switch's LLDP advertises for `port`: {port_id_type, port_id, port_descr}."""
    if switch["platform"] == "sonic":
        return {"port_id_type": "local", "port_id": port["alias"], "port_descr": port["name"]}
    return {"port_id_type": "ifname", "port_id": port["name"], "port_descr": port["name"]}


def neighbor_of(switch: dict, port: dict) -> dict:
    """The neighbour entry the far end's LLDP shows for `switch`'s `port`: `port` its name (the simulation's key for
    its counters), `port_id` what LLDP shows of it."""
    return {"name": switch["name"], "port": port["name"], **advertised(switch, port), "platform": switch["platform"],
            "mac": switch["mac"], "address": switch["address"]}


def apply(links: list[SwitchLink], faults: list, switches: dict[str, dict]) -> None:
    """Each switch-to-switch cable's LLDP on both ends, minus the ends a fault `uplink_one_sided` blinds."""
    blind = {(f.target, str(f.value)) for f in faults if f.kind == "uplink_one_sided"}
    for link in links:
        one, two = switches[link.switch], switches[link.peer]
        one_port = next(p for p in one["ports"] if p["name"] == link.switch_port)
        two_port = next(p for p in two["ports"] if p["name"] == link.peer_port)
        if (link.switch, link.switch_port) not in blind:
            one_port["neighbor"] = neighbor_of(two, two_port)
        if (link.peer, link.peer_port) not in blind:
            two_port["neighbor"] = neighbor_of(one, one_port)
