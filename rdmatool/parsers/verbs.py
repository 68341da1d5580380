"""`verbs`: local mode's verbs view — each device, port and GID as pyverbs read it, compared with sysfs.

Command: none; local mode's verbs read (`rdmatool/transport/verbs.py`, run by `rdmatool collect --local` and
`rdmatool gate --local`) prints one JSON document, stored as the target's `verbs` output.
Emits on entity `host`: `verbs_devices` (gauge: the devices pyverbs listed) and, when there is no verbs view,
`verbs_unavailable` (text: why — pyverbs not importable, `pyverbs: Failed to get devices list`, no device).
Per device (entity `mlx5_0`): `fw_version`, `node_guid`, `sys_image_guid` (colon-grouped as ibv_devinfo prints
them), `vendor_part_id`, `hw_version`, `max_qp`, `max_mr_size` (bytes), `atomic_caps` (`NONE`, `HCA`, `GLOB`) and
`num_ports` (`phys_port_cnt`). Per port (entity `mlx5_0/1`): `port_state`, `phys_state`, `active_mtu` and
`max_mtu` (bytes), `link_width` + `link_width_lanes`, `link_speed` (`HDR`) + `lane_speed_gbps`, `link_rate_gbps`
(width x lane speed, as sysfs `rate` counts it), `link_layer`, `base_lid`, `sm_lid`, `lmc`, and per GID `gid`,
`gid_type` (`IB/RoCE v1`, `RoCE v2`) and `ipv4_address` (IPv4-mapped GIDs only), with raw_key `GID[3]`. Other
raw_keys are the pyverbs attribute names (`state`, `active_speed` ...).
`verbs_disagreement` (text, one per port, raw_key `sysfs`): what verbs and sysfs said differently of the port at
the same moment — state, physical state, rate, link layer, LIDs, a GID or its type — e.g.
`port_state: verbs Active, sysfs Down`. A device or port verbs could not query is a `tool_error` on it.
Example:
    {"format": 1, "status": "failed", "reason": "pyverbs: Failed to get devices list", "devices": [],
     "python": "/usr/bin/python3", "pyverbs": "/usr/lib/python3/dist-packages/pyverbs"}
Caveats: the document is checked member by member (a bundle is untrusted data): a member of the wrong type is a
ParseError naming it. Values verbs reports as codes rdmatool does not know are emitted as None (the codes stay in
the document's `codes`). sysfs values that cannot be read (a file missing in a container) are not compared.
An empty output (nothing, or white space only) is a ParseError (`empty output: the verbs read printed nothing`), on
which `rdmatool parse` exits 2: the verbs read always prints its document, `status` saying why when it has no view.
"""

from __future__ import annotations

import ipaddress
import math

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines, load_json, refuse_empty
from rdmatool.parsers._ibinfo import PHYS_STATES, PORT_STATES, gid_key, rate_text_samples
from rdmatool.parsers._samples import HOST, number, tool_error

NAME = "verbs"
STATUSES = ("ok", "unavailable", "failed", "no_devices")
_DEVICE_TEXT = {"fw_ver": "fw_version", "node_guid": "node_guid", "sys_image_guid": "sys_image_guid",
                "atomic_caps": "atomic_caps"}
_DEVICE_NUMBERS = {"max_qp": "max_qp", "max_mr_size": "max_mr_size", "phys_port_cnt": "num_ports"}
_DEVICE_CODES = {"vendor_part_id": "vendor_part_id", "hw_ver": "hw_version"}  # identifiers: text in the glossary
_PORT_TEXT = {"state": "port_state", "phys_state": "phys_state", "width": "link_width", "speed": "link_speed",
              "link_layer": "link_layer"}
_PORT_NUMBERS = {"active_mtu": "active_mtu", "max_mtu": "max_mtu", "lanes": "link_width_lanes",
                 "lane_gbps": "lane_speed_gbps", "rate_gbps": "link_rate_gbps", "lid": "base_lid",
                 "sm_lid": "sm_lid", "lmc": "lmc"}
MAX_DISAGREEMENTS = 8  # per port: enough to see what is wrong, never a wall of GIDs


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "the verbs read", text)
    numbered = [(n, line) for n, line in lines(text) if line.strip()]
    doc = load_json(NAME, numbered)
    if not isinstance(doc, dict) or doc.get("format") != 1:
        raise ParseError(NAME, numbered[0][0], numbered[0][1], "expected the verbs read's document (format 1)")
    status = doc.get("status")
    if status not in STATUSES:
        raise _member("status", status, f"one of {', '.join(STATUSES)}")
    devices = _list(doc, "devices")
    samples = [Sample(HOST, "verbs_devices", len(devices), raw_key="devices")]
    if status != "ok":
        samples.append(Sample(HOST, "verbs_unavailable", text=_text(doc, "reason") or status, raw_key=status))
    for device in devices:
        samples += _device(device)
    return samples


def _member(key: str, raw: object, expected: str) -> ParseError:
    return ParseError(NAME, 0, f"{key}: {raw!r}"[:120], f"expected {expected}")


def _list(record: dict, key: str) -> list:
    value = record.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise _member(key, value, "a list of objects")
    return value


def _text(record: dict, key: str) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise _member(key, value, "text")
    return value


def _num(record: dict, key: str) -> int | float | None:
    value = record.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _member(key, value, "a number")
    return value


def _device(device: dict) -> list[Sample]:
    name = _text(device, "name")
    if not name:
        raise _member("name", device.get("name"), "a device name")
    if device.get("error") is not None:
        return [tool_error(name, f"verbs: {_text(device, 'error')}", raw_key="query_device")]
    out = [Sample(name, metric, text=_text(device, key), raw_key=key) for key, metric in _DEVICE_TEXT.items()]
    out += [Sample(name, metric, _num(device, key), raw_key=key) for key, metric in _DEVICE_NUMBERS.items()]
    for key, metric in _DEVICE_CODES.items():
        code = _num(device, key)
        out.append(Sample(name, metric, text=None if code is None else str(code), raw_key=key))
    for port in _list(device, "ports"):
        out += _port(name, port)
    return out


def _port(device: str, port: dict) -> list[Sample]:
    number_ = _num(port, "port")
    if not isinstance(number_, int) or number_ < 0:
        raise _member("port", port.get("port"), "a port number")
    entity = f"{device}/{number_}"
    if port.get("error") is not None:
        return [tool_error(entity, f"verbs: {_text(port, 'error')}", raw_key="query_port")]
    out = [Sample(entity, metric, text=_text(port, key), raw_key=key) for key, metric in _PORT_TEXT.items()]
    out += [Sample(entity, metric, _num(port, key), raw_key=key) for key, metric in _PORT_NUMBERS.items()]
    gids = {}
    for gid in _list(port, "gids"):
        index = _num(gid, "index")
        if not isinstance(index, int) or index < 0:
            raise _member("index", gid.get("index"), "a GID index")
        key = gid_key(index)
        gids[index] = gid
        out.append(Sample(entity, "gid", text=_text(gid, "gid"), raw_key=key))
        if _text(gid, "type"):
            out.append(Sample(entity, "gid_type", text=gid["type"], raw_key=key))
        if _text(gid, "ipv4"):
            out.append(Sample(entity, "ipv4_address", text=gid["ipv4"], raw_key=key))
    sysfs = port.get("sysfs")
    if isinstance(sysfs, dict):
        differences = _disagreements(port, gids, sysfs)
        if differences:
            shown = differences[:MAX_DISAGREEMENTS]
            more = len(differences) - len(shown)
            out.append(Sample(entity, "verbs_disagreement", raw_key="sysfs",
                              text="; ".join(shown) + (f"; and {more} more" if more else "")))
    elif sysfs is not None:
        raise _member("sysfs", sysfs, "an object")
    return out


def _sysfs_text(sysfs: dict, key: str) -> str | None:
    value = sysfs.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _numbered(raw: str | None, names: dict[int, str]) -> str | None:
    """sysfs `4: ACTIVE` → `Active`; the number is what counts (the spelling differs per kernel)."""
    if raw is None:
        return None
    head = raw.split(":", 1)[0].strip()
    return names.get(int(head)) if head.isdigit() else None


def _sysfs_rate(raw: str | None) -> float | None:
    samples = rate_text_samples("-", raw, "rate") if raw else None
    return samples[0].value if samples else None


def _sysfs_number(raw: str | None) -> int | float | None:
    return number(raw) if raw is not None else None


def _same_gid(a: str, b: str) -> bool:
    try:
        return ipaddress.IPv6Address(a) == ipaddress.IPv6Address(b)
    except ValueError:
        return a.strip().lower() == b.strip().lower()


def _disagreements(port: dict, gids: dict, sysfs: dict) -> list[str]:
    """What verbs and sysfs said differently of one port in the same read; a side without a value is no claim."""
    theirs = {
        "port_state": (port.get("state"), _numbered(_sysfs_text(sysfs, "state"), PORT_STATES)),
        "phys_state": (port.get("phys_state"), _numbered(_sysfs_text(sysfs, "phys_state"), PHYS_STATES)),
        "link_rate_gbps": (port.get("rate_gbps"), _sysfs_rate(_sysfs_text(sysfs, "rate"))),
        "link_layer": (port.get("link_layer"), _sysfs_text(sysfs, "link_layer")),
        "base_lid": (port.get("lid"), _sysfs_number(_sysfs_text(sysfs, "lid"))),
        "sm_lid": (port.get("sm_lid"), _sysfs_number(_sysfs_text(sysfs, "sm_lid"))),
    }
    out = []
    for metric, (verbs_value, sysfs_value) in theirs.items():
        if verbs_value is None or sysfs_value is None:
            continue
        if isinstance(verbs_value, (int, float)) and isinstance(sysfs_value, (int, float)):
            if abs(float(verbs_value) - float(sysfs_value)) > 1e-6:
                out.append(f"{metric}: verbs {verbs_value:g}, sysfs {sysfs_value:g}")
        elif str(verbs_value) != str(sysfs_value):
            out.append(f"{metric}: verbs {verbs_value}, sysfs {sysfs_value}")
    table = sysfs.get("gids") if isinstance(sysfs.get("gids"), dict) else {}
    for index, gid in sorted(gids.items()):
        entry = table.get(str(index))
        if not isinstance(entry, list) or len(entry) != 2:
            continue
        sysfs_gid, sysfs_type = (value if isinstance(value, str) and value.strip() else None for value in entry)
        verbs_gid, verbs_type = gid.get("gid"), gid.get("type")
        if verbs_gid and sysfs_gid and not _same_gid(verbs_gid, sysfs_gid):
            out.append(f"{gid_key(index)}: verbs {verbs_gid}, sysfs {sysfs_gid.strip()}")
        elif verbs_type and sysfs_type and verbs_type != sysfs_type.strip():
            out.append(f"{gid_key(index)} type: verbs {verbs_type}, sysfs {sysfs_type.strip()}")
    return out
