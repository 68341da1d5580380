"""The optional `links:` list of a native inventory: which host NIC is cabled to which switch port, as the
operator knows it. Read here as plain validated records; `rdmatool.topology.switches_for_hosts` makes them
`topology.Link` values (the topology package sits above the inventory in the layering).

```yaml
links:
  - {host: gpu01, nic: mlx5_1, switch: leaf01, switch_port: Ethernet0}
  - {host: "gpu[02-04]", nic: mlx5_1, switch: leaf02, switch_port: "swp[1-3]"}   # ranges pair up in order
```

`host`, `nic`, `switch` and `switch_port` may each be a host pattern; those that stand for more than one name must
stand for the same number, and a single name repeats for every link of the entry. `switch_port` may be left out.
Every host must be a host of the inventory and every switch one of its switches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rdmatool import yamlio
from rdmatool.errors import InventoryError
from rdmatool.model import Target, TargetKind
from rdmatool.present import hostlist

_PORT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9/._:-]{0,63}")  # as a switch's `ports` are checked
_KEYS = ("host", "nic", "switch", "switch_port")
_MAX_LINKS = 1_000_000  # a 100,000-host inventory with eight rails and room to spare; counted before expanding


@dataclass(frozen=True)
class InventoryLink:
    host: str
    nic: str
    switch: str
    switch_port: str = ""


def read_links(raw, targets: list[Target], path: Path, doc_line: int) -> tuple[InventoryLink, ...]:
    """The inventory's `links` value (None when absent) → validated records; InventoryError `FILE:LINE: ...`."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InventoryError(f"{path}:{yamlio.line_of(raw) or doc_line}: `links` must be a list of "
                             "{host, nic, switch, switch_port} mappings")
    kinds = {t.name: t.kind for t in targets}
    total = 0
    for entry in raw:
        total += _count(entry, f"{path}:{yamlio.line_of(entry) or doc_line}")
        if total > _MAX_LINKS:
            raise InventoryError(f"{path}:{yamlio.line_of(entry) or doc_line}: `links` expand to more than "
                                 f"{_MAX_LINKS} links (the limit)")
    out: list[InventoryLink] = []
    for entry in raw:
        where = f"{path}:{yamlio.line_of(entry) or doc_line}"
        for host, nic, switch, port in _expand(entry, where):
            if kinds.get(host) is not TargetKind.HOST:
                raise InventoryError(f"{where}: link host {yamlio.quote(host)} is not a host of the inventory")
            if kinds.get(switch) is not TargetKind.SWITCH:
                raise InventoryError(f"{where}: link switch {yamlio.quote(switch)} is not a switch of the inventory")
            for key, value in (("nic", nic), ("switch_port", port)):
                if value and not _PORT_NAME.fullmatch(value):
                    raise InventoryError(f"{where}: link {key} {yamlio.quote(value)} is not a port name")
            out.append(InventoryLink(host, nic, switch, port))
    return tuple(out)


def _fields(entry, where: str) -> dict[str, str]:
    if not isinstance(entry, dict):
        raise InventoryError(f"{where}: a link must be a mapping with host, nic, switch (and switch_port), not "
                             f"{yamlio.quote(entry)}")
    unknown = [k for k in entry if k not in _KEYS]
    if unknown:
        raise InventoryError(f"{where}: unknown key {yamlio.quote(unknown[0])} in a link "
                             "(host, nic, switch, switch_port)")
    fields = {}
    for key in _KEYS:
        value = entry.get(key)
        if value is None and key == "switch_port":
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
            raise InventoryError(f"{where}: a link needs `{key}` as a name, not {yamlio.quote(value)}")
        fields[key] = str(value)
    return fields


def _names(fields: dict[str, str], where: str) -> dict[str, list[str]]:
    try:
        return {key: hostlist.expand(value) for key, value in fields.items()}
    except ValueError as exc:
        raise InventoryError(f"{where}: {exc}") from None


def _count(entry, where: str) -> int:
    fields = _fields(entry, where)
    try:
        counts = [hostlist.size_of(value) for value in fields.values()]
    except ValueError as exc:
        raise InventoryError(f"{where}: {exc}") from None
    return max(counts)


def _expand(entry, where: str) -> list[tuple[str, str, str, str]]:
    names = _names(_fields(entry, where), where)
    sizes = {len(v) for v in names.values() if len(v) > 1}
    if len(sizes) > 1:
        shown = ", ".join(f"{k} {len(v)}" for k, v in names.items())
        raise InventoryError(f"{where}: the ranges of a link must stand for the same number of names ({shown})")
    n = sizes.pop() if sizes else 1
    column = {k: v if len(v) == n else v * n for k, v in names.items()}
    ports = column.get("switch_port", [""] * n)
    return list(zip(column["host"], column["nic"], column["switch"], ports, strict=True))
