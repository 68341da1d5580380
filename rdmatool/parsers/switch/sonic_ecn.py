"""SONiC `show ecn` / `ecnconfig -l`: WRED/ECN thresholds, marking probability and ECN mode per WRED profile.

Command: `show ecn` (= `ecnconfig -l`, also `-n asicN`, `-vv`).
Emits (entity = the WRED profile name, e.g. `AZURE_LOSSLESS`; priority None; raw_key = the field as printed):
  green, the colour RoCE traffic carries (no policer re-colours it), as the canonical values:
  `ecn_min_threshold_bytes` (`green_min_threshold`), `ecn_max_threshold_bytes` (`green_max_threshold`),
  `ecn_max_probability_pct` (`green_drop_probability`);
  `ecn_mode` (state, text `ecn_all` ...) and `ecn_enabled` (1 when the mode marks green: ecn_green,
  ecn_green_yellow, ecn_green_red, ecn_all; else 0) from the `ecn` field;
  every yellow/red field and every `wred_<colour>_enable` (true -> 1, false -> 0) as `wred_param` (gauge), the
  colour kept in raw_key (`yellow_max_threshold`).
  A failing tool (`Error: ...`) gives a `tool_error` sample on entity `host`.
Example:
    Profile: AZURE_LOSSLESS
    -----------------------  -------
    green_min_threshold      1048576
    ecn                      ecn_all
    -----------------------  -------
Caveats: field order is the DB's hash order and not stable; samples follow the input order. Profiles may carry
only some fields (each present field is emitted, nothing invented). The bold `**NAME**` of the published docs is
accepted; `Total profiles: N` (-vv) is skipped; an unknown field or a repeated one is a ParseError. Real-output
owner of ecn_show__*.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines
from rdmatool.parsers._samples import HOST, gauge, tool_error
from rdmatool.parsers.switch._sonic import PROMPT, is_dashes, is_tool_failure

NAME = "sonic_ecn"

_PROFILE = re.compile(r"^\s*Profile:\s+(?:\*\*(?P<bold>[^\s*]+)\*\*|(?P<plain>[^\s*]+))\s*$")
_FIELD = re.compile(r"^\s*(?P<key>[a-z_]+)\s+(?P<value>\S+)\s*$")
_TOTAL = re.compile(r"^\s*Total profiles:\s*\d+\s*$")
_GREEN = {
    "green_min_threshold": "ecn_min_threshold_bytes",
    "green_max_threshold": "ecn_max_threshold_bytes",
    "green_drop_probability": "ecn_max_probability_pct",
}
_OTHER_NUMERIC = {
    f"{colour}_{field}"
    for colour in ("yellow", "red")
    for field in ("min_threshold", "max_threshold", "drop_probability")
}
_ENABLE = {f"wred_{colour}_enable" for colour in ("green", "yellow", "red")}
_MODES_MARKING_GREEN = {"ecn_green", "ecn_green_yellow", "ecn_green_red", "ecn_all"}
_MODES = _MODES_MARKING_GREEN | {"ecn_none", "ecn_yellow", "ecn_red", "ecn_yellow_red"}


class _Profile:
    """Where we are inside one `Profile:` block: before its opening dashes, between them, or after."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.open = False
        self.closed = False
        self.seen: set[str] = set()


def parse(text: str) -> list[Sample]:
    samples: list[Sample] = []
    profile: _Profile | None = None
    seen_output = False
    for line_no, line in lines(text):
        if not line.strip() or PROMPT.match(line) or _TOTAL.match(line):
            continue
        if not seen_output and line.lstrip().startswith("#"):
            continue  # a collector's provenance comment above the output
        seen_output = True
        header = _PROFILE.match(line)
        if header:
            if profile is not None and profile.open and not profile.closed:
                raise ParseError(NAME, line_no, line, "new profile before the previous one's closing dashes")
            profile = _Profile(header.group("bold") or header.group("plain"))
            continue
        if is_dashes(line) and profile is not None and not profile.closed:
            profile.closed, profile.open = profile.open, True
            continue
        field = _FIELD.match(line)
        if field and profile is not None and profile.open and not profile.closed:
            samples.extend(_field(profile, line_no, line, field.group("key"), field.group("value")))
            continue
        if is_tool_failure(line):
            samples.append(tool_error(HOST, line.strip()))
            continue
        raise ParseError(NAME, line_no, line)
    return samples


def _field(profile: _Profile, line_no: int, line: str, key: str, value: str) -> list[Sample]:
    if key in profile.seen:
        raise ParseError(NAME, line_no, line, f"field {key!r} repeated in profile {profile.name}")
    profile.seen.add(key)
    name = profile.name
    if key in _GREEN:
        return [Sample(name, _GREEN[key], gauge(NAME, line_no, line, value), raw_key=key)]
    if key in _OTHER_NUMERIC:
        return [Sample(name, "wred_param", gauge(NAME, line_no, line, value), raw_key=key)]
    if key in _ENABLE:
        flag = {"true": 1, "false": 0, "n/a": None}.get(value.lower(), -1)
        if flag == -1:
            raise ParseError(NAME, line_no, line, f"expected true or false, got {value!r}")
        return [Sample(name, "wred_param", flag, raw_key=key)]
    if key == "ecn":
        if value not in _MODES:
            raise ParseError(NAME, line_no, line, f"unknown ECN mode {value!r}")
        return [
            Sample(name, "ecn_mode", None, text=value, raw_key=key),
            Sample(name, "ecn_enabled", int(value in _MODES_MARKING_GREEN), raw_key=key),
        ]
    raise ParseError(NAME, line_no, line, f"unknown WRED profile field {key!r}")
