"""Cumulus NVUE combined QoS counters of one port: ingress buffer, egress queue, PFC and port sections.

Command: `nv show interface <if> counters qos [-o json]` (Cumulus Linux >= 5.5), which prints the four views of
`cumulus_ingress_buffer`, `cumulus_egress_queue`, `cumulus_pfc_stats` and `cumulus_port_stats` as `====`-underlined
sections with 4-space-indented tables.
Emits exactly what those four parsers emit for their section (entity `port`, a placeholder the analysis replaces
by the real port such as `swp1`; priority = priority group / traffic class / switch priority as documented there).
Example:
    PFC Statistics
    =================
        switch-priority  rx-pause-frames  rx-pause-duration  tx-pause-frames  tx-pause-duration
        ---------------  ---------------  -----------------  ---------------  -----------------
        3                1207             38112              0                0
Caveats: the `Qos Port Statistics` section spells its rows `ecn-marked-packets` (the stand-alone command prints
`ECN Marked Packets`); both are read. A section may be missing (the docs' copy starts at Egress Queue Statistics
and ends with a `...` truncation marker, which is skipped); an unknown section title is a ParseError. `-o json` is
read as `{"ingress-buffer-stats": {...}, "egress-queue-stats": {...}, "pfc-stats": {...}, "port-stats": {...}}`,
each holding the JSON form of that view (NVUE object schema; no public JSON sample exists).
"""

from __future__ import annotations

from collections.abc import Callable

from rdmatool.model import Sample
from rdmatool.parsers.switch import _cumulus as nv
from rdmatool.parsers.switch import _cumulus_views as views
from rdmatool.parsers.switch import (
    cumulus_egress_queue,
    cumulus_ingress_buffer,
    cumulus_pfc_stats,
    cumulus_port_stats,
)

NAME = "cumulus_counters_qos"
SECTIONS: dict[str, Callable[[str, list[nv.Line]], list[Sample]]] = {
    "ingress buffer statistics": cumulus_ingress_buffer.table_samples,
    "egress queue statistics": cumulus_egress_queue.table_samples,
    "pfc statistics": cumulus_pfc_stats.table_samples,
    "qos port statistics": cumulus_port_stats.table_samples,
}


def _json_samples(document: object, locate: Callable[[str], nv.Line]) -> list[Sample]:
    top = nv.json_object(NAME, locate(""), document, "the counters")
    samples: list[Sample] = []
    for key, view in top.items():
        if key == "port-stats":
            samples.extend(views.direction_json(NAME, view, locate, cumulus_port_stats.COUNTERS))
            continue
        columns = {
            "ingress-buffer-stats": cumulus_ingress_buffer.COLUMNS,
            "egress-queue-stats": cumulus_egress_queue.COLUMNS,
            "pfc-stats": cumulus_pfc_stats.COLUMNS,
        }.get(key)
        if columns is None:
            raise nv.fail(NAME, locate(str(key)), f"unknown section {key!r}")
        samples.extend(views.indexed_json(NAME, view, locate, columns))
    return samples


def parse(text: str) -> list[Sample]:
    output = nv.read_output(text)
    samples: list[Sample] = []
    if output.lines and nv.is_json(output):
        samples = _json_samples(*nv.load_json(NAME, output))
    else:
        for section in nv.split_sections(output.lines):
            if section.title is None or section.title_line is None:
                raise nv.fail(NAME, section.body[0], "expected a section title underlined with `=`")
            reader = SECTIONS.get(section.title.lower())
            if reader is None:
                raise nv.fail(NAME, section.title_line, "unknown section")
            if not section.body:
                raise nv.fail(NAME, section.title_line, "section without a table")
            samples.extend(reader(NAME, section.body))
    return nv.with_tool_error(samples, output, nv.PORT)
