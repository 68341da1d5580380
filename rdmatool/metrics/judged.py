"""What the analysis and the other judges derive: rates and ratios, a collection's failed commands, a watch's spikes and growth."""

from __future__ import annotations

from rdmatool.model import MetricKind

COUNTER, GAUGE, STATE = MetricKind.COUNTER, MetricKind.GAUGE, MetricKind.STATE

DEFINITIONS: list[tuple[str, str, MetricKind, str]] = [
    # --- derived by the analysis from two snapshots or joins (frame.py / analysis.py) -----------------------------
    ("rx_pause_fraction", "ratio", GAUGE, "share of the window this port/priority was paused by received PFC"),
    ("tx_pause_fraction", "ratio", GAUGE, "share of the window this port/priority kept its peer paused"),
    ("ecn_mark_ratio", "ratio", GAUGE, "ECN-marked packets / packets on the same port and priority in the window"),
    ("cnp_handled_ratio", "ratio", GAUGE, "CNPs handled by reaction points / CNPs sent by notification points"),
    ("bw_efficiency", "ratio", GAUGE, "measured bandwidth / line rate of the port it ran on"),
    ("counter_reset", "", STATE, "a counter went down between snapshots (reboot, reload, clear); text names it"),
    # --- a collection's failed commands (rdmatool.rules.command_failures), judged by playbooks/30-fleet-and-pitfalls
    # One per target, command and kind of failure (no entity, no priority); raw_key is the command's parser, text its
    # failures as recorded, joined by ` | `.
    ("command_unfinished", "", STATE, "a command that gave no whole answer (its own timeout fired, it never finished, "
     "the target's deadline cut it); text: `ethtool -S ens1f0np0 timed out on gpu11`"),
    ("command_not_installed", "", STATE, "a command whose tool is not installed on the target; text: "
     "`ethtool not installed on gpu11`"),
    # --- `rdmatool watch`: a counter's rate judged over the watch's recent intervals (rdmatool.watch.judge, judged by
    # playbooks/70-watch.yaml; entity = `<port or netdev>/<counter>`, raw_key = the counter) ------------------------
    ("watch_spike_period_s", "s", GAUGE, "period of the spikes a counter's rate shows over a watch's recent intervals"),
    ("watch_spike_strength", "", GAUGE, "autocorrelation of those rates at that period (1: strictly periodic)"),
    ("watch_spike_count", "events", GAUGE, "spikes of the counter's rate within the watch's recent intervals"),
    ("watch_growth_rate", "", GAUGE,
     "rate a counter grew at over a watch's last intervals, after it stayed flat over the intervals before them"),
    ("watch_lat_spike_period_s", "s", GAUGE, "period of the spikes a latency probe figure shows over a watch's window"),
    ("watch_lat_spike_strength", "", GAUGE, "autocorrelation of that latency figure at that period"),
    ("watch_lat_spike_count", "events", GAUGE, "spikes of the latency figure within the watch's recent intervals"),
    ("watch_lat_step_ratio", "x", GAUGE, "a probe's p99 latency over its own earlier level, after it stepped up"),
]
