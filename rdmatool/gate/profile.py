"""The gate's policy: what each stage checks, its deadline, and what counts as good enough.

A profile is a small YAML file; every key is optional and falls back to the defaults below. Unknown keys are an
error naming the file, so a typo never silently disables a check.

```yaml
counters_window_s: 10        # stage 2: seconds between the two counter reads
bandwidth: {enabled: true, test: ib_write_bw, rounds: 3, duration_s: 5, size_bytes: 1048576, qps: 2,
            min_fraction_of_line_rate: 0.9}
latency: {enabled: false, test: ib_send_lat, max_p99_us: 10.0, max_p999_over_typical: 5.0}
deadlines_s: {state: 60, counters: 60, bandwidth: 300, latency: 120}
allow_missing: 0             # unreachable targets tolerated before the verdict is inconclusive
skip_rules: []               # rule ids the site has decided not to gate on
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rdmatool import yamlio
from rdmatool.errors import RdmatoolError

STAGES = ("state", "counters", "bandwidth", "latency")


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


@dataclass(frozen=True)
class LatencyPolicy:
    enabled: bool = False
    test: str = "ib_send_lat"
    max_p99_us: float = 10.0
    max_p999_over_typical: float = 5.0


@dataclass(frozen=True)
class GateProfile:
    counters_window_s: float = 10.0
    bandwidth: BandwidthPolicy = field(default_factory=BandwidthPolicy)
    latency: LatencyPolicy = field(default_factory=LatencyPolicy)
    deadlines_s: dict = field(default_factory=lambda: {"state": 60, "counters": 60, "bandwidth": 300, "latency": 120})
    allow_missing: int = 0
    skip_rules: tuple[str, ...] = ()


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
    known = {"counters_window_s", "bandwidth", "latency", "deadlines_s", "allow_missing", "skip_rules"}
    unknown = set(data) - known
    if unknown:
        raise ProfileError(f"{where}: unknown key(s) {sorted(unknown)} (known: {sorted(known)})")
    try:
        bandwidth = BandwidthPolicy(**dict(data.get("bandwidth") or {}))
        latency = LatencyPolicy(**dict(data.get("latency") or {}))
    except TypeError as exc:
        raise ProfileError(f"{where}: {exc}") from None
    deadlines = {**GateProfile().deadlines_s, **dict(data.get("deadlines_s") or {})}
    if set(deadlines) - set(STAGES):
        raise ProfileError(f"{where}: deadlines_s takes {', '.join(STAGES)}")
    return GateProfile(
        counters_window_s=float(data.get("counters_window_s", 10.0)),
        bandwidth=bandwidth,
        latency=latency,
        deadlines_s=deadlines,
        allow_missing=int(data.get("allow_missing", 0)),
        skip_rules=tuple(data.get("skip_rules") or ()),
    )
