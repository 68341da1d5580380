"""One-sided cables: one collected end's LLDP sees the other end, and the other end's LLDP does not see it back.

Judged only where both ends were collected and the other end's LLDP answered at all (a switch or host without
LLDP facts says nothing about its ports). Ports are compared once resolved (rdmatool.platforms.port_names through
rdmatool.topology.observed: a SONiC alias is its port, `Et1/1` is `Ethernet1/1`), so a cable both ends report is a
normal cable, however each end spells the other's port.

- A host NIC that sees a switch port the switch does not see back: the verdict is on the host NIC (its cable is
  the one to check), naming the switch port and what it sees instead.
- A switch port that sees a host NIC the host does not see back: on the switch port, naming the host NIC.
- Between two switches (a leaf's uplink, a peer link, an MLAG link): on the port that does not see, naming the
  port that does; each end names the other, never itself.

Every verdict is `one_sided` with the details `far_end` (the other end), `expected` and `seen_back` (what the side
that does not see sees instead).
"""

from __future__ import annotations

from rdmatool.platforms.port_names import port_key
from rdmatool.table.facts import FactQuery
from rdmatool.topology import Link, observed
from rdmatool.topology.stated import StatedFacts

ONE_SIDED = "one_sided"


def _with_lldp(analysis) -> set[str]:
    query = FactQuery.of(analysis)
    return set(query.column("target", query.positions("lldp_neighbor")).unique())


def one_sided(analysis, rdma: set[Link], out: StatedFacts) -> None:
    """Every one-sided cable of the bundle, as `one_sided` verdicts; `rdma`: the host cables of RDMA NICs."""
    with_lldp = _with_lldp(analysis)
    _host_cables(analysis, rdma, with_lldp, out)
    _switch_cables(analysis, with_lldp, out)


def _host_cables(analysis, rdma: set[Link], with_lldp: set[str], out: StatedFacts) -> None:
    host_view, switch_view = observed.host_view(analysis), observed.switch_view(analysis)
    from_switch = {(link.switch, port_key(link.switch_port)): link for link in switch_view}
    from_host = {(link.switch, port_key(link.switch_port)): link for link in host_view}
    for link in host_view:
        if link not in rdma or link.switch not in with_lldp:
            continue
        back = from_switch.get((link.switch, port_key(link.switch_port)))
        if back is None or back.host != link.host:
            port = f"{link.switch} {link.switch_port}"
            seen = f"{port} sees {back.host} {back.nic}" if back else f"{port} sees no neighbour"
            out.add(link.host, link.nic, ONE_SIDED, switch=link.switch, switch_port=link.switch_port, far_end=port,
                    expected=f"{port} to see {link.host}", seen_back=seen)
    for link in switch_view:
        if link.host not in with_lldp:
            continue
        back = from_host.get((link.switch, port_key(link.switch_port)))
        if back is None or back.host != link.host:
            seen = f"{link.host} sees no neighbour there" if back is None else f"{back.host} {back.nic} sees it"
            out.add(link.switch, link.switch_port, ONE_SIDED, far_end=f"{link.host} {link.nic}",
                    expected=f"{link.host} to see {link.switch} {link.switch_port}", seen_back=seen)


def _switch_cables(analysis, with_lldp: set[str], out: StatedFacts) -> None:
    """Between two collected switches: the port that does not see back is named (once)."""
    cables = observed.fabric_view(analysis)
    # each switch port → what its own LLDP sees there: (peer, peer port's key) → how to name it
    seen_at: dict[tuple[str, str], dict[tuple[str, str], str]] = {}
    for cable in cables:
        seen_at.setdefault((cable.switch, port_key(cable.port)), {})[(cable.peer, port_key(cable.peer_port))] = \
            f"{cable.peer} {cable.peer_port}"
    for link in observed.switch_view(analysis):
        seen_at.setdefault((link.switch, port_key(link.switch_port)), {})[(link.host, link.nic)] = \
            f"{link.host} {link.nic}"
    said: set[tuple[str, str]] = set()
    for cable in cables:
        back_at = (cable.peer, port_key(cable.peer_port))
        if cable.peer not in with_lldp or back_at in said:
            continue
        back = seen_at.get(back_at, {})
        if (cable.switch, port_key(cable.port)) in back:
            continue  # both ends see each other: a normal cable
        said.add(back_at)
        near, far = f"{cable.peer} {cable.peer_port}", f"{cable.switch} {cable.port}"
        instead = "sees no neighbour" if not back else "sees " + ", ".join(sorted(back.values()))
        out.add(cable.peer, cable.peer_port, ONE_SIDED, far_end=far, expected=f"{near} to see {far}",
                seen_back=f"{near} {instead}, while {far} sees it")
