"""The commands that put BEFORE's values back, per change, for the platform of the target that changed: rendered by
rdmatool.tune.commands as the suggestions are, printed for an engineer, never run. A setting with no rendering is
said in words (`restore ... to ...`), never guessed.

ECN thresholds are one command on every platform (Kmin, Kmax and Pmax together), so the changes of one profile or
port make one group; the traffic class is the site's RoCE priority (the configuration file's `site:`), the queue
the thresholds were read for.
"""

from __future__ import annotations

import pandas as pd

from rdmatool.table.facts import plain
from rdmatool.tune import commands as cmds

ECN = ("ecn_min_threshold_bytes", "ecn_max_threshold_bytes", "ecn_max_probability_pct")


def _platform(facts: pd.DataFrame, target: str) -> tuple[str | None, str | None]:
    rows = facts[facts["target"] == target].head(1)
    if rows.empty:
        return None, None
    kind, platform = rows["kind"].iloc[0], rows["platform"].iloc[0]
    return str(kind), (cmds.HOST if kind == "host" else str(platform))


def _value(facts: pd.DataFrame, target: str, entity, metric: str):
    rows = facts[(facts["target"] == target) & (facts["metric"] == metric) & (facts["entity"].astype(str) == str(entity))]
    values = rows["value"].dropna()
    return None if values.empty else values.iloc[0]


def _priorities(text) -> set[int]:
    return set() if text in (None, "none") else {int(p) for p in str(text).split(",") if p.strip()}


def _render(change: dict, facts: pd.DataFrame, site: dict) -> tuple[str | None, list[str]]:
    """(platform, commands) for one change (or one ECN group); [] when there is no rendering."""
    kind, platform = _platform(facts, change["target"])
    setting, entity, old = change["setting"], change["entity"], change["before"]
    if platform is None or old is None:
        return platform, []
    if setting in ECN:
        kmin, kmax, pmax = (_value(facts, change["target"], entity, m) for m in ECN)
        if kind != "switch" or None in (kmin, kmax):
            return platform, []
        return platform, cmds.switch_ecn(platform, entity, int(site["roce_priority"]), int(kmin), int(kmax),
                                         int(pmax if pmax is not None else 10))
    if setting == "pfc_priorities":
        before, after = _priorities(old), _priorities(change["after"])
        if kind == "host":
            return platform, cmds.host_pfc(entity, before)
        return platform, cmds.switch_pfc(platform, entity, before, after - before)
    if setting in ("roce_np_enabled", "roce_rp_enabled") and kind == "host" and change["priority"] is not None:
        return platform, cmds.host_dcqcn(entity, setting[5:7], int(change["priority"]), bool(int(float(old))))
    if setting == "trust_mode" and kind == "host" and str(old).lower() == "dscp":
        return platform, cmds.host_trust_dscp(entity)
    return platform, []


def revert(changes: list[dict], facts: pd.DataFrame, site: dict) -> list[dict]:
    """One entry per change or ECN group: what to restore, on which platform, the commands (or [] with `by_hand`),
    and the syntax note of a platform whose syntax is not verified."""
    out, seen, facts = [], set(), plain(facts)  # (plain texts: None where missing)
    for change in changes:
        group = (change["target"], str(change["entity"])) if change["setting"] in ECN else None
        if group in seen:
            continue
        if group:
            seen.add(group)
        what = ("ECN thresholds" if group else change["setting"])
        try:
            platform, lines = _render(change, facts, site)
        except (ValueError, OverflowError) as exc:  # a name or a value the renderer will not put in a command
            platform, lines = None, []
            what += f" ({exc})"
        item = {"target": change["target"], "entity": change["entity"], "what": what, "platform": platform,
                "commands": lines, "note": cmds.syntax_note(platform) if lines and platform else None}
        if not lines:
            item["by_hand"] = (f"restore {change['setting']} of {change['target']} {change['entity'] or ''}".rstrip()
                               + f" to {change['before']}")
        out.append(item)
    return out
