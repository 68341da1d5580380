"""The simulated InfiniBand subnet: what the sweep tools (`ibnetdiscover -p`, `iblinkinfo`, `ibqueryerrors`,
`sminfo`) report, built from the scenario's cabling or, without a scenario, as a fat tree (`fat_tree`).

A scenario's `ib_switches` (switches of the subnet: no SSH targets, as InfiniBand switches are managed through the
subnet itself) and its `links` to them (host NIC → switch port number) and `ib_links` (switch port ↔ switch port)
become one plain structure in the fabric's index, which the sweep shims print. The subnet is what a subnet
manager discovers: a switch port shows its link as the host port's state makes it (a Down host port is a Down switch
port with nothing behind it), and a CA is listed only when its port is up (nothing reaches it otherwise).

The structure (plain JSON, what `build` and `fat_tree` return and `sweep_texts` renders):
    {"switches": [{"desc", "guid", "lid", "port0": {"counters"}, "ports": [{"num", "link", "remote", "counters",
                   "gone_from_read"?}]}],
     "cas": [{"desc", "guid", "lid", "num", "link", "remote"}],
     "sms": [{"lid", "guid", "priority", "state", "activity": [base, rate]}], "slow_s": seconds}
`link` is {state, phys, width, lane, rate_gbps}; `remote` {lid, port, desc} or None; `counters` {PMA counter name as
ibqueryerrors prints it: [base, rate per second]}: a counter reads base + rate x elapsed seconds.

Faults (`apply_faults`, `FAULT_KINDS`; dicts {kind, target: a switch name, port, value}): ib_port_errors (symbol
errors, link error recoveries and link-downs growing on a switch port), ib_link_degraded (the link of a switch port at
`value`: "1X", or a rate in Gb/s at 4X), ib_uplink_congested (PortXmitWait and PortXmitDiscards growing),
ib_vl15_dropped (a switch's port 0 drops SMPs), ib_sm (`value` "none": the only SM is a standby, "two": a second
master), ib_cable_gone (the cable of a switch port is gone from the second read of the subnet on), ib_slow_sweep
(each tool that walks the subnet, all but sminfo, takes `value` seconds before it answers; the shims sleep,
`sweep_texts` ignores it).
"""

from __future__ import annotations

LANE_SIGNAL = {2.5: "2.5", 5.0: "5.0", 10.0: "10.0", 14.0: "14.0625", 25.0: "25.78125", 50.0: "53.125",
               100.0: "106.25", 200.0: "212.5"}  # the nominal lane rate → the signalling rate iblinkinfo prints
SPEED_NAME = {2.5: "SDR", 5.0: "DDR", 10.0: "QDR", 14.0: "FDR", 25.0: "EDR", 50.0: "HDR", 100.0: "NDR",
              200.0: "XDR"}  # the nominal lane rate → the speed ibnetdiscover prints
FAULT_KINDS = ("ib_port_errors", "ib_link_degraded", "ib_uplink_congested", "ib_vl15_dropped", "ib_sm",
               "ib_cable_gone", "ib_slow_sweep")
SWEEP_TOOLS = ("ibnetdiscover", "iblinkinfo", "ibqueryerrors", "sminfo")
# Error counters as a switch's PortCounters holds them: they stop at the top of their field (IBTA PMA widths).
_ERROR_BITS = {"SymbolErrorCounter": 16, "LinkErrorRecoveryCounter": 8, "LinkDownedCounter": 8, "PortRcvErrors": 16,
               "PortXmitDiscards": 16, "VL15Dropped": 16, "PortXmitWait": 32}
_DATA = ("PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortUnicastXmitPkts", "PortUnicastRcvPkts",
         "PortMulticastXmitPkts", "PortMulticastRcvPkts")


def switch_description(name: str, model: str) -> str:
    """A switch's node description as NVIDIA switches set it."""
    return f"MF0;{name}:{model}/U1"


def _link(state: str, phys: str, width: str, rate_gbps: float) -> dict:
    lanes = int(str(width).rstrip("X") or 1)
    return {"state": state, "phys": phys, "width": width, "rate_gbps": float(rate_gbps),
            "lane": LANE_SIGNAL.get(float(rate_gbps) / lanes, f"{float(rate_gbps) / lanes:g}")}


def _data_counters(rate_gbps: float) -> dict:
    """A quarter of the line rate each way (data in 4-octet words, 4 KiB packets), all unicast."""
    words = rate_gbps * 1e9 / 8 / 4 * 0.25
    packets = words * 4 / 4096
    return {"PortXmitData": [10**9, words], "PortRcvData": [10**9, words], "PortXmitPkts": [10**6, packets],
            "PortRcvPkts": [10**6, packets], "PortUnicastXmitPkts": [10**6, packets],
            "PortUnicastRcvPkts": [10**6, packets], "PortMulticastXmitPkts": [40, 0.0],
            "PortMulticastRcvPkts": [40, 0.0]}


def _new_switch(k: int, name: str, model: str, size: int, rate_gbps: float) -> dict:
    return {"name": name, "desc": switch_description(name, model), "guid": f"0x0c42a10300a1b{k:02x}0", "lid": k + 1,
            "size": size, "ports": {}, "rate_gbps": rate_gbps, "port0": {"counters": {}}}


def _cable(one: dict, one_port: int, two: dict, two_port: int, width: str, rate_gbps: float) -> None:
    """A switch-to-switch cable, both ends."""
    assert one_port not in one["ports"] and two_port not in two["ports"], f"{one['name']}:{one_port} on a used port"
    up = _link("Active", "LinkUp", width, rate_gbps)
    one["ports"][one_port] = {"link": up, "remote": {"lid": two["lid"], "port": two_port, "desc": two["desc"]},
                              "counters": _data_counters(rate_gbps)}
    two["ports"][two_port] = {"link": dict(up), "remote": {"lid": one["lid"], "port": one_port, "desc": one["desc"]},
                              "counters": _data_counters(rate_gbps)}


def _attach(sw: dict, number: int, ca: dict | None, down_phys: str = "Polling") -> None:
    """A CA port cabled to switch port `number` (None: a dark port, nothing seen behind it)."""
    assert number not in sw["ports"], f"{sw['name']} port {number} cabled twice"
    if ca is None:
        sw["ports"][number] = {"link": {"state": "Down", "phys": down_phys}, "remote": None, "counters": {}}
        return
    sw["ports"][number] = {"link": dict(ca["link"]), "remote": {"lid": ca["lid"], "port": ca["num"],
                                                                "desc": ca["desc"]},
                           "counters": _data_counters(ca["link"]["rate_gbps"])}
    ca["remote"] = {"lid": sw["lid"], "port": number, "desc": sw["desc"]}


def _finish(switches: dict, cas: list[dict]) -> dict:
    out = []
    for sw in switches.values():
        size = max([sw["size"], *sw["ports"]])
        idle = {"link": {"state": "Down", "phys": "Polling"}, "remote": None, "counters": {}}
        ports = [{"num": n, **sw["ports"].get(n, idle)} for n in range(1, size + 1)]
        out.append({"name": sw["name"], "desc": sw["desc"], "guid": sw["guid"], "lid": sw["lid"],
                    "port0": sw["port0"], "ports": ports})
    first = out[0] if out else {"lid": 1, "guid": "0x0c42a10300a1b000"}
    sms = [{"lid": first["lid"], "guid": first["guid"], "priority": 15, "state": "master",
            "activity": [5000, 12.0]}]
    return {"switches": out, "cas": sorted(cas, key=lambda c: c["desc"]), "sms": sms, "slow_s": 0.0}


def build(sc, hosts: dict[str, dict], faults: list | tuple = ()) -> dict | None:
    """The subnet structure (module docstring) from the scenario (`hosts`: the per-host specs with the faults
    applied; `faults`: the scenario's IB faults, as dicts or Fault objects); None without InfiniBand switches."""
    if not sc.ib_switches:
        return None
    switches = {s.name: _new_switch(k, s.name, s.model, s.ports, s.rate_gbps) for k, s in enumerate(sc.ib_switches)}
    cas: list[dict] = []
    for link in sc.links:
        sw = switches.get(link.switch)
        if sw is None:
            continue
        nic = next(n for n in hosts[link.host]["nics"] if n["device"] == link.nic)
        port = next(p for p in nic["ports"] if p["num"] == link.port)
        if port["state"] != "Active":  # the subnet manager sees a dark port, and no CA behind it
            _attach(sw, int(link.switch_port), None, port["phys_state"])
            continue
        ca = {"desc": f"{link.host} {link.nic}", "guid": port["port_guid"], "lid": port["lid"], "num": port["num"],
              "link": _link("Active", "LinkUp", port["width"], port["rate_gbps"]), "remote": None}
        _attach(sw, int(link.switch_port), ca)
        cas.append(ca)
    for ib in sc.ib_links:
        one, two = switches[ib.switch], switches[ib.peer]
        _cable(one, int(ib.port), two, int(ib.peer_port), "4X", min(one["rate_gbps"], two["rate_gbps"]))
    return apply_faults(_finish(switches, cas), faults)


def fat_tree(spines: int = 2, leaves: int = 4, hosts_per_leaf: int = 2, *, faults: list | tuple = (),
             rate_gbps: float = 400, model: str = "MQM9790") -> dict:
    """fat_tree(spines=2, leaves=4, hosts_per_leaf=2, *, faults=(), rate_gbps=400, model="MQM9790") -> subnet dict.

    A two-tier fat tree without any scenario or SSH: leaves `ib-leaf01..`, spines `ib-spine01..` (LIDs 1.. in that
    order, leaves first; the SM on the first switch), hosts `gpu0001..` with one CA `mlx5_0` each (LIDs from 1001)
    on leaf ports 1..hosts_per_leaf, and leaf port hosts_per_leaf + s cabled to spine s at port = the leaf's number.
    `faults`: dicts {kind, target, port, value} of FAULT_KINDS. Render it with `sweep_texts`."""
    switches: dict[str, dict] = {}
    size = hosts_per_leaf + spines
    for k in range(leaves):
        name = f"ib-leaf{k + 1:02d}"
        switches[name] = _new_switch(k, name, model, size, rate_gbps)
    for s in range(spines):
        name = f"ib-spine{s + 1:02d}"
        switches[name] = _new_switch(leaves + s, name, model, leaves, rate_gbps)
    cas: list[dict] = []
    number = 0
    for k in range(leaves):
        leaf = switches[f"ib-leaf{k + 1:02d}"]
        for h in range(hosts_per_leaf):
            number += 1
            ca = {"desc": f"gpu{number:04d} mlx5_0", "guid": f"0xb83fd2030{number:06x}1", "lid": 1000 + number,
                  "num": 1, "link": _link("Active", "LinkUp", "4X", rate_gbps), "remote": None}
            _attach(leaf, h + 1, ca)
            cas.append(ca)
        for s in range(spines):
            _cable(leaf, hosts_per_leaf + s + 1, switches[f"ib-spine{s + 1:02d}"], k + 1, "4X", rate_gbps)
    return apply_faults(_finish(switches, cas), faults)


def _field(fault, name: str, default=None):
    return fault.get(name, default) if isinstance(fault, dict) else getattr(fault, name, default)


def _far_end(subnet: dict, port: dict) -> dict | None:
    """The switch port dict (or CA dict) at the other end of a switch port's cable."""
    remote = port.get("remote")
    if not remote:
        return None
    for sw in subnet["switches"]:
        if sw["lid"] == remote["lid"]:
            return sw["ports"][remote["port"] - 1]
    return next((ca for ca in subnet["cas"] if ca["lid"] == remote["lid"] and ca["num"] == remote["port"]), None)


def apply_faults(subnet: dict, faults: list | tuple) -> dict:
    """The subnet with its faults (module docstring) applied in place; returned for chaining."""
    by_name = {sw["name"]: sw for sw in subnet["switches"]}
    for fault in faults:
        kind, target = _field(fault, "kind"), _field(fault, "target")
        value = _field(fault, "value")
        if kind not in FAULT_KINDS:
            continue  # a host's fault, not the subnet's
        if kind == "ib_sm":
            if value == "none":  # nobody masters the subnet: the SM is a standby that stopped counting
                subnet["sms"][0].update(state="standby", activity=[subnet["sms"][0]["activity"][0], 0.0])
            else:  # a second master: the SM of the last switch, at the same priority
                last = subnet["switches"][-1]
                subnet["sms"].append({"lid": last["lid"], "guid": last["guid"], "priority": 15, "state": "master",
                                      "activity": [700, 12.0]})
            continue
        if kind == "ib_slow_sweep":
            subnet["slow_s"] = float(value if value is not None else 5.0)
            continue
        sw = by_name[target]
        if kind == "ib_vl15_dropped":
            sw["port0"]["counters"]["VL15Dropped"] = [12, 2.0]
            continue
        port = sw["ports"][int(_field(fault, "port", 1)) - 1]
        counters = port.setdefault("counters", {})
        if kind == "ib_port_errors":
            counters.update(SymbolErrorCounter=[1200, 25.0], LinkErrorRecoveryCounter=[3, 1.0],
                            LinkDownedCounter=[2, 1.0], PortRcvErrors=[40, 8.0])
        elif kind == "ib_uplink_congested":
            counters.update(PortXmitWait=[2_000_000, 5_000_000.0], PortXmitDiscards=[100, 20.0])
        elif kind == "ib_link_degraded":
            old = port["link"]
            if str(value).upper().endswith("X"):
                lanes = int(old["width"].rstrip("X") or 1)
                new = _link(old["state"], old["phys"], str(value).upper(), old["rate_gbps"] / lanes)
            else:
                new = _link(old["state"], old["phys"], old["width"], float(value))
            port["link"] = new
            far = _far_end(subnet, port)
            if far is not None:
                far["link"] = dict(new)
        elif kind == "ib_cable_gone":
            port["gone_from_read"] = 1
            far = _far_end(subnet, port)
            if far is not None:
                far["gone_from_read"] = 1
    return subnet


def members(subnet: dict | None) -> set[str]:
    """The hosts with a port in the subnet (they have the sweep tools installed)."""
    return {ca["desc"].split()[0] for ca in (subnet or {}).get("cas", [])}


# --- rendering: the four tools' text -------------------------------------------------------------------------------


def _count(entry: list, elapsed_s: float, bits: int | None = None) -> int:
    value = int(entry[0] + entry[1] * max(0.0, elapsed_s))
    return min(value, 2**bits - 1) if bits else value


def _view(subnet: dict, read: int) -> dict:
    """The subnet as the `read`-th sweep sees it: cables gone by then are dark ports, their CAs unreachable."""
    gone_cas: set[tuple[int, int]] = set()
    switches = []
    for sw in subnet["switches"]:
        ports = []
        for p in sw["ports"]:
            if read >= p.get("gone_from_read", 1 << 30):
                if p.get("remote"):
                    gone_cas.add((p["remote"]["lid"], p["remote"]["port"]))
                p = {**p, "link": {"state": "Down", "phys": "Polling"}, "remote": None}
            ports.append(p)
        switches.append({**sw, "ports": ports})
    cas = [ca for ca in subnet["cas"] if (ca["lid"], ca["num"]) not in gone_cas]
    return {**subnet, "switches": switches, "cas": cas}


def _guids(subnet: dict) -> dict[int, tuple[str, str]]:
    """LID → (node type as ibnetdiscover prints it, the GUID a far end shows: a switch's, a CA port's)."""
    found = {sw["lid"]: ("SW", sw["guid"]) for sw in subnet["switches"]}
    found.update({ca["lid"]: ("CA", ca["guid"]) for ca in subnet["cas"]})
    return found


def _width_speed(link: dict) -> str:
    lanes = int(link["width"].rstrip("X") or 1)
    return f"{lanes}x {SPEED_NAME.get(link['rate_gbps'] / lanes, '???')}"


def render_ibnetdiscover_ports(subnet: dict) -> str:
    """`ibnetdiscover -p`: a line per port, switches then CAs (dump_ports_report's layout)."""
    guids = _guids(subnet)
    out = []
    for sw in subnet["switches"]:
        for p in sw["ports"]:
            head = f"SW {sw['lid']:>5} {p['num']:>2} {sw['guid']}"
            remote = p["remote"]
            if p["link"]["state"] != "Active" or not remote:
                out.append(f"{head} 4x ???{' ' * 36}'{sw['desc']}'")
                continue
            kind, guid = guids.get(remote["lid"], ("CA", "0x0000000000000000"))
            out.append(f"{head} {_width_speed(p['link'])} - {kind} {remote['lid']:>5} {remote['port']:>2} {guid} "
                       f"( '{sw['desc']}' - '{remote['desc']}' )")
    for ca in subnet["cas"]:
        remote = ca["remote"]
        _, guid = guids.get(remote["lid"], ("SW", "0x0000000000000000"))
        out.append(f"CA {ca['lid']:>5} {ca['num']:>2} {ca['guid']} {_width_speed(ca['link'])} - SW {remote['lid']:>5} "
                   f"{remote['port']:>2} {guid} ( '{ca['desc']}' - '{remote['desc']}' )")
    return "".join(line + "\n" for line in out)


_DOWN = "==(                {state}/{phys:>8})==>             [  ] \"\" ( )"


def _iblink(link: dict) -> str:
    if link["state"] != "Active":
        return _DOWN.format(state=link["state"], phys=link["phys"])
    return f"==( {link['width']:>2} {link['lane']:>13} Gbps {link['state']:>6}/{link['phys']:>8})==>"


def _iblink_remote(remote: dict | None) -> str:
    return f"{remote['lid']:>8} {remote['port']:>4}[  ] \"{remote['desc']}\" ( )" if remote else ""


def render_iblinkinfo(subnet: dict) -> str:
    """`iblinkinfo`: the switches first, every port of each, then the CAs (print_node_header, print_port)."""
    out = []
    for sw in subnet["switches"]:
        out.append(f"Switch: {sw['guid']} {sw['desc']}:")
        for p in sw["ports"]:
            out.append(f"{sw['lid']:>12} {p['num']:>4}[  ] {_iblink(p['link'])}{_iblink_remote(p['remote'])}")
    for ca in subnet["cas"]:
        out.append(f"CA: {ca['desc']}:")
        out.append(f"      {ca['guid']} {ca['lid']:>6} {ca['num']:>4}[  ] {_iblink(ca['link'])}"
                   f"{_iblink_remote(ca['remote'])}")
    return "".join(line + "\n" for line in out)


def render_ibqueryerrors(subnet: dict, elapsed_s: float = 0.0) -> str:
    """`ibqueryerrors --data --details --threshold-file /dev/null`: every port with an error counter above 0 (the
    thresholds of an empty file), its data counters beside them, then the summary."""
    out: list[str] = []
    bad_nodes = bad_ports = ports = 0
    for sw in subnet["switches"]:
        lines = []
        for number, p in [(0, sw["port0"]), *((p["num"], p) for p in sw["ports"])]:
            ports += 1
            counters = p.get("counters", {})
            errors = [(name, _count(counters[name], elapsed_s, bits)) for name, bits in _ERROR_BITS.items()
                      if name in counters]
            errors = [(name, value) for name, value in errors if value > 0]
            if not errors:
                continue
            items = [f"[{name} == {value}]" for name, value in errors]
            items += [f"[{name} == {_count(counters[name], elapsed_s)}]" for name in _DATA if name in counters]
            lines.append(f"   GUID {sw['guid']} port {number}:" + "".join(f" {item}" for item in items))
        if lines:
            bad_nodes += 1
            bad_ports += len(lines)
            out.append(f"Errors for {sw['guid']} \"{sw['desc']}\"")
            out += lines
    ports += len(subnet["cas"])
    nodes = len(subnet["switches"]) + len(subnet["cas"])
    out += ["", f"## Summary: {nodes} nodes checked, {bad_nodes} bad nodes found",
            f"##          {ports} ports checked, {bad_ports} ports have errors beyond threshold",
            "## Thresholds: ", "## Suppressed:"]
    return "".join(line + "\n" for line in out)


_SM_STATE = {"not_active": (0, "SMINFO_NOTACT"), "discovering": (1, "SMINFO_DISCOVER"),
             "standby": (2, "SMINFO_STANDBY"), "master": (3, "SMINFO_MASTER")}


def render_sminfo(subnet: dict, elapsed_s: float = 0.0) -> str:
    """`sminfo`: the SM the local port knows (the first), then, where the subnet has a second master, its answer
    too (what asking it by its LID gives)."""
    out = []
    for sm in subnet["sms"]:
        number, word = _SM_STATE[sm["state"]]
        out.append(f"sminfo: sm lid {sm['lid']} sm guid {sm['guid']}, activity count "
                   f"{_count(sm['activity'], elapsed_s)} priority {sm['priority']} state {number} {word}")
    return "".join(line + "\n" for line in out)


def sweep_texts(subnet: dict, elapsed_s: float = 0.0, read: int = 0) -> dict[str, str]:
    """sweep_texts(subnet, elapsed_s=0.0, read=0) -> {"ibnetdiscover": ..., "iblinkinfo": ..., "ibqueryerrors": ...,
    "sminfo": ...}: the stdout of each sweep tool as the collector runs it (`ibnetdiscover -p`, `iblinkinfo`,
    `ibqueryerrors --data --details --threshold-file /dev/null`, `sminfo`), keyed by its parser's name.

    `subnet`: what `fat_tree` or `build` returns (faults applied); `elapsed_s`: seconds since the fabric started
    (counters read base + rate x elapsed_s: two calls some seconds apart give the rates of two snapshots); `read`:
    which sweep of the collection this is, 0 for the first (a cable of ib_cable_gone is there at read 0 only).
    Pure: the same arguments give the same text."""
    seen = _view(subnet, read)
    return {"ibnetdiscover": render_ibnetdiscover_ports(seen), "iblinkinfo": render_iblinkinfo(seen),
            "ibqueryerrors": render_ibqueryerrors(seen, elapsed_s), "sminfo": render_sminfo(seen, elapsed_s)}
