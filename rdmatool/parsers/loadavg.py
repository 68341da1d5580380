"""`cat /proc/loadavg`: 1, 5 and 15 minute load averages.

Command: `cat /proc/loadavg` (the collector reads it on every host; storage and metadata nodes are judged on it).
Emits (entity `host`): `load1`, `load5`, `load15` (gauges).
Example:
    0.52 0.58 0.59 2/1107 2740921
Caveats: the runnable/total field and last PID are ignored; anything other than one such line is a ParseError.
An empty output (nothing, or white space only) is a ParseError, `empty output: cat /proc/loadavg printed nothing`, on
which `rdmatool parse` exits 2: /proc/loadavg always holds its one line, so an empty answer is missing data, not
"nothing wrong".
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines, refuse_empty
from rdmatool.parsers._samples import HOST

NAME = "loadavg"
_LINE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)(?:\s+\d+/\d+\s+\d+)?\s*$")


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "cat /proc/loadavg", text)
    samples: list[Sample] = []
    for line_no, line in lines(text):
        if not line.strip():
            continue
        match = _LINE.match(line)
        if not match or samples:
            raise ParseError(NAME, line_no, line)
        for metric, raw in zip(("load1", "load5", "load15"), match.groups()):
            samples.append(Sample(HOST, metric, float(raw), raw_key=metric))
    return samples
