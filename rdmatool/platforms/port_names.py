"""A switch port, or an InfiniBand node, under every name the two ends of its cable and its own outputs give it.

Every join of one end of a cable to the other (a host's LLDP to the switch port, a switch's LLDP to its peer's
port, the far-end figures, the per-cable errors) and the rules engine's cross-cable `explains_far_end` resolve
names here and nowhere else; topology and rules are siblings that may not import each other, so the spelling lives
in this module of the floor, which reads no facts: the caller hands it each switch's port names and aliases.

The spellings:
- EOS `Et1/1` / `Ethernet1/1`, NX-OS `Eth1/1` / `Ethernet1/1`, Onyx `Eth1/1` / `1/1`, and `Ethernet 1/1` with a
  space: one port (`port_key` drops the prefix before the port number, and case and blanks; the prefixes are each
  platform module's PORT_PREFIXES, rdmatool.platforms);
- SONiC: its LLDP advertises the port *alias* (`etp1`, `fortyGigE0/0`, `Eth1/1`) as the port ID and the port name
  (`Ethernet0`) as its description; `show interfaces status` maps the two (its Alias column, the `port_alias`
  facts), so `PortNames` takes a switch's aliases and answers with its own name;
- Cumulus breakouts `swp1s0`, `swp1s1` are ports of their own, never `swp1`;
- InfiniBand: a node description iblinkinfo makes unique with the port GUID (`gpu01 mlx5_0 (0x...)`) is the node
  of the plain one (`node_description`); a CA's default description is `<host> <device>` (`ca_of`).
- A neighbour's system name (`system_name`): LLDP sends the device's hostname, which may be fully qualified
  (`leaf01.pod1.example.net`) and in capitals (`LEAF01`) where the inventory says `leaf01`: host names are not
  case-sensitive.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rdmatool import platforms

# a prefix only when a port number follows it: `etp1` (a SONiC alias) is not `p1`; the longest first (`ethernet`
# before `eth` before `et`)
_PREFIXES = sorted({p.lower() for m in platforms.SWITCHES for p in m.PORT_PREFIXES}, key=lambda p: (-len(p), p))
_PORT_PREFIX = re.compile(r"^(?:" + "|".join(map(re.escape, _PREFIXES)) + r")(?=\d)")
_BLANKS = re.compile(r"\s+")
_GUID_SUFFIX = re.compile(r"\s*\(0x[0-9a-fA-F]+\)\s*$")
# the last set of names seen with its lower-case index (callers pass one set per bundle); one tuple, replaced whole,
# so a thread never pairs one set with another's index
_FOLDED: list = [(None, {})]


def system_name(name: str, names) -> str:
    """A neighbour's system name as the bundle names it: the target of that name, else of its first label (an
    FQDN), compared without case where neither matches exactly; else the first label."""
    if name in names:
        return name
    short = name.split(".")[0]
    if short in names:
        return short
    seen, folded = _FOLDED[0]
    if seen is not names:
        folded = {n.lower(): n for n in names if isinstance(n, str)}
        _FOLDED[0] = (names, folded)
    return folded.get(name.lower()) or folded.get(short.lower()) or short


def port_key(port: str) -> str:
    """A switch port as both ends may spell it (`Ethernet1/1`, `Eth1/1`, `et1/1`, `1/1` → `1/1`)."""
    return _PORT_PREFIX.sub("", _BLANKS.sub("", str(port)).lower())


def node_description(description: str) -> str:
    """An InfiniBand node description without the port GUID iblinkinfo adds to a shared one
    (`gpu01 mlx5_0 (0xb83fd20300000001)` → `gpu01 mlx5_0`)."""
    return _GUID_SUFFIX.sub("", str(description)).strip().strip('"').strip()


def ca_of(description: str) -> tuple[str, str] | None:
    """(host, device) of a CA's default node description (`gpu01 mlx5_0`, with or without its GUID); None for any
    other description (a switch's `MF0;...`, a site's own)."""
    words = node_description(description).split()
    if len(words) != 2 or words[0].startswith("MF0;"):
        return None
    return words[0], words[1]


@dataclass(frozen=True)
class PortNames:
    """Each switch's ports under their own names. `own`: switch → port key → the name the switch gives the port;
    `aliases`: switch → alias (lower case) → port name (SONiC's Alias column)."""

    own: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    aliases: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    @classmethod
    def build(cls, ports: Iterable[tuple[str, str]], aliases: Iterable[tuple[str, str, str]] = ()) -> PortNames:
        """From (switch, port name) pairs and (switch, port name, alias) triples. A name the switch gives a port
        wins over an alias another port has that looks the same."""
        own: dict[str, dict[str, str]] = {}
        alias_of: dict[str, dict[str, str]] = {}
        for switch, name, alias in aliases:
            if name and alias:
                own.setdefault(switch, {}).setdefault(port_key(name), name)
                alias_of.setdefault(switch, {}).setdefault(_BLANKS.sub("", alias).lower(), name)
        for switch, name in ports:
            if name:
                own.setdefault(switch, {}).setdefault(port_key(name), name)
        return cls(own, alias_of)

    def name(self, switch: str, port: str) -> str:
        """The port as `switch` itself names it: `etp1` → `Ethernet0` (an alias), `Et1/1` → `Ethernet1/1`; a port
        the switch does not name is returned as given."""
        text = str(port).strip()
        if not text:
            return text
        mine = self.own.get(switch, {})
        key = port_key(text)
        if key in mine and _BLANKS.sub("", text).lower() == _BLANKS.sub("", mine[key]).lower():
            return mine[key]  # the switch's own name, spelled as it spells it
        alias = self.aliases.get(switch, {}).get(_BLANKS.sub("", text).lower())
        if alias:
            return alias
        return mine.get(key, text)

    def key(self, switch: str, port: str) -> str:
        """The port's key once its name is resolved: equal for every spelling of one port of `switch`."""
        return port_key(self.name(switch, port))
