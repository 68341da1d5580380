"""`rocm-smi --showuse --showmemuse --json`: each AMD GPU's utilisation and memory use.

Command: `rocm-smi --showuse --showmemuse --json` (run when `rocm-smi` is installed).
Emits (entity `gpu<N>` for `cardN`): `gpu_utilization_pct` ("GPU use (%)"), `gpu_memory_activity_pct` ("GPU
memory use (%)" of ROCm before 5.x, which reads the memory controller's busy share, or "GPU Memory Read/Write
Activity (%)"), `gpu_memory_used_pct` ("GPU Memory Allocated (VRAM%)"); gauges, in percent. A host where the tool
finds no AMD GPU (`No AMD GPUs specified`, an empty document) gives `gpu_tool_unavailable` (entity `host`).
Example:
    {"card0": {"GPU use (%)": "91", "GPU Memory Allocated (VRAM%)": "78",
               "GPU Memory Read/Write Activity (%)": "33", "Memory Activity": "N/A"}}
Caveats: values come as strings; `N/A` gives no sample. Keys rocm-smi adds that carry no utilisation ("Memory
Activity", "Avg. Memory Bandwidth", the card's identity) are read as known and skipped; any other key, or a
document that is not an object of `cardN` objects, is a ParseError. Lines before the JSON (the `WARNING:` lines
some versions print) are skipped and counted.
An empty output (nothing, or white space only) is a ParseError, `empty output: rocm-smi printed nothing`, on which
`rdmatool parse` exits 2: rocm-smi always prints its JSON document when it succeeds, so an empty answer is missing
data, not "nothing wrong".
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import Noise, lines, load_json, refuse_empty
from rdmatool.parsers._samples import HOST, gauge

NAME = "rocm_smi"
KEYS = {
    "GPU use (%)": "gpu_utilization_pct",
    "GPU memory use (%)": "gpu_memory_activity_pct",
    "GPU Memory Read/Write Activity (%)": "gpu_memory_activity_pct",
    "GPU Memory Allocated (VRAM%)": "gpu_memory_used_pct",
}
# Known keys without a utilisation figure: read, not turned into samples.
_SKIPPED = frozenset({"Memory Activity", "Avg. Memory Bandwidth", "GFX Activity", "Card Series", "Card Model",
                      "Card Vendor", "Card SKU", "Subsystem ID", "Device Rev", "Node ID", "GUID", "GFX Version",
                      "Device Name", "Device ID", "Card series", "Card model", "Card vendor"})
_CARD = re.compile(r"card(\d+)")
_UNAVAILABLE = re.compile(r"no amd gpus|no gpus? (?:found|specified)|unable to find|amdgpu.*not (?:loaded|found)",
                          re.IGNORECASE)


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "rocm-smi", text)
    noise = Noise()
    kept: list[tuple[int, str]] = []
    unavailable: list[str] = []
    for line_no, line in lines(text):
        if not kept and not line.lstrip().startswith("{"):
            if _UNAVAILABLE.search(line):
                unavailable.append(line.strip())
            elif line.strip():
                noise.skip("log")
            continue
        kept.append((line_no, line))
    if not kept:
        if unavailable:
            return [Sample(HOST, "gpu_tool_unavailable", text=" ".join(unavailable), raw_key="rocm-smi"),
                    *noise.samples()]
        return noise.samples()
    document = load_json(NAME, kept)
    first_no, first_line = kept[0]
    if not isinstance(document, dict):
        raise ParseError(NAME, first_no, first_line, "expected a JSON object of cards")
    samples: list[Sample] = []
    for card, fields in document.items():
        if card == "system":
            continue
        number = _CARD.fullmatch(str(card))
        if number is None or not isinstance(fields, dict):
            raise ParseError(NAME, first_no, first_line, f"expected cardN: {{...}}, got {card!r}")
        entity = f"gpu{int(number.group(1))}"
        for key, raw in fields.items():
            if key in _SKIPPED:
                continue
            metric = KEYS.get(key)
            if metric is None:
                raise ParseError(NAME, first_no, first_line, f"unknown rocm-smi key {key!r} of {card}")
            value = gauge(NAME, first_no, first_line, raw)
            if value is not None:
                samples.append(Sample(entity, metric, value, raw_key=key))
    if not samples and not document:
        samples.append(Sample(HOST, "gpu_tool_unavailable", text="rocm-smi found no AMD GPU", raw_key="rocm-smi"))
    return [*samples, *noise.samples()]
