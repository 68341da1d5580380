"""Suggesters: `(rule, evidence, analysis, profile=None) -> list[Suggestion]`, registered by name in SUGGESTERS.

Each one reads the facts around the finding (the evidence's target and entity, and the other end of the cable from
`analysis.links`), computes the wanted setting, and renders it for the platform of the target in question plus, for
a host-side finding, the switch port it is cabled to (and the host behind a switch port for a switch-side finding).
Missing facts never raise: the suggestion then carries `current=None`, or there is no suggestion at all when
nothing can be computed. Values that do not validate for a command (a strange port name from LLDP, say) leave that
platform's commands out and say so in the rationale.

The site profile (defaults in DEFAULT_PROFILE) comes from the `profile` argument or an `analysis.profile` attribute.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rdmatool.model import Suggestion
from rdmatool.rules.kinds import shared_index
from rdmatool.tune import commands as cmd
from rdmatool.tune import formulas as f

DEFAULT_PROFILE: dict = {
    "roce_dscp": 26,  # tuning.md §1.1: RoCE data DSCP 26 → switch priority 3, PFC on 3
    "roce_priority": 3,
    "cnp_dscp": 48,  # tuning.md §1.1: CNP DSCP 48 → priority 6, strict
    "cnp_priority": 6,
    "rtt_us": 10,  # tuning.md §2.3: the 10 µs column (one pod, NIC-to-NIC unloaded RTT)
    "ecn_pmax_pct": f.ECN_DEFAULT_PMAX_PCT,
    "mtu": 9216,  # port (Ethernet) MTU for headroom / mlx5 xoff; tuning.md §3.1 worked examples
    "roce_mtu": 4096,  # RoCE path MTU for the Kmin→Kmax ramp when no active_mtu fact is present
    "cable_length_m": None,  # the real cable length when known; else the longer of the configured ones
    "link_rate_gbps": None,  # fallback when no link rate fact reaches the port in question
    "xoff_bytes": None,  # the switch PG's PFC trigger, when known from the switch configuration
    "shared_buffer_bytes": None,  # with dynamic_th / congested_pgs: T_xoff = α·B/(1 + m·α) (tuning.md §2.4)
    "dynamic_th": 0,
    "congested_pgs": 8,
    "sonic_dscp_map": "AZURE",
    "sonic_wred_profile": "AZURE_LOSSLESS",
    **cmd.NXOS_DEFAULTS,
}
# Fact names a switch parser may use for a PG's static XOFF trigger (none emits one yet; the profile can supply it).
XOFF_METRICS = ("pfc_xoff_bytes",)
_GLOBAL_ENTITIES = ("qos", "host", "global", "port")  # switch-wide config rows (Cumulus `qos`, Onyx `host`)
_REF = "tuning.md"


# --- reading the facts ---------------------------------------------------------------------------------------------


def _clean(value):
    if value is None or value is pd.NA:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _num(value):
    value = _clean(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if float(value).is_integer() else value


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.0f}" if value.is_integer() or abs(value) >= 100 else f"{value:.4g}"
    return str(value)


@dataclass
class _Side:
    target: str
    platform: str  # "host" or a switch platform
    entity: str | None  # host netdev or switch port (None: switch-wide)
    profile: str | None = None  # SONiC WRED profile a switch-wide ECN finding names


class _ByTarget:
    """The facts of one target at a time, cut on first use from the row positions of every target: a diagnosis
    asks about a handful of targets, so splitting the whole fleet's facts up front was wasted work."""

    def __init__(self, facts: pd.DataFrame, positions: dict):
        self.facts = facts
        self._at = positions  # target → ascending row positions
        self._frames: dict = {}
        self._metric_at: dict = {}  # target → {metric: ascending positions in that target's frame}
        self.memo: dict = {}  # answers that depend on the facts alone (a target's platform, a netdev's port)

    def get(self, target, default=None):
        frame = self._frames.get(target)
        if frame is None:
            at = self._at.get(target)
            if at is None:
                return default
            frame = self._frames[target] = self.facts.take(at)
        return frame

    def metric_rows(self, target: str, metrics) -> pd.DataFrame:
        """The target's rows of these metrics, in the facts' order (what a metric mask on its frame keeps)."""
        frame = self.get(target)
        if frame is None:
            return self.facts.iloc[0:0]
        at = self._metric_at.get(target)
        if at is None:
            at = self._metric_at[target] = frame.groupby("metric", sort=False).indices if len(frame) else {}
        found = [at[m] for m in dict.fromkeys(metrics) if m in at]
        return frame.take(np.sort(np.concatenate(found)) if len(found) > 1 else found[0] if found else [])


class _Ctx:
    def __init__(self, evidence, analysis, profile):
        self.evidence = evidence if isinstance(evidence, dict) else {}
        facts = getattr(analysis, "facts", None)
        self.facts = facts if isinstance(facts, pd.DataFrame) else pd.DataFrame()
        links = getattr(analysis, "links", None)
        self.links = links if isinstance(links, pd.DataFrame) else pd.DataFrame()
        self.profile = {**DEFAULT_PROFILE, **(getattr(analysis, "profile", None) or {}), **(profile or {})}
        self.notes: list[str] = []
        self.by_target = self._split_by_target(analysis)
        self.indexes = self._shared(analysis, "_facts_index", {})

    @staticmethod
    def _shared(analysis, name: str, default):
        """A cache kept on the analysis so that every suggester call of one diagnosis shares it."""
        cached = getattr(analysis, name, None)
        if cached is None:
            cached = default
            with contextlib.suppress(AttributeError):
                setattr(analysis, name, cached)
        return cached

    def _split_by_target(self, analysis) -> _ByTarget:
        """Facts per target, computed once per analysis: suggesters look up a few values many times, and
        filtering the whole fleet's facts on every look-up made a 1,000-host diagnosis crawl."""
        cached = getattr(analysis, "_facts_by_target", None)
        if isinstance(cached, _ByTarget) and cached.facts is self.facts:
            return cached
        # The row positions come from the facts' index the rules engine keeps on the analysis.
        split = _ByTarget(self.facts, shared_index(analysis).target_positions() if self.facts is getattr(
            analysis, "facts", None) else {})
        # A plain object without attributes (tests may pass one) gets no cache; the results are the same.
        with contextlib.suppress(AttributeError):
            analysis._facts_by_target = split
        return split

    # raw access
    def rows(self, target=None, entity=None, metric=None, prio=None) -> pd.DataFrame:
        df = self.facts
        if df.empty or "metric" not in df.columns:
            return df.iloc[0:0]
        if isinstance(target, str):
            if metric is not None:  # that target's rows of these metrics, from its own index
                df = self.by_target.metric_rows(target, metric if isinstance(metric, (list, tuple, set)) else [metric])
                metric = None
            else:
                df = self.by_target.get(target, df.iloc[0:0])
            target = None
        mask = pd.Series(True, index=df.index)
        for column, wanted in (("target", target), ("entity", entity), ("metric", metric)):
            if wanted is not None:
                if column not in df.columns:
                    return df.iloc[0:0]
                mask &= df[column].isin(wanted if isinstance(wanted, (list, tuple, set)) else [wanted])
        if prio is not None:
            if "priority" not in df.columns:
                return df.iloc[0:0]
            mask &= pd.to_numeric(df["priority"], errors="coerce") == prio
        return df[mask]

    def _lookup(self, target, entity, metric, prio) -> list[tuple] | None:
        """(value, text) pairs for one exact (target, entity, metric[, priority]) from a per-target dict index,
        or None when the question is not that simple (lists of names, no target) and rows() must answer."""
        if not all(isinstance(x, str) for x in (target, entity, metric)):
            return None
        index = self.indexes.get(target)
        if index is None:
            frame = self.by_target.get(target)
            index = {}
            if frame is not None and {"entity", "metric", "priority", "value", "text"} <= set(frame.columns):
                priorities = pd.to_numeric(frame["priority"], errors="coerce")
                for e, m, p, v, t in zip(frame["entity"], frame["metric"], priorities, frame["value"], frame["text"]):
                    index.setdefault((e, m, None), []).append((v, t))
                    if pd.notna(p):
                        index.setdefault((e, m, int(p)), []).append((v, t))
            self.indexes[target] = index
        return index.get((entity, metric, None if prio is None else int(prio)), [])

    def value(self, target, entity, metric, prio=None):
        found = self._lookup(target, entity, metric, prio)
        values = [v for v, _ in found] if found is not None else (
            self.rows(target, entity, metric, prio).get("value", pd.Series(dtype=float)))
        for v in values:
            if _num(v) is not None:
                return _num(v)
        return None

    def text(self, target, entity, metric, prio=None):
        found = self._lookup(target, entity, metric, prio)
        texts = [t for _, t in found] if found is not None else (
            self.rows(target, entity, metric, prio).get("text", pd.Series(dtype=object)))
        for v in texts:
            if isinstance(_clean(v), str):
                return v
        return None

    def platform(self, target) -> str | None:
        if isinstance(target, str):
            key = ("platform", target)
            if key not in self.by_target.memo:
                self.by_target.memo[key] = self._platform(target)
            return self.by_target.memo[key]
        return self._platform(target)

    def _platform(self, target) -> str | None:
        rows = self.rows(target=target)
        if rows.empty:
            return None
        kind = _clean(rows["kind"].iloc[0]) if "kind" in rows.columns else None
        platform = _clean(rows["platform"].iloc[0]) if "platform" in rows.columns else None
        if kind == "host" or platform == "linux":
            return cmd.HOST
        return platform if platform in cmd.SWITCH_PLATFORMS else None

    # hosts
    def netdev_of(self, target, rdma_port) -> str | None:
        return self.text(target, rdma_port, "netdev")

    def rdma_port_of(self, target, netdev) -> str | None:
        if isinstance(target, str) and (netdev is None or isinstance(netdev, str)):
            key = ("rdma_port", target, netdev)
            if key not in self.by_target.memo:
                self.by_target.memo[key] = self._rdma_port_of(target, netdev)
            return self.by_target.memo[key]
        return self._rdma_port_of(target, netdev)

    def _rdma_port_of(self, target, netdev) -> str | None:
        rows = self.rows(target=target, metric="netdev")
        if rows.empty:
            return None
        hits = rows[rows["text"] == netdev]
        return _clean(hits["entity"].iloc[0]) if not hits.empty else None

    def host_netdevs(self, target, entity) -> list[str]:
        """The netdev(s) a host finding is about: the entity itself, the netdev of an RDMA port, or all known."""
        if isinstance(entity, str) and entity:
            if "/" in entity:  # mlx5_0/1
                nd = self.netdev_of(target, entity)
                return [nd] if nd else []
            if entity != "netdev":
                return [entity]
        known = self.rows(target=target, metric=["trust_mode", "pfc_enabled", "roce_np_enabled", "roce_rp_enabled",
                                                  "cable_length_m", "cnp_dscp", "dscp_to_priority"])
        names = [] if known.empty else sorted({e for e in known["entity"] if isinstance(e, str) and e != "netdev"})
        if not names:
            gids = self.rows(target=target, metric="netdev")
            names = [] if gids.empty else sorted({t for t in gids["text"] if isinstance(t, str)})
        return names

    # cabling
    def peers_of_host(self, host, netdev) -> list[_Side]:
        if self.links.empty or not {"host", "host_port", "switch", "switch_port"} <= set(self.links.columns):
            return []
        hit = self.links[(self.links["host"] == host) & (self.links["host_port"] == netdev)]
        out = []
        for switch, port in zip(hit["switch"], hit["switch_port"]):
            platform = self.platform(switch)
            if platform and platform != cmd.HOST:
                out.append(_Side(switch, platform, port))
        return out

    def hosts_on_port(self, switch, port) -> list[_Side]:
        if self.links.empty or port is None or not {"host", "host_port", "switch", "switch_port"} <= set(
                self.links.columns):
            return []
        hit = self.links[(self.links["switch"] == switch) & (self.links["switch_port"] == port)]
        return [_Side(h, cmd.HOST, p) for h, p in zip(hit["host"], hit["host_port"]) if self.platform(h) == cmd.HOST]

    def hosts_on_switch(self, switch) -> list[_Side]:
        if self.links.empty or "switch" not in self.links.columns:
            return []
        hit = self.links[self.links["switch"] == switch]
        return [_Side(h, cmd.HOST, p) for h, p in zip(hit["host"], hit["host_port"]) if self.platform(h) == cmd.HOST]

    def sides(self) -> tuple[_Side | None, list[_Side]]:
        """(the side the finding is about, the sides cabled to it)."""
        target = self.evidence.get("target")
        entity = self.evidence.get("entity")
        platform = self.platform(target) if target else None
        if platform is None:
            return None, []
        if platform == cmd.HOST:
            return None, []  # a host finding may concern several netdevs: see host_pairs()
        port = entity if cmd.is_port(platform, entity) else None
        side = _Side(target, platform, port)
        return side, self.hosts_on_port(target, port)

    def host_pairs(self) -> list[tuple[_Side, list[_Side]]]:
        """Host-centric view: (host netdev side, switch sides cabled to it) for the finding's host(s)."""
        target = self.evidence.get("target")
        platform = self.platform(target) if target else None
        if platform == cmd.HOST:
            return [(_Side(target, cmd.HOST, nd), self.peers_of_host(target, nd))
                    for nd in self.host_netdevs(target, self.evidence.get("entity"))]
        side, hosts = self.sides()
        if side is None:
            return []
        return [(h, [side]) for h in hosts]

    def render(self, platform: str, fn: Callable[..., list[str]], *args) -> list[str]:
        try:
            return fn(*args)
        except ValueError as exc:
            self.notes.append(f"{platform} commands not rendered: {exc}")
            return []


def _profile(ctx: _Ctx, key: str):
    return ctx.profile.get(key, DEFAULT_PROFILE.get(key))


def _add(commands: dict[str, list[str]], platform: str, lines: list[str]) -> None:
    if lines:
        bucket = commands.setdefault(platform, [])
        if platform == "cumulus" and bucket and bucket[-1] == "nv config apply":
            bucket.pop()  # one `nv config apply` at the end of the whole change
        bucket.extend(lines)


def _suggestion(ctx: _Ctx, setting, current, proposed, rationale, commands) -> Suggestion:
    text = " ".join([rationale, *ctx.notes]).strip()
    ctx.notes = []
    return Suggestion(setting=setting, current=None if current is None else str(current), proposed=str(proposed),
                      rationale=text, commands={k: v for k, v in commands.items() if v})


# --- per-setting helpers ----------------------------------------------------------------------------------------


def _pfc_state(ctx: _Ctx, side: _Side) -> tuple[str | None, set[int]]:
    """(vector string or None, priorities currently enabled) for a host netdev or switch port."""
    entities = [side.entity] if side.entity else []
    if side.platform != cmd.HOST:
        entities += list(_GLOBAL_ENTITIES)
    for entity in entities:
        rows = ctx.rows(side.target, entity, "pfc_enabled")
        known = {}
        for p, v in zip(rows.get("priority", []), rows.get("value", [])):
            p, v = _num(p), _num(v)
            if p is not None and v is not None and 0 <= p <= 7:
                known[int(p)] = int(v)
        if known:
            vector = ",".join(str(known[p]) if p in known else "?" for p in range(8))
            return vector, {p for p, v in known.items() if v}
    return None, set()


def _switch_value(ctx: _Ctx, side: _Side, metric: str, prio=None, text=False):
    for entity in ([side.entity] if side.entity else []) + list(_GLOBAL_ENTITIES):
        got = ctx.text(side.target, entity, metric, prio) if text else ctx.value(side.target, entity, metric, prio)
        if got is not None:
            return got
    return None


def _dscp_current(ctx: _Ctx, side: _Side, dscp: int):
    entities = [side.entity] if side.entity else []
    if side.platform != cmd.HOST:
        entities += list(_GLOBAL_ENTITIES)
    for entity in entities:
        rows = ctx.rows(side.target, entity, "dscp_to_priority")
        if rows.empty:
            continue
        hit = rows[(rows["raw_key"] == f"dscp{dscp}") | (rows["text"].astype("string") == str(dscp))]
        for v in hit["value"]:
            if _num(v) is not None:
                return int(_num(v))
    return None


def _where(side: _Side) -> str:
    return f"{side.target} {side.entity}" if side.entity else side.target


# --- suggesters ----------------------------------------------------------------------------------------------------


def suggest_pfc_priority(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """One lossless priority (the RoCE one): PFC vector for the host netdev and the switch port it is cabled to."""
    ctx = _Ctx(evidence, analysis, profile)
    prio = cmd.priority(_profile(ctx, "roce_priority"))
    proposed_vector = cmd.pfc_vector([prio])
    out = []
    for focus, others in _focus_pairs(ctx):
        current, _ = _pfc_state(ctx, focus)
        if current == proposed_vector:
            continue
        commands: dict[str, list[str]] = {}
        for side in [focus, *others]:
            _, enabled = _pfc_state(ctx, side)
            if side.platform == cmd.HOST:
                _add(commands, cmd.HOST, ctx.render(cmd.HOST, cmd.host_pfc, side.entity, [prio]))
            else:
                _add(commands, side.platform, ctx.render(side.platform, cmd.switch_pfc, side.platform, side.entity,
                                                         [prio], enabled - {prio}, ctx.profile))
        rationale = (f"{_where(focus)} PFC vector is {current or 'unknown'}; RoCE DSCP {_profile(ctx, 'roce_dscp')} "
                     f"rides priority {prio}, which must be the one lossless priority on both ends of the cable "
                     f"({_REF} §1.3, §3.4: one lossless priority keeps headroom to one block per port).")
        out.append(_suggestion(ctx, f"PFC enabled priorities ({_where(focus)})", current,
                               f"{proposed_vector} (priority {prio} only)", rationale, commands))
    return out


def _focus_pairs(ctx: _Ctx) -> list[tuple[_Side, list[_Side]]]:
    """(side the finding is about, sides cabled to it): host netdev(s) with their switch ports, or a switch port
    with the host(s) behind it."""
    target = ctx.evidence.get("target")
    platform = ctx.platform(target) if target else None
    if platform == cmd.HOST:
        return ctx.host_pairs()
    side, hosts = ctx.sides()
    return [] if side is None else [(side, hosts)]


def suggest_trust_dscp(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """Classify RoCEv2 by DSCP (untagged traffic carries no PCP): host `--trust dscp`, switch trust L3 / DSCP."""
    ctx = _Ctx(evidence, analysis, profile)
    out = []
    for focus, others in _focus_pairs(ctx):
        current = (ctx.text(focus.target, focus.entity, "trust_mode") if focus.platform == cmd.HOST
                   else _switch_value(ctx, focus, "trust_mode", text=True))
        ok = current == "dscp" if focus.platform == cmd.HOST else (
            current is not None and "dscp" in str(current).split(","))
        if ok:
            continue
        commands: dict[str, list[str]] = {}
        for side in [focus, *others]:
            if side.platform == cmd.HOST:
                _add(commands, cmd.HOST, ctx.render(cmd.HOST, cmd.host_trust_dscp, side.entity))
            else:
                _add(commands, side.platform, ctx.render(side.platform, cmd.switch_trust_dscp, side.platform,
                                                         side.entity, ctx.profile))
        rationale = (f"{_where(focus)} trusts {current or 'an unknown field'}; untagged RoCEv2 carries no PCP, so "
                     f"in PCP mode DSCP {_profile(ctx, 'roce_dscp')} is ignored and RoCE lands in the default "
                     f"priority ({_REF} §1.3 item 1, §7 row 2).")
        out.append(_suggestion(ctx, f"QoS trust mode ({_where(focus)})", current, "dscp", rationale, commands))
    return out


def suggest_dscp_map(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """DSCP → priority for RoCE (26 → 3) and CNP (48 → 6) on the host netdev and its switch port."""
    ctx = _Ctx(evidence, analysis, profile)
    wanted = [("RoCE", cmd.dscp(_profile(ctx, "roce_dscp")), cmd.priority(_profile(ctx, "roce_priority"))),
              ("CNP", cmd.dscp(_profile(ctx, "cnp_dscp")), cmd.priority(_profile(ctx, "cnp_priority")))]
    out = []
    for focus, others in _focus_pairs(ctx):
        for label, dscp, prio in wanted:
            current = _dscp_current(ctx, focus, dscp)
            if current == prio:
                continue
            commands: dict[str, list[str]] = {}
            for side in [focus, *others]:
                if side.platform == cmd.HOST:
                    _add(commands, cmd.HOST, ctx.render(cmd.HOST, cmd.host_dscp2prio, side.entity, dscp, prio))
                else:
                    _add(commands, side.platform, ctx.render(side.platform, cmd.switch_dscp_map, side.platform,
                                                             side.entity, dscp, prio, ctx.profile))
            shown = "unknown" if current is None else f"priority {current}"
            rationale = (f"{_where(focus)} maps {label} DSCP {dscp} to {shown}; it must map to priority {prio} on "
                         f"the NIC and on every switch hop, or {label} traffic leaves its "
                         f"{'lossless' if label == 'RoCE' else 'strict'} queue ({_REF} §1.1, §1.2, §7 row 1).")
            if "onyx" in {s.platform for s in [focus, *others]}:
                rationale += " Onyx: no per-DSCP map rendered; its default DSCP>>3 map already sends 26→3, 48→6."
            out.append(_suggestion(ctx, f"{label} DSCP {dscp} → priority ({_where(focus)})",
                                   None if current is None else f"DSCP {dscp} → {current}",
                                   f"DSCP {dscp} → {prio}", rationale, commands))
    return out


def _dcqcn(point: str, evidence, analysis, profile) -> list[Suggestion]:
    ctx = _Ctx(evidence, analysis, profile)
    prio = cmd.priority(_profile(ctx, "roce_priority"))
    metric = f"roce_{point}_enabled"
    out = []
    for host, _switches in ctx.host_pairs():
        current = ctx.value(host.target, host.entity, metric, prio)
        if current == 1:
            continue
        lines = ctx.render(cmd.HOST, cmd.host_dcqcn, host.entity, point, prio, True)
        if point == "np":
            why = ("the notification point turns ECN-marked RoCE packets into CNPs; with it off, switch marks are "
                   f"never reported back ({_REF} §1.3 item 4, §7 row 3)")
        else:
            why = ("the reaction point is the sender's rate limiter; with it off, CNPs are received and ignored and "
                   f"congestion is left to PFC ({_REF} §1.3 item 4, §7 rows 4 and 22)")
        rationale = (f"{host.target} {host.entity}: roce_{point}/enable/{prio} is "
                     f"{'unknown' if current is None else current}; {why}.")
        out.append(_suggestion(ctx, f"DCQCN {point.upper()} on priority {prio} ({host.target} {host.entity})",
                               current, 1, rationale, {cmd.HOST: lines}))
    return out


def suggest_dcqcn_np(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """Enable the DCQCN notification point on the lossless priority of the host netdev."""
    return _dcqcn("np", evidence, analysis, profile)


def suggest_dcqcn_rp(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """Enable the DCQCN reaction point on the lossless priority of the host netdev."""
    return _dcqcn("rp", evidence, analysis, profile)


def suggest_cnp_priority(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """CNP marking on the NIC (DSCP 48, 802.1p 6) and a strict CNP queue on the switch (tuning.md §1.1, §4)."""
    ctx = _Ctx(evidence, analysis, profile)
    dscp = cmd.dscp(_profile(ctx, "cnp_dscp"))
    prio = cmd.priority(_profile(ctx, "cnp_priority"))
    out = []
    for host, switches in ctx.host_pairs():
        cur_dscp = ctx.value(host.target, host.entity, "cnp_dscp")
        cur_prio = ctx.value(host.target, host.entity, "cnp_802p_prio")
        if cur_dscp == dscp and cur_prio == prio:
            continue
        current = None if cur_dscp is None and cur_prio is None else (
            f"DSCP {'?' if cur_dscp is None else cur_dscp} / 802.1p {'?' if cur_prio is None else cur_prio}")
        commands: dict[str, list[str]] = {cmd.HOST: ctx.render(cmd.HOST, cmd.host_cnp, host.entity, dscp, prio)}
        for sw in switches:
            _add(commands, sw.platform, ctx.render(sw.platform, cmd.switch_dscp_map, sw.platform, sw.entity, dscp,
                                                   prio, ctx.profile))
            _add(commands, sw.platform, ctx.render(sw.platform, cmd.switch_strict_priority, sw.platform, sw.entity,
                                                   prio, ctx.profile))
        rationale = (f"{host.target} {host.entity} marks CNPs {current or 'unknown'}; CNPs must be DSCP {dscp} / "
                     f"802.1p {prio} and ride a strict-priority, never-dropped queue on every hop, or senders miss "
                     f"them ({_REF} §1.1, §4 cnp_dscp/cnp_802p_prio, §7 row 4).")
        if any(sw.platform in ("sonic", "eos") for sw in switches):
            rationale += f" SONiC/EOS: strict scheduling of TC {prio} not rendered (SCHEDULER table / EOS default)."
        out.append(_suggestion(ctx, f"CNP marking ({host.target} {host.entity})", current,
                               f"DSCP {dscp} / 802.1p {prio}", rationale, commands))
    return out


def _rdma_ports(ctx: _Ctx) -> list[tuple[str, str]]:
    """(host, `mlx5_0/1`) pairs a roce_tos finding is about."""
    target = ctx.evidence.get("target")
    entity = ctx.evidence.get("entity")
    if ctx.platform(target) == cmd.HOST:
        if isinstance(entity, str) and "/" in entity:
            return [(target, entity)]
        ports = []
        for nd in ctx.host_netdevs(target, entity):
            rp = ctx.rdma_port_of(target, nd)
            if rp:
                ports.append((target, rp))
        if not ports:
            rows = ctx.rows(target=target, metric="roce_tos")
            ports = [(target, e) for e in sorted({e for e in rows.get("entity", []) if isinstance(e, str)})]
        return ports
    side, hosts = ctx.sides()
    return [(h.target, rp) for h in hosts if (rp := ctx.rdma_port_of(h.target, h.entity))]


def suggest_roce_tos(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """RDMA-CM default TOS = DSCP×4 + ECT(0): 26 → 106, so RoCE is classified lossless and is ECN-capable."""
    ctx = _Ctx(evidence, analysis, profile)
    dscp = cmd.dscp(_profile(ctx, "roce_dscp"))
    tos = f.tos_byte(dscp, 2)
    out = []
    for host, port in _rdma_ports(ctx):
        device, _, port_no = port.partition("/")
        current = None
        for entity in (port, device):
            current = ctx.value(host, entity, "roce_tos")
            if current is not None:
                break
        if current == tos:
            continue
        port_num = int(port_no) if port_no.isdigit() else None
        lines = ctx.render(cmd.HOST, cmd.host_roce_tos, device, tos, port_num)
        rationale = (f"{host} {port}: default RoCE TOS is {'unknown' if current is None else current}; "
                     f"TOS = DSCP×4 + ECN = {dscp}×4 + 2 (ECT(0)) = {tos}. Without ECT the switch drops at the WRED "
                     f"thresholds instead of marking; NCCL jobs need NCCL_IB_TC={tos} as well "
                     f"({_REF} §1.1, §1.3 item 3, §7 rows 1 and 5).")
        out.append(_suggestion(ctx, f"RoCE TOS ({host} {port})", current, tos, rationale, {cmd.HOST: lines}))
    return out


def _host_rate(ctx: _Ctx, host: str, netdev: str | None):
    rp = ctx.rdma_port_of(host, netdev) if netdev else None
    rate = ctx.value(host, rp, "link_rate_gbps") if rp else None
    if rate is None:
        rows = ctx.rows(target=host, metric="link_rate_gbps")
        rates = [_num(v) for v in rows.get("value", []) if _num(v)]
        rate = max(rates) if rates else None
    return rate


def suggest_headroom(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """Cable length on both ends and the PG headroom it implies (tuning.md §3.1, §7 row 10)."""
    ctx = _Ctx(evidence, analysis, profile)
    mtu = cmd.integer(_profile(ctx, "mtu"), 1500, 16384, "MTU")
    out = []
    for focus, others in _focus_pairs(ctx):
        sides = [focus, *others]
        hosts = [s for s in sides if s.platform == cmd.HOST]
        switches = [s for s in sides if s.platform != cmd.HOST]
        configured = {}
        for s in sides:
            got = (ctx.value(s.target, s.entity, "cable_length_m") if s.platform == cmd.HOST
                   else _switch_value(ctx, s, "cable_length_m"))
            if got is not None:
                configured[_where(s)] = got
        rate = None
        for s in switches:
            rate = rate or ctx.value(s.target, s.entity, "link_rate_gbps")
        for h in hosts:
            rate = rate or _host_rate(ctx, h.target, h.entity)
        rate = rate or _profile(ctx, "link_rate_gbps")
        if not rate:
            continue
        if _profile(ctx, "cable_length_m"):
            length, source = int(math.ceil(_profile(ctx, "cable_length_m"))), "site profile"
        elif configured:
            length, source = int(math.ceil(max(configured.values()))), "the longest configured end"
        else:
            length, source = f.MLX5_DEFAULT_CABLE_LEN_M, "mlx5 default (no cable length known)"
        room = f.sonic_headroom(rate, length, mtu)
        nic_xoff = f.mlx5_xoff_bytes(rate, length, mtu)
        current_value = configured.get(_where(focus))
        commands: dict[str, list[str]] = {}
        for h in hosts:
            _add(commands, cmd.HOST, ctx.render(cmd.HOST, cmd.host_cable_len, h.entity, length))
        for s in switches:
            _add(commands, s.platform, ctx.render(s.platform, cmd.switch_cable_length, s.platform, s.entity, length))
        rationale = (
            f"Inputs: rate {_fmt(rate)} Gb/s, cable {length} m ({source}; configured: "
            f"{', '.join(f'{k} {_fmt(v)} m' for k, v in configured.items()) or 'none known'}), MTU {mtu}. "
            f"Switch PG headroom (SONiC-Mellanox form): xoff = MTU + (MTU + cable {f.cable_bytes(rate, length):.0f} B + "
            f"mac/phy {f.SPECTRUM_MAC_PHY_DELAY_BYTES:.0f} B + peer response {f.peer_response_bytes(rate):.0f} B) "
            f"→ {room.xoff_bytes} B, xon {room.xon_bytes} B, size {room.size_bytes} B. NIC xoff = (301 + 2.16·{length})"
            f"·{_fmt(max(rate, 40))} + 2.72·{mtu} = {nic_xoff:.0f} B ({_REF} §3.1, §7 row 10)."
        )
        if any(s.platform in ("onyx", "eos", "nxos") for s in switches):
            rationale += " Onyx/EOS/NX-OS: no cable-length command rendered; check the port's PG headroom by hand."
        out.append(_suggestion(ctx, f"cable length for PFC headroom ({_where(focus)})",
                               None if current_value is None else f"{_fmt(current_value)} m",
                               f"{length} m (headroom {room.size_bytes} B per lossless PG, NIC xoff "
                               f"{nic_xoff:.0f} B)", rationale, commands))
    return out


def _xoff(ctx: _Ctx, switch: _Side | None, rate, cable_m, mtu) -> tuple[float, str]:
    if _profile(ctx, "xoff_bytes"):
        return float(_profile(ctx, "xoff_bytes")), "site profile xoff_bytes"
    if switch is not None:
        for metric in XOFF_METRICS:
            got = _switch_value(ctx, switch, metric, _profile(ctx, "roce_priority")) or _switch_value(
                ctx, switch, metric)
            if got:
                return float(got), f"switch {metric}"
    if _profile(ctx, "shared_buffer_bytes"):
        alpha = f.alpha_from_dynamic_th(int(_profile(ctx, "dynamic_th")))
        m = int(_profile(ctx, "congested_pgs"))
        b = float(_profile(ctx, "shared_buffer_bytes"))
        return f.dyn_threshold(b, alpha, m), f"dynamic threshold α·B/(1+m·α) with B={b:.0f}, α={alpha:g}, m={m}"
    value = f.mlx5_xoff_bytes(rate, cable_m, mtu)
    return value, f"mlx5 formula (301 + 2.16·{_fmt(cable_m)})·{_fmt(max(rate, 40))} + 2.72·{mtu}"


def suggest_ecn_thresholds(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """Recompute Kmin / Kmax / Pmax for the lossless queue of the switch profile or port in the evidence."""
    ctx = _Ctx(evidence, analysis, profile)
    prio = cmd.priority(_profile(ctx, "roce_priority"))
    target = ctx.evidence.get("target")
    platform = ctx.platform(target) if target else None
    if platform is None:
        return []
    if platform == cmd.HOST:
        pairs = ctx.host_pairs()
        switches = [sw for _h, sws in pairs for sw in sws]
        hosts_for = {id(sw): [h] for h, sws in pairs for sw in sws}
    else:
        side, hosts = ctx.sides()
        entity = ctx.evidence.get("entity")
        if side.entity is None and isinstance(entity, str) and entity not in _GLOBAL_ENTITIES:
            side = _Side(side.target, side.platform, None, profile=entity)  # a SONiC WRED profile
        switches = [side]
        hosts_for = {id(side): hosts or ctx.hosts_on_switch(side.target)}
    out = []
    mtu = cmd.integer(_profile(ctx, "mtu"), 1500, 16384, "MTU")
    rtt = _profile(ctx, "rtt_us")
    pmax = cmd.integer(_profile(ctx, "ecn_pmax_pct"), 1, 100, "Pmax (%)")
    for sw in switches:
        hosts = hosts_for.get(id(sw), [])
        rate, rate_source = (ctx.value(sw.target, sw.entity, "link_rate_gbps") if sw.entity else None), (
            f"link_rate_gbps of {_where(sw)}")
        if rate is None:
            rates = [(r, h) for h in hosts if (r := _host_rate(ctx, h.target, h.entity))]
            if rates:
                rate = max(r for r, _ in rates)
                rate_source = "fastest cabled host port (" + ", ".join(
                    f"{h.target} {h.entity} {_fmt(r)} Gb/s" for r, h in rates) + ")"
        if rate is None and _profile(ctx, "link_rate_gbps"):
            rate, rate_source = _profile(ctx, "link_rate_gbps"), "site profile link_rate_gbps"
        if not rate:
            continue
        cable = _switch_value(ctx, sw, "cable_length_m") or next(
            (c for h in hosts if (c := ctx.value(h.target, h.entity, "cable_length_m"))), None)
        cable = cable or _profile(ctx, "cable_length_m") or f.MLX5_DEFAULT_CABLE_LEN_M
        xoff, xoff_source = _xoff(ctx, sw, rate, cable, mtu)
        roce_mtus = [m for h in hosts if (rp := ctx.rdma_port_of(h.target, h.entity))
                     and (m := ctx.value(h.target, rp, "active_mtu"))]
        ramp_mtu = max(roce_mtus) if roce_mtus else _profile(ctx, "roce_mtu")
        k = f.ecn_thresholds(rate, rtt, xoff, ramp_mtu, pmax)
        bdp = f.bdp_bytes(rate, rtt)
        where = sw.profile or sw.entity
        cur = [_switch_value(ctx, _Side(sw.target, sw.platform, where), m, prio)
               or _switch_value(ctx, _Side(sw.target, sw.platform, where), m)
               for m in ("ecn_min_threshold_bytes", "ecn_max_threshold_bytes", "ecn_max_probability_pct")]
        current = None if all(c is None for c in cur) else (
            f"Kmin {_fmt(cur[0]) if cur[0] is not None else '?'} B, Kmax {_fmt(cur[1]) if cur[1] is not None else '?'}"
            f" B, Pmax {_fmt(cur[2]) if cur[2] is not None else '?'} %")
        rationale = (
            f"Inputs: rate {_fmt(rate)} Gb/s ({rate_source}), RTT {_fmt(rtt)} µs (site profile), T_xoff "
            f"{xoff:.0f} B ({xoff_source}), ramp MTU {ramp_mtu}. BDP = {_fmt(rate)}e9·{_fmt(rtt)}e-6/8 = {bdp:.0f} B; "
            f"Kmin = clamp(BDP/7 = {bdp / 7:.0f}, 10000, 0.5·T_xoff = {0.5 * xoff:.0f}) = {k.kmin_bytes} B; "
            f"Kmax = max(min(2·BDP = {2 * bdp:.0f}, 0.8·T_xoff = {0.8 * xoff:.0f}), Kmin + 2·MTU = "
            f"{k.kmin_bytes + 2 * ramp_mtu}) = {k.kmax_bytes} B; Pmax {pmax} % ({_REF} §2.3, §2.4, §7 rows 6/9)."
        )
        if cur[1] is not None and cur[1] >= xoff:
            rationale += f" Current Kmax {_fmt(cur[1])} B is at or above T_xoff: PFC fires before ECN marks."
        if not f.ecn_ordering_ok(k.kmin_bytes, k.kmax_bytes, xoff):
            rationale += " Warning: the ramp rule lifted Kmax above T_xoff; lower the MTU or raise the PFC trigger."
        commands: dict[str, list[str]] = {}
        if sw.platform == "sonic":
            profile_name = sw.profile or _profile(ctx, "sonic_wred_profile")
            _add(commands, "sonic", ctx.render("sonic", cmd.switch_ecn, "sonic", profile_name, prio, k.kmin_bytes,
                                               k.kmax_bytes, k.pmax_pct, ctx.profile))
        elif sw.platform == "cumulus" or sw.entity is not None or sw.platform == "nxos":
            _add(commands, sw.platform, ctx.render(sw.platform, cmd.switch_ecn, sw.platform, sw.entity, prio,
                                                   k.kmin_bytes, k.kmax_bytes, k.pmax_pct, ctx.profile))
        else:
            rationale += f" {sw.platform}: no port named in the evidence, so no per-port command rendered."
        if sw.platform == "onyx":
            rationale += " Onyx takes thresholds in KB (1024 B, rounded down) and no Pmax in this command."
        out.append(_suggestion(ctx, f"ECN thresholds of TC {prio} ({_where(_Side(sw.target, sw.platform, where))})",
                               current, f"Kmin {k.kmin_bytes} B, Kmax {k.kmax_bytes} B, Pmax {k.pmax_pct} %",
                               rationale, commands))
    return out


SUGGESTERS: dict[str, Callable[..., list[Suggestion]]] = {
    "ecn_thresholds": suggest_ecn_thresholds,
    "pfc_priority": suggest_pfc_priority,
    "trust_dscp": suggest_trust_dscp,
    "dscp_map": suggest_dscp_map,
    "dcqcn_np": suggest_dcqcn_np,
    "dcqcn_rp": suggest_dcqcn_rp,
    "headroom": suggest_headroom,
    "cnp_priority": suggest_cnp_priority,
    "roce_tos": suggest_roce_tos,
}
