"""Cisco NX-OS `show interface`: link state and speed, pause frames, discards, CRC, errors, resets, rates per port.

Command: `show interface` (or `show interface ethernet1/1`; `| json` accepted too).
Emits (entity = the port as NX-OS prints it, `Ethernet1/1`, `Ethernet1/1/1` on a FEX): `port_state` (text: up,
down ...), `link_rate_gbps`, `rx_pause_frames` / `tx_pause_frames` (802.3x and PFC pause together, priority None),
`rx_discards` (input discard), `tx_discards` (output discard), `rx_crc_errors`, `rx_errors` / `tx_errors`,
`interface_resets`, `rx_bytes` / `tx_bytes`, `rx_packets` / `tx_packets` (counters), and the first load-interval rates
`rx_bytes_per_s` / `tx_bytes_per_s` (bits/sec / 8) and `rx_packets_per_s` / `tx_packets_per_s` (gauges).
Example:
    Ethernet1/1 is up
      full-duplex, 100 Gb/s, media type is 100G
      30 seconds input rate 25280136 bits/sec, 419 packets/sec
      RX
        76878491050 input packets  495988926977243 bytes
        0 runts  0 giants  0 CRC  0 no buffer
        39027 Rx pause
Caveats: the text layout follows the Cisco Nexus 9000 command reference and a real capture; every line is matched
against the known line kinds and a `<count> <label>` line with a label not listed below is a ParseError. Only the first
load interval's rates are emitted (the second one prints rounded Mbps). The JSON form reads the `TABLE_interface` rows
(`eth_inpause`, `eth_outpause`, `eth_indiscard`, `eth_outdiscard`, `eth_crc`, `eth_inerr`, `eth_outerr`,
`eth_reset_cntr`, `eth_inbytes`, `eth_outbytes`, `eth_inpkts`, `eth_outpkts`, `eth_inrate1_bits` ...); other keys
are ignored. Per-priority pause counts are in `nxos_pfc` / `nxos_queuing`. A port-channel block is read like an
Ethernet one (entity `port-channel10`: state, speed, counters). The blocks of Vlan (SVI), loopback, mgmt, nve and
tunnel interfaces are skipped whole and counted (`parse_skipped_lines`, entity `other_interface`): they carry no
host's RDMA traffic; so are routed sub-interfaces (`Ethernet1/5.100 is up`, entity `sub_interface`), whose parent
port's block holds the counters. A routed port's `L3 in Switched:` / `L3 out Switched:` lines and their
`ucast: ... pkts, ... bytes` follow-ups are skipped and counted (`l3_switched`); no such block aborts the file.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import Noise
from rdmatool.parsers._samples import HOST, json_number, tool_error
from rdmatool.parsers.switch import _nxos
from rdmatool.parsers.switch._cli import cli_lines

NAME = "nxos_interface"

_HEADER = re.compile(r"^(\S+) is ((?:admin )?\w+)(?:\s+\((.*)\))?\s*$")
_SPEED = re.compile(r"^\s*(?:full|half|auto)-duplex,\s*(\d+(?:\.\d+)?)\s*([GM])b/s\b", re.IGNORECASE)
_RATE = re.compile(
    r"^\s*(?:\d+\s+\w+\s+)?(input|output) rate (\d+) bits/sec,\s*(\d+) packets/sec\s*$", re.IGNORECASE
)
_SECOND_RATE = re.compile(
    r"^\s*input rate [\d.]+ \w?bps, [\d.]+ \w?pps; output rate [\d.]+ \w?bps, [\d.]+ \w?pps\s*$",
    re.IGNORECASE,
)
_PAIR = re.compile(r"(\d[\d,]*)\s+([A-Za-z][A-Za-z /&.\-]*?)(?=\s+\d|\s*$)")

# Lines that describe a port but carry nothing rdmatool needs; matched explicitly so anything else fails loud.
_NOISE = re.compile(
    r"^\s*(Dedicated Interface|Hardware( is|:)|MTU \d|reliability |Encapsulation|Port mode is|Beacon is|"
    r"Input flow-control is|Rate mode is|Switchport monitor|EtherType is|Last link flapped|Last clearing of|"
    r"Load-Interval #|Description:|Internet Address is|Belongs to|admin state is|auto-mdix|Auto-Negotiation|"
    r"FEC mode|Admin fec|Oper fec|Members in this channel|EEE \(efficient-ethernet\)|Last link flap|"
    r"Switchport|Share-rate is|Port Guard|Flow-control|Speed is|Duplex is|Hardware type|"
    r"input flow-control|auto-negotiation|Auto-mdix|Media type|(?:full|half|auto)-duplex|"
    r"FEC \(forward-error-correction\))",
    re.IGNORECASE,
)
_SECTION = re.compile(r"^\s*(RX|TX)\s*$", re.IGNORECASE)
# A block of an interface that carries no RDMA traffic of a host (SVI, loopback, management, tunnel): its lines are
# skipped, counted, up to the next interface header. `Vlan1 is down (Administratively down), line protocol is down,
# autostate enabled` is such a header too. A port-channel is read like an Ethernet port (its state, speed and
# counters are the bundle's).
_OTHER_HEADER = re.compile(r"^(?:Vlan|loopback|mgmt|nve|Tunnel|tunnel|sup-eth)\S* is \S.*$")
# A routed sub-interface (`Ethernet1/5.100 is up`): its parent port's block carries the port's counters.
_SUB_INTERFACE_HEADER = re.compile(r"^\S+/\d+\.\d+ is \S.*$|^port-channel\d+\.\d+ is \S.*$", re.IGNORECASE)
# A routed port's layer-3 switching counts (`L3 in Switched:` then `ucast: 0 pkts, 0 bytes - mcast: ...`, or all
# on one line): not port counters, skipped and counted.
_L3_SWITCHED = re.compile(
    r"^\s*(?:L[23] (?:in |out )?Switched:.*|ucast: \d+ pkts?, \d+ bytes(?:\s*-?\s*mcast: \d+ pkts?, \d+ bytes)?)\s*$",
    re.IGNORECASE,
)

# `<count> <label>` labels, per RX/TX section: label -> metric (None: recognised, not emitted).
_RX_LABELS = {
    "input packets": "rx_packets",
    "bytes": "rx_bytes",
    "crc": "rx_crc_errors",
    "crc/fcs": "rx_crc_errors",
    "input discard": "rx_discards",
    "rx pause": "rx_pause_frames",
    "input error": "rx_errors",
}
_TX_LABELS = {
    "output packets": "tx_packets",
    "bytes": "tx_bytes",
    "output discard": "tx_discards",
    "tx pause": "tx_pause_frames",
    "output error": "tx_errors",
}
_ANY_LABELS = {"interface resets": "interface_resets", "interface reset": "interface_resets"}
_IGNORED_LABELS = {
    "unicast packets",
    "multicast packets",
    "broadcast packets",
    "jumbo packets",
    "storm suppression packets",
    "storm suppression bytes",
    "runts",
    "giants",
    "no buffer",
    "short frame",
    "overrun",
    "underrun",
    "ignored",
    "watchdog",
    "bad etype drop",
    "bad proto drop",
    "if down drop",
    "input with dribble",
    "collision",
    "deferred",
    "late collision",
    "lost carrier",
    "no carrier",
    "babble",
    "stomped crc",
    "ecc error",
    "input packets with dribble",
    "output packets with dribble",
    "input buffer drop",
    "input total drop",
    "output buffer drop",
    "output total drop",
}


def parse(text: str) -> list[Sample]:
    start = _nxos.json_start(text)
    if start is not None:
        return _parse_json(text, start)
    return _parse_text(text)


def _parse_text(text: str) -> list[Sample]:
    samples: list[Sample] = []
    port: str | None = None
    section: str | None = None
    rates_seen: set[str] = set()
    noise = Noise()
    other: str | bool = False  # inside the block of an interface not read: the noise class of its lines
    for line_no, line, error in cli_lines(text, _nxos.cli_error):
        if error:
            samples.append(tool_error(HOST, error))
            continue
        other_kind = _other_block(line)
        if other_kind:
            other, port = other_kind, None
            noise.skip(other_kind)
            continue
        header = _HEADER.match(line)
        if header and not line[0].isspace():
            other = False
            port, section, rates_seen = _nxos.long_port(header.group(1)), None, set()
            samples.append(Sample(port, "port_state", text=header.group(2), raw_key="state"))
            continue
        if other:
            noise.skip(other)
            continue
        if _nxos.is_echo(line):
            continue
        if _L3_SWITCHED.match(line):
            noise.skip("l3_switched")
            continue
        if port is None:
            raise ParseError(NAME, line_no, line, "counter line before any `<port> is <state>` header")
        if _SECTION.match(line):
            section = line.strip().upper()
            continue
        samples.extend(_read_port_line(port, section, rates_seen, line_no, line))
    return samples + noise.samples()


def _other_block(line: str) -> str | None:
    """The noise class of an interface header whose block is skipped, or None for a port read in full."""
    if _OTHER_HEADER.match(line):
        return "other_interface"
    if _SUB_INTERFACE_HEADER.match(line):
        return "sub_interface"
    return None


def _read_port_line(
    port: str, section: str | None, rates_seen: set[str], line_no: int, line: str
) -> list[Sample]:
    speed = _SPEED.match(line)
    if speed:
        gbps = float(speed.group(1)) / (1000 if speed.group(2).upper() == "M" else 1)
        return [Sample(port, "link_rate_gbps", gbps, raw_key="speed")]
    rate = _RATE.match(line)
    if rate:
        direction = "rx" if rate.group(1).lower() == "input" else "tx"
        if direction in rates_seen:  # a later load interval: the first one is the one we report
            return []
        rates_seen.add(direction)
        bits, packets = int(rate.group(2)), int(rate.group(3))
        return [
            Sample(port, f"{direction}_bytes_per_s", bits / 8, raw_key=f"{rate.group(1)} rate bits/sec"),
            Sample(port, f"{direction}_packets_per_s", packets, raw_key=f"{rate.group(1)} rate packets/sec"),
        ]
    if _SECOND_RATE.match(line) or _NOISE.match(line):
        return []
    if _PAIR.search(line) and not _PAIR.sub("", line).strip():  # nothing but `<count> <label>` pairs
        return _read_counters(port, section, line_no, line)
    raise ParseError(NAME, line_no, line)


def _read_counters(port: str, section: str | None, line_no: int, line: str) -> list[Sample]:
    labels = {"RX": _RX_LABELS, "TX": _TX_LABELS}.get(section or "", {})
    out: list[Sample] = []
    for raw_value, raw_label in _PAIR.findall(line):
        label = raw_label.strip()
        key = label.lower()
        singular = key[:-1] if key.endswith("s") and key[:-1] in labels else key
        metric = labels.get(singular) or _ANY_LABELS.get(key)
        if metric is None:
            if (
                key in _IGNORED_LABELS
                or key.rstrip("s") in _IGNORED_LABELS
                or singular in _other_section(section)
            ):
                continue
            raise ParseError(NAME, line_no, line, f"unknown counter {label!r}")
        out.append(Sample(port, metric, int(raw_value.replace(",", "")), raw_key=label))
    return out


def _other_section(section: str | None) -> set[str]:
    """Labels of the other direction: a counter printed outside its usual section is known, just not mapped."""
    return set(_TX_LABELS if section == "RX" else _RX_LABELS)


_JSON_COUNTERS = (
    ("rx_pause_frames", "eth_inpause"),
    ("tx_pause_frames", "eth_outpause"),
    ("rx_discards", "eth_indiscard"),
    ("tx_discards", "eth_outdiscard"),
    ("rx_crc_errors", "eth_crc"),
    ("rx_errors", "eth_inerr"),
    ("tx_errors", "eth_outerr"),
    ("interface_resets", "eth_reset_cntr"),
    ("rx_bytes", "eth_inbytes"),
    ("tx_bytes", "eth_outbytes"),
    ("rx_packets", "eth_inpkts"),
    ("tx_packets", "eth_outpkts"),
)
_JSON_RATES = (
    ("rx_bytes_per_s", "eth_inrate1_bits", 8),
    ("rx_packets_per_s", "eth_inrate1_pkts", 1),
    ("tx_bytes_per_s", "eth_outrate1_bits", 8),
    ("tx_packets_per_s", "eth_outrate1_pkts", 1),
)
_JSON_SPEED = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([GM])b/s\s*$", re.IGNORECASE)


def _parse_json(text: str, start: int) -> list[Sample]:
    line_no = start + 1
    document = _nxos.load_json(NAME, text, start)
    samples: list[Sample] = []
    for row in _nxos.table_rows(NAME, line_no, document, "interface"):
        name = row.get("interface")
        if not isinstance(name, str) or not name.strip():
            raise ParseError(NAME, line_no, str(row)[:120], "interface row without an `interface` name")
        port = _nxos.long_port(name)
        if isinstance(row.get("state"), str):
            samples.append(Sample(port, "port_state", text=row["state"], raw_key="state"))
        speed = _JSON_SPEED.match(row["eth_speed"]) if isinstance(row.get("eth_speed"), str) else None
        if speed:
            gbps = float(speed.group(1)) / (1000 if speed.group(2).upper() == "M" else 1)
            samples.append(Sample(port, "link_rate_gbps", gbps, raw_key="eth_speed"))
        for metric, key in _JSON_COUNTERS:
            if key in row:
                value = json_number(NAME, line_no, key, row[key])
                samples.append(Sample(port, metric, _as_int(value), raw_key=key))
        for metric, key, divisor in _JSON_RATES:
            if key in row:
                value = json_number(NAME, line_no, key, row[key])
                samples.append(Sample(port, metric, None if value is None else value / divisor, raw_key=key))
    if not samples:
        raise ParseError(
            NAME, line_no, text.splitlines()[start], "no TABLE_interface rows in the JSON document"
        )
    return samples


def _as_int(value: int | float | None) -> int | float | None:
    return int(value) if isinstance(value, float) and value.is_integer() else value
