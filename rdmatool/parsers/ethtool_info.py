"""`ethtool -i <if>`: driver, driver version, firmware version (and PSID) and PCI address of a netdev.

Command: `ethtool -i <netdev>` (once per RoCE interface, stored per interface).
Emits (entity `netdev`, a placeholder the bundle analysis replaces with the interface the output was stored
under; all state samples with `text`): `driver` (driver), `driver_version` (version), `fw_version`
(firmware-version, without the parenthesised PSID), `psid` (the `(MT_...)` part mlx5 appends), `bus_info`
(bus-info); a `tool_error` sample when ethtool reports its own failure.
Example:
    driver: mlx5_core
    version: 23.10-1.1.9
    firmware-version: 22.38.1900 (MT_0000000436)
    bus-info: 0000:3b:00.0
Caveats: expansion-rom-version and the supports-* lines are accepted and not emitted; empty or `N/A` values are
skipped. Any other key is accepted only in the `key: value` shape (newer ethtool adds keys); a line of another shape
is a ParseError. No verbatim dump was available here: the fixtures follow the ethtool(8) format and the NVIDIA
MLNX_OFED documentation examples.
An empty output (nothing, or white space only) is a ParseError, `empty output: ethtool -i printed nothing`, on which
`rdmatool parse` exits 2: ethtool -i always prints its `driver:` line when it succeeds, so an empty answer is missing
data, not "nothing wrong".
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines, refuse_empty
from rdmatool.parsers._nic import NA_NIC, NETDEV, is_noise, nic_tool_error, strip_ansi
from rdmatool.parsers._samples import is_na, tool_error

NAME = "ethtool_info"

_FIELD = re.compile(r"^\s*(?P<key>[A-Za-z][\w .-]*?)\s*:\s*(?P<value>.*?)\s*$")
_FW_WITH_PSID = re.compile(r"^(?P<fw>\S+)\s*\((?P<psid>[^)]+)\)\s*$")
_SIMPLE = {"driver": "driver", "version": "driver_version", "bus-info": "bus_info"}


def _firmware(value: str) -> list[Sample]:
    match = _FW_WITH_PSID.match(value)
    if not match:
        return [Sample(NETDEV, "fw_version", text=value, raw_key="firmware-version")]
    return [
        Sample(NETDEV, "fw_version", text=match["fw"], raw_key="firmware-version"),
        Sample(NETDEV, "psid", text=match["psid"].strip(), raw_key="firmware-version"),
    ]


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "ethtool -i", text)
    samples: list[Sample] = []
    for line_no, raw_line in lines(text):
        line = strip_ansi(raw_line)
        if is_noise(line):
            continue
        message = nic_tool_error(line)
        if message is not None:
            samples.append(tool_error(NETDEV, message))
            continue
        match = _FIELD.match(line)
        if not match:
            raise ParseError(NAME, line_no, raw_line)
        key, value = match["key"].strip().lower(), match["value"]
        if is_na(value, NA_NIC):
            continue
        if key == "firmware-version":
            samples.extend(_firmware(value))
        elif key in _SIMPLE:
            samples.append(Sample(NETDEV, _SIMPLE[key], text=value, raw_key=match["key"].strip()))
    return samples
