"""PFC and the classification that feeds it: which priority is lossless, and how RoCE traffic gets there.

- pfc_priority: the PFC vector with one lossless priority, the RoCE one (docs/tuning.md §1.3, §3.4: one lossless
  priority keeps the headroom to one block per port), on the host netdev and on the switch port it is cabled to.
- trust_dscp: classify by DSCP, since untagged RoCEv2 carries no PCP (docs/tuning.md §1.3 item 1, §7 row 2).
- dscp_map: DSCP → priority for the site's RoCE and CNP classes (site profile roce_dscp → roce_priority, cnp_dscp →
  cnp_priority; docs/tuning.md §1.1, §1.2, §7 row 1).
- roce_tos: the RDMA-CM default TOS byte, TOS = DSCP×4 + ECN (ECT(0) = 2) of the site's RoCE DSCP, so that RoCE is
  classified lossless and is ECN-capable (docs/tuning.md §1.1, §1.3 item 3, §7 rows 1 and 5).

The class is always the site profile's (SuggestionContext.site): a host or switch on another class is moved to it.
"""

from __future__ import annotations

from rdmatool.model import Suggestion
from rdmatool.tune import commands as cmd
from rdmatool.tune import formulas as f
from rdmatool.tune.suggest.context import GLOBAL_ENTITIES, REF, Side, SuggestionContext, add_commands, num


def _pfc_state(ctx: SuggestionContext, side: Side) -> tuple[str | None, set[int]]:
    """(vector string or None, priorities currently enabled) for a host netdev or switch port."""
    entities = [side.entity] if side.entity else []
    if not side.is_host:
        entities += list(GLOBAL_ENTITIES)
    for entity in entities:
        rows = ctx.rows(side.target, entity, "pfc_enabled")
        known = {}
        for p, v in zip(rows.get("priority", []), rows.get("value", [])):
            p, v = num(p), num(v)
            if p is not None and v is not None and 0 <= p <= 7:
                known[int(p)] = int(v)
        if known:
            vector = ",".join(str(known[p]) if p in known else "?" for p in range(8))
            return vector, {p for p, v in known.items() if v}
    return None, set()


def suggest_pfc_priority(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """One lossless priority (the RoCE one): PFC vector for the host netdev and the switch port it is cabled to."""
    ctx = SuggestionContext(evidence, analysis, profile)
    prio = cmd.priority(ctx.site("roce_priority"))
    proposed_vector = cmd.pfc_vector([prio])
    out = []
    for focus, others in ctx.focus_pairs():
        current, _ = _pfc_state(ctx, focus)
        if current == proposed_vector:
            continue
        commands: dict[str, list[str]] = {}
        for side in [focus, *others]:
            vector, enabled = _pfc_state(ctx, side)
            if side is not focus and vector == proposed_vector:
                continue  # the far end already has the one lossless priority: nothing to change there
            if side.is_host:
                add_commands(commands, cmd.HOST, ctx.render(cmd.HOST, cmd.host_pfc, side.entity, [prio]))
            else:
                add_commands(commands, side.platform, ctx.render(side.platform, cmd.switch_pfc, side.platform,
                                                                 side.entity, [prio], enabled - {prio}, ctx.profile))
        rationale = (f"{focus.where} PFC vector is {current or 'unknown'}; RoCE DSCP {ctx.site('roce_dscp')} "
                     f"rides priority {prio}, which must be the one lossless priority on both ends of the cable "
                     f"({REF} §1.3, §3.4: one lossless priority keeps headroom to one block per port).")
        out.append(ctx.suggestion(f"PFC enabled priorities ({focus.where})", current,
                                  f"{proposed_vector} (priority {prio} only)", rationale, commands,
                                  target=focus.target, peers=others))
    return out


def suggest_trust_dscp(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """Classify RoCEv2 by DSCP (untagged traffic carries no PCP): host `--trust dscp`, switch trust L3 / DSCP."""
    ctx = SuggestionContext(evidence, analysis, profile)
    out = []
    for focus, others in ctx.focus_pairs():
        current = (ctx.text(focus.target, focus.entity, "trust_mode") if focus.is_host
                   else ctx.switch_value(focus, "trust_mode", text=True))
        ok = current == "dscp" if focus.is_host else (
            current is not None and "dscp" in str(current).split(","))
        if ok:
            continue
        commands: dict[str, list[str]] = {}
        for side in [focus, *others]:
            if side.is_host:
                add_commands(commands, cmd.HOST, ctx.render(cmd.HOST, cmd.host_trust_dscp, side.entity))
            else:
                add_commands(commands, side.platform, ctx.render(side.platform, cmd.switch_trust_dscp, side.platform,
                                                                 side.entity, ctx.profile))
        rationale = (f"{focus.where} trusts {current or 'an unknown field'}; untagged RoCEv2 carries no PCP, so "
                     f"in PCP mode DSCP {ctx.site('roce_dscp')} is ignored and RoCE lands in the default "
                     f"priority ({REF} §1.3 item 1, §7 row 2).")
        out.append(ctx.suggestion(f"QoS trust mode ({focus.where})", current, "dscp", rationale, commands,
                                  target=focus.target, peers=others))
    return out


def _dscp_current(ctx: SuggestionContext, side: Side, dscp: int):
    """The priority a DSCP is mapped to on a host netdev or switch port, None when unknown."""
    entities = [side.entity] if side.entity else []
    if not side.is_host:
        entities += list(GLOBAL_ENTITIES)
    for entity in entities:
        rows = ctx.rows(side.target, entity, "dscp_to_priority")
        if rows.empty:
            continue
        hit = rows[(rows["raw_key"] == f"dscp{dscp}") | (rows["text"].astype("string") == str(dscp))]
        for v in hit["value"]:
            if num(v) is not None:
                return int(num(v))
    return None


def suggest_dscp_map(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """DSCP → priority for the site's RoCE and CNP classes on the host netdev and its switch port."""
    ctx = SuggestionContext(evidence, analysis, profile)
    wanted = [("RoCE", cmd.dscp(ctx.site("roce_dscp")), cmd.priority(ctx.site("roce_priority"))),
              ("CNP", cmd.dscp(ctx.site("cnp_dscp")), cmd.priority(ctx.site("cnp_priority")))]
    out = []
    for focus, others in ctx.focus_pairs():
        for label, dscp, prio in wanted:
            current = _dscp_current(ctx, focus, dscp)
            if current == prio:
                continue
            commands: dict[str, list[str]] = {}
            for side in [focus, *others]:
                if side.is_host:
                    add_commands(commands, cmd.HOST, ctx.render(cmd.HOST, cmd.host_dscp2prio, side.entity, dscp,
                                                                prio))
                else:
                    add_commands(commands, side.platform, ctx.render(side.platform, cmd.switch_dscp_map,
                                                                     side.platform, side.entity, dscp, prio,
                                                                     ctx.profile))
            shown = "unknown" if current is None else f"priority {current}"
            rationale = (f"{focus.where} maps {label} DSCP {dscp} to {shown}; it must map to priority {prio} on "
                         f"the NIC and on every switch hop, or {label} traffic leaves its "
                         f"{'lossless' if label == 'RoCE' else 'strict'} queue ({REF} §1.1, §1.2, §7 row 1).")
            rationale += cmd.dscp_map_notes([s.platform for s in [focus, *others]], dscp, prio)
            out.append(ctx.suggestion(f"{label} DSCP {dscp} → priority ({focus.where})",
                                      None if current is None else f"DSCP {dscp} → {current}",
                                      f"DSCP {dscp} → {prio}", rationale, commands, target=focus.target,
                                      peers=others))
    return out


def _rdma_ports(ctx: SuggestionContext) -> list[tuple[str, str]]:
    """(host, `mlx5_0/1`) pairs a roce_tos finding is about."""
    target = ctx.evidence.get("target")
    entity = ctx.evidence.get("entity")
    if cmd.is_host(ctx.platform(target)):
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
    """RDMA-CM default TOS = DSCP×4 + ECT(0) of the site's RoCE DSCP, so RoCE is classified lossless and is
    ECN-capable."""
    ctx = SuggestionContext(evidence, analysis, profile)
    dscp = cmd.dscp(ctx.site("roce_dscp"))
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
                     f"({REF} §1.1, §1.3 item 3, §7 rows 1 and 5).")
        out.append(ctx.suggestion(f"RoCE TOS ({host} {port})", current, tos, rationale, {cmd.HOST: lines},
                                  target=host))
    return out
