"""HeldFrame: a dataclass field that is a frame to whoever reads it, whatever holds it.

The analysis' facts (rdmatool.table.fact_columns.FactColumns) are held as columns and read through them; a reader of the
field itself gets the frame, made by the holder the first time it is asked (its `frame()`). A frame given to the
field is the field's value as it is.
"""

from __future__ import annotations

import pandas as pd


class HeldFrame:
    """A descriptor for a required dataclass field (no default); `held(obj)` is what was given to it."""

    def __set_name__(self, owner, name: str) -> None:
        self.name, self.slot = name, f"_{name}_held"

    def __get__(self, obj, owner=None):
        if obj is None:
            raise AttributeError(self.name)  # no default: the dataclass makes the field a required argument
        held = obj.__dict__[self.slot]
        return held if isinstance(held, pd.DataFrame) or not hasattr(held, "frame") else held.frame()

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.slot] = value

    def held(self, obj):
        return obj.__dict__[self.slot]
