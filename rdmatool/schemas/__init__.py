"""The JSON Schemas rdmatool ships: the public bundle format, read back with `load`."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources


@cache
def load(name: str) -> dict:
    """A shipped schema by name (`bundle-manifest`, `bundle-side`)."""
    return json.loads(resources.files(__package__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8"))
