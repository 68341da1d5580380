"""Cumulus NVUE `nv show interface -o json`: each switch port's operational speed, oper/admin state and MTU.

Command: `nv show interface -o json` (Cumulus Linux >= 5.0; the collector asks for the JSON form).
Emits (entity = the interface name as NVUE and lldpctl print it, `swp1`, `swp1s0` on a breakout port):
  `link_rate_gbps` (gauge, raw_key `link.speed`): the port's speed in Gb/s (`100G` -> 100.0, `1G` -> 1.0, `10M` ->
  0.01), only when the port is operationally up;
  `oper_state` (state, raw_key `link.oper-status` or `link.state`, `link.admin-status` when the port is
  administratively down): Up, Down, or Disabled when admin-status is down;
  `port_mtu` (gauge, raw_key `link.mtu`): the port's MTU in bytes.
  A failing tool (`Error: ...`) gives a `tool_error` sample on entity `host`.
Example:
    {
      "swp1": {"ifindex": 3, "link": {"auto-negotiate": "on", "duplex": "full", "mtu": 9216, "speed": "200G",
                                      "state": {"up": {}}, "stats": {"in-bytes": 8342, "in-pkts": 51}},
               "type": "swp"},
      "swp2": {"ifindex": 4, "link": {"mtu": 9216, "state": {"down": {}}}, "type": "swp"},
      "eth0": {"ifindex": 2, "link": {"mtu": 1500, "speed": "1G", "state": {"up": {}}}, "type": "eth"}
    }
Caveats: the shape follows NVIDIA's NVUE object model (the `link` object of each interface, as `nv show interface
<if> link` and the NVUE REST API's `/interface` return it): `link.state` is NVUE's keyed form `{"up": {}}` (a plain
string `"up"` is read too); where a release adds `oper-status` / `admin-status` to `link`, those win. No public
capture of the command was available to check against. NVUE leaves `speed` out on a port that is down, and a down
port gives no rate in any case (never 0). Only front-panel ports are read (`type` swp, or a name `swpN` when the type
is missing); bonds, bridges, SVIs, VRFs, the loopback and the management port are skipped and counted
(`parse_skipped_lines`, entity `other_interface`): a bond's speed is the sum of its members, no cable's. The table
form (`nv show interface` without `-o json`) truncates its cells to the terminal width and is not read: it is a
ParseError naming its first line. Members of a port this parser does not read (`stats`, `lldp`, `ip`, ...) are
ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import Noise
from rdmatool.parsers._samples import HOST, gauge, speed_gbps
from rdmatool.parsers.switch import _cumulus as nv

NAME = "cumulus_interface_status"

_SWP = re.compile(r"^swp\d+(?:s\d+)?$")
# NVUE prints speeds as `1G`, `25G`, `100G`, `400G` (`10M` on a copper management port); `auto` only as a setting.
_SPEED = re.compile(r"^(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[MGT])(?:b(?:ps|/s)?)?$", re.IGNORECASE)
_NO_SPEED = {"", "auto", "unknown", "n/a", "-", "none"}


def parse(text: str) -> list[Sample]:
    output = nv.read_output(text)
    if not output.lines:
        return nv.with_tool_error([], output, HOST)
    if not nv.is_json(output):
        raise nv.fail(NAME, output.lines[0], "expected the JSON of `nv show interface -o json`")
    document, _ = nv.load_json(NAME, output)
    interfaces = nv.json_object(NAME, output.lines[0], document, "the interfaces")
    noise = Noise()
    samples: list[Sample] = []
    for name, body in interfaces.items():
        locate = _locator(output.lines, name)
        if not isinstance(body, dict):
            raise nv.fail(NAME, locate(""), f"expected a JSON object for interface {name!r}")
        kind = body.get("type")
        if kind != "swp" and not (kind is None and _SWP.match(name)):
            noise.skip("other_interface")
            continue
        link = body.get("link")
        if link is not None:
            if not isinstance(link, dict):
                raise nv.fail(NAME, locate("link"), f"expected a JSON object for {name} link")
            samples.extend(_port(name, link, locate))
    return nv.with_tool_error(samples + noise.samples(), output, HOST)


def _line_of(lines: list[nv.Line], after: nv.Line, key: str) -> nv.Line:
    """The first line from `after` on where `key` is a JSON member name (else `after`)."""
    member = json.dumps(key) + ":"
    return next((where for where in lines if where[0] >= after[0] and member in where[1]), after)


def _locator(lines: list[nv.Line], port: str) -> Callable[[str], nv.Line]:
    """Where a member of one port's object is, for an error message: searched from the port's own line on, and only
    when asked (a well-formed document never pays for the search). The empty key is the port's line itself."""
    def locate(key: str) -> nv.Line:
        port_line = _line_of(lines, lines[0], port)
        return port_line if not key else _line_of(lines, port_line, key)

    return locate


def _port(port: str, link: dict, locate: Callable[[str], nv.Line]) -> list[Sample]:
    oper_key = "oper-status" if "oper-status" in link else "state"
    oper = _up_down(port, link.get(oper_key), locate)
    admin = _up_down(port, link.get("admin-status"), locate)
    out: list[Sample] = []
    if admin == "Down":
        out.append(Sample(port, "oper_state", None, text="Disabled", raw_key="link.admin-status"))
    elif oper is not None:
        out.append(Sample(port, "oper_state", None, text=oper, raw_key=f"link.{oper_key}"))
    rate = _gbps(port, link.get("speed"), locate)
    if rate is not None and oper == "Up" and admin != "Down":
        out.append(Sample(port, "link_rate_gbps", rate, raw_key="link.speed"))
    if "mtu" in link:
        out.append(Sample(port, "port_mtu", _mtu(link["mtu"], locate), raw_key="link.mtu"))
    return out


def _mtu(raw: object, locate: Callable[[str], nv.Line]) -> int | float | None:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    where = locate("mtu")
    return gauge(NAME, where[0], where[1], raw)


def _up_down(port: str, raw: object, locate: Callable[[str], nv.Line]) -> str | None:
    """`{"up": {}}`, `"up"` -> Up; any other state (`down`, `lowerlayerdown`, `notpresent`, `dormant`) -> Down;
    absent -> None."""
    if raw is None:
        return None
    if isinstance(raw, dict) and len(raw) == 1:
        raw = next(iter(raw))
    if not isinstance(raw, str) or not raw.strip():
        where = locate("state")
        raise ParseError(NAME, where[0], where[1], f"{port}: expected a link state like {{\"up\": {{}}}}, got {raw!r}")
    return "Up" if raw.strip().lower() == "up" else "Down"


def _gbps(port: str, raw: object, locate: Callable[[str], nv.Line]) -> float | None:
    if raw is None or (isinstance(raw, str) and raw.strip().lower() in _NO_SPEED):
        return None
    match = _SPEED.match(raw.strip()) if isinstance(raw, str) else None
    if not match:
        where = locate("speed")
        raise ParseError(NAME, where[0], where[1], f"{port}: expected a speed like 100G, got {raw!r}")
    return speed_gbps(match.group("number"), match.group("unit"))
