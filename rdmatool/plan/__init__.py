"""Capacity planners (`rdmatool plan`): the planning questions of docs/tuning.md §10, each with the nominal figure
and, from a bundle or a baseline, the one the fabric delivers.

Modules: `units` (sizes and durations as people write them: 100GB, 1h), `bandwidth` (what a data-parallel job
needs, the ring all-reduce per node, effective rates; pure), `checkpoint` (stall and compute lost; pure),
`measured` (the fleet's efficiency and rail rates from a bundle's facts or a baseline's statistics).
Every result is a plain dict with `"schema": "rdmatool-plan-<kind>/1"`.
"""
