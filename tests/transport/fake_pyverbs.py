"""Values shaped exactly like pyverbs' objects, for the verbs read's tests (no RDMA device on a test machine).

The shapes follow pyverbs 44.0 (rdma-core 44, Debian bookworm's `python3-pyverbs` 44.0-2), whose objects were
inspected on the installed package: `device.get_device_list()` gives `Device` objects whose `name` is bytes;
`Context(name=...)` is a context manager; `Context.query_device()` gives a `DeviceAttr` (`fw_version` str,
`node_guid` / `sys_image_guid` the __be64 read as a native int, `vendor_id`, `vendor_part_id`, `hw_ver`, `max_qp`,
`max_mr_size`, `atomic_caps` an enum ibv_atomic_cap int, `phys_port_cnt`); `Context.query_port(n)` a `PortAttr`
(`state`, `phys_state`, `active_mtu`, `max_mtu` enum ibv_mtu codes, `active_width`, `active_speed` IBTA codes,
`link_layer` 1 InfiniBand / 2 Ethernet, `lid`, `sm_lid`, `lmc`, `gid_tbl_len`); `Context.query_gid(n, i)` a `GID`
whose `gid` is eight colon-separated groups of four hex digits; `Context.query_gid_type(n, i)` an enum
ibv_gid_type_sysfs int (0 IB/RoCE v1, 1 RoCE v2). A failure raises `PyverbsRDMAError("Failed to get devices list")`.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field


def raw_guid(text: str) -> int:
    """The integer pyverbs holds for a GUID printed `b8ce:f603:00c5:2a3c` (its bytes in memory order)."""
    value = int(text.replace(":", ""), 16)
    return int.from_bytes(value.to_bytes(8, sys.byteorder), "big")


@dataclass
class DeviceAttr:
    fw_version: str = "28.39.1002"
    node_guid: int = raw_guid("b8ce:f603:00c5:2a3c")
    sys_image_guid: int = raw_guid("b8ce:f603:00c5:2a3c")
    vendor_id: int = 0x02C9
    vendor_part_id: int = 4129
    hw_ver: int = 0
    max_qp: int = 131072
    max_mr_size: int = 0xFFFFFFFFFFFFFFFF
    atomic_caps: int = 1
    phys_port_cnt: int = 1


@dataclass
class PortAttr:
    state: int = 4
    phys_state: int = 5
    active_mtu: int = 5
    max_mtu: int = 5
    active_width: int = 2
    active_speed: int = 64
    link_layer: int = 1
    lid: int = 12
    sm_lid: int = 1
    lmc: int = 0
    gid_tbl_len: int = 4
    port_cap_flags: int = 0x2651E848


@dataclass
class GID:
    gid: str


class PyverbsRDMAError(Exception):
    pass


@dataclass
class Device:
    name: bytes


@dataclass
class FakeDevice:
    """One device as the fake pyverbs shows it: attributes, ports by number, GIDs by (port, index)."""

    attr: DeviceAttr
    ports: dict[int, PortAttr]
    gids: dict[tuple[int, int], tuple[str, int]] = field(default_factory=dict)


class Context:
    devices: dict[str, FakeDevice] = {}

    def __init__(self, name: str) -> None:
        if name not in self.devices:
            raise PyverbsRDMAError(f"Failed to open device {name}")
        self.device = self.devices[name]

    def __enter__(self) -> Context:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def query_device(self) -> DeviceAttr:
        return self.device.attr

    def query_port(self, port_num: int) -> PortAttr:
        return self.device.ports[port_num]

    def query_gid(self, port_num: int, index: int) -> GID:
        gid, _ = self.device.gids.get((port_num, index), ("0000:0000:0000:0000:0000:0000:0000:0000", 0))
        return GID(gid)

    def query_gid_type(self, port_num: int, index: int) -> int:
        if (port_num, index) not in self.device.gids:
            raise PyverbsRDMAError(f"Failed to query gid type of port {port_num} and gid index {index}")
        return self.device.gids[(port_num, index)][1]


def install(monkeypatch, devices: dict[str, FakeDevice] | None, list_error: str | None = None) -> None:
    """Make `import pyverbs` / `from pyverbs import device` find this fake for one test."""
    device_module = types.ModuleType("pyverbs.device")

    class _Context(Context):
        pass

    _Context.devices = devices or {}

    def get_device_list():
        if list_error:
            raise PyverbsRDMAError(list_error)
        return [Device(name.encode()) for name in _Context.devices]

    device_module.Context = _Context
    device_module.get_device_list = get_device_list
    package = types.ModuleType("pyverbs")
    package.__file__ = "/usr/lib/python3/dist-packages/pyverbs/__init__.py"
    package.device = device_module
    monkeypatch.setitem(sys.modules, "pyverbs", package)
    monkeypatch.setitem(sys.modules, "pyverbs.device", device_module)
