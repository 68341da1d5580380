"""Capacity planners (`rdmatool plan`): the planning questions of docs/tuning.md §10, each with the nominal figure
and, from a bundle or a baseline, the one the fabric delivers.

Modules: `units` (sizes, durations and counts as people write them: 100GB, 1h, 7B), `bandwidth` (what a
data-parallel job needs, the ring all-reduce per node, effective rates, whether a ring fits in an iteration; pure),
`checkpoint` (stall and compute lost; pure), `measured` (the fleet's efficiency and rail rates from a bundle's facts
or a baseline's statistics). Every result is a plain dict with `"schema": "rdmatool-plan-<kind>/1"` and a `verdict`:
whether the plan can be met.
"""
