"""Values of the perftest orchestration: options, one pair's result, the attribution, a host's discovered port."""

from __future__ import annotations

from dataclasses import dataclass

# The values every perftest matrix has (run here, by the gate or read from a bundle) live one layer down.
from rdmatool.pairs.model import (  # noqa: F401  (the perf package's names for them)
    BW_TESTS,
    LAT_TESTS,
    NOT_RUN,
    UNREACHABLE,
    Attribution,
    PairResult,
)


@dataclass(frozen=True)
class PerfOptions:
    test: str = "ib_write_bw"
    duration_s: int = 10  # -D of bandwidth tests
    size_bytes: int | None = None  # None: 65536 for bandwidth, perftest's default (2) for latency
    qps: int | None = 2  # bandwidth tests only (docs/tuning.md §6.2: >= 2 QPs)
    iterations: int = 5000  # -n of latency tests
    port_base: int = 18515  # TCP port of the first server; every concurrent server gets its own
    slack_s: float = 15.0  # beyond -D: connection set-up and result exchange; the `timeout` bound is D + slack
    server_ready_s: float = 3.0  # wait for the server's "Waiting for client" line before starting the client
    device: str | None = None  # RDMA device to use on every host; None: discovered
    link_layer: str | None = None  # "Ethernet" (RoCE) or "InfiniBand"; None: the one every host has, RoCE first
    connect_timeout: float = 10.0
    forks: int = 64  # hosts connected to / discovered at once
    known_hosts: str | None = None
    accept_new_host_keys: bool = False

    @property
    def is_bw(self) -> bool:
        return self.test in BW_TESTS

    @property
    def size(self) -> int | None:
        return self.size_bytes if self.size_bytes else (65536 if self.is_bw else None)


@dataclass(frozen=True)
class HostInfo:
    """The RDMA port a host tests with, as the host itself describes it."""

    name: str
    device: str
    ib_port: int
    link_layer: str  # Ethernet | InfiniBand
    rate_gbps: float | None
    gid_index: int | None  # RoCE v2 GID with an IPv4 address; None on InfiniBand
    fabric_address: str  # IPv4 of the RoCE GID / IPoIB netdev; else the inventory address
    address_source: str  # "gid", "netdev" or "inventory"
    netdev: str | None = None

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}
