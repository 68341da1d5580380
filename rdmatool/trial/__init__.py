"""`rdmatool trial BEFORE AFTER`: did a change help? Two sets of runs of one fabric, taken before and after a change.

Modules: `runs` (a side's bundles, and the figures of one run: p99 latency, pause fraction, ECN mark ratio, CNP rate,
goodput and fairness), `compare` (what changed in the configuration, through rdmatool.bundle_ops.diff, and each figure's
effect against the spread of the repeated runs; the verdict), `revert` (the commands that put BEFORE's values back,
printed, never run). The result is a plain dict with `"schema": "rdmatool-trial/1"`.
"""
