"""The simulated InfiniBand subnet: what `iblinkinfo` reports, built from the scenario's cabling.

A scenario's `ib_switches` (switches of the subnet: no SSH targets, as InfiniBand switches are managed through the
subnet itself) and its `links` to them (host NIC → switch port number) and `ib_links` (switch port ↔ switch port)
become one plain structure in the fabric's index, which the iblinkinfo shim prints. The subnet is what a subnet
manager discovers: a switch port shows its link as the host port's state makes it (a Down host port is a Down switch
port with nothing behind it), and a CA is listed only when its port is up (nothing reaches it otherwise).
"""

from __future__ import annotations

LANE_SIGNAL = {2.5: "2.5", 5.0: "5.0", 10.0: "10.0", 14.0: "14.0625", 25.0: "25.78125", 50.0: "53.125",
               100.0: "106.25", 200.0: "212.5"}  # the nominal lane rate → the signalling rate iblinkinfo prints


def switch_description(name: str, model: str) -> str:
    """A switch's node description as NVIDIA switches set it."""
    return f"MF0;{name}:{model}/U1"


def _link(state: str, phys: str, width: str, rate_gbps: float) -> dict:
    lanes = int(str(width).rstrip("X") or 1)
    return {"state": state, "phys": phys, "width": width,
            "lane": LANE_SIGNAL.get(float(rate_gbps) / lanes, f"{float(rate_gbps) / lanes:g}")}


def build(sc, hosts: dict[str, dict]) -> dict | None:
    """{switches: [{desc, guid, lid, ports: [{num, link, remote}]}], cas: [{desc, guid, lid, num, link, remote}]}
    from the scenario (`hosts`: the per-host specs with the faults applied); None without InfiniBand switches."""
    if not sc.ib_switches:
        return None
    switches = {s.name: {"desc": switch_description(s.name, s.model), "guid": f"0x0c42a10300a1b{k:02x}0",
                         "lid": k + 1, "size": s.ports, "ports": {}, "rate_gbps": s.rate_gbps}
                for k, s in enumerate(sc.ib_switches)}
    cas: list[dict] = []
    for link in sc.links:
        sw = switches.get(link.switch)
        if sw is None:
            continue
        nic = next(n for n in hosts[link.host]["nics"] if n["device"] == link.nic)
        port = next(p for p in nic["ports"] if p["num"] == link.port)
        desc = f"{link.host} {link.nic}"
        number = int(link.switch_port)
        assert number not in sw["ports"], f"{link.switch} port {number} cabled twice"
        if port["state"] != "Active":  # the subnet manager sees a dark port, and no CA behind it
            sw["ports"][number] = {"link": {"state": "Down", "phys": port["phys_state"]}, "remote": None}
            continue
        up = _link("Active", "LinkUp", port["width"], port["rate_gbps"])
        sw["ports"][number] = {"link": up, "remote": {"lid": port["lid"], "port": port["num"], "desc": desc}}
        cas.append({"desc": desc, "guid": port["port_guid"], "lid": port["lid"], "num": port["num"], "link": up,
                    "remote": {"lid": sw["lid"], "port": number, "desc": sw["desc"]}})
    for ib in sc.ib_links:
        one, two = switches[ib.switch], switches[ib.peer]
        assert int(ib.port) not in one["ports"] and int(ib.peer_port) not in two["ports"], f"{ib} on a used port"
        up = _link("Active", "LinkUp", "4X", min(one["rate_gbps"], two["rate_gbps"]))
        one["ports"][int(ib.port)] = {"link": up, "remote": {"lid": two["lid"], "port": int(ib.peer_port),
                                                             "desc": two["desc"]}}
        two["ports"][int(ib.peer_port)] = {"link": up, "remote": {"lid": one["lid"], "port": int(ib.port),
                                                                  "desc": one["desc"]}}
    out = []
    for sw in switches.values():
        size = max([sw["size"], *sw["ports"]])
        ports = [{"num": n, **sw["ports"].get(n, {"link": {"state": "Down", "phys": "Polling"}, "remote": None})}
                 for n in range(1, size + 1)]
        out.append({"desc": sw["desc"], "guid": sw["guid"], "lid": sw["lid"], "ports": ports})
    return {"switches": out, "cas": sorted(cas, key=lambda c: c["desc"])}


def members(subnet: dict | None) -> set[str]:
    """The hosts with a port in the subnet (they have iblinkinfo installed)."""
    return {ca["desc"].split()[0] for ca in (subnet or {}).get("cas", [])}
