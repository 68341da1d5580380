"""The operator's expected topology (`topology.yaml`), and its diff against the cabling a bundle saw.

```yaml
rails:                     # rail → leaf: this NIC of every host (or of the hosts listed) goes to this switch
  - {nic: mlx5_0, switch: leaf-r0}
  - {nic: mlx5_1, switch: leaf-r1, hosts: "gpu[01-16]"}
links:                     # host NIC → switch port, one cable each
  - {host: gpu01, nic: mlx5_0, switch: leaf-r0, port: Ethernet0}
```

`nic` is the host's RDMA device (`mlx5_0`) or, where the bundle cannot map it to one, the netdev
(rdmatool.topology.observed says which is used). `hosts` is a hostlist (`gpu[01-16]`, `gpu01,gpu02`); a rail
without it holds for every host. A link entry overrides the rails for its host NIC. Anything else (an unknown
key, a value that is not text, a NIC named twice for one host, a bad hostlist) is refused with one line naming the
file and the line (`TopologyError`, exit 2 at the command line).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rdmatool import yamlio
from rdmatool.errors import RdmatoolError
from rdmatool.platforms.port_names import PortNames
from rdmatool.present import hostlist
from rdmatool.topology import Link

SOURCE = "topology-file"
_RAIL_KEYS = {"nic", "switch", "hosts"}
_LINK_KEYS = {"host", "nic", "switch", "port"}


class TopologyError(RdmatoolError):
    """The expected-topology file is unreadable or malformed: `FILE:LINE: message`."""


@dataclass(frozen=True)
class Rail:
    nic: str
    switch: str
    hosts: frozenset[str] | None = None  # None: every host
    line: int = 0

    def covers(self, host: str) -> bool:
        return self.hosts is None or host in self.hosts


@dataclass(frozen=True)
class ExpectedTopology:
    links: tuple[Link, ...] = ()
    rails: tuple[Rail, ...] = ()
    path: str = ""
    lines: dict = field(default_factory=dict, compare=False)  # (host, nic) → line of its link entry

    def expected(self, host: str, nic: str) -> tuple[str, str] | None:
        """(switch, switch port or "") the host NIC should reach; None when the file says nothing about it."""
        for link in self.links:
            if (link.host, link.nic) == (host, nic):
                return link.switch, link.switch_port
        for rail in self.rails:
            if rail.nic == nic and rail.covers(host):
                return rail.switch, ""
        return None

    def nics_of(self, host: str) -> list[str]:
        """The NICs the file expects this host to have cabled."""
        named = [link.nic for link in self.links if link.host == host]
        named += [rail.nic for rail in self.rails if rail.covers(host) and rail.nic not in named]
        return named


@dataclass(frozen=True)
class Deviation:
    """One difference between the expected topology and the cabling seen. `kind`: `missing_link` (the host was
    seen, this NIC's cable was not), `wrong_switch` or `wrong_port`."""

    kind: str
    host: str
    nic: str
    expected_switch: str
    expected_port: str
    observed_switch: str = ""
    observed_port: str = ""


def load(path: str | Path) -> ExpectedTopology:
    try:
        data = yamlio.load(Path(path))
    except yamlio.YamlError as exc:
        raise TopologyError(str(exc)) from None
    top = f"{path}:{yamlio.line_of(data) or 1}"
    if not isinstance(data, dict):
        raise TopologyError(f"{top}: an expected topology is a mapping with `rails` and/or `links`")
    unknown = sorted(set(data) - {"rails", "links"}, key=str)
    if unknown:
        raise TopologyError(f"{top}: unknown key {yamlio.quote(unknown[0])} (known: links, rails)")
    if not data.get("rails") and not data.get("links"):
        raise TopologyError(f"{top}: neither `rails` nor `links` is given: nothing to compare the cabling with")
    rails = tuple(_rail(path, entry, top) for entry in _entries(path, data, "rails", top))
    links, lines = [], {}
    for entry in _entries(path, data, "links", top):
        link, line = _link(path, entry, top)
        key = (link.host, link.nic)
        if key in lines:
            raise TopologyError(f"{path}:{line}: {link.host} {link.nic} is already cabled at line {lines[key]}")
        lines[key] = line
        links.append(link)
    return ExpectedTopology(tuple(links), rails, str(path), lines)


def _entries(path, data: dict, key: str, top: str) -> list:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise TopologyError(f"{top}: `{key}` is a list of mappings, not {yamlio.quote(value)}")
    for entry in value:
        if not isinstance(entry, dict):
            raise TopologyError(f"{top}: each entry of `{key}` is a mapping, not {yamlio.quote(entry)}")
    return value


def _text(path, entry: dict, key: str, where: str, required: bool = True) -> str:
    value = entry.get(key)
    if value is None and not required:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise TopologyError(f"{where}: `{key}` must be a name, not {yamlio.quote(value)}")
    return str(value).strip()


def _where(path, entry: dict, top: str) -> str:
    line = yamlio.line_of(entry)
    return f"{path}:{line}" if line else top


def _check_keys(entry: dict, known: set[str], what: str, where: str) -> None:
    unknown = sorted(set(entry) - known, key=str)
    if unknown:
        raise TopologyError(f"{where}: {what} takes {', '.join(sorted(known))}, not {yamlio.quote(unknown[0])}")


def _rail(path, entry: dict, top: str) -> Rail:
    where = _where(path, entry, top)
    _check_keys(entry, _RAIL_KEYS, "a rail", where)
    hosts = None
    if entry.get("hosts") is not None:
        pattern = _text(path, entry, "hosts", where)
        try:
            hosts = frozenset(name for part in _split(pattern) for name in hostlist.expand(part))
        except ValueError as exc:
            raise TopologyError(f"{where}: `hosts`: {exc}") from None
    return Rail(_text(path, entry, "nic", where), _text(path, entry, "switch", where), hosts,
                yamlio.line_of(entry))


def _split(pattern: str) -> list[str]:
    """`gpu[01-04],stor01` → the comma-separated parts outside brackets."""
    parts, depth, current = [], 0, ""
    for char in pattern:
        depth += char == "["
        depth -= char == "]"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [p.strip() for p in [*parts, current] if p.strip()]


def _link(path, entry: dict, top: str) -> tuple[Link, int]:
    where = _where(path, entry, top)
    _check_keys(entry, _LINK_KEYS, "a link", where)
    link = Link(_text(path, entry, "host", where), _text(path, entry, "nic", where),
                _text(path, entry, "switch", where), _text(path, entry, "port", where, required=False), SOURCE)
    return link, yamlio.line_of(entry)


def diff(expected: ExpectedTopology, observed: Iterable[Link], hosts: Iterable[str],
         ports: PortNames | None = None) -> list[Deviation]:
    """What differs, for the hosts the bundle saw: a NIC cabled to another switch or port than the file says, and
    an expected cable of a seen host that nobody saw. Cables the file says nothing about are not judged. A port is
    the file's under any spelling of it (`Et1/1` for `Ethernet1/1`; with `ports`, a SONiC alias for its name)."""
    ports = ports or PortNames()
    seen: dict[tuple[str, str], list[Link]] = {}
    for link in observed:
        seen.setdefault((link.host, link.nic), []).append(link)
    out = []
    for host in sorted(set(hosts)):
        for nic in expected.nics_of(host):
            switch, port = expected.expected(host, nic) or ("", "")
            links = seen.get((host, nic), [])
            if not links:
                out.append(Deviation("missing_link", host, nic, switch, port))
                continue
            if any(link.switch == switch and (not port or ports.key(switch, link.switch_port) == ports.key(switch, port))
                   for link in links):
                continue
            actual = links[0]
            kind = "wrong_port" if actual.switch == switch else "wrong_switch"
            out.append(Deviation(kind, host, nic, switch, port, actual.switch, actual.switch_port))
    return out
