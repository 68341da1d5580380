"""The names of one host port as each tool wants them, from whichever name a fact gives.

A fact names a host port as its RDMA port (`mlx5_0/1`: sysfs, perfquery, ibstat, mlxlink) or as its netdev
(`ens1f0np0`: ethtool, mlnx_qos, DCQCN sysfs). The tools a finding tells the operator to run take other spellings:
`ibstat mlx5_0 1`, `perfquery -x -C mlx5_0 -P 1`, `mlxlink -d mlx5_0 -p 1`, `ip -s link show ens1f0np0`. The
bundle's `netdev` facts (show_gids, sysfs: entity `mlx5_1/1`, text `ens1f0np0`) tie the two names together, so a
finding's evidence can carry the device, the port number and the netdev, and two findings about one port can be
told to be about the same port whatever their entities.
"""

from __future__ import annotations

import re

from rdmatool.table.facts import FactQuery

_RDMA_PORT = re.compile(r"(?P<device>[^/\s]+)/(?P<port>[0-9]{1,3})")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]{0,31}")  # a Linux interface name


class PortNames:
    """(target, entity) → {device, port, netdev} of a host port, as far as the facts know them."""

    def __init__(self, query: FactQuery) -> None:
        self.query = query
        self._netdev: dict[tuple[str, str], str] = {}  # (host, RDMA port) → netdev
        self._rdma: dict[tuple[str, str], str] = {}  # (host, netdev) → RDMA port
        rows = query.of_metric("netdev")
        for target, entity, text in zip(rows["target"], rows["entity"], rows["text"]):
            if isinstance(entity, str) and _RDMA_PORT.fullmatch(entity) and isinstance(text, str) and text:
                self._netdev.setdefault((target, entity), text)
                self._rdma.setdefault((target, text), entity)

    def is_host(self, target) -> bool:
        kind = self.query.kind_platform(target)
        return kind is not None and kind[0] == "host"

    def rdma_port(self, target, entity) -> str | None:
        """The RDMA port (`mlx5_1/1`) a host's entity is, or is the netdev of; None when it is neither."""
        if not isinstance(entity, str) or not self.is_host(target):
            return None
        if _RDMA_PORT.fullmatch(entity):
            return entity
        return self._rdma.get((target, entity))

    def of(self, target, entity) -> dict:
        """{device, port, netdev} of a host port (the keys that are known), {} for anything else."""
        rdma = self.rdma_port(target, entity)
        if rdma is None:
            return {}
        found = _RDMA_PORT.fullmatch(rdma)
        out: dict = {"device": found["device"], "port": int(found["port"])}
        netdev = entity if rdma != entity else self._netdev.get((target, rdma))
        if netdev:
            out["netdev"] = netdev
        return out

    def unknown(self, target, entity) -> dict:
        """What a text says for the names of a host port the facts do not give (no netdev fact binds it): a plain
        `<...>` for the operator to fill, never a wrong name."""
        if not isinstance(entity, str) or not entity or not self.is_host(target):
            return {}
        known = self.of(target, entity)
        if known:
            return {} if "netdev" in known else {"netdev": f"<netdev of {known['device']}>"}
        if _NAME.fullmatch(entity):  # a netdev (ethtool) whose RDMA device the bundle does not name
            return {"device": f"<RDMA device of {entity}>", "port": "<its port>", "netdev": entity}
        return {}
