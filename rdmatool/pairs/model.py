"""The values of a perftest matrix, wherever it was run: one pair's result and the attribution of a matrix (which
nodes and links are bad). `rdmatool perf`, the gate and the diagnosis of a bundle share them (rdmatool.pairs)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

BW_TESTS = ("ib_write_bw", "ib_read_bw", "ib_send_bw")
LAT_TESTS = ("ib_write_lat", "ib_send_lat", "ib_read_lat")

# Error prefixes the attribution recognises: an unreachable host is missing (not bad); a pair not run says nothing.
UNREACHABLE = "unreachable: "
NOT_RUN = "not run: "
UNKNOWN_LEAF = ""  # a node whose cabling is not known: paired like any other, counted in no leaf pair


def leaf_pair(leaf_of: Mapping[str, str], a: str, b: str) -> frozenset | None:
    """The inter-leaf path a pair crosses (the unordered leaf pair), None when both ends share a leaf or either
    end's leaf is unknown. Without spine uplinks in the cabling, the path between two leaves is modelled as one
    element: the leaf pair."""
    la, lb = leaf_of.get(a, UNKNOWN_LEAF), leaf_of.get(b, UNKNOWN_LEAF)
    if la == lb or UNKNOWN_LEAF in (la, lb):
        return None
    return frozenset((la, lb))


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
    # The rail: the RDMA device both ends ran on in a rail-aligned schedule (NIC k of one host against NIC k of
    # another). None: each host's one tested NIC, as every record written before rails were scheduled reads.
    rail: str | None = None
    # The RDMA device and port each end ran on, `<device>/<port>` (`mlx5_1/1`): which NIC a pair's figure is of,
    # on a multi-rail host as on any other. None: not recorded (a result read from a bundle's outputs, or written
    # before they were recorded).
    server_nic: str | None = None
    client_nic: str | None = None

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
        """A result as `as_dict` recorded it (results.json); the raw outputs, not recorded, are empty; a record
        without `rail` (written before rails were scheduled) is the single rail."""
        fields = {k: record.get(k) for k in cls.__dataclass_fields__ if k in record}
        for name in ("rail", "server_nic", "client_nic"):  # untrusted data: a device name or nothing
            if not isinstance(fields.get(name), str):
                fields.pop(name, None)
        return cls(**fields, **{k: "" for k in ("server_output", "client_output") if k not in record})


@dataclass(frozen=True)
class Attribution:
    bad_nodes: tuple[str, ...]
    bad_links: tuple[tuple[str, str], ...]
    evidence: dict
    missing: tuple[str, ...] = ()  # unreachable hosts: reported, never called bad
    suspects: tuple[str, ...] = ()  # low/errored but not enough evidence (fewer than 2 partners, no good peer)
    errors: tuple[tuple[str, str, str], ...] = field(default=())  # (server, client, error) of errored pairs
    # (host, rail) of NICs slow on their rail while the host passes on another (multi-rail runs only)
    bad_nics: tuple[tuple[str, str], ...] = ()

    def as_dict(self) -> dict:
        return {
            "bad_nodes": list(self.bad_nodes),
            "bad_links": [list(link) for link in self.bad_links],
            "missing": list(self.missing),
            "suspects": list(self.suspects),
            "errors": [{"server": s, "client": c, "error": e} for s, c, e in self.errors],
            "bad_nics": [list(nic) for nic in self.bad_nics],
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
            bad_nics=tuple(tuple(nic) for nic in record.get("bad_nics", ()) if isinstance(nic, list) and len(nic) == 2),
        )
