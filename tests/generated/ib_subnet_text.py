"""The InfiniBand subnet sweep of a generated fabric, as infiniband-diags print it from one host: `sminfo`,
`ibnetdiscover -p` (the ports report), `iblinkinfo` and `ibqueryerrors --data --details` with an empty threshold file
(every counter above 0). Shapes follow the tools' own output (the parsers' golden fixtures are real captures), not
tests/fabric's renderer. `expected_name` says what a switch should be called as a target, from its description alone.
"""

from __future__ import annotations

from tests.generated.model import Fabric, Host, Rail, Switch, SwitchPort

# speed name → (signalling rate per lane as iblinkinfo prints it, nominal Gb/s per lane)
LANES = {"EDR": ("25.78125", 25), "HDR": ("53.125", 50), "NDR": ("106.25", 100), "FDR10": ("10.0", 10)}
# ibqueryerrors' counter names ↔ the model's neutral ones (generate.ib_switch_counters)
ERRORS = ("SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
          "PortRcvRemotePhysicalErrors", "PortXmitDiscards", "VL15Dropped", "PortXmitWait")
DATA = ("PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts")
_HOST_NAMES = {"SymbolErrorCounter": "symbol_error", "LinkErrorRecoveryCounter": "link_error_recovery",
               "LinkDownedCounter": "link_downed", "PortRcvErrors": "port_rcv_errors",
               "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors",
               "PortXmitDiscards": "port_xmit_discards", "VL15Dropped": "VL15_dropped",
               "PortXmitWait": "port_xmit_wait", "PortXmitData": "port_xmit_data", "PortRcvData": "port_rcv_data",
               "PortXmitPkts": "port_xmit_packets", "PortRcvPkts": "port_rcv_packets"}


def base_name(desc: str) -> str:
    """A switch's name in its description: `MF0;leaf01:MQM8700/U1` → leaf01, anything else itself (trimmed)."""
    plain = desc.strip()
    if plain.startswith("MF0;") and ":" in plain:
        return plain[4:].split(":", 1)[0]
    return plain


def expected_name(fabric: Fabric, switch: Switch) -> str:
    """The target a swept switch must be named: its description's name, with its GUID where another shares it."""
    base = base_name(switch.desc)
    shared = sum(base_name(s.desc) == base for s in ib_switches(fabric)) > 1
    return f"{base} ({switch.guid})" if shared else base


# The peer of a switch port cabled to the switch's own SHARP Aggregation Node (a CA of the subnet), + the switch name
AGGREGATION = "aggregation-node:"
_AN_DESC = "Mellanox Technologies Aggregation Node"


def _an_guid(switch_name: str) -> str:
    from tests.generated.host_text import _h

    return f"0x0c42a10300{_h('an', switch_name) & 0xffffff:06x}"


def ib_switches(fabric: Fabric) -> list[Switch]:
    return [s for s in fabric.switches if s.nos == "ib"]


def _last(fabric: Fabric, t: float) -> bool:
    return fabric.snapshots > 1 and t >= (fabric.snapshots - 1) * fabric.interval_s


def _up(port: SwitchPort, fabric: Fabric, t: float) -> bool:
    return bool(port.peer) and port.up and not (port.gone_last and _last(fabric, t))


def _rail_of(fabric: Fabric, port: SwitchPort) -> tuple[Host, Rail] | None:
    host = next((h for h in fabric.hosts if h.name == port.peer), None)
    if host is None:
        return None
    return host, next(r for r in host.rails if r.netdev == port.peer_port)


def _ca_desc(fabric: Fabric, host: Host, rail: Rail) -> str:
    """The CA's node description rdma-ndd sets: `<hostname> <device>`, the hostname fully qualified on some sites,
    padded with spaces on others."""
    name = f"{host.name}.{fabric.domain}" if fabric.ca_style == "fqdn" and fabric.domain else host.name
    return f" {name} {rail.device}  " if fabric.ca_style == "padded" else f"{name} {rail.device}"


def _port_guid(host: Host, rail: Rail) -> str:
    from tests.generated.host_text import _guid

    return _guid(host, rail)


def _far(fabric: Fabric, port: SwitchPort):
    """(type, lid, port number, guid, description) of a cabled port's far end."""
    if port.peer.startswith(AGGREGATION):
        return "CA", fabric.ca_lids[(port.peer, "")], 1, _an_guid(port.peer), _AN_DESC
    found = _rail_of(fabric, port)
    if found is not None:
        host, rail = found
        return "CA", fabric.ca_lids[(host.name, rail.device)], 1, _port_guid(host, rail), _ca_desc(fabric, host, rail)
    peer = fabric.switch(port.peer)
    return "SW", peer.lid, int(port.peer_port), peer.guid, peer.desc


def _aggregation_ports(fabric: Fabric) -> list[tuple[Switch, SwitchPort]]:
    return [(s, p) for s in ib_switches(fabric) for p in s.ports if p.peer.startswith(AGGREGATION)]


def speed_of(fabric: Fabric, gbps: int) -> str:
    """The speed a link trained at: a slower HCA (storage one generation back) takes its switch port down to its own."""
    return next((name for name, (_s, lane) in LANES.items() if 4 * lane == gbps), fabric.ib_speed)


def _link(fabric: Fabric, width: str, gbps: int) -> str:
    speed = speed_of(fabric, gbps)
    lane = LANES[speed][0]
    if speed == "FDR10":
        return f"{width}  {lane} Gbps (FDR10) Active/  LinkUp"
    return f"{width} {lane:>13} Gbps Active/  LinkUp"


_DOWN = "==(                Down/ Polling)==>             [  ] \"\" ( )"


def _capable(port: SwitchPort) -> str:
    return "( )" if port.width == "4X" else "(Could be 4X)"


def iblinkinfo(fabric: Fabric, t: float) -> str:
    lines = []
    for s in ib_switches(fabric):
        lines.append(f"Switch: {s.guid} {s.desc}:")
        for p in s.ports:
            if not _up(p, fabric, t):
                lines.append(f"{s.lid:>12} {int(p.name):>4}[  ] {_DOWN}")
                continue
            _kind, lid, number, _guid, desc = _far(fabric, p)
            lines.append(f"{s.lid:>12} {int(p.name):>4}[  ] ==( {_link(fabric, p.width, p.speed_gbps)})==> "
                         f"{lid:>6} {number:>4}[  ] \"{desc}\" {_capable(p)}")
    for s, p in _aggregation_ports(fabric):
        lines += [f"CA: {_AN_DESC}:", f"      {_an_guid(p.peer)} {fabric.ca_lids[(p.peer, '')]:>6} {1:>4}[  ] ==( "
                  f"{_link(fabric, p.width, p.speed_gbps)})==> {s.lid:>6} {int(p.name):>4}[  ] \"{s.desc}\" ( )"]
    for h in fabric.hosts:
        for r in h.rails:
            lid = fabric.ca_lids[(h.name, r.device)]
            lines.append(f"CA: {_ca_desc(fabric, h, r)}:")
            if not r.leaf or r.state != "Active":
                lines.append(f"      {_port_guid(h, r)} {lid:>6} {1:>4}[  ] {_DOWN}")
                continue
            leaf = fabric.switch(r.leaf)
            lines.append(f"      {_port_guid(h, r)} {lid:>6} {1:>4}[  ] ==( {_link(fabric, r.width, r.rate_gbps)})==> "
                         f"{leaf.lid:>6} {int(r.leaf_port):>4}[  ] \"{leaf.desc}\" ( )")
    return "\n".join(lines) + "\n"


def ibnetdiscover_ports(fabric: Fabric, t: float) -> str:
    """`ibnetdiscover -p`: one line per switch port and per CA port, both ends of every cable."""
    lines = []
    for s in ib_switches(fabric):
        for p in s.ports:
            head = f"SW {s.lid:>5} {int(p.name):>2} {s.guid} {p.width.lower()} "
            if not _up(p, fabric, t):
                lines.append(f"{head}???{'':>36}'{s.desc}'")
                continue
            kind, lid, number, guid, desc = _far(fabric, p)
            lines.append(f"{head}{speed_of(fabric, p.speed_gbps)} - {kind} {lid:>5} {number:>2} {guid} ( '{s.desc}' - '{desc}' )")
    for s, p in _aggregation_ports(fabric):
        lines.append(f"CA {fabric.ca_lids[(p.peer, '')]:>5}  1 {_an_guid(p.peer)} 4x {speed_of(fabric, p.speed_gbps)} "
                     f"- SW {s.lid:>5} {int(p.name):>2} {s.guid} ( '{_AN_DESC}' - '{s.desc}' )")
    for h in fabric.hosts:
        for r in h.rails:
            if not r.leaf or r.state != "Active":
                continue
            leaf = fabric.switch(r.leaf)
            lines.append(f"CA {fabric.ca_lids[(h.name, r.device)]:>5}  1 {_port_guid(h, r)} {r.width.lower()} {speed_of(fabric, r.rate_gbps)} "
                         f"- SW {leaf.lid:>5} {int(r.leaf_port):>2} {leaf.guid} ( '{_ca_desc(fabric, h, r)}' - '{leaf.desc}' )")
    return "\n".join(lines) + "\n"


def _items(values: list[tuple[str, int]]) -> str:
    return " ".join(f"[{name} == {value}]" for name, value in values if value > 0)


def ibqueryerrors(fabric: Fabric, t: float) -> str:
    """`ibqueryerrors --data --details --threshold-file /dev/null`: each node with a counter above 0, its ports'
    counters and link info, then the summary."""
    lines, nodes, ports, bad_nodes, bad_ports = [], 0, 0, 0, 0
    for s in ib_switches(fabric):
        nodes += 1
        block = []
        for p in s.ports:
            ports += 1
            if not _up(p, fabric, t):
                continue
            values = [(n, p.counters[n].at(t)) for n in ERRORS + DATA if n in p.counters]
            if not any(v > 0 for _n, v in values):
                continue
            kind, lid, number, guid, desc = _far(fabric, p)
            block += [f"   GUID {s.guid} port {int(p.name)}: {_items(values)}",
                      f"       Link info: {s.lid:>6} {int(p.name):>4}[  ] ==( {_link(fabric, p.width, p.speed_gbps)})==>  {guid}"
                      f" {lid:>6} {number:>4}[  ] \"{desc}\" {_capable(p)}"]
            bad_ports += 1
        if block:
            bad_nodes += 1
            lines += [f"Errors for {s.guid} \"{s.desc}\""] + block
    for h in fabric.hosts:
        for r in h.rails:
            nodes, ports = nodes + 1, ports + 1
            if not r.leaf or r.state != "Active":
                continue
            values = [(n, r.counters[_HOST_NAMES[n]].at(t)) for n in ERRORS + DATA if _HOST_NAMES[n] in r.counters]
            if not any(v > 0 for _n, v in values):
                continue
            leaf = fabric.switch(r.leaf)
            lid = fabric.ca_lids[(h.name, r.device)]
            lines += [f"Errors for \"{_ca_desc(fabric, h, r)}\"", f"   GUID {_port_guid(h, r)} port 1: {_items(values)}",
                      f"       Link info: {lid:>6} {1:>4}[  ] ==( {_link(fabric, r.width, r.rate_gbps)})==>  {leaf.guid}"
                      f" {leaf.lid:>6} {int(r.leaf_port):>4}[  ] \"{leaf.desc}\" ( )"]
            bad_nodes, bad_ports = bad_nodes + 1, bad_ports + 1
    lines += ["", f"## Summary: {nodes} nodes checked, {bad_nodes} bad nodes found",
              f"##          {ports} ports checked, {bad_ports} ports have errors beyond threshold", "## (null)",
              "## Suppressed:"]
    return "\n".join(lines) + "\n"


def sminfo(fabric: Fabric, t: float) -> str:
    """The SM the port's SM LID points at, then (as the collection asks each SM it knows of) the others."""
    words = {3: "SMINFO_MASTER", 2: "SMINFO_STANDBY", 0: "SMINFO_NOTACT"}
    return "".join(f"sminfo: sm lid {lid} sm guid {guid}, activity count {int(1000 + 10 * t) if state == 3 else 0} "
                   f"priority {prio} state {state} {words[state]}\n" for lid, guid, prio, state in fabric.sms)


def outputs(fabric: Fabric, rail: Rail, t: float) -> list[tuple[str, str, str, str]]:
    """The sweep's four outputs on the sweeping host (qualifier `<device>.<port>`), in the order collection runs them."""
    q = f"{rail.device}.1"
    where = f"-C {rail.device} -P 1"
    return [("sminfo", q, f"sminfo -t 200 {where}", sminfo(fabric, t)),
            ("ibnetdiscover", q, f"ibnetdiscover -p -t 200 {where}", ibnetdiscover_ports(fabric, t)),
            ("iblinkinfo", q, f"iblinkinfo -t 200 {where}", iblinkinfo(fabric, t)),
            ("ibqueryerrors", q, f"ibqueryerrors --data --details --threshold-file /dev/null -t 200 {where}",
             ibqueryerrors(fabric, t))]
