"""Baselines: what the fabric looked like on good nights, as robust statistics the deviation rules compare against.

Modules: `store` (names and paths, reading and checking files, the rule view, locking and saving), `figures` (a
bundle's facts → the figures and reference counts of one night), `verdicts` (a night's recorded verdict and whether
it counts in the statistics) and `stats` (sketches, weighted quantiles, robust statistics pooled over the nights
that count, the reference, diff). Their public names are re-exported here; docs/baseline.md is the operator's view.

A *store* is a directory (default `./baselines/`); each baseline NAME (default `default`) is one JSON file in it,
with a copy of its rule statistics beside it:

```
STORE/.lock            lock file: every read-modify-write of the store holds fcntl.flock(LOCK_EX) on it
STORE/<NAME>.json      {"format": "rdmatool-baseline/2", "name", "keep", "updated",   header scalars, always first
                        "rule_stats": [coarse group, ...]  what `stats_for_rules` returns, right after the header
                        "reference": {category: {group: {"value", "count", "total"}}}
                        "stats":    [fine group, ...]      recomputed over the nights that count on every save
                        "nights":   [night, ...]}         oldest first, at most `keep` that count and `keep` that
                                                          do not, last in the file
STORE/.<NAME>.rules.json  the rule view: {"format": "rdmatool-baseline-rules/1", "baseline": "<NAME>.json",
                        "of": {"bytes", "mtime_ns", "sha256"},  the baseline file it was written for
                        "rule_stats": [coarse group, ...]}      the same rows as the baseline file's rule_stats
night = {"id", "bundle", "created", "saved", "targets",
         "diagnosis": {"verdict": "pass|warn|fail|inconclusive",   what `baseline save` found (absent: saved
                       "counts": {severity: n}, "failures": n},     without one, by an older rdmatool)
         "included_by_hand": true,                     only on a failing night counted by --include-failed
         "values": [{"metric", "kind", "role", "platform", "ca_type", "link_rate_gbps", "priority", "size_bytes",
                     "values": [...]                     the figures of one bundle for this fine group (<= K of them)
                     | "quantiles": [q0, q5, ..., q100], "n": n}],   a sketch instead when the group had > K
         "facts":  {category: {group: {value: count}}}}  counts of configuration facts in that bundle
```

Bounded nights: a fine group of one night with more than K = SKETCH_POINTS (21) figures is stored as a sketch, its
21 evenly spaced quantiles (0 %, 5 %, ..., 100 %, linear interpolation, so the min and max are kept) and its true
count n; smaller groups keep their raw values. A night of a 1,000-host fleet is therefore a few hundred groups of at
most 21 numbers, whatever the fleet size. Pooling weights each stored point by n / len(points) (1 for raw values):
weighted median, weighted MAD around it and weighted p10/p90 on the step function of the weighted points (the linear
interpolation of numpy's default `percentile`, generalised to weights: a point of weight w stands for w copies), and
n is the sum of the true counts. When every pooled group is raw (no group ever had more than 21 figures in a night)
the statistics are computed exactly from the raw values. With sketches they are approximations: each
night contributes its distribution at 5-percentile resolution and its min/max carry a full 1/21 of its weight. On
3 nights x 5,000 values (normal, log-normal and bimodal fleets, 100 seeded trials each) the pooled median was within
0.05 MAD of the exact one, the MAD within 10 % and p10/p90 within 0.3 MAD; the tests bound the median within 0.1 MAD
and the MAD within 15 %. A sketched night is never expanded back: the raw figures of a large group are gone once
saved.

The rule view: `stats_for_rules` (every `rdmatool diagnose --baseline`) needs only `rule_stats`, a few hundred kB at
1,000 hosts, while the whole file with its nights is several MB and takes far longer to parse and check. So every
save also writes `.<NAME>.rules.json`, the same rows, under the same lock, after the baseline file, each atomically.
The view records the size, modification time and SHA-256 of the baseline file it was written for, and
`stats_for_rules` uses it only when the baseline file still has that size and that modification time (or, when the
time differs, as after a copy, a restore or a checkout, that digest), when it is a regular file of this format and
when its rows pass the checks of `load`. Otherwise — no view (a store written by an older rdmatool, the shipped demo
baseline, a file given by path), a view left behind by a writer that does not know views, or a view unreadable,
corrupt or foreign — the view is ignored, silently, and the baseline file is loaded in full, which raises the usual
one-line errors: the baseline file is the truth and the view only a copy of part of it, so a bad view never changes
a diagnosis nor stops one. Reading never writes: a store without views gets them at its next save. The view is
hidden (a leading dot, like the lock and the temporary files), so no baseline NAME can name it and `baseline list`
never lists it.

Formats: `rdmatool-baseline/2` is written; `/1` files (raw values in every night, nights first) are still read:
`load` converts them (the large groups of their nights become sketches, their stored statistics are kept as they
are) and the next save writes `/2`.

Figures: every numeric fact of `analysis.analyse_bundle` except cumulative counters and text states, i.e. gauges
(bw_avg_gbps per size_bytes, link_rate_gbps, lat_*, thresholds...), counter rates (`<metric>_per_s`; reset or
saturated counters have no rate and are left out) and the derived ratios (pause fractions, ecn_mark_ratio,
cnp_handled_ratio, bw_efficiency). A *fine group* is (metric, kind, role, platform, ca_type, link_rate_gbps, priority,
size_bytes): ca_type is the NIC model of the entity's device (else the target's most common one) and link_rate_gbps
the entity's port rate (else the target's fastest port); both are null on switches without them and link_rate_gbps
is null for the link_rate_gbps metric itself. A *coarse group* is (metric, kind, role, priority, size_bytes), the
join key of rules.kinds.deviation. Statistics pool the values of all kept nights: median, MAD (median absolute
deviation, unscaled: the rule multiplies by 1.4826), p10/p90 (linear interpolation), n (values pooled), nights
(see "Bounded nights" for groups stored as sketches).

Which nights count (`verdicts`): every night but those whose diagnosis — run by `baseline save` without a
baseline, so that the baseline rules never judge their own nights — failed, unless saved with --include-failed.
Statistics, rule_stats and reference come from the nights that count only; a baseline whose nights all fail has none
(an empty rule_stats: the deviation rules then compare with nothing). The extra keys of a night keep the format
`/2`: an older rdmatool reads such a file as before, but one that saves into it counts every night again.

Reference facts (majority over the counts pooled from the nights that count; ties go to the lexically first value):
`fw_version_by_ca_type`, `fw_version_by_board_id`, `trust_mode_by_role`, `pfc_priorities_by_role` (the comma list of
PFC-enabled priorities per host interface, `none` if none) and `ecn_by_profile` (`platform/entity` →
`min=..,max=..,pmax=..,enabled=..` of the switch ECN/WRED profile or queue).

Saving: the bundle is analysed outside the lock; then, under the lock, the file is re-read, the night appended (a
night with the same id, i.e. the same bundle path and manifest `created`, is replaced: re-running a nightly job is
idempotent, and its new verdict decides), nights sorted by `created` and the oldest dropped beyond `keep` nights that
count and `keep` that do not (`--keep` given → stored as the new keep, else the stored one, else 30), large groups of the new night sketched, statistics recomputed, and the file written
with `rdmatool.files.write_atomic` (a temporary file in the store, fsynced, os.replace'd into place, the directory
fsynced), then its rule view the same way. Two concurrent saves therefore serialise and both nights land. A corrupt
or foreign file raises BaselineError("<path>: ...") and is never overwritten: `save` into it refuses (move it aside
by hand); the other baselines of the store stay readable. Reads take no lock. A store that cannot be written
(read-only, a path under a regular file, a full disk) is a BaselineError naming the baseline file, the file
unchanged; if only the rule view cannot be written after the baseline file was, the error says the night is saved.

Reading: a baseline may come from another machine, so it is read as data to check. The file must be a regular file
of at most MAX_FILE_BYTES (no symlink, FIFO or device: rdmatool.files), and every value the code later reads is
type-checked on load — nights a list of objects, statistics numbers, counts non-negative integers, group keys
strings or integers or null — so that a wrong type is one line naming the file and the key (`nights[2].values[5]
.quantiles is an object, not a list`) rather than a traceback in pandas. The rule view is read the same way (a
regular file, bounded, its rows checked) and falls back to `load` when anything is wrong with it.
"""

from rdmatool.baseline.figures import figures_of, night_from_bundle, reference_counts
from rdmatool.baseline.stats import (
    FINE_KEYS,
    RULE_COLUMNS,
    RULE_KEYS,
    SKETCH_PERCENTS,
    SKETCH_POINTS,
    STAT_FIELDS,
    diff,
    pooled,
    rebuild,
    reference,
    robust,
    robust_weighted,
    sketch,
    sketch_night,
    weighted_quantile,
)
from rdmatool.baseline.store import (
    DEFAULT_KEEP,
    DEFAULT_NAME,
    DEFAULT_STORE,
    FORMAT,
    FORMAT_V1,
    HEADER_KEYS,
    KEY_ORDER,
    LOCK_NAME,
    MAX_FILE_BYTES,
    RULES_FORMAT,
    add_night,
    check_name,
    list_store,
    load,
    locked,
    path_of,
    read_rule_view,
    resolve,
    rules_path_of,
    save,
    stats_for_rules,
    summary,
    write_document,
)
from rdmatool.baseline.verdicts import VERDICTS, counted, findings_text, judged, record, status, trim
from rdmatool.baseline.verdicts import summary as night_summary

__all__ = [
    "DEFAULT_KEEP", "DEFAULT_NAME", "DEFAULT_STORE", "FINE_KEYS", "FORMAT", "FORMAT_V1", "HEADER_KEYS", "KEY_ORDER",
    "LOCK_NAME", "MAX_FILE_BYTES", "RULES_FORMAT", "RULE_COLUMNS", "RULE_KEYS", "SKETCH_PERCENTS", "SKETCH_POINTS",
    "STAT_FIELDS", "VERDICTS", "add_night", "check_name", "counted", "diff", "figures_of", "findings_text", "judged",
    "list_store", "load", "locked", "night_from_bundle", "night_summary", "path_of", "pooled", "read_rule_view", "rebuild", "record",
    "reference", "reference_counts", "resolve", "robust", "robust_weighted", "rules_path_of", "save", "sketch",
    "sketch_night", "stats_for_rules", "status", "summary", "trim", "weighted_quantile", "write_document",
]
