"""NVIDIA Onyx `show interfaces ethernet 1/1 counters`: receive errors (FCS, symbol, all) and transmit errors.

Command: `show interfaces ethernet 1/<p> counters`; the collector keeps the echoed command line, which names the port.
The port block of `show interfaces ethernet [1/<p>]` and of the full `show interfaces` (an `Eth1/1` header,
`Key: value` lines, then the same Rx / Tx sections) is read too; the full command's leading Linux-style blocks of
the management plane (`Interface lo status:`, `Interface mgmt0 status:` ...) are skipped up to the first Ethernet
port and counted (`parse_skipped_lines`, entity `management_interface`).
Emits (entity `Eth1/1`: from the echoed command line or the block header, else the placeholder `port` the analysis
replaces by the port the command was run for; priority None, port totals): `rx_errors` (Rx error packets),
`rx_crc_errors` (Rx fcs errors), `rx_symbol_errors` (Rx symbol errors), `tx_errors` (Tx error packets) - counters;
raw_key = `Rx <label>` / `Tx <label>`. The packet, byte, discard, pause and size-bucket counts are recognised and not
emitted: the per-priority view (`onyx_pfc_counters`) gives the traffic and pause figures.
Example:
    switch [standalone: master] # show interfaces ethernet 1/1 counters
    Rx:
      812,554,311          packets
      0                    error packets
      37                   fcs errors
      52                   symbol errors
    Tx:
      804,118,902          packets
      0                    error packets
Caveats: no public verbatim capture of the `counters` view exists. The counter names follow a public Onyx port
exporter's list (`error packets`, `discard packets`, `packets of 64 bytes` ... `packets Jumbo`, `fcs errors`,
`undersize packets`, `oversize packets`, `pause packets`, `unknown control opcode`, `symbol errors`, `discard
packets by storm control`) and the `<count>  <label>` layout of a public capture of `show interfaces ethernet`
(Onyx 3.6, whose Rx section stops at `discard packets`); not verified against a real capture of this command. A
`<count> <label>` line with a label not listed here is a ParseError, so is a counter before any Rx / Tx line. A
refused command (`% ...`) gives a `tool_error` sample on entity `host`.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import Noise
from rdmatool.parsers._samples import HOST, counter, tool_error
from rdmatool.parsers.switch import _onyx
from rdmatool.parsers.switch._cli import cli_lines

NAME = "onyx_interface_counters"
PORT = "port"  # the placeholder entity when nothing in the output names the port

# The full `show interfaces` opens with the management plane's Linux-style blocks (`Interface lo status:`,
# `Interface mgmt0 status:` then `Key: value` and `RX bytes: ... TX bytes: ...` lines) before the Ethernet ports.
_HOST_INTERFACE = re.compile(r"^Interface \S+ status:\s*$")
_SECTION = re.compile(r"^\s*(Rx|Tx)\s*:?\s*$", re.IGNORECASE)
_HEADER = re.compile(r"^(Eth\d+/\d+(?:/\d+)?)\s*:?\s*$")
# `  Admin state: Enabled`, `  MTU                              : 1500 bytes`, `  60 seconds ingress rate: ...`
_PROPERTY = re.compile(r"^\s+\S[^:]*?\s*:\s*.*$")
_COUNTER = re.compile(r"^\s*(\d[\d,]*)\s+([A-Za-z][A-Za-z0-9 /()-]*?)\s*$")
_EMITTED = {
    ("rx", "error packets"): "rx_errors",
    ("rx", "fcs errors"): "rx_crc_errors",
    ("rx", "symbol errors"): "rx_symbol_errors",
    ("tx", "error packets"): "tx_errors",
}
_KNOWN = {
    "packets", "unicast packets", "multicast packets", "broadcast packets", "bytes", "error packets",
    "discard packets", "undersize packets", "oversize packets", "pause packets", "unknown control opcode",
    "discard packets by storm control", "hoq discard packets", "packets jumbo", "fcs errors", "symbol errors",
}
_SIZE_BUCKET = re.compile(r"^packets of \d+(?:-\d+)? bytes$")


def parse(text: str) -> list[Sample]:
    samples: list[Sample] = []
    port = PORT
    direction: str | None = None
    noise = Noise()
    in_host_interface = False  # inside a management-plane block: skipped up to the next Ethernet port
    for line_no, line, error in cli_lines(text, _onyx.cli_error):
        if error:
            samples.append(tool_error(HOST, error))
            continue
        if _onyx.is_echo(line):
            port, direction = _onyx.command_port(line) or port, None
            continue
        header = _HEADER.match(line)
        if header:
            port, direction, in_host_interface = header.group(1), None, False
            continue
        if in_host_interface or _HOST_INTERFACE.match(line):
            in_host_interface = True
            noise.skip("management_interface")
            continue
        section = _SECTION.match(line)
        if section:
            direction = section.group(1).lower()
            continue
        if direction is None and _PROPERTY.match(line):
            continue  # the port's settings and rates in `show interfaces ethernet`, before its counters
        samples.extend(_counter(line_no, line, port, direction))
    return samples + noise.samples()


def _counter(line_no: int, line: str, port: str, direction: str | None) -> list[Sample]:
    match = _COUNTER.match(line)
    if not match:
        raise ParseError(NAME, line_no, line)
    label = " ".join(match.group(2).lower().split())
    if label not in _KNOWN and not _SIZE_BUCKET.match(label):
        raise ParseError(NAME, line_no, line, f"unknown interface counter {match.group(2)!r}")
    if direction is None:
        raise ParseError(NAME, line_no, line, "counter before any Rx / Tx line")
    value = counter(NAME, line_no, line, match.group(1))
    metric = _EMITTED.get((direction, label))
    if metric is None:
        return []
    return [Sample(port, metric, value, raw_key=f"{direction.capitalize()} {match.group(2).strip()}")]
