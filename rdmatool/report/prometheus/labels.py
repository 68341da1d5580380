"""What a fact was read on, as Prometheus labels: the bundle's one `entity` column split by what the entity is.

A fact's entity is an RDMA port (`mlx5_0/1`), an RDMA device (`mlx5_0`), a netdev (`ens1f0np0`), a GPU (`gpu0`), a
switch port (`swp1`, `Ethernet0`, `Eth1/1`), the host or switch as a whole (`host`, `qos`), a perftest/NCCL test
(`ib_write_bw`, `ib_write_bw@gpu02`), or a named switch object (a buffer pool, an ECN profile, an ASIC namespace).
One label mixing them (`port="mlx5_0/1"` next to `port="gpu0"` and `port="host"`) cannot be matched or aggregated,
so each kind gets its own:

| entity | labels |
| --- | --- |
| RDMA port `mlx5_0/1` (a lane of it: `mlx5_0/1/lane2`) | `device="mlx5_0"`, `port="1"` (`lane="2"`) |
| RDMA device `mlx5_0` | `device="mlx5_0"` |
| netdev `ens1f0np0` | `netdev="ens1f0np0"` |
| GPU `gpu3` | `gpu="3"` |
| switch port `swp1` | `port="swp1"` (the switch's own name for it) |
| perftest / NCCL test `ib_write_bw@gpu02` | `test="ib_write_bw"`, `peer="gpu02"` |
| a named switch object (buffer pool, ECN profile, ASIC) | `object="AZURE_LOSSLESS"` |
| the host, switch or fabric as a whole | none |

`parse_skipped_lines` is labelled `class` (the kind of noise line skipped). Which entities of a target are devices,
switch ports and tests is read from that target's own facts (a device is the device of one of its RDMA ports; a
switch port has a state, a rate, LLDP or traffic counters; a test has message sizes); a host entity that is none of
these is a netdev.
"""

from __future__ import annotations

import re

import pandas as pd

from rdmatool.present.visible import terminal
from rdmatool.table.sample_columns import PEER_MARK

# The target as a whole: a host's `host`, a switch's switch-wide config rows (Cumulus `qos`, Onyx `host`), the
# fabric's own figures, and a parser's placeholder the bundle had no name for.
WIDE = frozenset({"host", "fabric", "qos", "global", "port", "netdev"})
_RDMA_PORT = re.compile(r"^(?P<device>[^/\s]+)/(?P<port>\d+)(?:/lane(?P<lane>\d+))?$")
_GPU = re.compile(r"^gpu(?P<gpu>\d+)$")
# A switch entity with one of these is one of its ports (a buffer pool or an ECN profile has none of them).
_PORT_EVIDENCE = frozenset({
    "oper_state", "port_state", "link_rate_gbps", "lldp_neighbor", "port_alias", "port_mtu", "rx_packets",
    "tx_packets", "rx_bytes", "tx_bytes", "rx_pause_frames", "tx_pause_frames", "rx_errors", "tx_errors",
    "ib_link_state", "ib_link_rate_gbps", "ib_link_neighbor",  # an InfiniBand switch port the subnet sweep read
})
# A host entity with one of these (or with a message size) is a perftest / NCCL test: the footers have no size.
_TEST_EVIDENCE = ("perftest_", "nccl_", "avg_busbw")
CLASS_METRICS = frozenset({"parse_skipped_lines"})

Labels = tuple[tuple[str, str], ...]


class EntityLabels:
    """The labels of each (target, entity) of one analysis' facts (module docstring)."""

    def __init__(self, facts: pd.DataFrame):
        self._kind: dict[str, str] = {}
        self._devices: set[tuple[str, str]] = set()
        self._switch_ports: set[tuple[str, str]] = set()
        self._tests: set[tuple[str, str]] = set()
        self._cache: dict[tuple[str, str], Labels] = {}
        if facts.empty:
            return
        for target, kind in zip(facts["target"], facts["kind"]):
            self._kind.setdefault(target, kind if isinstance(kind, str) else "host")
        entities = facts[facts["entity"].map(lambda e: isinstance(e, str))]
        for target, entity, metric, size in zip(entities["target"], entities["entity"], entities["metric"],
                                                entities["size_bytes"]):
            port = _RDMA_PORT.match(entity)
            if port:
                self._devices.add((target, port["device"]))
            if metric in _PORT_EVIDENCE:
                self._switch_ports.add((target, entity))
            if not pd.isna(size) or str(metric).startswith(_TEST_EVIDENCE):
                self._tests.add((target, entity))

    def kind(self, target: str) -> str | None:
        """The target's kind (host, switch, fabric) as its facts say; None when it has no fact."""
        return self._kind.get(target)

    def of(self, target: str, entity, metric: str = "") -> Labels:
        """The labels (name, value) of one fact's entity, in a fixed order; none for the target as a whole."""
        if not isinstance(entity, str) or not entity or entity == target:
            return ()
        if metric in CLASS_METRICS:
            return (("class", terminal(entity, newlines=True)),)
        found = self._cache.get((target, entity))
        if found is None:
            # an entity is a device's text: its controls shown, a lone surrogate (unencodable) made U+FFFD
            found = self._cache[(target, entity)] = tuple((k, terminal(v, newlines=True))
                                                          for k, v in self._classify(target, entity))
        return found

    def _classify(self, target: str, entity: str) -> Labels:
        if entity in WIDE:
            return ()
        kind = self._kind.get(target, "host")
        if kind == "fabric":
            return (("object", entity),)
        if kind == "switch":
            return (("port", entity),) if (target, entity) in self._switch_ports else (("object", entity),)
        port = _RDMA_PORT.match(entity)
        if port:
            lane = (("lane", port["lane"]),) if port["lane"] is not None else ()
            return (("device", port["device"]), ("port", port["port"]), *lane)
        gpu = _GPU.match(entity)
        if gpu:
            return (("gpu", gpu["gpu"]),)
        if (target, entity) in self._devices:
            return (("device", entity),)
        if PEER_MARK in entity or (target, entity) in self._tests:
            test, _, peer = entity.partition(PEER_MARK)
            return (("test", test), ("peer", peer)) if peer else (("test", test),)
        return (("netdev", entity),)
