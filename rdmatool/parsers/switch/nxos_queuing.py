"""Cisco NX-OS `show queuing interface`: per QoS-group egress packets, bytes, drops, ECN marks and per-CoS PFC counts.

Command: `show queuing interface ethernet1/1` (Nexus 9000 layout; several ports may follow each other; `| json` too).
Emits (entity = port, long form `Ethernet1/1`; priority = the QoS-group / queue index for queue counters, the CoS
for PFC counts): `tx_packets`, `tx_bytes`, `queue_drops` (WRED/AFD & Tail Drop Pkts), `ecn_marked_packets` (a row
whose label names ECN, Pkts) from the Unicast column; `tx_pause_frames` / `rx_pause_frames` per CoS (TxCount /
RxCount) and for all priorities (TxPPP / RxPPP, priority None); `rx_discards` (Ingress MMU / Overflow Drop Pkts).
Example:
    Egress Queuing for Ethernet1/1 [System]
    |                              QOS GROUP 3                                     |
    |                   Tx Pkts |           88211|               0|
    | WRED/AFD & Tail Drop Pkts |             412|               0|
    PFC Statistics
    TxPPP:                  100, RxPPP:                 2300
         3           3   Inactive                   100            Active                  2300
Caveats: layout per the Cisco Nexus 9000 Series NX-OS Quality of Service Configuration Guide (queuing and PFC
verification examples); no public verbatim capture exists. The Multicast column, the CONTROL and SPAN QoS groups and
the configuration tables (bandwidth, shape, pause thresholds) are recognised and not emitted. Box rows with other
labels (Q Depth Byts, WD & Tail Drop Pkts ...) are recognised and skipped; a row that is not a label with numeric cells
is a ParseError. JSON: rows of `TABLE_qosgrp_egress_stats` (`eq-qosgrp`, entries `eq-stat-type` / `eq-stat-units` /
`eq-uc-stat-value`) and of any table with `pfc-cos` (`pfc-tx-count`, `pfc-rx-count`) under a `TABLE_queuing_interface`
row naming the port (`if_name_str` / `eq-intf-name`). `N/A` cells become value None.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._samples import HOST, gauge, json_number, tool_error
from rdmatool.parsers.switch import _nxos
from rdmatool.parsers.switch._cli import cli_lines

NAME = "nxos_queuing"

_PORT = re.compile(r"^\s*(?:Egress|Ingress) Queuing for (\S+)(?:\s+\[\w+\])?\s*$", re.IGNORECASE)
_RULE = re.compile(r"^\s*[=\-+|]{5,}\s*$|^\s*\+[-+]+\+\s*$")
_GROUP = re.compile(r"^\s*\|\s*(?:(CONTROL|SPAN)\s+)?QOS GROUP(?:\s+(\d+))?\s*\|\s*$", re.IGNORECASE)
_COLUMNS = re.compile(r"^\s*\|\s*\|\s*Unicast\s*\|\s*Multicast\s*\|?\s*$", re.IGNORECASE)
_BOX_ROW = re.compile(r"^\s*\|\s*([A-Za-z][^|]*?)\s*\|\s*(\S+)\s*\|\s*(\S+)\s*\|?\s*$")
_PPP = re.compile(r"^\s*TxPPP:\s*(\S+),\s*RxPPP:\s*(\S+)\s*$", re.IGNORECASE)
_COS_ROW = re.compile(
    r"^\s*([0-7])\s+(\S+)\s+(Active|Inactive)\s+(\S+)\s+(Active|Inactive)\s+(\S+)\s*$", re.IGNORECASE
)
_CONFIG_ROW = re.compile(r"^\s*\d+(?:\s+[\w().%/\-]+)+\s*$")
_STAT_LINE = re.compile(r"^\s*([A-Za-z][\w /&().\-]*?)\s+(\S+)\s*$")
_NOISE = re.compile(
    r"^\s*(slot\s+\d+|QoS-Group#.*|Min\s+Max.*|Buff Size.*|Pause\s*$|Port Egress Statistics|"
    r"Per Port Ingress Statistics|Ingress Statistics|PFC Statistics|PFC_COS\s+QOS_Group.*|Legend:.*|"
    r"\(D\).*|Units.*)\s*$",
    re.IGNORECASE,
)

_BOX_LABELS = {"tx pkts": "tx_packets", "tx byts": "tx_bytes", "wred/afd & tail drop pkts": "queue_drops"}
_INGRESS_DROPS = ("ingress mmu drop pkts", "ingress overflow drop pkts")


def parse(text: str) -> list[Sample]:
    start = _nxos.json_start(text)
    if start is not None:
        return _parse_json(text, start)
    return _Reader().read(text)


class _Reader:
    """Walks the text once, remembering the current port and QoS group."""

    def __init__(self) -> None:
        self.samples: list[Sample] = []
        self.port: str | None = None
        self.group: int | None = None
        self.ingress_drop_seen: set[str] = set()

    def read(self, text: str) -> list[Sample]:
        for line_no, line, error in cli_lines(text, _nxos.cli_error):
            if error:
                self.samples.append(tool_error(HOST, error))
            elif not (self._structure(line) or self._data(line_no, line) or _nxos.is_echo(line)):
                raise ParseError(NAME, line_no, line)
        return self.samples

    def _structure(self, line: str) -> bool:
        port = _PORT.match(line)
        if port:
            self.port, self.group = _nxos.long_port(port.group(1)), None
            return True
        group = _GROUP.match(line)
        if group:  # CONTROL / SPAN groups carry no index: their rows are skipped
            self.group = int(group.group(2)) if group.group(2) and not group.group(1) else None
            return True
        return bool(_RULE.match(line) or _COLUMNS.match(line) or _NOISE.match(line))

    def _data(self, line_no: int, line: str) -> bool:
        box = _BOX_ROW.match(line)
        if box:
            self._box_row(line_no, line, box.group(1), box.group(2))
            return True
        ppp = _PPP.match(line)
        if ppp:
            port = self._need_port(line_no, line)
            self.samples.append(
                Sample(
                    port,
                    "tx_pause_frames",
                    gauge(NAME, line_no, line, ppp.group(1)),
                    raw_key="TxPPP",
                )
            )
            self.samples.append(
                Sample(
                    port,
                    "rx_pause_frames",
                    gauge(NAME, line_no, line, ppp.group(2)),
                    raw_key="RxPPP",
                )
            )
            return True
        cos = _COS_ROW.match(line)
        if cos:
            port, prio = self._need_port(line_no, line), int(cos.group(1))
            tx, rx = (gauge(NAME, line_no, line, cos.group(i)) for i in (4, 6))
            self.samples.append(Sample(port, "tx_pause_frames", tx, priority=prio, raw_key="TxCount"))
            self.samples.append(Sample(port, "rx_pause_frames", rx, priority=prio, raw_key="RxCount"))
            return True
        if _CONFIG_ROW.match(line):  # bandwidth / shaper / pause-threshold configuration rows
            return True
        stat = _STAT_LINE.match(line)
        if stat:
            self._stat_line(line_no, line, stat.group(1), stat.group(2))
            return True
        return False

    def _box_row(self, line_no: int, line: str, label: str, unicast: str) -> None:
        port = self._need_port(line_no, line)
        value = gauge(NAME, line_no, line, unicast)
        metric = _box_metric(label)
        if metric and self.group is not None:
            self.samples.append(
                Sample(port, metric, value, priority=self.group, raw_key=f"{label} (Unicast)")
            )

    def _stat_line(self, line_no: int, line: str, label: str, raw: str) -> None:
        value = gauge(NAME, line_no, line, raw)
        key = label.lower()
        port = self._need_port(line_no, line)
        if (
            key in _INGRESS_DROPS and port not in self.ingress_drop_seen
        ):  # MMU and Overflow name the same drops
            self.ingress_drop_seen.add(port)
            self.samples.append(Sample(port, "rx_discards", value, raw_key=label))

    def _need_port(self, line_no: int, line: str) -> str:
        if self.port is None:
            raise ParseError(
                NAME, line_no, line, "counter before any `Egress/Ingress Queuing for <port>` line"
            )
        return self.port


def _box_metric(label: str) -> str | None:
    key = " ".join(label.lower().split())
    if "ecn" in key and key.endswith("pkts"):
        return "ecn_marked_packets"
    return _BOX_LABELS.get(key)


def _parse_json(text: str, start: int) -> list[Sample]:
    line_no = start + 1
    document = _nxos.load_json(NAME, text, start)
    samples: list[Sample] = []
    interfaces = list(_nxos.table_rows(NAME, line_no, document, "queuing_interface")) or [document]
    for row in interfaces:
        name = _nxos.field(row, "if_name_str", "eq-intf-name", "interface", "ifname")
        if not isinstance(name, str):
            raise ParseError(NAME, line_no, str(row)[:120], "queuing row without an interface name")
        port = _nxos.long_port(name)
        samples.extend(_json_egress(line_no, port, row))
        samples.extend(_json_pfc(line_no, port, row))
    if not samples:
        raise ParseError(NAME, line_no, text.splitlines()[start], "no queuing counters in the JSON document")
    return samples


def _json_egress(line_no: int, port: str, row: dict) -> list[Sample]:
    out: list[Sample] = []
    for group_row in _nxos.table_rows(NAME, line_no, row, "qosgrp_egress_stats"):
        raw_group = group_row.get("eq-qosgrp")
        group = (
            int(raw_group)
            if isinstance(raw_group, (str, int)) and re.fullmatch(r"\s*[0-9]+\s*", str(raw_group))
            else None
        )
        if group is None:  # CONTROL / SPAN groups are named, not numbered
            continue
        for entry in _nxos.table_rows(NAME, line_no, group_row, "qosgrp_egress_stats_entry"):
            label = f"{entry.get('eq-stat-type', '')} {entry.get('eq-stat-units', '')}".strip()
            metric = _box_metric(label)
            if metric:
                value = json_number(NAME, line_no, "eq-uc-stat-value", entry.get("eq-uc-stat-value"))
                out.append(Sample(port, metric, value, priority=group, raw_key=f"{label} (Unicast)"))
    return out


def _json_pfc(line_no: int, port: str, row: dict) -> list[Sample]:
    out: list[Sample] = []
    for cos_row in _rows_with(row, "pfc-cos"):
        cos = json_number(NAME, line_no, "pfc-cos", cos_row["pfc-cos"])
        if not isinstance(cos, int) or not 0 <= cos <= 7:
            raise ParseError(NAME, line_no, f"pfc-cos: {cos_row['pfc-cos']!r}", "CoS must be 0-7")
        for metric, key in (("tx_pause_frames", "pfc-tx-count"), ("rx_pause_frames", "pfc-rx-count")):
            if key in cos_row:
                out.append(
                    Sample(
                        port,
                        metric,
                        json_number(NAME, line_no, key, cos_row[key]),
                        priority=cos,
                        raw_key=key,
                    )
                )
    return out


def _rows_with(node: object, key: str) -> list[dict]:
    found: list[dict] = []
    if isinstance(node, dict):
        if key in node:
            found.append(node)
        for value in node.values():
            found.extend(_rows_with(value, key))
    elif isinstance(node, list):
        for item in node:
            found.extend(_rows_with(item, key))
    return found
