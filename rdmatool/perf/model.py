"""Values of the perftest orchestration: options, one pair's result, the attribution, a host's discovered port."""

from __future__ import annotations

from dataclasses import dataclass, field

BW_TESTS = ("ib_write_bw", "ib_read_bw", "ib_send_bw")
LAT_TESTS = ("ib_write_lat", "ib_send_lat", "ib_read_lat")

# Error prefixes the attribution recognises: an unreachable host is missing (not bad); a pair not run says nothing.
UNREACHABLE = "unreachable: "
NOT_RUN = "not run: "


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


@dataclass(frozen=True)
class PairResult:
    server: str
    client: str
    test: str
    size_bytes: int | None
    bw_avg_gbps: float | None
    bw_peak_gbps: float | None
    lat: dict | None  # lat_*_us -> value (latency tests)
    error: str | None
    round: int
    server_output: str
    client_output: str
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_dict(self, outputs: bool = False) -> dict:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        if not outputs:
            out.pop("server_output")
            out.pop("client_output")
        return out

    @classmethod
    def from_record(cls, record: dict) -> PairResult:
        """A result as `as_dict` recorded it (results.json); the raw outputs, not recorded, are empty."""
        return cls(**{k: record.get(k) for k in cls.__dataclass_fields__ if k in record},
                   **{k: "" for k in ("server_output", "client_output") if k not in record})


@dataclass(frozen=True)
class Attribution:
    bad_nodes: tuple[str, ...]
    bad_links: tuple[tuple[str, str], ...]
    evidence: dict
    missing: tuple[str, ...] = ()  # unreachable hosts: reported, never called bad
    suspects: tuple[str, ...] = ()  # low/errored but not enough evidence (fewer than 2 partners, no good peer)
    errors: tuple[tuple[str, str, str], ...] = field(default=())  # (server, client, error) of errored pairs

    def as_dict(self) -> dict:
        return {
            "bad_nodes": list(self.bad_nodes),
            "bad_links": [list(link) for link in self.bad_links],
            "missing": list(self.missing),
            "suspects": list(self.suspects),
            "errors": [{"server": s, "client": c, "error": e} for s, c, e in self.errors],
            "evidence": self.evidence,
        }

    @classmethod
    def from_record(cls, record: dict) -> Attribution:
        """An attribution as `as_dict` recorded it (attribution.json), for a replay to judge again."""
        return cls(
            bad_nodes=tuple(record.get("bad_nodes", ())),
            bad_links=tuple(tuple(link) for link in record.get("bad_links", ())),
            evidence=record.get("evidence", {}),
            missing=tuple(record.get("missing", ())),
            suspects=tuple(record.get("suspects", ())),
            errors=tuple((e.get("server"), e.get("client"), e.get("error")) for e in record.get("errors", ())
                         if isinstance(e, dict)),
        )
