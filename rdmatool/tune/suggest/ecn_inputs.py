"""What the ECN thresholds are computed for and from (rdmatool.tune.suggest.ecn): the configured object, a port's
inputs, and the thresholds the switch shows now. Apart from ecn.py so that an input hook (incast.py) can read them
while ecn.py declares its hooks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rdmatool.tune.suggest.context import GLOBAL_ENTITIES, SuggestionContext

THRESHOLD_METRICS = ("ecn_min_threshold_bytes", "ecn_max_threshold_bytes", "ecn_max_probability_pct")


@dataclass(frozen=True)
class ConfigObject:
    """What one command block configures: a switch-wide object (`port` None) or one port."""

    switch: str
    platform: str
    kind: str  # "wred-profile", "global-profile", "queuing-policy", "port"
    name: str  # the profile, policy or port name
    ports: tuple[str, ...] = ()  # the ports the object's values apply to

    @property
    def label(self) -> str:
        if self.kind == "port":
            return f"{self.switch} {self.name}"
        what = {"wred-profile": "WRED profile", "global-profile": "congestion-control profile",
                "queuing-policy": "queuing policy"}[self.kind]
        return f"{self.switch} {what} {self.name}"


@dataclass
class PortInputs:
    """The figures one port's thresholds are computed from, each with where it came from."""

    port: str | None
    rate_gbps: float
    rate_source: str
    rtt_us: float
    xoff_bytes: float | None  # the PFC trigger of the lossless PG; None: not known
    xoff_source: str
    ramp_mtu: int
    notes: list[str] = field(default_factory=list)


def current_thresholds(ctx: SuggestionContext, obj: ConfigObject, prio: int) -> dict[str, float]:
    """metric → value of Kmin / Kmax / Pmax as the switch's own ECN output shows them for this object: the object's
    row, then its first port's, the switch-wide rows, then any other row of that switch's ECN output."""
    rows = ctx.rows(target=obj.switch, metric=list(THRESHOLD_METRICS))
    others = sorted({e for e in rows.get("entity", []) if isinstance(e, str)})
    entities = list(dict.fromkeys([obj.name, *obj.ports[:1], *GLOBAL_ENTITIES, *others]))
    found = {}
    for metric in THRESHOLD_METRICS:
        for entity in entities:
            got = ctx.value(obj.switch, entity, metric, prio)
            if got is None:
                got = ctx.value(obj.switch, entity, metric)
            if got is not None:
                found[metric] = got
                break
    return found
