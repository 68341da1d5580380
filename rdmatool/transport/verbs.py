"""Local mode's verbs read: every RDMA device, port and GID through pyverbs, printed as one JSON document.

The collector runs this file as a child process (`python -I rdmatool/transport/verbs.py`): a driver call that hangs
or crashes ends the child, never the collection, and the collector's timeout bounds it. The standard library only,
pyverbs imported inside `read`: the same file runs under the distribution's Python where `python3-pyverbs` is
installed, and importing it never needs pyverbs. Read-only: each device is opened and queried
(`ibv_query_device`, `ibv_query_port`, `ibv_query_gid`, `ibv_query_gid_type`); nothing is allocated or changed.

Beside each port's verbs view it reads the same attributes from sysfs (`/sys/class/infiniband/<dev>/ports/<n>`), as
raw text, at the same moment: `rdmatool.parsers.verbs` compares the two views of one instant (a port flapping
between two reads is not a disagreement).

The document (`format` 1): `status` is `ok`, `unavailable` (pyverbs not importable), `failed` (pyverbs could not
list the devices, e.g. `Failed to get devices list` where the kernel has no RDMA subsystem) or `no_devices`;
`reason` says why in one line; `devices` lists each device's attributes and ports. The values are decoded here, in
the units of rdmatool's glossary, by `device_record`, `port_record` and `gid_record`: pure functions over objects
shaped like pyverbs' `DeviceAttr`, `PortAttr` and `GID`.
"""

from __future__ import annotations

import ipaddress
import json
import os
import sys

FORMAT = 1
SYSFS_ROOT = "/sys/class/infiniband"
MAX_GIDS = 256  # a ConnectX port's table holds 255/256 entries; never read more than that per port

# ibv_port_state and the physical states, spelled as rdmatool's glossary (and ibstat) spell them.
PORT_STATES = {0: "Nop", 1: "Down", 2: "Initializing", 3: "Armed", 4: "Active", 5: "ActiveDefer"}
PHYS_STATES = {1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp",
               6: "LinkErrorRecovery", 7: "PhyTest"}
MTU_BYTES = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}  # enum ibv_mtu
# active_width codes (IBTA PortInfo:LinkWidthActive) → lanes. pyverbs' own width_to_str has no 12X (code 8).
WIDTH_LANES = {1: 1, 2: 4, 4: 8, 8: 12, 16: 2}
# active_speed codes → (generation, nominal lane speed in Gb/s as sysfs `rate` and ibstat count it). pyverbs 44's
# speed_to_str gives QDR (4) as 5.0 Gbps: it is not used.
SPEEDS = {1: ("SDR", 2.5), 2: ("DDR", 5.0), 4: ("QDR", 10.0), 8: ("FDR10", 10.0), 16: ("FDR", 14.0),
          32: ("EDR", 25.0), 64: ("HDR", 50.0), 128: ("NDR", 100.0), 256: ("XDR", 200.0)}
LINK_LAYERS = {0: "Unspecified", 1: "InfiniBand", 2: "Ethernet"}
# ibv_query_gid_type answers with enum ibv_gid_type_sysfs, spelled as sysfs gid_attrs/types and ibv_devinfo do.
GID_TYPES = {0: "IB/RoCE v1", 1: "RoCE v2"}
ATOMIC_CAPS = {0: "NONE", 1: "HCA", 2: "GLOB"}  # enum ibv_atomic_cap
_SYSFS_PORT_FILES = ("state", "phys_state", "rate", "link_layer", "lid", "sm_lid")


def guid_text(raw: int) -> str:
    """A GUID as pyverbs holds it (the __be64 read as a native integer) in ibv_devinfo's and sysfs' spelling."""
    value = int.from_bytes(int(raw).to_bytes(8, "big"), sys.byteorder)
    digits = f"{value:016x}"
    return ":".join(digits[i:i + 4] for i in range(0, 16, 4))


def _number(value) -> int | None:
    return int(value) if isinstance(value, int) else None


def device_record(name: str, attr) -> dict:
    """The device attributes of a pyverbs `DeviceAttr` (Context.query_device())."""
    return {
        "name": name,
        "fw_ver": str(attr.fw_version),
        "node_guid": guid_text(attr.node_guid),
        "sys_image_guid": guid_text(attr.sys_image_guid),
        "vendor_id": _number(attr.vendor_id),
        "vendor_part_id": _number(attr.vendor_part_id),
        "hw_ver": _number(attr.hw_ver),
        "max_qp": _number(attr.max_qp),
        "max_mr_size": _number(attr.max_mr_size),
        "atomic_caps": ATOMIC_CAPS.get(attr.atomic_caps, f"unknown ({attr.atomic_caps})"),
        "phys_port_cnt": _number(attr.phys_port_cnt),
    }


def port_record(number: int, attr) -> dict:
    """The port attributes of a pyverbs `PortAttr` (Context.query_port()); the link rate is width x lane speed."""
    lanes = WIDTH_LANES.get(attr.active_width)
    generation, lane_gbps = SPEEDS.get(attr.active_speed, (None, None))
    return {
        "port": int(number),
        "state": PORT_STATES.get(attr.state),
        "phys_state": PHYS_STATES.get(attr.phys_state),
        "active_mtu": MTU_BYTES.get(attr.active_mtu),
        "max_mtu": MTU_BYTES.get(attr.max_mtu),
        "width": f"{lanes}X" if lanes else None,
        "lanes": lanes,
        "speed": generation,
        "lane_gbps": lane_gbps,
        "rate_gbps": lanes * lane_gbps if lanes and lane_gbps else None,
        "link_layer": LINK_LAYERS.get(attr.link_layer),
        "lid": _number(attr.lid),
        "sm_lid": _number(attr.sm_lid),
        "lmc": _number(attr.lmc),
        "gid_tbl_len": _number(attr.gid_tbl_len),
        # The codes as the driver gave them: a code this table does not know is still in the record.
        "codes": {key: _number(getattr(attr, key)) for key in
                  ("state", "phys_state", "active_mtu", "max_mtu", "active_width", "active_speed", "link_layer")},
    }


def gid_record(index: int, gid, gid_type: int | None) -> dict | None:
    """One GID table entry from a pyverbs `GID` (Context.query_gid()) and Context.query_gid_type(); None for an
    empty (all-zero) entry, which the driver keeps for unused indexes."""
    text = str(gid.gid)
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        return {"index": int(index), "gid": text, "type": None, "ipv4": None}
    if int(address) == 0:
        return None
    mapped = address.ipv4_mapped
    return {"index": int(index), "gid": text, "type": GID_TYPES.get(gid_type) if gid_type is not None else None,
            "ipv4": str(mapped) if mapped else None}


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(4096).strip()
    except OSError:
        return None  # an unused GID's type file answers EINVAL; a missing file is simply not there


def sysfs_port(device: str, port: int, gid_indexes, root: str = SYSFS_ROOT) -> dict:
    """What sysfs says of the same port, as raw text: the files of `_SYSFS_PORT_FILES` and the GIDs verbs listed."""
    base = os.path.join(root, device, "ports", str(int(port)))
    out: dict = {name: _read_text(os.path.join(base, name)) for name in _SYSFS_PORT_FILES}
    out["gids"] = {str(i): [_read_text(os.path.join(base, "gids", str(i))),
                            _read_text(os.path.join(base, "gid_attrs", "types", str(i)))] for i in gid_indexes}
    return out


def _document(status: str, reason: str | None, devices: list | None = None, pyverbs: str | None = None) -> dict:
    return {"format": FORMAT, "status": status, "reason": reason, "python": sys.executable, "pyverbs": pyverbs,
            "devices": devices or []}


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


def read(sysfs_root: str = SYSFS_ROOT) -> dict:
    """The whole verbs view of this machine, or the reason there is none."""
    try:
        from pyverbs import device as verbs_device
    except Exception as exc:  # noqa: BLE001 - ImportError, or a libibverbs that fails to load: both say why
        return _document("unavailable", f"pyverbs is not importable by {sys.executable} ({_one_line(exc)})")
    where = os.path.dirname(getattr(sys.modules.get("pyverbs"), "__file__", "") or "") or None
    try:
        listed = verbs_device.get_device_list()
    except Exception as exc:  # noqa: BLE001 - PyverbsRDMAError "Failed to get devices list": no RDMA subsystem
        return _document("failed", f"pyverbs: {_one_line(exc)}", pyverbs=where)
    if not listed:
        return _document("no_devices", "pyverbs lists no RDMA device", pyverbs=where)
    devices = [_read_device(verbs_device, entry, sysfs_root) for entry in listed]
    return _document("ok", None, devices, pyverbs=where)


def _read_device(verbs_device, entry, sysfs_root: str) -> dict:
    name = entry.name.decode() if isinstance(entry.name, bytes) else str(entry.name)
    try:
        with verbs_device.Context(name=name) as ctx:
            record = device_record(name, ctx.query_device())
            record["ports"] = [_read_port(ctx, name, number, sysfs_root)
                               for number in range(1, (record["phys_port_cnt"] or 0) + 1)]
    except Exception as exc:  # noqa: BLE001 - one device that cannot be opened must not hide the others
        return {"name": name, "error": _one_line(exc), "ports": []}
    return record


def _read_port(ctx, device: str, number: int, sysfs_root: str) -> dict:
    try:
        record = port_record(number, ctx.query_port(number))
    except Exception as exc:  # noqa: BLE001
        return {"port": number, "error": _one_line(exc)}
    gids, unreadable = [], 0
    for index in range(min(record["gid_tbl_len"] or 0, MAX_GIDS)):
        try:
            gid = ctx.query_gid(number, index)
        except Exception:  # noqa: BLE001 - newer kernels refuse an unused index instead of returning zeros
            unreadable += 1
            continue
        try:
            gid_type = ctx.query_gid_type(number, index)
        except Exception:  # noqa: BLE001 - the type of an empty entry cannot be read; the entry is dropped anyway
            gid_type = None
        entry = gid_record(index, gid, gid_type)
        if entry is not None:
            gids.append(entry)
    record["gids"] = gids
    record["gids_unreadable"] = unreadable
    record["sysfs"] = sysfs_port(device, number, [g["index"] for g in gids], sysfs_root)
    return record


def main() -> int:
    json.dump(read(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
