"""What a data-parallel job asks of the fabric (docs/tuning.md §10.1 to §10.3); pure arithmetic on the inputs.

required = parameters × bytes per value × 2 (gradients + parameters) × iterations/s × parallelism factor;
a ring all-reduce moves 2·(N−1)/N × the model's bytes through each node per iteration [C40]; plan on 70 % of line
rate, or on what the fleet measured (rdmatool.plan.measured).
"""

from __future__ import annotations

SCHEMA = "rdmatool-plan-bandwidth/1"
PLANNING_EFFICIENCY = 0.70  # docs/tuning.md §10.3 "70 % of line rate"
FORMULA = ("required bandwidth = parameters × bytes per value × 2 (gradients + parameters) × iterations per second "
           "× parallelism factor")
RING_FORMULA = "ring all-reduce per node = 2·(N−1)/N × parameters × bytes per value, per iteration"


def _gbps(bytes_per_s: float) -> float:
    return bytes_per_s * 8 / 1e9


def effective(efficiency: float, line_gbps: float | None, need_gbps: float, ring_bytes: float | None,
              iterations_per_s: float) -> dict:
    """What one efficiency makes of the line rate: the rate a node gets, the line rate the need asks for, and (with
    a ring) the all-reduce's time per iteration and its share of the iteration."""
    out = {"efficiency": efficiency, "line_gbps_needed": need_gbps / efficiency if efficiency > 0 else None}
    if line_gbps:
        rate = efficiency * line_gbps
        out["effective_gbps"] = rate
        if ring_bytes is not None:
            seconds = ring_bytes * 8 / (rate * 1e9) if rate > 0 else None
            out["allreduce_s_per_iteration"] = seconds
            out["iteration_share"] = seconds * iterations_per_s if seconds is not None else None
        else:
            out["links_needed"] = need_gbps / rate if rate > 0 else None
    return out


def bandwidth_plan(params: float, bytes_per_value: float, iterations_per_s: float, parallelism: float = 1.0,
                   nodes: int | None = None, line_gbps: float | None = None,
                   planning_efficiency: float = PLANNING_EFFICIENCY, measured: dict | None = None) -> dict:
    """The estimate, the ring per node (with `nodes`), and the effective bandwidth at the planning efficiency and,
    with `measured` (rdmatool.plan.measured), at the fleet's. `line_gbps`: the nodes' line rate (else the
    measured fleet's usual rate, when it has one)."""
    for name, value in (("--params", params), ("--bytes-per-value", bytes_per_value),
                        ("--iterations-per-s", iterations_per_s), ("--parallelism", parallelism)):
        if not value > 0:
            raise ValueError(f"{name} must be more than zero, not {value}")
    if nodes is not None and nodes < 2:
        raise ValueError(f"--nodes must be at least 2 for a ring, not {nodes}")
    model_bytes = params * bytes_per_value
    per_iteration = model_bytes * 2
    required = per_iteration * iterations_per_s * parallelism
    ring = None
    if nodes:
        factor = 2 * (nodes - 1) / nodes
        ring = {"formula": RING_FORMULA, "nodes": nodes, "factor": factor,
                "per_node_bytes_per_iteration": factor * model_bytes,
                "per_node_bytes_per_s": factor * model_bytes * iterations_per_s,
                "per_node_gbps": _gbps(factor * model_bytes * iterations_per_s)}
    need = ring["per_node_gbps"] if ring else _gbps(required)
    ring_bytes = ring["per_node_bytes_per_iteration"] if ring else None
    line = line_gbps or (measured or {}).get("line_gbps")
    plan = {
        "schema": SCHEMA,
        "formula": FORMULA,
        "inputs": {"params": params, "bytes_per_value": bytes_per_value, "iterations_per_s": iterations_per_s,
                   "parallelism": parallelism, "nodes": nodes, "line_gbps": line},
        "model_bytes": model_bytes,
        "per_iteration_bytes": per_iteration,
        "required_bytes_per_s": required,
        "required_gbps": _gbps(required),
        "ring": ring,
        "planning": {"rule": "plan at about 70 % of line rate (rdmatool docs tuning §10.3)",
                     **effective(planning_efficiency, line, need, ring_bytes, iterations_per_s)},
        "measured": None,
    }
    if measured is not None and measured.get("efficiency") is not None:
        plan["measured"] = {**measured,
                            **effective(measured["efficiency"], line, need, ring_bytes, iterations_per_s)}
    elif measured is not None:
        plan["measured"] = measured
    plan["verdict"] = feasibility(plan)
    return plan


def feasibility(plan: dict) -> dict:
    """Whether the fabric can carry the plan: a ring's all-reduce must take no longer than the time between two
    synchronisations (its share of an iteration at most 1), at the efficiency the plan is judged on: the fleet's,
    when a bundle or a baseline was given, else the planning rule's 70 %. `feasible` is None when that cannot be
    said: no ring (the estimate is the whole job's, not a node's), no line rate, or nothing measured."""
    basis = "measured" if plan["measured"] is not None else "planning"
    figures = plan["measured"] if plan["measured"] is not None else plan["planning"]
    out = {"feasible": None, "basis": basis, "iteration_share": figures.get("iteration_share")}
    if figures.get("efficiency") is None:
        return {**out, "reason": f"nothing measured: {figures.get('reason')}"}
    if plan["ring"] is None:
        return {**out, "reason": "a verdict needs --nodes: the estimate is the whole job's, not a node's"}
    if out["iteration_share"] is None:
        return {**out, "reason": "a verdict needs the line rate (--link-gbps, or --bundle / --baseline)"}
    feasible = out["iteration_share"] <= 1
    at = (f"at the measured {figures['efficiency']:.1%} of line rate" if basis == "measured"
          else f"at {figures['efficiency']:.0%} of line rate")
    took = (f"the all-reduce takes {figures['allreduce_s_per_iteration']:.3g} s {at}, "
            f"{figures['iteration_share']:.0%} of the {1 / plan['inputs']['iterations_per_s']:.3g} s an iteration has")
    if feasible:
        return {**out, "feasible": True, "reason": took}
    return {**out, "feasible": False,
            "reason": f"{took}; a line rate of {figures['line_gbps_needed']:,.0f} Gb/s per node would be needed, or "
                      f"fewer synchronisations per second"}
