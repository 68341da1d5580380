"""`ibv_devinfo` / `ibv_devinfo -v`: verbs view of each device — firmware, board, port state, MTUs, width, speed, GIDs.

Command: `ibv_devinfo` or `ibv_devinfo -v` (also `-d mlx5_0`, `-i 1`; rdma-core or MLNX_OFED libibverbs).
Emits per device on entity `mlx5_0` (from `hca_id:`): `transport` (`InfiniBand`, the `(0)` code dropped),
`fw_version`, `node_guid`, `sys_image_guid` (colon-grouped as printed, unlike ibstat's 0x form), `vendor_part_id`,
`hw_version`, `board_id` (text) and `num_ports` (gauge, `phys_port_cnt`). Per port on entity `mlx5_0/1`:
`port_state` (`PORT_ACTIVE (4)` -> `Active`), `max_mtu` and `active_mtu` (bytes, from `4096 (5)`), `sm_lid`,
`base_lid` (`port_lid`), `lmc` (`port_lmc`), `link_layer`; with -v also `capability_mask` (`port_cap_flags`),
`link_width` (`4X`) + `link_width_lanes` (4) from `active_width`, `link_speed` (`25.0 Gbps`) + `lane_speed_gbps`
(25.0) from `active_speed`, `phys_state` (`LINK_UP (5)` -> `LinkUp`), and per GID `gid` (text, as printed) plus
`gid_type` (`RoCE v2`, `IB/RoCE v1` ... when rdma-core prints the suffix). A GID's table index is carried in
raw_key as `GID[3]` (the printed `GID[  3]` without padding); otherwise raw_key is the tool's field name.
`No IB devices found`, `Failed to get IB devices list`, `IB device 'x' wasn't found` -> `tool_error` on `host`.
Example:
    hca_id:     mlx5_0
            fw_ver:             28.39.1002
            phys_port_cnt:      1
                    port:   1
                            state:          PORT_ACTIVE (4)
                            max_mtu:        4096 (5)
                            active_mtu:     1024 (3)
                            GID[  3]:       ::ffff:10.20.0.11, RoCE v2
Caveats: active_mtu < max_mtu on RoCE usually means the netdev MTU is 1500. ibv_devinfo prints no link rate; it is
not derived here (width x lane speed is left to the analysis). `invalid MTU (0)`, `N/A` and empty values are
emitted with value/text None. The many other `key: value` attributes of -v (device_cap_flags and its continuation
flag lines, `Unknown flags: 0x...`, odp/tso/rss caps, MLNX_OFED `device_cap_exp_flags`, `ooo_rc_caps  = 0x0`,
`log max atomic inline  5`, `tag matching not supported`, `C-VLAN stripping offload` ...) are accepted and not
emitted; any other line is a ParseError. Skipped: blank lines, `#` comments, the (prompted) command line that ran ibv_devinfo,
`libibverbs: Warning: ...` lines. Formats follow rdma-core libibverbs/examples/devinfo.c and MLNX_OFED 4.x output.
An empty output (nothing, or white space only) is a ParseError, `empty output: ibv_devinfo printed nothing`, on which
`rdmatool parse` exits 2: ibv_devinfo prints an `hca_id:` block per device, or `No IB devices found`, so an empty
answer is missing data, not "nothing wrong".
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import refuse_empty
from rdmatool.parsers._ibinfo import PHYS_STATES, PORT_STATES, Collector, content_lines, gid_key
from rdmatool.parsers._samples import NA_TEXT, gauge, is_na, state, text

NAME = "ibv_devinfo"

_HCA = re.compile(r"^\s*hca_id\s*:\s*(\S+)\s*$")
_PORT = re.compile(r"^\s*port\s*:\s*(\d+)\s*$")
_GID = re.compile(r"^\s*GID\s*\[\s*(\d+)\s*\]\s*:\s*([0-9A-Fa-fxX:.]+)\s*(?:,\s*(\S.*?))?\s*$")
_FIELD = re.compile(r"^\s*([A-Za-z][\w .()/-]*?)\s*:\s*(.*?)\s*$")
# MLNX_OFED prints a few attributes as `key = value` or `key<tabs>number` without a colon.
_EQUALS_FIELD = re.compile(r"^\s*[A-Za-z]\w*\s*=\s*\S+\s*$")
_BARE_NUMBER_FIELD = re.compile(r"^\s*[A-Za-z][\w ()/-]*?\s+(?:0x[0-9A-Fa-f]+|\d+)\s*$")
# Continuation lines of the -v capability lists: upper-case flag names (`BAD_PKEY_CNTR`, `EXT_SEND NOP`,
# `NO SUPPORT`) and the few prose capability lines the tools print.
_FLAG = re.compile(r"^\s*[A-Z][A-Z0-9_]*(?:[ -][A-Z0-9_]+)*\s*$")
_CAPABILITY_PROSE = re.compile(
    r"^\s*(?:[\w .-]+ (?:not )?supported|[\w -]+ offload|Delay drop|\d+ bytes)\s*$", re.IGNORECASE
)

_MTU = re.compile(r"^(\d+)\s*(?:\(\d+\))?$")
_INVALID = re.compile(r"^invalid\b.*$", re.IGNORECASE)
_WIDTH = re.compile(r"^(\d+)X\s*(?:\(\d+\))?$", re.IGNORECASE)
_SPEED = re.compile(r"^((\d+(?:\.\d+)?)\s*Gbps)\s*(?:\(\d+\))?$", re.IGNORECASE)
_ENUM_SUFFIX = re.compile(r"\s*\(\d+\)$")

_DEVICE_TEXT = {
    "fw_ver": "fw_version",
    "node_guid": "node_guid",
    "sys_image_guid": "sys_image_guid",
    "vendor_part_id": "vendor_part_id",
    "hw_ver": "hw_version",
    "board_id": "board_id",
}
_PORT_GAUGES = {"sm_lid": "sm_lid", "port_lid": "base_lid", "port_lmc": "lmc"}
_PORT_KEYS = {
    "state",
    "max_mtu",
    "active_mtu",
    "link_layer",
    "port_cap_flags",
    "active_width",
    "active_speed",
    "phys_state",
    *_PORT_GAUGES,
}


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "ibv_devinfo", text)
    out = Collector(NAME)
    hca: str | None = None
    port: str | None = None
    for line_no, line in content_lines(text, "ibv_devinfo", out):
        if match := _HCA.match(line):
            hca, port = match.group(1), None
            continue
        if hca is None:
            raise ParseError(NAME, line_no, line, "expected 'hca_id: <device>'")
        if match := _PORT.match(line):
            port = f"{hca}/{int(match.group(1))}"
            continue
        if match := _GID.match(line):
            if port is None:
                raise ParseError(NAME, line_no, line, "GID outside a port block")
            out.extend(_gid_samples(port, *match.groups()), line_no, line)
            continue
        if match := _FIELD.match(line):
            out.extend(
                _field_samples(hca, port, match.group(1), match.group(2), line_no, line), line_no, line
            )
            continue
        if _is_capability_detail(line, in_port=port is not None):
            continue
        raise ParseError(NAME, line_no, line)
    return out.samples


def _is_capability_detail(line: str, in_port: bool) -> bool:
    """A -v line of the device attribute section that has no `key: value` shape; never inside a port block."""
    if in_port:
        return False
    return any(p.match(line) for p in (_EQUALS_FIELD, _BARE_NUMBER_FIELD, _FLAG, _CAPABILITY_PROSE))


def _gid_samples(port: str, index: str, gid: str, gid_type: str | None) -> list[Sample]:
    key = gid_key(index)
    samples = [Sample(port, "gid", text=gid, raw_key=key)]
    if gid_type:
        samples.append(Sample(port, "gid_type", text=gid_type, raw_key=key))
    return samples


def _field_samples(hca: str, port: str | None, key: str, raw: str, line_no: int, line: str) -> list[Sample]:
    if key in _DEVICE_TEXT:
        return [Sample(hca, _DEVICE_TEXT[key], text=text(NAME, line_no, line, raw, NA_TEXT), raw_key=key)]
    if key == "transport":
        value = text(NAME, line_no, line, raw, NA_TEXT)
        return [Sample(hca, "transport", text=value and _ENUM_SUFFIX.sub("", value), raw_key=key)]
    if key == "phys_port_cnt":
        return [Sample(hca, "num_ports", gauge(NAME, line_no, line, raw, NA_TEXT), raw_key=key)]
    if key not in _PORT_KEYS:
        return []  # one of the many -v attributes rdmatool does not use
    if port is None:
        raise ParseError(NAME, line_no, line, f"port field {key!r} outside a port block")
    return _port_samples(port, key, raw, line_no, line)


def _port_samples(port: str, key: str, raw: str, line_no: int, line: str) -> list[Sample]:
    if key == "state":
        return [Sample(port, "port_state", text=state(raw, PORT_STATES), raw_key=key)]
    if key == "phys_state":
        return [Sample(port, "phys_state", text=state(raw, PHYS_STATES), raw_key=key)]
    if key in ("max_mtu", "active_mtu"):
        return [Sample(port, key, _mtu_bytes(raw, line_no, line), raw_key=key)]
    if key in _PORT_GAUGES:
        return [Sample(port, _PORT_GAUGES[key], gauge(NAME, line_no, line, raw, NA_TEXT), raw_key=key)]
    if key == "link_layer":
        return [Sample(port, "link_layer", text=text(NAME, line_no, line, raw, NA_TEXT), raw_key=key)]
    if key == "port_cap_flags":
        return [Sample(port, "capability_mask", text=text(NAME, line_no, line, raw, NA_TEXT), raw_key=key)]
    if key == "active_width":
        return _width_samples(port, key, raw, line_no, line)
    return _speed_samples(port, key, raw, line_no, line)


def _mtu_bytes(raw: str, line_no: int, line: str) -> int | None:
    """`4096 (5)` -> 4096; `invalid MTU (0)` and N/A -> None."""
    value = raw.strip()
    if match := _MTU.match(value):
        return int(match.group(1))
    if is_na(value, NA_TEXT) or _INVALID.match(value):
        return None
    raise ParseError(NAME, line_no, line, f"expected an MTU like '4096 (5)', got {value!r}")


def _width_samples(port: str, key: str, raw: str, line_no: int, line: str) -> list[Sample]:
    value = raw.strip()
    if match := _WIDTH.match(value):
        lanes = int(match.group(1))
        return [
            Sample(port, "link_width", text=f"{lanes}X", raw_key=key),
            Sample(port, "link_width_lanes", lanes, raw_key=key),
        ]
    if is_na(value, NA_TEXT) or _INVALID.match(value):
        return [Sample(port, "link_width", text=None, raw_key=key)]
    raise ParseError(NAME, line_no, line, f"expected a width like '4X (2)', got {value!r}")


def _speed_samples(port: str, key: str, raw: str, line_no: int, line: str) -> list[Sample]:
    value = raw.strip()
    if match := _SPEED.match(value):
        return [
            Sample(port, "link_speed", text=match.group(1), raw_key=key),
            Sample(port, "lane_speed_gbps", float(match.group(2)), raw_key=key),
        ]
    if is_na(value, NA_TEXT) or _INVALID.match(value):
        return [Sample(port, "link_speed", text=None, raw_key=key)]
    raise ParseError(NAME, line_no, line, f"expected a speed like '25.0 Gbps (32)', got {value!r}")
