"""`ibstatus`: per-port state, physical state, rate with link width and speed, LIDs and default GID.

Command: `ibstatus` (also `ibstatus mlx5_0`, `ibstatus mlx5_0:1`; infiniband-diags script over sysfs).
Emits (entity `mlx5_0/1` from the `Infiniband device 'mlx5_0' port 1 status:` header): `port_state` and `phys_state`
(text, canonical names: `4: ACTIVE` -> `Active`, `5: LinkUp` -> `LinkUp`), `link_rate_gbps`, `link_width` (`4X`),
`link_width_lanes` (4) and `link_speed` (`HDR`) from `rate`, `base_lid` and `sm_lid` (gauges, from hex), `gid` (text,
the default GID = table index 0; raw_key `default gid`) and `link_layer`. raw_key is ibstatus's own field name.
Example:
    Infiniband device 'mlx5_0' port 1 status:
            default gid:     fe80:0000:0000:0000:0015:5dff:fd34:11eb
            base lid:        0x33bf
            sm lid:          0x1
            state:           4: ACTIVE
            phys state:      5: LinkUp
            rate:            200 Gb/sec (4X HDR)
            link_layer:      InfiniBand
Caveats: rate is width x lane speed, so a lane failure shows as `1X`/`2X` and a speed downgrade as a lower
generation; on SDR old kernels print no speed name (`10 Gb/sec (4X)`) and link_speed is then not emitted. Rate and
LIDs of a port that is not Active are defaults. `default gid: unknown`, `N/A` or empty values are emitted with
value/text None. Older ibstatus without `link_layer` is fine. Skipped: blank lines, `#` comments, the (prompted)
command line that ran ibstatus, libibverbs/ibwarn warnings. An unknown field name is a ParseError.
An empty output (nothing, or white space only) is a ParseError, `empty output: ibstatus printed nothing`, on which
`rdmatool parse` exits 2: ibstatus prints a block for every port when it succeeds, so an empty answer is missing
data, not "nothing wrong".
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import refuse_empty
from rdmatool.parsers._ibinfo import PHYS_STATES, PORT_STATES, Collector, content_lines, rate_text_samples
from rdmatool.parsers._samples import NA_TEXT, gauge, state, text

NAME = "ibstatus"

_HEADER = re.compile(r"^\s*Infiniband device\s+'([^']+)'\s+port\s+(\d+)\s+status:\s*$", re.IGNORECASE)
_FIELD = re.compile(r"^\s*([A-Za-z][A-Za-z _]*?)\s*:\s*(.*?)\s*$")


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "ibstatus", text)
    out = Collector(NAME)
    entity: str | None = None
    for line_no, line in content_lines(text, "ibstatus", out):
        if match := _HEADER.match(line):
            entity = f"{match.group(1)}/{int(match.group(2))}"
            continue
        match = _FIELD.match(line)
        if not match:
            raise ParseError(NAME, line_no, line)
        if entity is None:
            raise ParseError(NAME, line_no, line, "field before any 'Infiniband device ... status:' header")
        out.extend(_field_samples(entity, match.group(1), match.group(2), line_no, line), line_no, line)
    return out.samples


def _field_samples(entity: str, key: str, raw: str, line_no: int, line: str) -> list[Sample]:
    name = key.lower()
    if name == "default gid":
        gid = text(NAME, line_no, line, raw, NA_TEXT)
        return [Sample(entity, "gid", text=None if gid and gid.lower() == "unknown" else gid, raw_key=key)]
    if name in ("base lid", "sm lid"):
        metric = "base_lid" if name == "base lid" else "sm_lid"
        return [Sample(entity, metric, gauge(NAME, line_no, line, raw, NA_TEXT), raw_key=key)]
    if name == "state":
        return [Sample(entity, "port_state", text=state(raw, PORT_STATES), raw_key=key)]
    if name == "phys state":
        return [Sample(entity, "phys_state", text=state(raw, PHYS_STATES), raw_key=key)]
    if name in ("link_layer", "link layer"):
        return [Sample(entity, "link_layer", text=text(NAME, line_no, line, raw, NA_TEXT), raw_key=key)]
    if name == "rate":
        return _rate_samples(entity, key, raw, line_no, line)
    raise ParseError(NAME, line_no, line, f"unknown ibstatus field {key!r}")


def _rate_samples(entity: str, key: str, raw: str, line_no: int, line: str) -> list[Sample]:
    spelled = rate_text_samples(entity, raw, key)
    if spelled is not None:
        return spelled
    # A bare number or N/A still says something; anything else is not a rate.
    return [Sample(entity, "link_rate_gbps", gauge(NAME, line_no, line, raw, NA_TEXT), raw_key=key)]
