"""Verdict facts a judge states for the playbooks: one verdict row per subject plus its details, in the facts'
own columns (rdmatool.table.analysis.FACT_COLUMNS). The cabling judge and the per-cable error judge both speak this way."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rdmatool.table.analysis import FACT_COLUMNS
from rdmatool.table.facts import FactQuery


class StatedFacts:
    """The rows being stated. `verdict` names the verdict metric, `prefix` the details' metrics
    (`<prefix><name>`), `raw_key` who stated them."""

    def __init__(self, query: FactQuery, roles: dict, verdict: str, prefix: str, raw_key: str) -> None:
        self.query, self.roles, self.rows = query, roles, []
        self.verdict, self.prefix, self.raw_key = verdict, prefix, raw_key

    def add(self, target: str, entity: str, verdict: str, **details) -> None:
        kind, platform = self.query.kind_platform(target) or ("host", None)
        base = {"target": target, "kind": kind, "platform": platform, "role": self._role(target),
                "entity": entity, "priority": pd.NA, "size_bytes": pd.NA, "raw_key": self.raw_key,
                "window_s": np.nan, "delta": np.nan, "flag": ""}
        self.rows.append({**base, "metric": self.verdict, "value": np.nan, "text": verdict})
        for name, value in details.items():
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            self.rows.append({**base, "metric": f"{self.prefix}{name}", "value": float(value) if number else np.nan,
                              "text": None if number else str(value)})

    def _role(self, target: str):
        """The target's role in the inventory, else as its facts state it (a switch the subnet sweep restated)."""
        if target in self.roles:
            return self.roles[target]
        rows = self.query.of_target(target)
        role = rows["role"].iloc[0] if rows is not None and len(rows) else None
        self.roles[target] = None if pd.isna(role) else role
        return self.roles[target]

    def frame(self) -> pd.DataFrame:
        if not self.rows:
            return pd.DataFrame(columns=FACT_COLUMNS)
        out = pd.DataFrame(self.rows, columns=FACT_COLUMNS)
        return out.astype({"priority": "Int64", "size_bytes": "Int64"})


