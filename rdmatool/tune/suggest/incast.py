"""The gate's incast figures as an input of the ECN thresholds (one of rdmatool.tune.suggest.ecn.INPUT_HOOKS).

The incast stage (rdmatool.gate.incast_stage) states, on a leaf's port toward a receiver, how long the senders were
held by PFC and what share of the packets was ECN-marked while N senders loaded it (incast_* facts). That is a
measurement of which fired first, which the configuration alone can only predict (docs/tuning.md §2.4: with shared
buffers the PFC trigger moves with the load):

- the figures go into the rationale of the port's suggestion, whatever they say;
- pauses with (almost) no marks while the switch's current Kmin sits below the T_xoff the computation assumed mean
  that PFC fired before the queue ever reached that Kmin: the effective trigger is below the current Kmin, so the
  computation takes the current Kmin as T_xoff (and says so).

Declared in ecn.INPUT_HOOKS; a port without incast facts is left unchanged.
"""

from __future__ import annotations

from dataclasses import replace

from rdmatool.tune.suggest.context import SuggestionContext, fmt
from rdmatool.tune.suggest.ecn_inputs import ConfigObject, PortInputs, current_thresholds

PAUSED = 0.01  # as playbooks/45-incast.yaml's incast_ecn_after_pfc: held by PFC more than 1 % of the load
UNMARKED = 0.0001  # ... while marking fewer than 1 packet in 10,000


def incast_inputs(ctx: SuggestionContext, obj: ConfigObject, inputs: PortInputs) -> PortInputs:
    port = inputs.port
    fan_in = ctx.value(obj.switch, port, "incast_fan_in") if port else None
    if fan_in is None:
        return inputs
    paused = ctx.value(obj.switch, port, "incast_pause_fraction")
    marked = ctx.value(obj.switch, port, "incast_ecn_mark_ratio")

    def pct(value) -> str:
        return "unknown" if value is None else f"{100 * value:.2g} %"

    notes = [*inputs.notes, f"Incast stage on {port} (fan-in {fmt(fan_in)}): senders held by PFC {pct(paused)} of "
                            f"the load, {pct(marked)} of the packets ECN-marked."]
    if paused is None or paused <= PAUSED or (marked or 0.0) >= UNMARKED:
        return replace(inputs, notes=notes)
    kmin = current_thresholds(ctx, obj, ctx.site("roce_priority")).get("ecn_min_threshold_bytes")
    if kmin is None or (inputs.xoff_bytes is not None and kmin >= inputs.xoff_bytes):
        notes.append("Pauses came before marks, as thresholds at or above T_xoff predict.")
        return replace(inputs, notes=notes)
    if inputs.xoff_bytes is None:  # the switch's trigger unknown: the load just measured bounds it
        notes.append(f"Pauses came before marks with the current Kmin {fmt(kmin)} B and T_xoff not known: PFC fired "
                     f"below Kmin, so T_xoff is taken as {fmt(kmin)} B.")
    else:
        notes.append(f"Pauses came before marks although the current Kmin {fmt(kmin)} B is below the assumed T_xoff "
                     f"{inputs.xoff_bytes:.0f} B: PFC fired below Kmin, so T_xoff is taken as {fmt(kmin)} B.")
    return replace(inputs, xoff_bytes=float(kmin), xoff_source=f"the incast stage on {port} (PFC before the current "
                   f"Kmin; computed: {inputs.xoff_source})", notes=notes)

