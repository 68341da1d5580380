"""`grep -H . /proc/pressure/*`: Linux pressure stall information (CPU, memory, I/O, IRQ) of the host.

Command: `grep -H . /proc/pressure/*` (storage and metadata nodes are judged on it, beside loadavg).
Emits (entity `host`): `psi_<resource>_<some|full>_avg10`, `_avg60`, `_avg300` (gauges, % of wall time) and
`psi_<resource>_<some|full>_total_us` (counter, microseconds), for resource io, cpu, memory and irq (full only).
raw_key is the field as printed with its line kind (`some avg10`, `full total`).
Example:
    /proc/pressure/io:some avg10=0.00 avg60=0.12 avg300=0.05 total=123456
    /proc/pressure/io:full avg10=0.00 avg60=0.10 avg300=0.04 total=98765
Caveats: the resource comes from the file name, so the un-prefixed form (`cat /proc/pressure/io`) is accepted only
when a `==> /proc/pressure/io <==` header (from `head`/`tail` over several files) names it; a bare `some avg10=...`
line is otherwise ambiguous and a ParseError. Any path ending in `pressure/<resource>` is accepted (e.g. a
container's `/host/proc/pressure/io`). `N/A` gives value None. A kernel without PSI makes grep say
`grep: /proc/pressure/*: No such file or directory` (or `Operation not supported` when booted with psi=0): that
becomes a `tool_error` sample. `#` comment lines are skipped.
An empty output (nothing, or white space only) is a ParseError, `empty output: grep printed nothing`, on which
`rdmatool parse` exits 2: the kernel's pressure files always hold lines, and a grep that matched nothing exits 1, an
output a collection records but does not parse, so an empty answer is missing data, not "nothing wrong".
"""

from __future__ import annotations

import math
import re

from rdmatool import metrics
from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import refuse_empty
from rdmatool.parsers._samples import HOST, counter, gauge
from rdmatool.parsers._sysfs import read_files

NAME = "psi"

_RESOURCE_PATH = r"(?:\S*/)?pressure/(?P<resource>[a-z]+)"
_PREFIXED = re.compile(rf"^\s*{_RESOURCE_PATH}:(?P<body>.*)$")
_HEAD_BANNER = re.compile(rf"^\s*==>\s*{_RESOURCE_PATH}\s*<==\s*$")
_BODY = re.compile(
    r"^\s*(?P<kind>some|full)\s+avg10=(?P<avg10>\S+)\s+avg60=(?P<avg60>\S+)\s+avg300=(?P<avg300>\S+)"
    r"\s+total=(?P<total>\S+)\s*$"
)
_FIELDS = ("avg10", "avg60", "avg300", "total")


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "grep", text)
    banner_resource: str | None = None  # set by a `==> /proc/pressure/io <==` header

    def pressure(line_no: int, line: str) -> list[Sample] | None:
        nonlocal banner_resource
        banner = _HEAD_BANNER.match(line)
        if banner is not None:
            banner_resource = banner["resource"]
            return []
        prefixed = _PREFIXED.match(line)
        if prefixed is not None:
            return _pressure_line(prefixed["resource"], prefixed["body"], line_no, line)
        if _BODY.match(line):
            if banner_resource is None:
                raise ParseError(
                    NAME, line_no, line, "PSI line without /proc/pressure/<resource>: use grep -H"
                )
            return _pressure_line(banner_resource, line, line_no, line)
        return None

    return read_files(NAME, text, read_line=pressure, unknown="unrecognised line")


def _pressure_line(resource: str, body: str, line_no: int, line: str) -> list[Sample]:
    match = _BODY.match(body)
    if match is None:
        raise ParseError(NAME, line_no, line, "expected `some|full avg10=.. avg60=.. avg300=.. total=..`")
    kind = match["kind"]
    samples = []
    for field in _FIELDS:
        metric = f"psi_{resource}_{kind}_{field}" + ("_us" if field == "total" else "")
        if not metrics.is_known(metric):
            raise ParseError(NAME, line_no, line, f"unknown PSI resource/kind {resource} {kind}")
        if field == "total":
            value = counter(NAME, line_no, line, match[field], fraction="total must be a whole number of microseconds")
        else:
            value = gauge(NAME, line_no, line, match[field])
        if isinstance(value, float) and not math.isfinite(value):
            raise ParseError(NAME, line_no, line, f"{field} is not a finite number")
        samples.append(Sample(HOST, metric, value, raw_key=f"{kind} {field}"))
    return samples
