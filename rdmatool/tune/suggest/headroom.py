"""Buffers: the PFC headroom a lossless priority group needs, from the cable length on both ends.

headroom: the cable length to configure on the host netdev (mlnx_qos --cable_len) and on the switch port, and the
headroom it implies (docs/tuning.md §3.1, §7 row 10):
- switch PG headroom, SONiC-Mellanox form (buffer_headroom_mellanox.lua): xoff = MTU + (MTU + cable delay + MAC/PHY
  delay + peer response), xon and size from it (formulas.sonic_headroom);
- NIC xoff, the mlx5 formula: (301 + 2.16·L)·max(R, 40) + 2.72·MTU bytes (formulas.mlx5_xoff_bytes).
The length is the site profile's, else the longest configured end, else the mlx5 default of 7 m.
"""

from __future__ import annotations

import math

from rdmatool import platforms
from rdmatool.model import Suggestion
from rdmatool.tune import commands as cmd
from rdmatool.tune import formulas as f
from rdmatool.tune.suggest.context import REF, SuggestionContext, add_commands, fmt


def suggest_headroom(rule, evidence, analysis, profile=None) -> list[Suggestion]:
    """Cable length on both ends and the PG headroom it implies (docs/tuning.md §3.1, §7 row 10)."""
    ctx = SuggestionContext(evidence, analysis, profile)
    mtu = cmd.integer(ctx.site("mtu"), 1500, 16384, "MTU")
    out = []
    for focus, others in ctx.focus_pairs():
        sides = [focus, *others]
        hosts = [s for s in sides if s.is_host]
        switches = [s for s in sides if not s.is_host]
        configured = {}
        for s in sides:
            got = (ctx.value(s.target, s.entity, "cable_length_m") if s.is_host
                   else ctx.switch_value(s, "cable_length_m"))
            if got is not None:
                configured[s.where] = got
        rate = None
        for s in switches:
            rate = rate or ctx.value(s.target, s.entity, "link_rate_gbps")
        for h in hosts:
            rate = rate or ctx.host_rate(h.target, h.entity)
        rate = rate or ctx.site("link_rate_gbps")
        if not rate:
            continue
        if ctx.site("cable_length_m"):
            length, source = int(math.ceil(ctx.site("cable_length_m"))), "site profile"
        elif configured:
            length, source = int(math.ceil(max(configured.values()))), "the longest configured end"
        else:
            length, source = f.MLX5_DEFAULT_CABLE_LEN_M, "mlx5 default (no cable length known)"
        room = f.sonic_headroom(rate, length, mtu)
        nic_xoff = f.mlx5_xoff_bytes(rate, length, mtu)
        current_value = configured.get(focus.where)
        commands: dict[str, list[str]] = {}
        for h in hosts:
            add_commands(commands, cmd.HOST, ctx.render(cmd.HOST, cmd.host_cable_len, h.entity, length))
        for s in switches:
            add_commands(commands, s.platform, ctx.render(s.platform, cmd.switch_cable_length, s.platform, s.entity,
                                                          length))
        rationale = (
            f"Inputs: rate {fmt(rate)} Gb/s, cable {length} m ({source}; configured: "
            f"{', '.join(f'{k} {fmt(v)} m' for k, v in configured.items()) or 'none known'}), MTU {mtu}. "
            f"Switch PG headroom (SONiC-Mellanox form): xoff = MTU + (MTU + cable {f.cable_bytes(rate, length):.0f} B + "
            f"mac/phy {f.SPECTRUM_MAC_PHY_DELAY_BYTES:.0f} B + peer response {f.peer_response_bytes(rate):.0f} B) "
            f"→ {room.xoff_bytes} B, xon {room.xon_bytes} B, size {room.size_bytes} B. NIC xoff = (301 + 2.16·{length})"
            f"·{fmt(max(rate, 40))} + 2.72·{mtu} = {nic_xoff:.0f} B ({REF} §3.1, §7 row 10)."
        )
        unrendered = cmd.not_rendered("cable_length")  # the platforms that size headroom from their own tables
        if any(platforms.switch(s.platform) in unrendered for s in switches):
            rationale += (f" {'/'.join(m.TITLE for m in unrendered)}: no cable-length command rendered; check the "
                          "port's PG headroom by hand.")
        out.append(ctx.suggestion(f"cable length for PFC headroom ({focus.where})",
                                  None if current_value is None else f"{fmt(current_value)} m",
                                  f"{length} m (headroom {room.size_bytes} B per lossless PG, NIC xoff "
                                  f"{nic_xoff:.0f} B)", rationale, commands, target=focus.target, peers=others))
    return out
