"""Checkpoint stalls (docs/tuning.md §10.4): stall = size × 8 / write rate; compute lost = stall / interval."""

from __future__ import annotations

SCHEMA = "rdmatool-plan-checkpoint/1"
DAY_S = 86400.0


def checkpoint_plan(size_bytes: float, interval_s: float, write_gbps: float | None = None,
                    stall_s: float | None = None) -> dict:
    """The stall of one checkpoint (from the write rate, or as given), what it costs, and the verdict: a stall not
    shorter than the interval leaves no time to compute, a plan that cannot be met (`verdict.feasible` False; the
    compute lost is then all of it). ValueError when neither or both of `write_gbps` and `stall_s` are given."""
    if (write_gbps is None) == (stall_s is None):
        raise ValueError("give the write rate (--write-gbps) or the stall (--stall), one of them")
    if write_gbps is not None:
        if write_gbps <= 0:
            raise ValueError(f"--write-gbps {write_gbps}: must be more than zero")
        stall_s = size_bytes * 8 / (write_gbps * 1e9)
    feasible = stall_s < interval_s
    share = min(stall_s / interval_s, 1.0)
    verdict = {"feasible": feasible,
               "reason": f"a stall of {stall_s:,.0f} s every {interval_s:,.0f} s" + (
                   "" if feasible else " leaves no time to compute: checkpoint less often or write faster")}
    return {
        "schema": SCHEMA,
        "formula": "stall = size × 8 / write rate; compute lost = stall / interval",
        "size_bytes": size_bytes,
        "interval_s": interval_s,
        "write_gbps": write_gbps if write_gbps is not None else size_bytes * 8 / stall_s / 1e9,
        "stall_s": stall_s,
        "checkpoints_per_day": DAY_S / interval_s,
        "lost_s_per_day": share * DAY_S,
        "lost_share": share,
        "verdict": verdict,
    }
