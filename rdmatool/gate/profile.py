"""The gate's policy: what each stage checks, its deadline, and what counts as good enough.

A profile is a small YAML file; every key is optional and falls back to the defaults below. Unknown keys are an
error naming the file, so a typo never silently disables a check.

```yaml
counters_window_s: 10        # stage 2: seconds between the two counter reads
bandwidth: {enabled: true, test: ib_write_bw, rounds: 3, duration_s: 5, size_bytes: 1048576, qps: 2,
            min_fraction_of_line_rate: 0.9}
latency: {enabled: false, test: ib_send_lat, max_p99_us: 10.0, max_p999_over_typical: 5.0}
incast: {fan_in: 4, duration_s: 10}  # optional stage 5 (off unless given): N senders -> 1 receiver per leaf
storage: {clients_per_node: 4, duration_s: 10}  # optional (off unless given): compute hosts read each storage node
nccl: {nodes: 2, size_bytes: 1073741824}  # optional stage 6 (off unless given): all_reduce_perf with the recipe
deadlines_s: {state: 60, counters: 60, bandwidth: 300, latency: 120, incast: 180, nccl: 300}
allow_missing: 0             # targets unreachable or not read in full (deadline, hung command) tolerated before inconclusive
skip_rules: []               # rule ids the site has decided not to gate on
topology: topology.yaml      # the expected cabling (rdmatool.topology.expected; relative to this file): with it
                             # the bandwidth pairs cross every leaf pair (bandwidth.schedule: auto|topology|random)
```
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from pathlib import Path

from rdmatool import yamlio
from rdmatool.errors import RdmatoolError

STAGES = ("state", "counters", "bandwidth", "latency", "incast", "nccl", "storage")


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
class NcclPolicy:
    """The nccl stage (rdmatool.gate.nccl_stage): nccl-tests' `binary` (all_reduce_perf) under mpirun on the first
    `nodes` hosts with a recipe, `gpus_per_node` ranks each, one `size_bytes`, `iterations` timed after `warmup`,
    each node with its `rdmatool nccl env` recipe and `env` laid over it (NCCL_* / UCX_* a site's jobs set). Off
    unless the profile has an `nccl` key."""

    enabled: bool = False
    nodes: int = 2
    size_bytes: int = 1 << 30
    gpus_per_node: int = 8
    iterations: int = 20
    warmup: int = 5
    binary: str = "all_reduce_perf"
    env: dict = field(default_factory=dict)


@dataclass(frozen=True)
class StoragePolicy:
    """The storage stage (rdmatool.gate.storage_stage): the compute hosts read each storage node many-to-one,
    `clients_per_node` at once, through every NIC of the node, for `duration_s`; a node below
    `slow_share_of_median` of the fleet's median share of line rate is slow. Off unless the profile has a `storage`
    key."""

    enabled: bool = False
    clients_per_node: int = 4
    duration_s: int = 10
    test: str = "ib_read_bw"  # ib_write_bw for the write path
    size_bytes: int = 1048576
    qps: int = 2
    slow_share_of_median: float = 0.8


@dataclass(frozen=True)
class GateProfile:
    counters_window_s: float = 10.0
    bandwidth: BandwidthPolicy = field(default_factory=BandwidthPolicy)
    latency: LatencyPolicy = field(default_factory=LatencyPolicy)
    incast: IncastPolicy = field(default_factory=IncastPolicy)
    storage: StoragePolicy = field(default_factory=StoragePolicy)
    nccl: NcclPolicy = field(default_factory=NcclPolicy)
    deadlines_s: dict = field(default_factory=lambda: {"state": 60, "counters": 60, "bandwidth": 300, "latency": 120,
                                                       "incast": 180, "nccl": 300, "storage": 300})
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
    known = {"counters_window_s", "bandwidth", "latency", "incast", "nccl", "deadlines_s", "allow_missing",
             "skip_rules", "topology", "storage"}
    unknown = set(data) - known
    if unknown:
        raise ProfileError(f"{where}: unknown key(s) {sorted(unknown)} (known: {sorted(known)})")
    try:
        bandwidth = BandwidthPolicy(**_checked("bandwidth", data.get("bandwidth"), BandwidthPolicy()))
        latency = LatencyPolicy(**_checked("latency", data.get("latency"), LatencyPolicy()))
        incast = _incast(data.get("incast"))
        storage = _storage(data.get("storage"))
        nccl = _nccl(data.get("nccl"))
        top = _checked("", {k: data[k] for k in ("counters_window_s", "allow_missing") if k in data}, GateProfile())
        deadlines = {**GateProfile().deadlines_s, **_deadlines(data.get("deadlines_s"))}
        skip_rules = data.get("skip_rules") or []
        if not isinstance(skip_rules, list) or not all(isinstance(r, str) for r in skip_rules):
            raise TypeError(f"skip_rules takes a list of rule ids, not {yamlio.quote(skip_rules)}")
    except TypeError as exc:
        raise ProfileError(f"{where}: {exc}") from None
    if bandwidth.schedule not in ("auto", "topology", "random"):
        raise ProfileError(f"{where}: bandwidth.schedule takes auto, topology or random, not {bandwidth.schedule!r}")
    return GateProfile(
        counters_window_s=float(top.get("counters_window_s", 10.0)),
        bandwidth=bandwidth,
        latency=latency,
        incast=incast,
        storage=storage,
        nccl=nccl,
        deadlines_s=deadlines,
        allow_missing=int(top.get("allow_missing", 0)),
        skip_rules=tuple(skip_rules),
        topology=_topology(path, data.get("topology"), where),
    )


def _checked(section: str, raw, defaults) -> dict:
    """A section's values, each of its default's kind (TypeError naming the key otherwise): a number finite and
    above zero (a share of the line rate at most 1; `allow_missing` a count from 0), a flag a boolean, a name
    text. A bad value stops the profile at load, never a stage in the middle of a gate."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise TypeError(f"{section} takes a mapping, not {yamlio.quote(raw)}")
    out = {}
    for key, value in raw.items():
        name = f"{section}.{key}" if section else str(key)
        if not isinstance(key, str) or not hasattr(defaults, key) or key in ("deadlines_s", "skip_rules", "topology",
                                                                               "bandwidth", "latency", "incast", "nccl"):
            raise TypeError(f"unknown key {name}")
        out[key] = _value(name, value, getattr(defaults, key))
    return out


def _value(name: str, value, default):
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise TypeError(f"{name} takes true or false, not {yamlio.quote(value)}")
    elif isinstance(default, (int, float)):
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        whole = isinstance(default, int) and not isinstance(value, int)
        low_ok = number and (value >= 0 if name == "allow_missing" else value > 0)
        if not number or whole or not low_ok or (name.endswith("fraction_of_line_rate") and value > 1):
            kind = "a whole number" if isinstance(default, int) else "a number"
            limit = " from 0" if name == "allow_missing" else " above 0" + (
                ", at most 1" if name.endswith("fraction_of_line_rate") else "")
            raise TypeError(f"{name} takes {kind}{limit}, not {yamlio.quote(value)}")
    elif isinstance(default, str) and not isinstance(value, str):
        raise TypeError(f"{name} takes a name, not {yamlio.quote(value)}")
    return value


def _deadlines(raw) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or set(raw) - set(STAGES):
        raise TypeError(f"deadlines_s takes {', '.join(STAGES)}")
    return {stage: _value(f"deadlines_s.{stage}", seconds, 1.0) for stage, seconds in raw.items()}


def _topology(path: str | Path, raw, where: str) -> str | None:
    """The topology file, a relative name read from the profile's own folder (where the two usually live)."""
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip():
        raise ProfileError(f"{where}: topology takes the path of an expected-topology file")
    return str(Path(path).parent / raw) if not Path(raw).is_absolute() else raw


def _switched(section: str, raw, policy: type):  # noqa: ANN001 - the profile's YAML value
    """An optional stage's section when the value alone decides it: absent (the default, off), `true` / `false`
    (on or off with every default); None when it is a mapping to read. Anything else names the section's keys."""
    if raw is None:
        return policy()
    if raw is True or raw is False:
        return policy(enabled=raw)
    if not isinstance(raw, dict):
        keys = [f.name for f in fields(policy) if f.name != "enabled"]
        raise TypeError(f"{section} takes a mapping ({', '.join([*keys, 'enabled'])})")
    return None


def _incast(raw) -> IncastPolicy:
    """An `incast` mapping (even `{}`) turns the stage on, unless it says `enabled: false`."""
    if (switched := _switched("incast", raw, IncastPolicy)) is not None:
        return switched
    policy = IncastPolicy(**{"enabled": True, **raw})
    if not isinstance(policy.fan_in, int) or isinstance(policy.fan_in, bool) or policy.fan_in < 1:
        raise TypeError(f"incast fan_in must be a whole number of senders >= 1, not {policy.fan_in!r}")
    if not isinstance(policy.duration_s, int) or isinstance(policy.duration_s, bool) or policy.duration_s < 1:
        raise TypeError(f"incast duration_s must be a whole number of seconds >= 1, not {policy.duration_s!r}")
    if not str(policy.test).endswith("_bw"):
        raise TypeError(f"incast test must be a bandwidth test (ib_write_bw, ib_read_bw, ib_send_bw), not {policy.test!r}")
    return policy


def _nccl(raw) -> NcclPolicy:
    """An `nccl` mapping (even `{}`) turns the stage on, unless it says `enabled: false`; every value checked here,
    so a typo stops the profile at load rather than the stage at run time."""
    from rdmatool import commands

    if (switched := _switched("nccl", raw, NcclPolicy)) is not None:
        return switched
    env = raw.get("env") or {}
    plain = _checked("nccl", {k: v for k, v in raw.items() if k != "env"}, NcclPolicy())
    if plain.get("nodes", 2) < 2:
        raise TypeError(f"nccl.nodes takes a whole number of nodes from 2, not {plain['nodes']!r}")
    for key, most in (("gpus_per_node", 64), ("size_bytes", 1 << 40), ("iterations", 100000), ("warmup", 100000)):
        if plain.get(key, 1) > most:
            raise TypeError(f"nccl.{key} takes at most {most}, not {plain[key]!r}")
    if not commands.NCCL_TESTS_BINARY.fullmatch(plain.get("binary", "all_reduce_perf")):
        raise TypeError(f"nccl.binary takes a program name or an absolute path, not {yamlio.quote(plain['binary'])}")
    if not isinstance(env, dict):
        raise TypeError(f"nccl.env takes a mapping of NCCL_* / UCX_* variables, not {yamlio.quote(env)}")
    for name, value in env.items():
        text = str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
        if not commands.NCCL_ENV_NAME.fullmatch(str(name)) or text is None \
                or not commands.NCCL_ENV_VALUE.fullmatch(text):
            raise TypeError(f"nccl.env: {name}: a NCCL_* or UCX_* variable with a value of letters, digits and "
                            f"_.,:=^/+- only, not {yamlio.quote(value)}")
    return NcclPolicy(**{"enabled": True, **plain, "env": {str(k): str(v) for k, v in env.items()}})


def _storage(raw) -> StoragePolicy:
    """A `storage` mapping (even `{}`) turns the stage on, unless it says `enabled: false`; each value of its
    default's kind, the test a read or write bandwidth test, the slow share above 0 and at most 1."""
    if (switched := _switched("storage", raw, StoragePolicy)) is not None:
        return switched
    policy = StoragePolicy(**{"enabled": True, **_checked("storage", raw, StoragePolicy())})
    if policy.test not in ("ib_read_bw", "ib_write_bw"):
        raise TypeError(f"storage.test takes ib_read_bw (reads) or ib_write_bw (writes), not {yamlio.quote(policy.test)}")
    if policy.slow_share_of_median > 1:
        raise TypeError(f"storage.slow_share_of_median takes a number above 0, at most 1, not "
                        f"{yamlio.quote(policy.slow_share_of_median)}")
    return policy
