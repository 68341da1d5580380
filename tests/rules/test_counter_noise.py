"""Rate rules and integer counters: one tick read over a sub-second window is a large rate that says nothing.

The shipped `cnp_ignored` rule fires on a rate above a trickle only when the window also saw more than a handful of
ignored CNPs; these facts are what a counters window of about half a second gives.
"""

from __future__ import annotations

from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.gate.judge import analysis_of
from rdmatool.rules import engine, playbook

RULE = next(r for r in playbook.load_dir(default_playbooks()) if r.id == "cnp_ignored")


def rate_fact(target: str, delta: float, window_s: float) -> dict:
    return {"target": target, "kind": "host", "platform": "linux", "role": "compute", "entity": "mlx5_1/1",
            "metric": "cnp_ignored_per_s", "priority": None, "size_bytes": None, "value": delta / window_s,
            "text": None, "raw_key": "rp_cnp_ignored", "window_s": window_s, "delta": delta, "flag": ""}


def fired(rows: list[dict]) -> set[str]:
    return {f.target for f in engine.evaluate(analysis_of(rows), [RULE])}


def test_one_ignored_cnp_in_a_short_window_is_noise() -> None:
    assert fired([rate_fact("quiet", 1, 0.45), rate_fact("two", 2, 0.6)]) == set()


def test_ignoring_cnps_as_they_arrive_fires() -> None:
    assert fired([rate_fact("bad", 300, 10.0), rate_fact("quiet", 1, 0.45), rate_fact("short", 12, 0.5)]) == \
        {"bad", "short"}
