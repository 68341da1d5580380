"""The context of one suggestion: the finding's evidence, the site profile, and the facts around the finding.

A calculator (pfc.py, ecn.py, dcqcn.py, headroom.py) builds a SuggestionContext from the finding it is handed and
asks it for values: one setting of one target (a host netdev, an RDMA port, a switch port or a switch-wide config
row), the platform of a target, the netdev of an RDMA port and back, and the other end of a cable from
`analysis.links`. Every look-up goes through the analysis' FactQuery (rdmatool.table.facts), so the calculators of a whole
diagnosis share what it has grouped. Missing facts never raise: a look-up then answers None (or nothing).

The site profile (DEFAULT_PROFILE overridden by an `analysis.profile` attribute, then by the `profile` argument) holds
the values the facts cannot tell: the RoCE and CNP DSCP / priority plan of docs/tuning.md §1.1, the RTT column of
its §2.3, the MTU of its §3.1 worked examples.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from rdmatool import config
from rdmatool.model import Suggestion
from rdmatool.table.facts import FactQuery
from rdmatool.tune import commands as cmd
from rdmatool.tune import formulas as f

# The site's own values (RoCE / CNP class, RTT, MTUs) are the configuration's defaults (rdmatool.config, the one
# place they are kept); the rest are the suggesters' own inputs, which a caller's profile may give.
DEFAULT_PROFILE: dict = {
    **config.site_profile(),
    "ecn_pmax_pct": f.ECN_DEFAULT_PMAX_PCT,
    "link_rate_gbps": None,  # fallback when no link rate fact reaches the port in question
    "xoff_bytes": None,  # the switch PG's PFC trigger, when known from the switch configuration
    "shared_buffer_bytes": None,  # with dynamic_th / congested_pgs: T_xoff = α·B/(1 + m·α) (docs/tuning.md §2.4)
    "dynamic_th": 0,
    "congested_pgs": 8,
    **cmd.SITE_DEFAULTS,  # the switches' own object names (platforms' SITE_DEFAULTS: SONiC map, NX-OS policies)
}
GLOBAL_ENTITIES = ("qos", "host", "global", "port")  # switch-wide config rows (Cumulus `qos`, Onyx `host`)
REF = "rdmatool docs tuning"  # the citation in every rationale: a document an installed rdmatool prints
_HOST_SETTINGS = ["trust_mode", "pfc_enabled", "roce_np_enabled", "roce_rp_enabled", "cable_length_m", "cnp_dscp",
                  "dscp_to_priority"]
_LINK_COLUMNS = {"host", "host_port", "switch", "switch_port"}


def clean(value):
    """A fact's cell as a plain Python value; NaN / NA become None."""
    if value is None or value is pd.NA:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def num(value):
    """A fact's cell as a number (4096, not 4096.0), None when it holds none."""
    value = clean(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if float(value).is_integer() else value


def fmt(value) -> str:
    """A number for a rationale: whole, or four significant digits below 100."""
    if isinstance(value, float):
        return f"{value:.0f}" if value.is_integer() or abs(value) >= 100 else f"{value:.4g}"
    return str(value)


def add_commands(commands: dict[str, list[str]], platform: str, lines: list[str]) -> None:
    """Append one platform's command lines to a suggestion's commands."""
    if lines:
        bucket = commands.setdefault(platform, [])
        closing = cmd.apply_line(platform)
        if closing and bucket and bucket[-1] == closing:
            bucket.pop()  # one `nv config apply` (Cumulus) at the end of the whole change
        bucket.extend(lines)


@dataclass
class Side:
    """One end of a cable a suggestion configures."""

    target: str
    platform: str  # "host" or a switch platform
    entity: str | None  # host netdev or switch port (None: switch-wide)
    profile: str | None = None  # SONiC WRED profile a switch-wide ECN finding names

    @property
    def is_host(self) -> bool:
        return cmd.is_host(self.platform)

    @property
    def where(self) -> str:
        return f"{self.target} {self.entity}" if self.entity else self.target


class SuggestionContext:
    """One finding's evidence, the site profile, and the look-ups into the facts and the cabling around it."""

    def __init__(self, evidence, analysis, profile):
        self.evidence = evidence if isinstance(evidence, dict) else {}
        self.query = FactQuery.of(analysis)
        links = getattr(analysis, "links", None)
        self.links = links if isinstance(links, pd.DataFrame) else pd.DataFrame()
        given = {**(getattr(analysis, "profile", None) or {}), **(profile or {})}
        self.profile = {**DEFAULT_PROFILE, **config.site_profile(given)}  # roce_tos follows the site's roce_dscp
        self.notes: list[str] = []  # why some commands were left out, for the next suggestion's rationale

    def site(self, key: str):
        """A value of the site profile."""
        return self.profile.get(key, DEFAULT_PROFILE.get(key))

    # --- the facts ---------------------------------------------------------------------------------------------

    def rows(self, target=None, entity=None, metric=None, prio=None) -> pd.DataFrame:
        return self.query.rows(target, entity, metric, prio)

    def _found(self, target, entity, metric, prio) -> list[tuple] | None:
        """(value, text) pairs for one exact (target, entity, metric[, priority]), or None when the question is not
        that simple (a list of names, no target) and rows() must answer it."""
        if not all(isinstance(x, str) for x in (target, entity, metric)):
            return None
        return self.query.values(target, entity, metric, prio)

    def value(self, target, entity, metric, prio=None):
        """The first number among the facts of one target, entity and metric (and priority)."""
        found = self._found(target, entity, metric, prio)
        values = [v for v, _ in found] if found is not None else (
            self.rows(target, entity, metric, prio).get("value", pd.Series(dtype=float)))
        for v in values:
            if num(v) is not None:
                return num(v)
        return None

    def text(self, target, entity, metric, prio=None):
        """The first text among the facts of one target, entity and metric (and priority)."""
        found = self._found(target, entity, metric, prio)
        texts = [t for _, t in found] if found is not None else (
            self.rows(target, entity, metric, prio).get("text", pd.Series(dtype=object)))
        for v in texts:
            if isinstance(clean(v), str):
                return v
        return None

    def platform(self, target) -> str | None:
        """cmd.HOST for a host, the switch platform for a switch, None for a target without facts."""
        found = self.query.kind_platform(target)
        if found is None:
            return None
        return cmd.target_key(clean(found[0]), clean(found[1]))

    def switch_value(self, side: Side, metric: str, prio=None, text=False):
        """A switch setting of the port, else of the switch-wide config rows."""
        for entity in ([side.entity] if side.entity else []) + list(GLOBAL_ENTITIES):
            got = self.text(side.target, entity, metric, prio) if text else self.value(side.target, entity, metric,
                                                                                       prio)
            if got is not None:
                return got
        return None

    # --- hosts -------------------------------------------------------------------------------------------------

    def netdev_of(self, target, rdma_port) -> str | None:
        return self.text(target, rdma_port, "netdev")

    def rdma_port_of(self, target, netdev) -> str | None:
        return clean(self.query.entity_with_text(target, "netdev", netdev))

    def host_netdevs(self, target, entity) -> list[str]:
        """The netdev(s) a host finding is about: the entity itself, the netdev of an RDMA port, or all known."""
        if isinstance(entity, str) and entity:
            if "/" in entity:  # mlx5_0/1
                nd = self.netdev_of(target, entity)
                return [nd] if nd else []
            if entity != "netdev":
                return [entity]
        known = self.rows(target=target, metric=_HOST_SETTINGS)
        names = [] if known.empty else sorted({e for e in known["entity"] if isinstance(e, str) and e != "netdev"})
        if not names:
            gids = self.rows(target=target, metric="netdev")
            names = [] if gids.empty else sorted({t for t in gids["text"] if isinstance(t, str)})
        return names

    def host_rate(self, host: str, netdev: str | None):
        """The link rate of a host netdev's RDMA port; None when it is not known. Never another port's: a host with
        a 400G NIC and a 100G one cabled to this switch is a 100G end of this cable."""
        rp = (self.rdma_port_of(host, netdev) or self.only_ethernet_port(host)) if netdev else None
        return self.value(host, rp, "link_rate_gbps") if rp else None

    def only_ethernet_port(self, host: str) -> str | None:
        """The host's one RDMA port on Ethernet, when it has exactly one: the port a netdev cabled to a switch must
        be, even without a GID table naming it (its InfiniBand ports go to no Ethernet switch)."""
        rows = self.rows(target=host, metric="link_layer")
        ports = {e for e, t in zip(rows.get("entity", []), rows.get("text", [])) if t == "Ethernet"
                 and isinstance(e, str) and "/" in e}
        return next(iter(ports)) if len(ports) == 1 else None

    # --- cabling -----------------------------------------------------------------------------------------------

    def peers_of_host(self, host, netdev) -> list[Side]:
        if self.links.empty or not set(self.links.columns) >= _LINK_COLUMNS:
            return []
        hit = self.links[(self.links["host"] == host) & (self.links["host_port"] == netdev)]
        out = []
        for switch, port in zip(hit["switch"], hit["switch_port"]):
            platform = self.platform(switch)
            if platform and not cmd.is_host(platform):
                out.append(Side(switch, platform, port))
        return out

    def hosts_on_port(self, switch, port) -> list[Side]:
        if self.links.empty or port is None or not set(self.links.columns) >= _LINK_COLUMNS:
            return []
        hit = self.links[(self.links["switch"] == switch) & (self.links["switch_port"] == port)]
        return [Side(h, cmd.HOST, p) for h, p in zip(hit["host"], hit["host_port"]) if cmd.is_host(self.platform(h))]

    def hosts_on_switch(self, switch) -> list[Side]:
        if self.links.empty or "switch" not in self.links.columns:
            return []
        hit = self.links[self.links["switch"] == switch]
        return [Side(h, cmd.HOST, p) for h, p in zip(hit["host"], hit["host_port"]) if cmd.is_host(self.platform(h))]

    def sides(self) -> tuple[Side | None, list[Side]]:
        """(the switch side the finding is about, the host sides cabled to it); (None, []) for a host finding."""
        target = self.evidence.get("target")
        entity = self.evidence.get("entity")
        platform = self.platform(target) if target else None
        if platform is None:
            return None, []
        if cmd.is_host(platform):
            return None, []  # a host finding may concern several netdevs: see host_pairs()
        port = entity if cmd.is_port(platform, entity) else None
        side = Side(target, platform, port)
        return side, self.hosts_on_port(target, port)

    def host_pairs(self) -> list[tuple[Side, list[Side]]]:
        """Host-centric view: (host netdev side, switch sides cabled to it) for the finding's host(s)."""
        target = self.evidence.get("target")
        platform = self.platform(target) if target else None
        if cmd.is_host(platform):
            return [(Side(target, cmd.HOST, nd), self.peers_of_host(target, nd))
                    for nd in self.host_netdevs(target, self.evidence.get("entity"))]
        side, hosts = self.sides()
        if side is None:
            return []
        return [(h, [side]) for h in hosts]

    def focus_pairs(self) -> list[tuple[Side, list[Side]]]:
        """(side the finding is about, sides cabled to it): host netdev(s) with their switch ports, or a switch port
        with the host(s) behind it."""
        target = self.evidence.get("target")
        platform = self.platform(target) if target else None
        if cmd.is_host(platform):
            return self.host_pairs()
        side, hosts = self.sides()
        return [] if side is None else [(side, hosts)]

    # --- the suggestion ----------------------------------------------------------------------------------------

    def render(self, platform: str, fn: Callable[..., list[str]], *args) -> list[str]:
        """One platform's command lines; a value that does not validate leaves them out, and a note says so."""
        try:
            return fn(*args)
        except ValueError as exc:
            self.notes.append(f"{platform} commands not rendered: {exc}")
            return []

    def suggestion(self, setting, current, proposed, rationale, commands, target: str | None = None,
                   peers: list[Side] | None = None) -> Suggestion:
        """The suggestion for `target` (the device it configures; the finding's target unless given). Commands of a
        platform whose syntax the project has not checked against the vendor's documentation say so. `peers`: the
        cable peers whose commands it also carries, so that each platform's commands name the device they run on."""
        rendered = {k: v for k, v in commands.items() if v}
        notes = [note for platform in rendered if (note := cmd.syntax_note(platform))]
        text = " ".join([rationale, *self.notes, *notes]).strip()
        self.notes = []
        devices: dict[str, str] = {}
        for peer in peers or ():
            if peer.platform in rendered:
                devices.setdefault(peer.platform, peer.target)
        return Suggestion(setting=setting, current=None if current is None else str(current), proposed=str(proposed),
                          rationale=text, commands=rendered, target=target or self.evidence.get("target"),
                          devices=devices)
