"""DCQCN on the NIC: its two ends, and the CNPs that connect them.

- dcqcn_np: the notification point, which turns ECN-marked RoCE packets into CNPs, enabled on the lossless priority
  (docs/tuning.md §1.3 item 4, §7 row 3).
- dcqcn_rp: the reaction point, the sender's rate limiter that acts on CNPs, enabled on the lossless priority
  (docs/tuning.md §1.3 item 4, §7 rows 4 and 22).
- cnp_priority: CNPs marked with the site's CNP DSCP / 802.1p priority (cnp_dscp, cnp_priority) on the NIC and
  carried by a strict-priority queue on the switch (docs/tuning.md §1.1, §4 cnp_dscp / cnp_802p_prio, §7 row 4).
"""

from __future__ import annotations

from rdmatool import platforms
from rdmatool.model import Suggestion
from rdmatool.tune import commands as cmd
from rdmatool.tune.suggest.context import REF, Side, SuggestionContext, add_commands


def _priority(ctx: SuggestionContext) -> int:
    """The finding's own priority when it names one (the disabled enable bit), else the site's RoCE priority."""
    given = ctx.evidence.get("priority")
    if isinstance(given, int) and not isinstance(given, bool) and 0 <= given <= 7:
        return given
    return cmd.priority(ctx.site("roce_priority"))


def _hosts(ctx: SuggestionContext, metric: str, prio: int) -> list[Side]:
    """The host netdev(s) of the finding. A finding on an RDMA port (`mlx5_1/1`, from hw_counters) whose netdev the
    bundle does not name (no GID table) falls back to the host's netdevs that have this point off on `prio`, as
    its DCQCN sysfs shows: the real netdev, never a placeholder."""
    sides = [host for host, _switches in ctx.host_pairs()]
    target = ctx.evidence.get("target")
    if sides or not cmd.is_host(ctx.platform(target)):
        return sides
    rows = ctx.rows(target=target, metric=metric, prio=prio)
    off = sorted({e for e, v in zip(rows.get("entity", []), rows.get("value", [])) if isinstance(e, str) and v == 0})
    return [Side(target, cmd.HOST, netdev) for netdev in off]


def _dcqcn(point: str, evidence, analysis, profile) -> list[Suggestion]:
    """roce_<point>/enable/<priority> = 1 on the host netdev(s) of the finding."""
    ctx = SuggestionContext(evidence, analysis, profile)
    metric = f"roce_{point}_enabled"
    prio = _priority(ctx)
    out = []
    for host in _hosts(ctx, metric, prio):
        current = ctx.value(host.target, host.entity, metric, prio)
        if current == 1:
            continue
        lines = ctx.render(cmd.HOST, cmd.host_dcqcn, host.entity, point, prio, True)
        if point == "np":
            why = ("the notification point turns ECN-marked RoCE packets into CNPs; with it off, switch marks are "
                   f"never reported back ({REF} §1.3 item 4, §7 row 3)")
        else:
            why = ("the reaction point is the sender's rate limiter; with it off, CNPs are received and ignored and "
                   f"congestion is left to PFC ({REF} §1.3 item 4, §7 rows 4 and 22)")
        rationale = (f"{host.target} {host.entity}: roce_{point}/enable/{prio} is "
                     f"{'unknown' if current is None else current}; {why}.")
        out.append(ctx.suggestion(f"DCQCN {point.upper()} on priority {prio} ({host.target} {host.entity})",
                                  current, 1, rationale, {cmd.HOST: lines}, target=host.target))
    return out


def suggest_dcqcn_np(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """Enable the DCQCN notification point on the lossless priority of the host netdev."""
    return _dcqcn("np", evidence, analysis, profile)


def suggest_dcqcn_rp(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """Enable the DCQCN reaction point on the lossless priority of the host netdev."""
    return _dcqcn("rp", evidence, analysis, profile)


def suggest_cnp_priority(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """CNP marking on the NIC (the site's cnp_dscp, cnp_priority) and a strict CNP queue on the switch (docs/tuning.md
    §1.1, §4)."""
    ctx = SuggestionContext(evidence, analysis, profile)
    dscp = cmd.dscp(ctx.site("cnp_dscp"))
    prio = cmd.priority(ctx.site("cnp_priority"))
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
            add_commands(commands, sw.platform, ctx.render(sw.platform, cmd.switch_dscp_map, sw.platform, sw.entity,
                                                           dscp, prio, ctx.profile))
            add_commands(commands, sw.platform, ctx.render(sw.platform, cmd.switch_strict_priority, sw.platform,
                                                           sw.entity, prio, ctx.profile))
        rationale = (f"{host.target} {host.entity} marks CNPs {current or 'unknown'}; CNPs must be DSCP {dscp} / "
                     f"802.1p {prio} and ride a strict-priority, never-dropped queue on every hop, or senders miss "
                     f"them ({REF} §1.1, §4 cnp_dscp/cnp_802p_prio, §7 row 4).")
        unrendered = cmd.not_rendered("strict_priority")
        if any(platforms.switch(sw.platform) in unrendered for sw in switches):
            why = " / ".join(m.NOT_RENDERED["strict_priority"] for m in unrendered)
            rationale += (f" {'/'.join(m.TITLE for m in unrendered)}: strict scheduling of TC {prio} not rendered "
                          f"({why}).")
        out.append(ctx.suggestion(f"CNP marking ({host.target} {host.entity})", current,
                                  f"DSCP {dscp} / 802.1p {prio}", rationale, commands, target=host.target))
    return out
