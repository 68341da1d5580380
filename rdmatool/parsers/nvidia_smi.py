"""`nvidia-smi --query-gpu=... --format=csv,noheader,nounits`: each NVIDIA GPU's utilisation, memory and PCIe link.

Command: `nvidia-smi --query-gpu=index,uuid,name,utilization.gpu,utilization.memory,memory.used,memory.total,
pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max --format=csv,noheader,nounits`
(`QUERY_FIELDS` below; rdmatool.commands runs it in both snapshots, so the triage averages two readings).
Emits (entity `gpu<index>`): `gpu_uuid`, `gpu_model` (states); `gpu_utilization_pct`, `gpu_memory_activity_pct`
(gauges, %); `gpu_memory_used_bytes`, `gpu_memory_total_bytes` (gauges, converted from MiB);
`gpu_pcie_link_gen`, `gpu_pcie_link_gen_max`, `gpu_pcie_link_width_lanes`, `gpu_pcie_link_width_max_lanes`.
A host whose GPUs the tool cannot read (`No devices were found`, the driver not loaded) gives one
`gpu_tool_unavailable` sample (entity `host`) with the tool's message: a monitoring gap, not a tool failure.
Example:
    0, GPU-5b1a8e3c-7d2f-4c91-9a0e-2f6b1c4d8e70, NVIDIA H100 80GB HBM3, 97, 38, 71023, 81559, 5, 5, 16, 16
Caveats: `utilization.gpu` is the share of the last sample period (1/6 s to 1 s, per product) in which a kernel
ran, an instant reading, not an average over the collection window. `[N/A]` and `[Not Supported]` give no sample.
The PCIe generation drops at idle to save power: compare it with the maximum only on a busy GPU. A line with
another number of fields than asked for is a ParseError (the tool's field list changed).
An empty output (nothing, or white space only) is a ParseError, `empty output: nvidia-smi printed nothing`, on which
`rdmatool parse` exits 2: nvidia-smi prints a line per GPU, or why it cannot (`No devices were found`), so an empty
answer is missing data, not "nothing wrong".
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines, refuse_empty
from rdmatool.parsers._samples import HOST, gauge

NAME = "nvidia_smi"
# The fields asked for, in order, and the metric each becomes (None: the entity, not a sample).
QUERY_FIELDS: tuple[tuple[str, str | None], ...] = (
    ("index", None),
    ("uuid", "gpu_uuid"),
    ("name", "gpu_model"),
    ("utilization.gpu", "gpu_utilization_pct"),
    ("utilization.memory", "gpu_memory_activity_pct"),
    ("memory.used", "gpu_memory_used_bytes"),
    ("memory.total", "gpu_memory_total_bytes"),
    ("pcie.link.gen.current", "gpu_pcie_link_gen"),
    ("pcie.link.gen.max", "gpu_pcie_link_gen_max"),
    ("pcie.link.width.current", "gpu_pcie_link_width_lanes"),
    ("pcie.link.width.max", "gpu_pcie_link_width_max_lanes"),
)
QUERY = ",".join(name for name, _ in QUERY_FIELDS)
_TEXT = frozenset({"gpu_uuid", "gpu_model"})
_MIB = 1024 * 1024
_NA = frozenset({"[n/a]", "[not supported]", "n/a", "[unknown error]", "[insufficient permissions]", ""})
# What nvidia-smi prints when it cannot read any GPU: no GPU on the host, or the driver not loaded.
_UNAVAILABLE = re.compile(
    r"no devices were found|nvidia-smi has failed|couldn'?t communicate with the nvidia driver|"
    r"driver/library version mismatch|unable to determine the device handle", re.IGNORECASE)


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "nvidia-smi", text)
    samples: list[Sample] = []
    unavailable: list[str] = []
    for line_no, line in lines(text):
        if not line.strip():
            continue
        if _UNAVAILABLE.search(line):
            unavailable.append(line.strip())
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != len(QUERY_FIELDS):
            raise ParseError(NAME, line_no, line, f"expected {len(QUERY_FIELDS)} comma-separated fields "
                                                  f"({QUERY}), got {len(fields)}")
        if not fields[0].isdigit():
            raise ParseError(NAME, line_no, line, f"expected a GPU index, got {fields[0]!r}")
        entity = f"gpu{int(fields[0])}"
        for (raw_key, metric), raw in zip(QUERY_FIELDS[1:], fields[1:]):
            if raw.lower() in _NA:
                continue
            if metric in _TEXT:
                samples.append(Sample(entity, metric, text=raw, raw_key=raw_key))
                continue
            value = gauge(NAME, line_no, line, raw, na=_NA)
            if value is not None and metric.endswith("_bytes"):
                value = int(value * _MIB)
            samples.append(Sample(entity, metric, value, raw_key=raw_key))
    if unavailable and not samples:
        samples.append(Sample(HOST, "gpu_tool_unavailable", text=" ".join(unavailable), raw_key="nvidia-smi"))
    return samples
