"""lldpctl shim (lldpd): neighbours of the target's cabled ports, `-f json|keyvalue|plain`.

On a host the neighbours are leaf switch ports (a SONiC port by its alias, with its name as the description:
uplinks.py); on a SONiC / Cumulus switch they are the hosts' NICs and the other switches' ports.
lldpd's JSON quirk is kept: `interface` is an object for one neighbour and a list of objects for several.
A port with a `neighbor_later` (fault recabled_between_snapshots) shows it from the target's second read on (each
read is counted in the state dir), so that the two snapshots of a collection see different neighbours.
"""

from __future__ import annotations

import json
import os

from tests.fabric.shims._base import Ctx

DESCR = {"sonic": "SONiC Software Version: SONiC.202311.1 - HwSku: Mellanox-SN4600C-C64 - Distribution: Debian 12",
         "cumulus": "Cumulus Linux version 5.9.0 running on Mellanox Technologies Ltd. MSN4600",
         "onyx": "Onyx version 3.10.4006 running on SN4600", "eos": "Arista Networks EOS version 4.31.2F "
         "running on an Arista Networks DCS-7060DX5-64S", "nxos": "Cisco Nexus Operating System (NX-OS) "
         "Software 10.3(4a)", "linux": "Ubuntu 22.04.4 LTS Linux 5.15.0-105-generic #115-Ubuntu SMP x86_64"}


def _reads_before(ctx: Ctx) -> int:
    """How many times this target's LLDP was read before (this read counted), when a neighbour of it changes."""
    ports = [p for n in ctx.spec.get("nics", []) for p in n["ports"]] + ctx.spec.get("ports", [])
    if not any("neighbor_later" in p for p in ports):
        return 0
    os.makedirs(f"{ctx.state}/reads", exist_ok=True)
    with open(f"{ctx.state}/reads/{ctx.spec['name']}.lldpctl", "ab") as f:
        before = f.tell()
        f.write(b".")
    return before


def _neighbor(p: dict, later: bool) -> dict | None:
    return p["neighbor_later"] if later and "neighbor_later" in p else p.get("neighbor")


def neighbours(ctx: Ctx) -> list[dict]:
    """[{local, chassis, mac, mgmt, descr, port_id_type, port_id, port_descr, age}]"""
    out = []
    later = _reads_before(ctx) > 0
    if ctx.spec["kind"] == "host":
        for nic in ctx.spec["nics"]:
            for p in nic["ports"]:
                nb = _neighbor(p, later)
                if nb and p["state"] == "Active":
                    out.append({"local": nic["netdev"], "chassis": nb["name"], "mac": nb["mac"],
                                "mgmt": nb["address"], "descr": DESCR[nb["platform"]],
                                "port_id_type": nb.get("port_id_type", "ifname"), "port_id": nb.get("port_id", nb["port"]),
                                "port_descr": nb.get("port_descr", nb["port"]), "bridge": True})
    else:
        for p in ctx.spec["ports"]:
            nb = _neighbor(p, later)
            if nb and p["up"] and "port_id_type" in nb:  # another switch (uplinks.py): its port as it advertises it
                out.append({"local": p["name"], "chassis": nb["name"], "mac": nb["mac"], "mgmt": nb["address"],
                            "descr": DESCR[nb["platform"]], "port_id_type": nb["port_id_type"],
                            "port_id": nb["port_id"], "port_descr": nb["port_descr"], "bridge": True})
            elif nb and p["up"]:
                out.append({"local": p["name"], "chassis": nb["name"], "mac": nb["mac"], "mgmt": nb["address"],
                            "descr": DESCR["linux"], "port_id_type": "mac", "port_id": nb["mac"],
                            "port_descr": nb["port"], "bridge": False})
        # a hostile switch (fault lldp_port_newline): a neighbour on a local port whose name carries a newline
        for name in ctx.spec.get("lldp_extra", []):
            out.append({"local": name, "chassis": "intruder", "mac": "02:00:00:00:00:01", "mgmt": "192.0.2.1",
                        "descr": DESCR["linux"], "port_id_type": "mac", "port_id": "02:00:00:00:00:01",
                        "port_descr": "eth0", "bridge": False})
    return out


def age(ctx: Ctx) -> str:
    s = int(ctx.now - ctx.epoch) + 3 * 86400 + 7322
    return f"{s // 86400} day, {s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


def as_json(ctx: Ctx, ns: list[dict]) -> str:
    items = []
    for i, n in enumerate(ns, 1):
        caps = [{"type": "Bridge", "enabled": n["bridge"]}, {"type": "Router", "enabled": n["bridge"]},
                {"type": "Wlan", "enabled": False}, {"type": "Station", "enabled": not n["bridge"]}]
        items.append({n["local"]: {
            "via": "LLDP", "rid": str(i), "age": age(ctx),
            "chassis": {n["chassis"]: {"id": {"type": "mac", "value": n["mac"]}, "descr": n["descr"],
                                       "mgmt-ip": n["mgmt"], "capability": caps}},
            "port": {"id": {"type": n["port_id_type"], "value": n["port_id"]}, "descr": n["port_descr"],
                     "ttl": "120", "mfs": "9236"},
        }})
    iface: object = items[0] if len(items) == 1 else items
    return json.dumps({"lldp": {"interface": iface}} if items else {"lldp": {}}, indent=2) + "\n"


def as_keyvalue(ctx: Ctx, ns: list[dict]) -> str:
    out = []
    for i, n in enumerate(ns, 1):
        k = f"lldp.{n['local']}"
        out += [f"{k}.via=LLDP", f"{k}.rid={i}", f"{k}.age={age(ctx)}", f"{k}.chassis.mac={n['mac']}",
                f"{k}.chassis.name={n['chassis']}", f"{k}.chassis.descr={n['descr']}",
                f"{k}.chassis.mgmt-ip={n['mgmt']}", f"{k}.chassis.Bridge.enabled={'on' if n['bridge'] else 'off'}",
                f"{k}.port.{n['port_id_type']}={n['port_id']}", f"{k}.port.descr={n['port_descr']}",
                f"{k}.port.ttl=120", f"{k}.port.mfs=9236"]
    return "".join(line + "\n" for line in out)


def as_plain(ctx: Ctx, ns: list[dict]) -> str:
    rule = "-" * 79 + "\n"
    out = [rule, "LLDP neighbors:\n", rule]
    for i, n in enumerate(ns, 1):
        out += [f"Interface:    {n['local']}, via: LLDP, RID: {i}, Time: {age(ctx)}\n",
                "  Chassis:     \n", f"    ChassisID:    mac {n['mac']}\n", f"    SysName:      {n['chassis']}\n",
                f"    SysDescr:     {n['descr']}\n", f"    MgmtIP:       {n['mgmt']}\n",
                f"    Capability:   Bridge, {'on' if n['bridge'] else 'off'}\n",
                "  Port:        \n", f"    PortID:       {n['port_id_type']} {n['port_id']}\n",
                f"    PortDescr:    {n['port_descr']}\n", "    TTL:          120\n", rule]
    return "".join(out)


def main(ctx: Ctx, argv: list[str]) -> int:
    fmt = "plain"
    for i, a in enumerate(argv):
        if a == "-f" and i + 1 < len(argv):
            fmt = argv[i + 1]
        elif a.startswith("-f") and len(a) > 2:
            fmt = a[2:]
    wanted = [a for a in argv if not a.startswith("-") and a != fmt]
    ns = [n for n in neighbours(ctx) if not wanted or n["local"] in wanted]
    render = {"json": as_json, "keyvalue": as_keyvalue}.get(fmt, as_plain)
    print(render(ctx, ns), end="")
    return 0
