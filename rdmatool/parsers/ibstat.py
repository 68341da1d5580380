"""`ibstat`: every channel adapter and port — state, physical state, rate, link layer, firmware, LIDs, GUIDs.

Command: `ibstat` (also `ibstat mlx5_0`, `ibstat mlx5_0 1`; infiniband-diags).
Emits: per CA on entity `mlx5_0`: `ca_type`, `fw_version`, `hw_version`, `node_guid`, `sys_image_guid` (text) and
`num_ports` (gauge). Per port on entity `mlx5_0/1`: `port_state`, `phys_state`, `link_layer`, `capability_mask`,
`port_guid` (text, as printed) and `link_rate_gbps`, `base_lid`, `lmc`, `sm_lid` (gauges). raw_key is ibstat's
field name (`Rate`, `Base lid` ...). An `ibpanic: ...` line (or another tool failure) adds a `tool_error` sample on
entity `host` after the CAs already printed.
Example:
    CA 'mlx5_0'
            CA type: MT4129
            Firmware version: 28.39.1002
            Port 1:
                    State: Active
                    Physical state: LinkUp
                    Rate: 400
                    Link layer: InfiniBand
Caveats: ibstat prints the rate as a bare number (width x lane speed), so a width or speed downgrade shows only as
a lower rate (56 on an EDR card, 200 on an NDR card); if a rate is printed in the sysfs form `25 Gb/sec (1X EDR)`
it is split into link_width / link_width_lanes / link_speed as well. Rate and LIDs of a port that is not Active
are defaults, not readings. `N/A` or empty values are emitted with value/text None. Indentation is not relied on
(tabs, spaces or none): field names tell CA fields from port fields. Skipped: blank lines, `#` comments, the (prompted)
command line that ran ibstat, libibverbs/ibwarn warnings. An unknown field name is a ParseError.
An empty output (nothing, or white space only) is a ParseError, `empty output: ibstat printed nothing`, on which
`rdmatool parse` exits 2: ibstat prints a block for every channel adapter when it succeeds, so an empty answer is
missing data, not "nothing wrong".
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import refuse_empty
from rdmatool.parsers._ibinfo import Collector, content_lines, rate_text_samples
from rdmatool.parsers._samples import NA_TEXT, gauge, text

NAME = "ibstat"

_CA = re.compile(r"^\s*CA\s+'([^']+)'\s*$")
_PORT = re.compile(r"^\s*Port\s+(\d+)\s*:\s*$")
_FIELD = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?)\s*:\s*(.*?)\s*$")

# ibstat field name (lower case) -> (metric, is_numeric)
_CA_FIELDS = {
    "ca type": ("ca_type", False),
    "number of ports": ("num_ports", True),
    "firmware version": ("fw_version", False),
    "hardware version": ("hw_version", False),
    "node guid": ("node_guid", False),
    "system image guid": ("sys_image_guid", False),
}
_PORT_FIELDS = {
    "state": ("port_state", False),
    "physical state": ("phys_state", False),
    "rate": ("link_rate_gbps", True),
    "base lid": ("base_lid", True),
    "lmc": ("lmc", True),
    "sm lid": ("sm_lid", True),
    "capability mask": ("capability_mask", False),
    "port guid": ("port_guid", False),
    "link layer": ("link_layer", False),
}


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "ibstat", text)
    out = Collector(NAME)
    ca: str | None = None
    port: str | None = None
    for line_no, line in content_lines(text, "ibstat", out):
        if match := _CA.match(line):
            ca, port = match.group(1), None
            continue
        if ca is None:
            raise ParseError(NAME, line_no, line, "expected CA '<name>'")
        if match := _PORT.match(line):
            port = f"{ca}/{int(match.group(1))}"
            continue
        match = _FIELD.match(line)
        if not match:
            raise ParseError(NAME, line_no, line)
        out.extend(_field_samples(ca, port, match.group(1), match.group(2), line_no, line), line_no, line)
    return out.samples


def _field_samples(ca: str, port: str | None, key: str, raw: str, line_no: int, line: str) -> list[Sample]:
    name = key.lower()
    if name in _CA_FIELDS:
        entity, (metric, numeric) = ca, _CA_FIELDS[name]
    elif name in _PORT_FIELDS:
        if port is None:
            raise ParseError(NAME, line_no, line, f"port field {key!r} before any 'Port N:'")
        entity, (metric, numeric) = port, _PORT_FIELDS[name]
    else:
        raise ParseError(NAME, line_no, line, f"unknown ibstat field {key!r}")
    if metric == "link_rate_gbps":
        # Some builds print the sysfs spelling; it carries the width, so keep it.
        spelled = rate_text_samples(entity, raw, key)
        if spelled is not None:
            return spelled
    if numeric:
        return [Sample(entity, metric, gauge(NAME, line_no, line, raw, NA_TEXT), raw_key=key)]
    return [Sample(entity, metric, text=text(NAME, line_no, line, raw, NA_TEXT), raw_key=key)]
