"""`dcgmi dmon -e 203,204,250,252,1009,1010,1011,1012 -c 1`: one DCGM sample per GPU, PCIe and NVLink traffic included.

Command: `dcgmi dmon -e <FIELD_IDS> -c 1` (run when `dcgmi` is installed; it needs the DCGM host engine).
Emits (entity `gpu<id>`): `gpu_utilization_pct` (GPUTL, field 203), `gpu_memory_activity_pct` (MCUTL, 204),
`gpu_memory_total_bytes` (FBTTL, 250) and `gpu_memory_used_bytes` (FBUSD, 252; both converted from MiB),
`gpu_pcie_tx_bytes_rate` / `gpu_pcie_rx_bytes_rate` (PCITX / PCIRX, 1009 / 1010) and `gpu_nvlink_tx_bytes_rate` /
`gpu_nvlink_rx_bytes_rate` (NVLTX / NVLRX, 1011 / 1012), all gauges. Without a host engine (or without GPUs) one
`gpu_tool_unavailable` sample (entity `host`) carries the tool's message.
Example:
    #Entity   GPUTL  MCUTL  FBTTL  FBUSD  PCITX      PCIRX      NVLTX       NVLRX
    ID
    GPU 0     96     37     81559  70112  812000000  790000000  1.9e+10     1.9e+10
Caveats: the profiling fields (1009-1012) are rates DCGM averages over its own watch interval; a GPU that does not
support them prints `N/A`, which gives no sample. A column this parser does not know, or a row before the header,
is a ParseError: the field list is fixed in rdmatool.commands.
An empty output (nothing, or white space only) is a ParseError, `empty output: dcgmi dmon printed nothing`, on which
`rdmatool parse` exits 2: dcgmi dmon always prints its `#Entity` header when it succeeds, so an empty answer is
missing data, not "nothing wrong".
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines, refuse_empty
from rdmatool.parsers._samples import HOST, gauge

NAME = "dcgmi_dmon"
# DCGM field id → (the column dmon prints, the metric)
FIELDS: dict[int, tuple[str, str]] = {
    203: ("GPUTL", "gpu_utilization_pct"),
    204: ("MCUTL", "gpu_memory_activity_pct"),
    250: ("FBTTL", "gpu_memory_total_bytes"),
    252: ("FBUSD", "gpu_memory_used_bytes"),
    1009: ("PCITX", "gpu_pcie_tx_bytes_rate"),
    1010: ("PCIRX", "gpu_pcie_rx_bytes_rate"),
    1011: ("NVLTX", "gpu_nvlink_tx_bytes_rate"),
    1012: ("NVLRX", "gpu_nvlink_rx_bytes_rate"),
}
FIELD_IDS = ",".join(str(f) for f in FIELDS)
_COLUMNS = {column: metric for column, metric in FIELDS.values()}
_MIB = 1024 * 1024
_MIB_METRICS = frozenset({"gpu_memory_total_bytes", "gpu_memory_used_bytes"})
_NA = frozenset({"n/a", "na", "-", ""})
_HEADER = re.compile(r"^\s*#\s*Entity\s+(.*)$", re.IGNORECASE)
_ID_LINE = re.compile(r"^\s*ID\s*$", re.IGNORECASE)
_ROW = re.compile(r"^\s*GPU\s+(\d+)\s+(.*)$")
# The host engine is not running, or sees no GPU: a monitoring gap, said in the tool's words.
_UNAVAILABLE = re.compile(r"^\s*Error\b|unable to (?:establish a connection|connect)|host engine|no gpus? found",
                          re.IGNORECASE)


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "dcgmi dmon", text)
    samples: list[Sample] = []
    columns: list[str] | None = None
    unavailable: list[str] = []
    for line_no, line in lines(text):
        if not line.strip() or _ID_LINE.match(line):
            continue
        header = _HEADER.match(line)
        if header:
            columns = header.group(1).split()
            unknown = [c for c in columns if c not in _COLUMNS]
            if unknown:
                raise ParseError(NAME, line_no, line, f"unknown dmon column {unknown[0]!r}")
            continue
        row = _ROW.match(line)
        if row and columns is not None:
            values = row.group(2).split()
            if len(values) != len(columns):
                raise ParseError(NAME, line_no, line, f"expected {len(columns)} values, got {len(values)}")
            entity = f"gpu{int(row.group(1))}"
            for column, raw in zip(columns, values):
                metric = _COLUMNS[column]
                value = gauge(NAME, line_no, line, raw, na=_NA)
                if value is None:
                    continue
                if metric in _MIB_METRICS:
                    value = int(value * _MIB)
                samples.append(Sample(entity, metric, value, raw_key=column))
            continue
        if _UNAVAILABLE.search(line) and not samples:
            unavailable.append(line.strip())
            continue
        raise ParseError(NAME, line_no, line)
    if unavailable and not samples:
        samples.append(Sample(HOST, "gpu_tool_unavailable", text=" ".join(unavailable), raw_key="dcgmi"))
    return samples
