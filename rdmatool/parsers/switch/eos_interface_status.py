"""Arista EOS `show interfaces status | json`: each Ethernet port's link status and operational speed.

Command: `show interfaces status | json` (the collector asks for the JSON form).
Emits (entity = port, long form `Ethernet1`, `Ethernet49/1`: the name `show lldp neighbors` gives):
  `link_rate_gbps` (gauge, raw_key `bandwidth`): the port's bandwidth in Gb/s (`bandwidth` is in bit/s:
  100000000000 -> 100.0), only when the port is connected;
  `oper_state` (state, raw_key `linkStatus`): Up for `connected`, Disabled for `disabled` (shut down), Down for any
  other status (`notconnect`, `errdisabled`, `inactive` ...).
  A refused command (`% ...`) gives a `tool_error` sample on entity `host`.
Example:
    {
      "interfaceStatuses": {
        "Ethernet1": {"description": "gpu01 ens1f0np0", "linkStatus": "connected", "lineProtocolStatus": "up",
                      "bandwidth": 400000000000, "interfaceType": "400GBASE-CR8", "duplex": "duplexFull",
                      "autoNegotiateActive": false, "vlanInformation": {"interfaceMode": "routed"}},
        "Ethernet2": {"linkStatus": "notconnect", "lineProtocolStatus": "notPresent", "bandwidth": 400000000000,
                      "interfaceType": "Not Present", "duplex": "duplexFull"}
      }
    }
Caveats: the keys follow eAPI's `show interfaces status` model as Arista's automation examples and public test data
use it (`interfaceStatuses` -> port -> `linkStatus`, `bandwidth`, `interfaceType`, ...); not verified against a
real capture. A port that is not connected still reports its configured bandwidth: it gives no rate (never 0),
what it reports is no negotiated rate. The status model holds no MTU. Management, Port-Channel, Vlan and other
non-Ethernet interfaces are skipped and counted (`parse_skipped_lines`, entity `other_interface`; a Port-Channel's
bandwidth is the sum of its members). Other keys of a port are ignored. The echoed command before the document and
prompts after it are skipped (the prompts counted, entity `prompt`). The text table (without `| json`) carries a
free-text Name column that a row cannot be split around and is not read: it is a ParseError naming its first line.
"""

from __future__ import annotations

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import Noise, cli_lines
from rdmatool.parsers._samples import HOST, json_number, tool_error
from rdmatool.parsers.switch import _eos

NAME = "eos_interface_status"

_STATES = {"connected": "Up", "disabled": "Disabled"}


def parse(text: str) -> list[Sample]:
    start = _eos.json_start(text)
    if start is None:
        return _refusal(text)
    line_no = start + 1
    noise = Noise()
    text = _without_trailing_prompts(text, start, noise)
    document = _eos.load_json(NAME, text, start)
    if "interfaceStatuses" not in document:
        raise ParseError(NAME, line_no, text.splitlines()[start], "no interfaceStatuses in the JSON document")
    ports = _eos.mapping(NAME, line_no, document["interfaceStatuses"], "interfaceStatuses")
    samples: list[Sample] = []
    for name, status in ports.items():
        port = _eos.long_port(name)
        if not port.startswith("Ethernet"):
            noise.skip("other_interface")
            continue
        samples.extend(_port(line_no, port, _eos.mapping(NAME, line_no, status, name)))
    return samples + noise.samples()


def _without_trailing_prompts(text: str, start: int, noise: Noise) -> str:
    """The text without the prompts an interactive capture leaves after the JSON document (each one counted)."""
    lines = text.splitlines()
    end = len(lines)
    while end > start + 1 and (not lines[end - 1].strip() or _eos.is_echo(lines[end - 1])):
        if lines[end - 1].strip():
            noise.skip("prompt")
        end -= 1
    return "\n".join(lines[:end])


def _port(line_no: int, port: str, status: dict) -> list[Sample]:
    link = status.get("linkStatus")
    if link is not None and not isinstance(link, str):
        raise ParseError(NAME, line_no, f"{port} linkStatus: {link!r}"[:120], "expected a link status")
    out: list[Sample] = []
    if link is not None:
        out.append(Sample(port, "oper_state", None, text=_STATES.get(link.strip().lower(), "Down"), raw_key="linkStatus"))
    bandwidth = json_number(NAME, line_no, f"{port} bandwidth", status.get("bandwidth"))
    if link is not None and link.strip().lower() == "connected" and bandwidth:
        out.append(Sample(port, "link_rate_gbps", bandwidth / 1e9, raw_key="bandwidth"))
    return out


def _refusal(text: str) -> list[Sample]:
    """No JSON document: the CLI's refusal (`% ...`) is data; anything else (the text table) is not read."""
    samples: list[Sample] = []
    for line_no, line, error in cli_lines(text, _eos.cli_error):
        if error:
            samples.append(tool_error(HOST, error))
            continue
        if _eos.is_echo(line):
            continue
        raise ParseError(NAME, line_no, line, "expected the JSON of `show interfaces status | json`")
    return samples
