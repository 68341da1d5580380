"""Tuning suggestions: ECN / PFC / DCQCN calculators and per-platform command rendering.

`SUGGESTERS` maps the names playbook rules use in `suggest:` to calculators
`(rule, evidence, analysis) -> list[Suggestion]` (an optional fourth argument, `profile`, overrides the site
defaults of `suggest.DEFAULT_PROFILE`). Suggestions are printed, never applied.
"""

from __future__ import annotations

from rdmatool.tune.suggest import DEFAULT_PROFILE, SUGGESTERS

__all__ = ["DEFAULT_PROFILE", "SUGGESTERS"]
