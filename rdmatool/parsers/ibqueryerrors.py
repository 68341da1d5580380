"""`ibqueryerrors`: the error counters (and with `--data` the data counters) of every port of the subnet, read from
one host through the ports' performance-management agents, switches included.

Command: `ibqueryerrors` with `--data`, `--details` (the receive-error and transmit-discard breakdowns), `-r` (each
port's link, as iblinkinfo prints it) or `--counters` (data counters only, `Data Counters for ...` blocks). It prints
only ports with a counter above its threshold (`-T FILE`; none given: above 0). Emits per port (entity
`<node description>/<port>`, named as iblinkinfo names ports; `<description>/ALL` for the `port ALL` line of a
switch that sums its ports itself, `<description>/0` for an enhanced switch port 0; a description a second node
shares gets a GUID, `<description> (0x...)/<port>`, see rdmatool.parsers._ibsubnet): `ib_port_guid` (the GUID the
line prints) and each `[Name == value]` under its canonical name (`symbol_errors`, `link_downed`, `port_xmit_wait`,
`port_xmit_data_bytes` (x4: 4-octet words) ... as perfquery's; raw_key the printed name, current or legacy OFED
spelling); a `counter_saturated` sample (text = the metric) beside a count pinned at the maximum of its field: an
error count printed without the `(13.673G)` human form comes from the narrow PortCounters field (16, 8 or 4 bits),
one printed with it from the 64-bit extended one; data counters are 32-bit unless the line also carries the unicast
and multicast ones (PortCountersExtended). `Link info` lines (`-r`) add `ib_link_state`, `ib_link_phys_state`,
`ib_link_rate_gbps`, `ib_link_neighbor`, `ib_link_neighbor_guid`, `ib_link_capable` as iblinkinfo gives them. The
summary gives `ib_nodes_checked`, `ib_bad_nodes`, `ib_ports_checked`, `ib_bad_ports`, `pma_query_failures`
(entity `host`: a partial sweep names itself), `ib_error_threshold` per threshold (entity the canonical counter)
and `ib_errors_suppressed` (text, the names, when any).
Example:
    Errors for 0xb83fd20300a1b2c0 "MF0;ib-leaf01:MQM9790/U1"
       GUID 0xb83fd20300a1b2c0 port 33: [SymbolErrorCounter == 65535] [PortXmitWait == 13673000000 (13.673G)]
    -> Sample("MF0;ib-leaf01:MQM9790/U1/33", "symbol_errors", 65535, raw_key="SymbolErrorCounter"),
       Sample("MF0;ib-leaf01:MQM9790/U1/33", "counter_saturated", 1, text="symbol_errors", ...), ...
Caveats: a port not printed has every counter at or below its threshold: with the default thresholds (0) that is
zero, with a threshold file not (see `ib_error_threshold`). A CA's header prints no GUID: its ports are told apart
by the port GUID of each line. `ibwarn:` lines that report a failed query (`... query failed on ...`) and the
shared tool failures become `tool_error` (entity `host`); other `ibwarn:` lines, `#` comments and the command line
are skipped. An unknown counter name, a port line before any node header, a `Link info` line before any port line
and any other line are a ParseError. An empty output is a ParseError (`rdmatool parse` exits 2): ibqueryerrors
prints its summary whenever it ran. The fixtures follow ibqueryerrors.c of infiniband-diags and its manual page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers import _ibcounters
from rdmatool.parsers._common import lines, refuse_empty, tool_error_message
from rdmatool.parsers._ibinfo import Collector, prompt_pattern
from rdmatool.parsers._ibsubnet import NodeNames, description, guid
from rdmatool.parsers._samples import HOST, tool_error
from rdmatool.parsers.iblinkinfo import far_end_samples

NAME = "ibqueryerrors"

_HEADER = re.compile(r'^\s*(?P<what>Errors|Data Counters) for\s+(?:(?P<guid>0x[0-9a-fA-F]+)\s+)?"(?P<desc>.*)"\s*$')
_PORT = re.compile(r"^\s*GUID\s+(?P<guid>0x[0-9a-fA-F]+)\s+port\s+(?P<port>\d+|ALL):(?P<items>.*)$")
_ITEM = re.compile(r"\s*\[(?P<name>[A-Za-z][A-Za-z0-9]*)\s*==\s*(?P<value>\d+)(?:\s*\((?P<human>[^)]*)\))?\]")
_LINK = re.compile(
    r"^\s*Link info:\s+(?P<lid>\d+)\s+(?P<port>\d+)\[\s*(?P<ext>\d*)\s*\]\s+==\((?P<link>.*?)\)==>\s*(?P<remote>.*?)\s*$"
)
_SUMMARY = (
    (re.compile(r"^##\s*Summary:\s*(\d+) nodes checked,\s*(\d+) bad nodes found\s*$"),
     ("ib_nodes_checked", "ib_bad_nodes")),
    (re.compile(r"^##\s*(\d+) ports checked,\s*(\d+) ports have errors beyond threshold\s*$"),
     ("ib_ports_checked", "ib_bad_ports")),
    (re.compile(r"^##\s*(\d+) PMA query failures\s*$"), ("pma_query_failures",)),
)
_THRESHOLDS = re.compile(r"^##\s*(?:Thresholds:(?P<list>.*)|\(null\))\s*$")
_THRESHOLD = re.compile(r"\[\s*(?P<name>[A-Za-z][A-Za-z0-9]*)\s*=\s*(?P<value>\d+)\s*\]")
_SUPPRESSED = re.compile(r"^##\s*Suppressed:(?P<names>.*)$")
_OLD_SUPPRESSING = re.compile(r"^\s*Suppressing:")
_FAILURE = re.compile(r"\biberror:|^\s*failed to |discover failed|loading cached fabric failed|can'?t resolve",
                      re.IGNORECASE)
_IBWARN_FAILURE = re.compile(r"fail|can'?t|cannot|unable", re.IGNORECASE)
_IBWARN = re.compile(r"^\s*ibwarn:", re.IGNORECASE)
_COMMAND = prompt_pattern(NAME)
# The data counters: 32-bit in PortCounters, 64-bit in PortCountersExtended (which alone has the unicast ones).
_DATA = {"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "XmtData", "RcvData", "XmtPkts", "RcvPkts"}


@dataclass
class _Node:
    desc: str
    key: object  # what tells this node from another of its description: the header's GUID, else its line
    guid: str | None  # the header's GUID (a switch's, or any node's in `Data Counters for`)
    kind: str  # raw_key of its far-end samples: `Switch`, `CA`, or `node` where the output does not say


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "ibqueryerrors", text)
    out = Collector(NAME)
    names = NodeNames()
    node: _Node | None = None
    port: str | None = None  # entity of the last port line, for the `Link info` line that may follow it
    for line_no, line in lines(text):
        stripped = line.strip()
        if not stripped or _COMMAND.match(line) or _OLD_SUPPRESSING.match(line):
            continue
        if _IBWARN.match(line):
            if _IBWARN_FAILURE.search(line):  # a port or node left unread: the sweep is partial
                out.add(tool_error(HOST, stripped), line_no, line)
            continue
        if stripped.startswith("##"):
            out.extend(_summary(line_no, line), line_no, line)
        elif stripped.startswith("#"):
            continue
        elif match := _HEADER.match(line):
            node, port = _node(match, line_no), None
        elif match := _PORT.match(line):
            if node is None:
                raise ParseError(NAME, line_no, line, "port line before any `Errors for` or `Data Counters for`")
            port = _port_entity(names, node, match)
            out.extend(_port_samples(port, match, line_no, line), line_no, line)
        elif match := _LINK.match(line):
            if port is None or node is None:
                raise ParseError(NAME, line_no, line, "`Link info` line before any port line")
            out.extend(far_end_samples(port, node.kind, match, line_no, line), line_no, line)
        elif failure := (tool_error_message(line) or (stripped if _FAILURE.search(line) else None)):
            out.add(tool_error(HOST, failure), line_no, line)
        else:
            raise ParseError(NAME, line_no, line)
    return out.samples


def _node(match: re.Match[str], line_no: int) -> _Node:
    header_guid = guid(match["guid"]) if match["guid"] else None
    # `Errors for` prints a GUID for a switch only; `Data Counters for` for every node, so its type is unknown there
    kind = ("Switch" if header_guid else "CA") if match["what"] == "Errors" else "node"
    return _Node(description(match["desc"]), header_guid or ("line", line_no), header_guid, kind)


def _port_entity(names: NodeNames, node: _Node, match: re.Match[str]) -> str:
    # a switch's ports by the switch's GUID, a CA's each by the port GUID its line prints, as iblinkinfo names them
    name = names.name(node.desc, node.key, node.guid or guid(match["guid"]))
    number = match["port"]
    return f"{name}/{number if number == 'ALL' else int(number)}"


def _port_samples(entity: str, match: re.Match[str], line_no: int, line: str) -> list[Sample]:
    items = list(_ITEM.finditer(match["items"]))
    if _ITEM.sub("", match["items"]).strip():
        raise ParseError(NAME, line_no, line, "expected `[Name == value]` items after the port")
    extended_data = any(item["name"].startswith(("PortUnicast", "PortMulticast")) for item in items)
    samples = [Sample(entity, "ib_port_guid", text=guid(match["guid"]), raw_key="GUID")]
    for item in items:
        name = item["name"]
        pma = _ibcounters.by_printed_name(name)
        if pma is None:
            raise ParseError(NAME, line_no, line, f"unknown ibqueryerrors counter {name!r}")
        if name in _DATA:
            bits = pma.extended_bits if extended_data else pma.pma_bits
        else:  # an error count printed with its human form came from the 64-bit extended attribute
            bits = _ibcounters.UNBOUNDED if item["human"] is not None else pma.pma_bits
        samples.extend(_ibcounters.counter_samples(entity, pma, name, int(item["value"]), bits))
    return samples


def _summary(line_no: int, line: str) -> list[Sample]:
    for pattern, metrics in _SUMMARY:
        if match := pattern.match(line):
            return [Sample(HOST, metric, int(value), raw_key="Summary") for metric, value in zip(metrics, match.groups())]
    if match := _THRESHOLDS.match(line):
        return [_threshold(item, line_no, line) for item in _THRESHOLD.finditer(match["list"] or "")]
    if match := _SUPPRESSED.match(line):
        suppressed = " ".join(match["names"].split())
        return [Sample(HOST, "ib_errors_suppressed", text=suppressed, raw_key="Suppressed")] if suppressed else []
    raise ParseError(NAME, line_no, line, "unrecognised summary line")


def _threshold(item: re.Match[str], line_no: int, line: str) -> Sample:
    pma = _ibcounters.by_printed_name(item["name"])
    if pma is None:
        raise ParseError(NAME, line_no, line, f"unknown ibqueryerrors counter {item['name']!r}")
    return Sample(pma.metric, "ib_error_threshold", int(item["value"]), raw_key=item["name"])
