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
document that is not an object of `cardN` objects, is a ParseError. The memory pool sizes `--showmeminfo` adds
("VRAM Total Memory (B)", "VRAM Total Used Memory (B)", their VIS_VRAM and GTT twins) are recognised: without the
"GPU Memory Allocated (VRAM%)" key, VRAM used / total gives `gpu_memory_used_pct` (raw_key the used key), and
GPU use is read as ever. Lines before the JSON (the `WARNING:` lines some versions print) are skipped and
counted. The plain text form (the `ROCm System Management Interface` table, `GPU[0] : GPU use (%): 91` lines) is
a ParseError on its first line naming the missing `--json`, and so is an output of warnings alone: neither gives
a reading, and an exit 0 with nothing would read as an idle GPU.
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
# `--showmeminfo vram|vis_vram|gtt` adds the pool sizes in bytes: recognised; VRAM's give the used share when the
# VRAM% key is absent.
_MEMINFO = re.compile(r"(?:VRAM|VIS_VRAM|GTT) Total (?:Used )?Memory \(B\)")
_VRAM_TOTAL, _VRAM_USED = "VRAM Total Memory (B)", "VRAM Total Used Memory (B)"
_CARD = re.compile(r"card(\d+)")
_TEXT_FORM = re.compile(r"ROCm System Management Interface|^GPU\[\d+\]", re.MULTILINE)
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
        raise _without_json(text)
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
        samples.extend(_card(f"gpu{int(number.group(1))}", card, fields, first_no, first_line))
    if not samples and not document:
        samples.append(Sample(HOST, "gpu_tool_unavailable", text="rocm-smi found no AMD GPU", raw_key="rocm-smi"))
    return [*samples, *noise.samples()]


def _card(entity: str, card: str, fields: dict, line_no: int, line: str) -> list[Sample]:
    samples: list[Sample] = []
    for key, raw in fields.items():
        if key in _SKIPPED or _MEMINFO.fullmatch(key):
            continue
        metric = KEYS.get(key)
        if metric is None:
            raise ParseError(NAME, line_no, line, f"unknown rocm-smi key {key!r} of {card}")
        value = gauge(NAME, line_no, line, raw)
        if value is not None:
            samples.append(Sample(entity, metric, value, raw_key=key))
    if "GPU Memory Allocated (VRAM%)" not in fields and _VRAM_TOTAL in fields and _VRAM_USED in fields:
        total = gauge(NAME, line_no, line, fields[_VRAM_TOTAL])
        used = gauge(NAME, line_no, line, fields[_VRAM_USED])
        if total and used is not None:
            samples.append(Sample(entity, "gpu_memory_used_pct", round(used * 100 / total, 2), raw_key=_VRAM_USED))
    return samples


def _without_json(text: str) -> ParseError:
    """The error for an output with no JSON document and no "no GPU" message: the text form (a table,
    `GPU[0] : GPU use (%): 91` lines) or warnings alone. Nothing was read, and an exit 0 with nothing would read
    as an idle GPU. Named at the first non-blank line (the text is not blank: `refuse_empty` ran)."""
    line_no, line = next((n, line) for n, line in lines(text) if line.strip())
    if _TEXT_FORM.search(text):
        return ParseError(NAME, line_no, line, "rocm-smi printed its text table, not JSON (run it with --json)")
    return ParseError(NAME, line_no, line, "no rocm-smi JSON document in the output")
