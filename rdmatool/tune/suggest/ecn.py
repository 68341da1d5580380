"""ECN: the WRED/ECN marking thresholds of the lossless egress queue on the switch.

ecn_thresholds recomputes Kmin / Kmax / Pmax for the switch profile or port of the finding (or, for a host finding,
the switch port the host is cabled to), docs/tuning.md §2.3 "Suggested computation", §2.4 and §7 rows 6 / 9:
    BDP  = R·RTT/8
    Kmin = clamp(BDP/7, 10 KB, 0.5·T_xoff)
    Kmax = max(min(2·BDP, 0.8·T_xoff), Kmin + 2·MTU)
so that ECN marks well before PFC's trigger T_xoff fires (formulas.ecn_thresholds). T_xoff is, in that order, the
site profile's, the switch's static XOFF of the priority group, the dynamic threshold α·B/(1 + m·α) of a shared
buffer (docs/tuning.md §2.4), else the mlx5 NIC formula (docs/tuning.md §3.1). The rate is the switch port's, else
the fastest host port cabled to it, else the site profile's; RTT and Pmax come from the site profile.
"""

from __future__ import annotations

from rdmatool.model import Suggestion
from rdmatool.tune import commands as cmd
from rdmatool.tune import formulas as f
from rdmatool.tune.suggest.context import GLOBAL_ENTITIES, REF, Side, SuggestionContext, add_commands, fmt

# Fact names a switch parser may use for a PG's static XOFF trigger (none emits one yet; the profile can supply it).
XOFF_METRICS = ("pfc_xoff_bytes",)


def _xoff(ctx: SuggestionContext, switch: Side | None, rate, cable_m, mtu) -> tuple[float, str]:
    """(T_xoff in bytes, where it came from)."""
    if ctx.site("xoff_bytes"):
        return float(ctx.site("xoff_bytes")), "site profile xoff_bytes"
    if switch is not None:
        for metric in XOFF_METRICS:
            got = ctx.switch_value(switch, metric, ctx.site("roce_priority")) or ctx.switch_value(switch, metric)
            if got:
                return float(got), f"switch {metric}"
    if ctx.site("shared_buffer_bytes"):
        alpha = f.alpha_from_dynamic_th(int(ctx.site("dynamic_th")))
        m = int(ctx.site("congested_pgs"))
        b = float(ctx.site("shared_buffer_bytes"))
        return f.dyn_threshold(b, alpha, m), f"dynamic threshold α·B/(1+m·α) with B={b:.0f}, α={alpha:g}, m={m}"
    value = f.mlx5_xoff_bytes(rate, cable_m, mtu)
    return value, f"mlx5 formula (301 + 2.16·{fmt(cable_m)})·{fmt(max(rate, 40))} + 2.72·{mtu}"


def _switches(ctx: SuggestionContext, platform: str) -> tuple[list[Side], dict]:
    """(the switch sides to configure, id(side) → the host sides cabled to it)."""
    if platform == cmd.HOST:
        pairs = ctx.host_pairs()
        switches = [sw for _h, sws in pairs for sw in sws]
        return switches, {id(sw): [h] for h, sws in pairs for sw in sws}
    side, hosts = ctx.sides()
    entity = ctx.evidence.get("entity")
    if side.entity is None and isinstance(entity, str) and entity not in GLOBAL_ENTITIES:
        side = Side(side.target, side.platform, None, profile=entity)  # a SONiC WRED profile
    return [side], {id(side): hosts or ctx.hosts_on_switch(side.target)}


def suggest_ecn_thresholds(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """Recompute Kmin / Kmax / Pmax for the lossless queue of the switch profile or port in the evidence."""
    ctx = SuggestionContext(evidence, analysis, profile)
    prio = cmd.priority(ctx.site("roce_priority"))
    target = ctx.evidence.get("target")
    platform = ctx.platform(target) if target else None
    if platform is None:
        return []
    switches, hosts_for = _switches(ctx, platform)
    out = []
    mtu = cmd.integer(ctx.site("mtu"), 1500, 16384, "MTU")
    rtt = ctx.site("rtt_us")
    pmax = cmd.integer(ctx.site("ecn_pmax_pct"), 1, 100, "Pmax (%)")
    for sw in switches:
        hosts = hosts_for.get(id(sw), [])
        rate, rate_source = (ctx.value(sw.target, sw.entity, "link_rate_gbps") if sw.entity else None), (
            f"link_rate_gbps of {sw.where}")
        if rate is None:
            rates = [(r, h) for h in hosts if (r := ctx.host_rate(h.target, h.entity))]
            if rates:
                rate = max(r for r, _ in rates)
                rate_source = "fastest cabled host port (" + ", ".join(
                    f"{h.target} {h.entity} {fmt(r)} Gb/s" for r, h in rates) + ")"
        if rate is None and ctx.site("link_rate_gbps"):
            rate, rate_source = ctx.site("link_rate_gbps"), "site profile link_rate_gbps"
        if not rate:
            continue
        cable = ctx.switch_value(sw, "cable_length_m") or next(
            (c for h in hosts if (c := ctx.value(h.target, h.entity, "cable_length_m"))), None)
        cable = cable or ctx.site("cable_length_m") or f.MLX5_DEFAULT_CABLE_LEN_M
        xoff, xoff_source = _xoff(ctx, sw, rate, cable, mtu)
        roce_mtus = [m for h in hosts if (rp := ctx.rdma_port_of(h.target, h.entity))
                     and (m := ctx.value(h.target, rp, "active_mtu"))]
        ramp_mtu = max(roce_mtus) if roce_mtus else ctx.site("roce_mtu")
        k = f.ecn_thresholds(rate, rtt, xoff, ramp_mtu, pmax)
        bdp = f.bdp_bytes(rate, rtt)
        where = Side(sw.target, sw.platform, sw.profile or sw.entity)
        cur = [ctx.switch_value(where, m, prio) or ctx.switch_value(where, m)
               for m in ("ecn_min_threshold_bytes", "ecn_max_threshold_bytes", "ecn_max_probability_pct")]
        current = None if all(c is None for c in cur) else (
            f"Kmin {fmt(cur[0]) if cur[0] is not None else '?'} B, Kmax {fmt(cur[1]) if cur[1] is not None else '?'}"
            f" B, Pmax {fmt(cur[2]) if cur[2] is not None else '?'} %")
        rationale = (
            f"Inputs: rate {fmt(rate)} Gb/s ({rate_source}), RTT {fmt(rtt)} µs (site profile), T_xoff "
            f"{xoff:.0f} B ({xoff_source}), ramp MTU {ramp_mtu}. BDP = {fmt(rate)}e9·{fmt(rtt)}e-6/8 = {bdp:.0f} B; "
            f"Kmin = clamp(BDP/7 = {bdp / 7:.0f}, 10000, 0.5·T_xoff = {0.5 * xoff:.0f}) = {k.kmin_bytes} B; "
            f"Kmax = max(min(2·BDP = {2 * bdp:.0f}, 0.8·T_xoff = {0.8 * xoff:.0f}), Kmin + 2·MTU = "
            f"{k.kmin_bytes + 2 * ramp_mtu}) = {k.kmax_bytes} B; Pmax {pmax} % ({REF} §2.3, §2.4, §7 rows 6/9)."
        )
        if cur[1] is not None and cur[1] >= xoff:
            rationale += f" Current Kmax {fmt(cur[1])} B is at or above T_xoff: PFC fires before ECN marks."
        if not f.ecn_ordering_ok(k.kmin_bytes, k.kmax_bytes, xoff):
            rationale += " Warning: the ramp rule lifted Kmax above T_xoff; lower the MTU or raise the PFC trigger."
        commands: dict[str, list[str]] = {}
        if sw.platform == "sonic":
            profile_name = sw.profile or ctx.site("sonic_wred_profile")
            add_commands(commands, "sonic", ctx.render("sonic", cmd.switch_ecn, "sonic", profile_name, prio,
                                                       k.kmin_bytes, k.kmax_bytes, k.pmax_pct, ctx.profile))
        elif sw.platform == "cumulus" or sw.entity is not None or sw.platform == "nxos":
            add_commands(commands, sw.platform, ctx.render(sw.platform, cmd.switch_ecn, sw.platform, sw.entity, prio,
                                                           k.kmin_bytes, k.kmax_bytes, k.pmax_pct, ctx.profile))
        else:
            rationale += f" {sw.platform}: no port named in the evidence, so no per-port command rendered."
        if sw.platform == "onyx":
            rationale += " Onyx takes thresholds in KB (1024 B, rounded down) and no Pmax in this command."
        out.append(ctx.suggestion(f"ECN thresholds of TC {prio} ({where.where})", current,
                                  f"Kmin {k.kmin_bytes} B, Kmax {k.kmax_bytes} B, Pmax {k.pmax_pct} %",
                                  rationale, commands))
    return out
