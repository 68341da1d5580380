"""LLDP neighbours of each local port from lldpd (`lldpctl -f keyvalue` or `lldpctl -f json`).

Command: `lldpctl -f keyvalue` or `lldpctl -f json` (Linux hosts, SONiC `docker exec lldp lldpctl`, Cumulus).
Emits one `lldp_neighbor` (state) per neighbour: entity = the local interface (`eth2`, `swp1`, `Ethernet0`), text =
`<remote system name>|<remote port>` where the remote port is the port id as the neighbour reports it
(`swp1`, `Ethernet0`, or a MAC when the peer's lldpd uses MAC port ids) and, without a port id, the port
description; raw_key = `lldp.<if>.chassis.name` (the key the system name came from).
Example (keyvalue):
    lldp.eth2.via=LLDP
    lldp.eth2.chassis.name=leaf01
    lldp.eth2.port.ifname=swp1
    -> Sample("eth2", "lldp_neighbor", text="leaf01|swp1", raw_key="lldp.eth2.chassis.name")
Caveats: several neighbours on one interface give several samples with the same entity (a new neighbour starts at
a repeated `via` or `rid` key in keyvalue form; in JSON the interface appears once per neighbour). A neighbour
without a system name falls back to its chassis id (then raw_key names the id key, e.g. `lldp.eth2.chassis.mac`);
missing fields leave that side of `|` empty. Keyvalue lines that do not start with `lldp.` are accepted only as the
continuation of a multi-line description (lldpd prints embedded newlines raw). JSON: `interface` is an object for
one interface and a list of one-key objects for several (the lldpd json writer collapses one-element lists), and
the chassis is keyed by its name when it has one. No real capture is in the corpus: the fixtures follow the lldpd
writers (src/client/kv_writer.c, json_writer.c) and the lldpcli(8) manual. No neighbours (empty output, or
`{"lldp": {}}`) is an empty list; `unable to connect to lldpd` and similar become `tool_error` (entity `host`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines, load_json, tool_error_message
from rdmatool.parsers._samples import HOST, tool_error

NAME = "lldpctl"
_KEY = re.compile(r"^lldp\.([^=\s]+)=(.*)$")
# First key segments after the interface name; an interface name may itself contain dots (`eth0.100`).
_TOP_KEYS = {"via", "rid", "age", "chassis", "port", "vlan", "ppvid", "pi", "lldp-med", "unknown-tlvs", "dot3"}
_PORT_ID_TYPES = ("ifname", "local", "ifalias", "mac", "ip", "unhandled")
_CHASSIS_ID_TYPES = ("mac", "ip", "local", "ifname", "ifalias", "unhandled")
_FAILURES = tuple(re.compile(p, re.IGNORECASE) for p in (r"unable to connect to", r"lldpd?.*not running"))


@dataclass
class Neighbor:
    interface: str
    fields: dict[str, str] = field(default_factory=dict)
    last_key: str | None = None

    def sample(self) -> Sample:
        name_key, name = "chassis.name", self.fields.get("chassis.name")
        if name is None:
            for kind in _CHASSIS_ID_TYPES:
                if f"chassis.{kind}" in self.fields:
                    name_key, name = f"chassis.{kind}", self.fields[f"chassis.{kind}"]
                    break
        port = next((self.fields[f"port.{k}"] for k in _PORT_ID_TYPES if f"port.{k}" in self.fields), None)
        if port is None:
            port = self.fields.get("port.descr")
        text = f"{(name or '').strip()}|{(port or '').strip()}"
        return Sample(self.interface, "lldp_neighbor", None, text=text, raw_key=f"lldp.{self.interface}.{name_key}")


def _failure(line: str) -> str | None:
    stripped = line.strip()
    return tool_error_message(line) or (stripped if any(p.search(stripped) for p in _FAILURES) else None)


def _parse_keyvalue(numbered: list[tuple[int, str]]) -> list[Neighbor]:
    neighbors: list[Neighbor] = []
    for line_no, line in numbered:
        match = _KEY.match(line.strip())
        current = neighbors[-1] if neighbors else None
        if not match:
            # lldpd writes a multi-line description raw: only a description may continue on the next line
            if current is None or not (current.last_key or "").endswith("descr"):
                raise ParseError(NAME, line_no, line, "expected lldp.<interface>.<key>=<value>")
            current.fields[current.last_key] += "\n" + line
            continue
        interface, key, value = _split_key(match.group(1)) + (match.group(2),)
        if not key or not interface:
            raise ParseError(NAME, line_no, line, "expected lldp.<interface>.<key>=<value>")
        new_neighbor = key in ("via", "rid") and current is not None and key in current.fields
        if current is None or current.interface != interface or new_neighbor:
            current = Neighbor(interface)
            neighbors.append(current)
        current.fields.setdefault(key, value)  # repeated keys (mgmt-ip, vlan-id) keep their first value
        current.last_key = key
    return neighbors


def _split_key(dotted: str) -> tuple[str, str]:
    """`eth0.100.chassis.name` -> (`eth0.100`, `chassis.name`): the interface ends before the first known key."""
    parts = dotted.split(".")
    for i in range(1, len(parts)):
        if parts[i] in _TOP_KEYS:
            return ".".join(parts[:i]), ".".join(parts[i:])
    return parts[0], ".".join(parts[1:])


def _parse_json(numbered: list[tuple[int, str]]) -> list[Neighbor]:
    document = load_json(NAME, numbered)
    where = numbered[0]
    lldp = document.get("lldp") if isinstance(document, dict) else None
    if isinstance(lldp, list):  # json0-style wrapping: a list of one object
        lldp = lldp[0] if len(lldp) == 1 else None
    if not isinstance(lldp, dict):
        raise ParseError(NAME, *where, 'expected {"lldp": {...}}')
    interfaces = lldp.get("interface", [])
    if set(lldp) - {"interface"}:
        raise ParseError(NAME, *where, f"unexpected keys {sorted(set(lldp) - {'interface'})}")
    entries = interfaces if isinstance(interfaces, list) else [interfaces]
    neighbors: list[Neighbor] = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise ParseError(NAME, *where, "expected an interface object")
        for interface, details in entry.items():
            neighbors.extend(_json_neighbors(str(interface), details, where))
    return neighbors


def _json_neighbors(interface: str, details: object, where: tuple[int, str]) -> list[Neighbor]:
    items = details if isinstance(details, list) else [details]
    found = []
    for item in items:
        if not isinstance(item, dict):
            raise ParseError(NAME, *where, f"expected an object for interface {interface!r}")
        neighbor = Neighbor(interface)
        chassis, port = item.get("chassis", {}), item.get("port", {})
        if not isinstance(chassis, dict) or not isinstance(port, dict):
            raise ParseError(NAME, *where, f"unexpected chassis/port shape on {interface!r}")
        # the chassis object is keyed by its system name when it has one: {"leaf01": {"id": {...}, ...}}
        if len(chassis) == 1 and "id" not in chassis and isinstance(next(iter(chassis.values())), dict):
            name, chassis = next(iter(chassis.items()))
            neighbor.fields["chassis.name"] = str(name)
        _json_id(neighbor, "chassis", chassis.get("id"))
        _json_id(neighbor, "port", port.get("id"))
        if isinstance(port.get("descr"), str):
            neighbor.fields["port.descr"] = port["descr"]
        found.append(neighbor)
    return found


def _json_id(neighbor: Neighbor, side: str, raw: object) -> None:
    """`{"type": "ifname", "value": "swp1"}` -> fields["port.ifname"] = "swp1" (the keyvalue spelling)."""
    if isinstance(raw, dict) and isinstance(raw.get("type"), str) and isinstance(raw.get("value"), str):
        neighbor.fields[f"{side}.{raw['type']}"] = raw["value"]


def parse(text: str) -> list[Sample]:
    numbered: list[tuple[int, str]] = []
    error: str | None = None
    for line_no, line in lines(text):
        if not line.strip() or (line.lstrip().startswith("#") and not numbered):
            continue  # blank lines and a leading `# ...` provenance comment
        error = _failure(line)
        if error:
            break
        numbered.append((line_no, line))
    if not numbered:
        neighbors: list[Neighbor] = []
    elif numbered[0][1].lstrip()[:1] in ("{", "["):
        neighbors = _parse_json(numbered)
    else:
        neighbors = _parse_keyvalue(numbered)
    samples = [n.sample() for n in neighbors]
    if error:
        samples.append(tool_error(HOST, error))
    return samples
