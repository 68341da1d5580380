"""ECN: the WRED/ECN marking thresholds of the lossless egress queue on the switch.

ecn_thresholds recomputes Kmin / Kmax / Pmax, docs/tuning.md §2.3 "Suggested computation", §2.4 and §7 rows 6 / 9:
    BDP  = R·RTT/8
    Kmin = clamp(BDP/7, 10 KB, 0.5·T_xoff)
    Kmax = max(min(2·BDP, 0.8·T_xoff), Kmin + 2·MTU)
so that ECN marks well before PFC's trigger T_xoff fires (formulas.ecn_thresholds).

One suggestion per switch configuration object, whichever finding asks for it: the object is what one command
block sets (config_objects): a SONiC WRED profile, the Cumulus `default-global` congestion-control profile, an NX-OS
queuing policy, or one port on Onyx and EOS, whose ECN settings are per port (each platform module's ECN_OBJECT,
rdmatool.platforms). The suggestion depends on the object
only, never on the finding, so two findings about one object carry equal suggestions and a report prints one block.
For a host finding the object is the one of the switch port the host is cabled to.

Inputs per port of the object (port_inputs): R is the speed of that switch port from the switch's own output, else
the rate of the host port cabled to it (never another port of that host); T_xoff is, in that order, the site
profile's, the switch's static XOFF of the priority group, the dynamic threshold α·B/(1 + m·α) of a shared buffer
(docs/tuning.md §2.4), else unknown: then no bound of T_xoff applies (Kmin = max(BDP/7, 10 KB), Kmax = max(2·BDP,
Kmin + 2·MTU)) and the rationale says to confirm Kmax against the PG's XOFF threshold. The mlx5 formula of
docs/tuning.md §3.1 is not a stand-in: it is the headroom a NIC reserves above its trigger (xoff_threshold =
buffer_size - xoff), not the trigger, and taken as T_xoff it put Kmax below one BDP. RTT and Pmax come from the site
profile. An object shared by ports of several speeds gets the values of the port with the lowest Kmax:
ECN before PFC is the constraint no port may break (docs/tuning.md §2.3). INPUT_HOOKS may adjust a port's inputs
before the computation (another stage's figures, e.g. an incast degree), without changing this module.

The current thresholds are read from the switch's own ECN/WRED output (current_thresholds), the object's entity
first, then the switch-wide rows, then any other row of that switch's ECN output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from rdmatool import platforms
from rdmatool.model import Suggestion
from rdmatool.tune import commands as cmd
from rdmatool.tune import formulas as f
from rdmatool.tune.suggest.context import GLOBAL_ENTITIES, REF, Side, SuggestionContext, add_commands, fmt
from rdmatool.tune.suggest.ecn_inputs import THRESHOLD_METRICS, ConfigObject, PortInputs, current_thresholds
from rdmatool.tune.suggest.incast import incast_inputs

# Fact names a switch parser may use for a PG's static XOFF trigger (none emits one yet; the profile can supply it).
XOFF_METRICS = ("pfc_xoff_bytes",)
# (context, object, inputs) -> inputs: applied in order to every port's inputs before the computation; declared
# here, each hook in its own module (the incast stage's figures: incast.py).
INPUT_HOOKS: tuple[Callable[[SuggestionContext, ConfigObject, PortInputs], PortInputs], ...] = (incast_inputs,)


def _xoff(ctx: SuggestionContext, switch: Side) -> tuple[float | None, str]:
    """(T_xoff in bytes or None when unknown, where it came from)."""
    if ctx.site("xoff_bytes"):
        return float(ctx.site("xoff_bytes")), "site profile xoff_bytes"
    for metric in XOFF_METRICS:
        got = ctx.switch_value(switch, metric, ctx.site("roce_priority")) or ctx.switch_value(switch, metric)
        if got:
            return float(got), f"switch {metric}"
    if ctx.site("shared_buffer_bytes"):
        alpha = f.alpha_from_dynamic_th(int(ctx.site("dynamic_th")))
        m = int(ctx.site("congested_pgs"))
        b = float(ctx.site("shared_buffer_bytes"))
        return f.dyn_threshold(b, alpha, m), f"dynamic threshold α·B/(1+m·α) with B={b:.0f}, α={alpha:g}, m={m}"
    return None, ("unknown: no XOFF threshold in the switch's output, no site profile xoff_bytes or "
                  "shared_buffer_bytes")


# --- which objects, which ports ----------------------------------------------------------------------------------


def switch_ports(ctx: SuggestionContext, switch: str, platform: str) -> list[str]:
    """The ports of a switch known from its own facts or from the cabling, in name order."""
    rows = ctx.rows(target=switch)
    names = {e for e in rows.get("entity", []) if isinstance(e, str) and cmd.is_port(platform, e)}
    if not ctx.links.empty and {"switch", "switch_port"} <= set(ctx.links.columns):
        cabled = ctx.links[ctx.links["switch"] == switch]["switch_port"]
        names |= {p for p in cabled if isinstance(p, str) and cmd.is_port(platform, p)}
    return sorted(names)


def _wred_profiles(ctx: SuggestionContext, switch: str, platform: str) -> list[str]:
    """WRED profiles named in the switch's own ECN output (SONiC `show ecn`: facts whose entity is no port)."""
    rows = ctx.rows(target=switch, metric=list(THRESHOLD_METRICS))
    names = {e for e in rows.get("entity", []) if isinstance(e, str) and not cmd.is_port(platform, e)
             and e not in GLOBAL_ENTITIES}
    return sorted(names)


def config_objects(ctx: SuggestionContext) -> list[ConfigObject]:
    """The configuration objects the finding's ECN thresholds live in (see the module docstring)."""
    target = ctx.evidence.get("target")
    platform = ctx.platform(target) if target else None
    if platform is None:
        return []
    if cmd.is_host(platform):
        found = []
        for _host, switches in ctx.host_pairs():
            for sw in switches:
                found += _objects_of(ctx, sw.target, sw.platform, sw.entity, None)
        return list(dict.fromkeys(found))
    entity = ctx.evidence.get("entity")
    port = entity if cmd.is_port(platform, entity) else None
    profile = entity if isinstance(entity, str) and port is None and entity not in GLOBAL_ENTITIES else None
    return _objects_of(ctx, target, platform, port, profile)


def _objects_of(ctx: SuggestionContext, switch: str, platform: str, port: str | None,
                profile: str | None) -> list[ConfigObject]:
    module = platforms.switch(platform)
    if module is None:
        return []
    shape = module.ECN_OBJECT  # per port, or one object every port shares
    ports = tuple(switch_ports(ctx, switch, platform))
    if shape.kind == "port":
        chosen = [port] if port else list(ports)
        return [ConfigObject(switch, platform, "port", p, (p,)) for p in chosen]
    if shape.kind == "wred-profile":
        names = [profile] if profile else (_wred_profiles(ctx, switch, platform) or [ctx.site(shape.site_key)])
    else:
        names = [shape.name or str(ctx.site(shape.site_key))]
    return [ConfigObject(switch, platform, shape.kind, n, ports) for n in names]


# --- the figures -------------------------------------------------------------------------------------------------


def cabled_port_rate(ctx: SuggestionContext, switch: str, port: str | None) -> tuple[float | None, str]:
    """(rate, source) of a switch port: its own speed, else the host port cabled to it; never a host's other port."""
    if port is None:
        return None, ""
    own = ctx.value(switch, port, "link_rate_gbps")
    if own:
        return own, f"link_rate_gbps of {switch} {port}"
    for host in ctx.hosts_on_port(switch, port):
        rdma_port = ctx.rdma_port_of(host.target, host.entity) or ctx.only_ethernet_port(host.target)
        rate = ctx.value(host.target, rdma_port, "link_rate_gbps") if rdma_port else None
        if rate:
            return rate, f"the cabled {host.target} {host.entity} ({rdma_port}) at {fmt(rate)} Gb/s"
    return None, ""


def port_inputs(ctx: SuggestionContext, obj: ConfigObject, port: str | None) -> PortInputs | None:
    sw = Side(obj.switch, obj.platform, port)
    rate, rate_source = cabled_port_rate(ctx, obj.switch, port)
    if rate is None and ctx.site("link_rate_gbps"):
        rate, rate_source = ctx.site("link_rate_gbps"), "site profile link_rate_gbps"
    if not rate:
        return None
    hosts = ctx.hosts_on_port(obj.switch, port) if port else []
    xoff, xoff_source = _xoff(ctx, sw)
    roce_mtus = [m for h in hosts if (rp := ctx.rdma_port_of(h.target, h.entity) or ctx.only_ethernet_port(h.target))
                 and (m := ctx.value(h.target, rp, "active_mtu"))]
    ramp_mtu = max(roce_mtus) if roce_mtus else ctx.site("roce_mtu")
    inputs = PortInputs(port, rate, rate_source, ctx.site("rtt_us"), xoff, xoff_source, ramp_mtu)
    for hook in INPUT_HOOKS:
        inputs = hook(ctx, obj, inputs)
    return inputs


def _current_text(found: dict[str, float]) -> str | None:
    if not found:
        return None
    labels = dict(zip(THRESHOLD_METRICS, (("Kmin", "B"), ("Kmax", "B"), ("Pmax", "%"))))
    text = ", ".join(f"{labels[m][0]} {fmt(found[m])} {labels[m][1]}" for m in THRESHOLD_METRICS if m in found)
    missing = [labels[m][0] for m in THRESHOLD_METRICS if m not in found]
    return text + (f" ({', '.join(missing)} not in the switch's output)" if missing else "")


def _rationale(inputs: PortInputs, k, pmax: int) -> str:
    bdp = f.bdp_bytes(inputs.rate_gbps, inputs.rtt_us)
    xoff, mtu = inputs.xoff_bytes, inputs.ramp_mtu
    head = (f"Inputs: rate {fmt(inputs.rate_gbps)} Gb/s ({inputs.rate_source}), RTT {fmt(inputs.rtt_us)} µs (site "
            f"profile), ")
    tail = f"= {k.kmax_bytes} B; Pmax {pmax} % ({REF} §2.3, §2.4, §7 rows 6/9)."
    bdp_text = f"BDP = {fmt(inputs.rate_gbps)}e9·{fmt(inputs.rtt_us)}e-6/8 = {bdp:.0f} B; "
    if xoff is None:
        text = (f"{head}T_xoff {inputs.xoff_source}, ramp MTU {mtu}. {bdp_text}"
                f"Kmin = max(BDP/7 = {bdp / 7:.0f}, 10000) = {k.kmin_bytes} B; "
                f"Kmax = max(2·BDP = {2 * bdp:.0f}, Kmin + 2·MTU = {k.kmin_bytes + 2 * mtu}) {tail} "
                f"Confirm that Kmax is below the XOFF threshold of the lossless priority group on the switch (its "
                f"buffer profile), or give the site profile xoff_bytes: ECN must mark before PFC pauses.")
    else:
        text = (f"{head}T_xoff {xoff:.0f} B ({inputs.xoff_source}), ramp MTU {mtu}. {bdp_text}"
                f"Kmin = clamp(BDP/7 = {bdp / 7:.0f}, 10000, 0.5·T_xoff = {0.5 * xoff:.0f}) = {k.kmin_bytes} B; "
                f"Kmax = max(min(2·BDP = {2 * bdp:.0f}, 0.8·T_xoff = {0.8 * xoff:.0f}), Kmin + 2·MTU = "
                f"{k.kmin_bytes + 2 * mtu}) {tail}")
    return " ".join([text, *inputs.notes])


def suggest_ecn_thresholds(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """Recompute Kmin / Kmax / Pmax for each configuration object the finding's thresholds live in."""
    ctx = SuggestionContext(evidence, analysis, profile)
    prio = cmd.priority(ctx.site("roce_priority"))
    pmax = cmd.integer(ctx.site("ecn_pmax_pct"), 1, 100, "Pmax (%)")
    out = []
    for obj in config_objects(ctx):
        suggestion = _for_object(ctx, obj, prio, pmax)
        if suggestion is not None:
            out.append(suggestion)
    return out


def _for_object(ctx: SuggestionContext, obj: ConfigObject, prio: int, pmax: int) -> Suggestion | None:
    computed = []
    for port in obj.ports or (None,):
        inputs = port_inputs(ctx, obj, port)
        if inputs is not None:
            computed.append((f.ecn_thresholds(inputs.rate_gbps, inputs.rtt_us, inputs.xoff_bytes, inputs.ramp_mtu,
                                              pmax), inputs))
    if not computed and obj.ports:  # no port's rate known: the site's rate, if it gives one, for the whole object
        inputs = port_inputs(ctx, replace(obj, ports=()), None)
        if inputs is not None:
            computed.append((f.ecn_thresholds(inputs.rate_gbps, inputs.rtt_us, inputs.xoff_bytes, inputs.ramp_mtu,
                                              pmax), inputs))
    if not computed:
        return None
    k, inputs = min(computed, key=lambda c: (c[0].kmax_bytes, c[0].kmin_bytes, str(c[1].port)))
    rationale = _rationale(inputs, k, pmax)
    if obj.kind != "port" and len(computed) > 1:
        rates = ", ".join(f"{i.port} {fmt(i.rate_gbps)} Gb/s" for _, i in computed)
        rationale += (f" One {obj.kind.replace('-', ' ')} serves {len(computed)} ports ({rates}): these are the "
                      f"values of {inputs.port}, the lowest Kmax, so that ECN fires before PFC on every one of them.")
    found = current_thresholds(ctx, obj, prio)
    current = _current_text(found)
    cur_kmax = found.get("ecn_max_threshold_bytes")
    known = inputs.xoff_bytes is not None
    if known and cur_kmax is not None and cur_kmax >= inputs.xoff_bytes:
        rationale += f" Current Kmax {fmt(cur_kmax)} B is at or above T_xoff: PFC fires before ECN marks."
    if known and not f.ecn_ordering_ok(k.kmin_bytes, k.kmax_bytes, inputs.xoff_bytes):
        rationale += " Warning: the ramp rule lifted Kmax above T_xoff; lower the MTU or raise the PFC trigger."
    commands: dict[str, list[str]] = {}
    where: str | list[str] | None = obj.name
    if obj.kind == "global-profile":
        where = None
    elif obj.kind == "queuing-policy":
        where = list(obj.ports)
    add_commands(commands, obj.platform, ctx.render(obj.platform, cmd.switch_ecn, obj.platform, where, prio,
                                                    k.kmin_bytes, k.kmax_bytes, k.pmax_pct, ctx.profile))
    note = platforms.switch(obj.platform).ECN_NOTE  # how the platform's ECN lines differ (units, bindings)
    if note:
        rationale += " " + note
    proposed = f"Kmin {k.kmin_bytes} B, Kmax {k.kmax_bytes} B, Pmax {k.pmax_pct} %"
    return ctx.suggestion(f"ECN thresholds of TC {prio} ({obj.label})", current, proposed, rationale, commands,
                          target=obj.switch)

