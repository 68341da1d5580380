"""The gate's policy: what each stage checks, its deadline, and what counts as good enough.

A profile is a small YAML file; every key is optional and falls back to the defaults below. Unknown keys are an
error naming the file, so a typo never silently disables a check.

```yaml
counters_window_s: 10        # stage 2: seconds between the two counter reads
bandwidth: {enabled: true, test: ib_write_bw, rounds: 3, duration_s: 5, size_bytes: 1048576, qps: 2,
            min_fraction_of_line_rate: 0.9}
latency: {enabled: false, test: ib_send_lat, max_p99_us: 10.0, max_p999_over_typical: 5.0}
incast: {fan_in: 4, duration_s: 10}  # optional stage 5 (off unless given): N senders -> 1 receiver per leaf
deadlines_s: {state: 60, counters: 60, bandwidth: 300, latency: 120, incast: 180}
allow_missing: 0             # targets unreachable or not read in full (deadline, hung command) tolerated before inconclusive
skip_rules: []               # rule ids the site has decided not to gate on
topology: topology.yaml      # the expected cabling (rdmatool.topology.expected; relative to this file): with it
                             # the bandwidth pairs cross every leaf pair (bandwidth.schedule: auto|topology|random)
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rdmatool import yamlio
from rdmatool.errors import RdmatoolError

STAGES = ("state", "counters", "bandwidth", "latency", "incast")


class ProfileError(RdmatoolError):
    pass


@dataclass(frozen=True)
class BandwidthPolicy:
    enabled: bool = True
    test: str = "ib_write_bw"
    rounds: int = 3
    duration_s: int = 5
    size_bytes: int = 1048576
    qps: int = 2
    min_fraction_of_line_rate: float = 0.9
    schedule: str = "auto"  # auto | topology | random: rdmatool.gate.schedule_choice


@dataclass(frozen=True)
class LatencyPolicy:
    enabled: bool = False
    test: str = "ib_send_lat"
    max_p99_us: float = 10.0
    max_p999_over_typical: float = 5.0


@dataclass(frozen=True)
class IncastPolicy:
    """The incast stage (rdmatool.perf.incast): per leaf, `fan_in` senders -> 1 receiver for `duration_s`, with
    the pause / ECN / CNP counters read before and after the load. Off unless the profile has an `incast` key."""

    enabled: bool = False
    fan_in: int = 4
    duration_s: int = 10
    test: str = "ib_write_bw"
    size_bytes: int = 1048576
    qps: int = 2


@dataclass(frozen=True)
class GateProfile:
    counters_window_s: float = 10.0
    bandwidth: BandwidthPolicy = field(default_factory=BandwidthPolicy)
    latency: LatencyPolicy = field(default_factory=LatencyPolicy)
    incast: IncastPolicy = field(default_factory=IncastPolicy)
    deadlines_s: dict = field(default_factory=lambda: {"state": 60, "counters": 60, "bandwidth": 300, "latency": 120,
                                                       "incast": 180})
    allow_missing: int = 0
    skip_rules: tuple[str, ...] = ()
    topology: str | None = None  # the expected-topology file the bandwidth schedule follows


def load(path: str | Path | None) -> GateProfile:
    if path is None:
        return GateProfile()
    try:
        data = yamlio.load(Path(path)) or {}
    except yamlio.YamlError as exc:
        raise ProfileError(str(exc)) from None
    where = f"{path}:{yamlio.line_of(data) or 1}"
    if not isinstance(data, dict):
        raise ProfileError(f"{where}: a gate profile is a mapping")
    known = {"counters_window_s", "bandwidth", "latency", "incast", "deadlines_s", "allow_missing", "skip_rules",
             "topology"}
    unknown = set(data) - known
    if unknown:
        raise ProfileError(f"{where}: unknown key(s) {sorted(unknown)} (known: {sorted(known)})")
    try:
        bandwidth = BandwidthPolicy(**dict(data.get("bandwidth") or {}))
        latency = LatencyPolicy(**dict(data.get("latency") or {}))
        incast = _incast(data.get("incast"))
    except TypeError as exc:
        raise ProfileError(f"{where}: {exc}") from None
    deadlines = {**GateProfile().deadlines_s, **dict(data.get("deadlines_s") or {})}
    if set(deadlines) - set(STAGES):
        raise ProfileError(f"{where}: deadlines_s takes {', '.join(STAGES)}")
    if bandwidth.schedule not in ("auto", "topology", "random"):
        raise ProfileError(f"{where}: bandwidth.schedule takes auto, topology or random, not {bandwidth.schedule!r}")
    return GateProfile(
        counters_window_s=float(data.get("counters_window_s", 10.0)),
        bandwidth=bandwidth,
        latency=latency,
        incast=incast,
        deadlines_s=deadlines,
        allow_missing=int(data.get("allow_missing", 0)),
        skip_rules=tuple(data.get("skip_rules") or ()),
        topology=_topology(path, data.get("topology"), where),
    )


def _topology(path: str | Path, raw, where: str) -> str | None:
    """The topology file, a relative name read from the profile's own folder (where the two usually live)."""
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip():
        raise ProfileError(f"{where}: topology takes the path of an expected-topology file")
    return str(Path(path).parent / raw) if not Path(raw).is_absolute() else raw


def _incast(raw) -> IncastPolicy:
    """An `incast` mapping (even `{}`) turns the stage on, unless it says `enabled: false`."""
    if raw is None:
        return IncastPolicy()
    if raw is True or raw is False:
        return IncastPolicy(enabled=raw)
    if not isinstance(raw, dict):
        raise TypeError("incast takes a mapping (fan_in, duration_s, test, size_bytes, qps, enabled)")
    policy = IncastPolicy(**{"enabled": True, **raw})
    if not isinstance(policy.fan_in, int) or isinstance(policy.fan_in, bool) or policy.fan_in < 1:
        raise TypeError(f"incast fan_in must be a whole number of senders >= 1, not {policy.fan_in!r}")
    if not isinstance(policy.duration_s, int) or isinstance(policy.duration_s, bool) or policy.duration_s < 1:
        raise TypeError(f"incast duration_s must be a whole number of seconds >= 1, not {policy.duration_s!r}")
    if not str(policy.test).endswith("_bw"):
        raise TypeError(f"incast test must be a bandwidth test (ib_write_bw, ib_read_bw, ib_send_bw), not {policy.test!r}")
    return policy
