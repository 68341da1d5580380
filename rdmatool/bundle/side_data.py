"""What is wrong with one output's side data (an `outputs.json` entry, a /1 side file, a pack header's entry): the
hand-written check that accepts and refuses exactly what `rdmatool/schemas/bundle-side.schema.json` does, at a
fraction of the validator's cost per entry (docs/bundle-format.md)."""

from __future__ import annotations

from rdmatool.bundle.manifest import finite_number, shown_value

_SIDE_TEXT = ("command", "stderr", "error", "qualifier", "started")
_EXIT_RANGE = range(-(2**31), 2**31)


def side_problem(side: dict) -> str | None:
    """What is wrong with a side file's values (one line, naming the key), None when they are usable."""
    for key in _SIDE_TEXT:
        value = side.get(key)
        if value is not None and not isinstance(value, str):
            return f"key {key!r}: expected a string or null, got {shown_value(value)}"
    code = side.get("exit_code")
    if isinstance(code, float) and code.is_integer():  # JSON Schema's integer: 0.0 is 0 (another writer's JSON)
        code = side["exit_code"] = int(code)
    if code is not None and (isinstance(code, bool) or not isinstance(code, int) or code not in _EXIT_RANGE):
        return f"key 'exit_code': expected an integer exit status or null, got {shown_value(code)}"
    duration = side.get("duration_s")
    if duration is not None and not finite_number(duration):
        return f"key 'duration_s': expected a number or null, got {shown_value(duration)}"
    return None
