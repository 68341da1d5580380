"""Frozen value types that flow through the pipeline, and the enums of their closed sets.

Every arrow of the pipeline is a plain function over these immutable values, so a bundle replays the same analysis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from rdmatool import platforms


class TargetKind(str, Enum):
    HOST = "host"
    SWITCH = "switch"


# One member per module of rdmatool.platforms (Platform.SONIC = "sonic"), in the registry's order: a new switch OS is
# a new module there, not a line here.
Platform = Enum("Platform", [(m.NAME.upper(), m.NAME) for m in platforms.MODULES], type=str, module=__name__,
                qualname="Platform")


class MetricKind(str, Enum):
    COUNTER = "counter"  # cumulative; only its rate between snapshots means anything
    GAUGE = "gauge"  # an instantaneous or configured number
    STATE = "state"  # text: a state, a version, an identifier


class Severity(str, Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"


class Verdict(str, Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Target:
    """One host or switch as resolved from the inventory (group and default inheritance already applied)."""

    name: str
    address: str
    kind: TargetKind = TargetKind.HOST
    platform: Platform = Platform.LINUX
    role: str | None = None
    user: str | None = None
    port: int = 22
    identity_file: str | None = None  # the key file as this machine opens it (`~` expanded): for connecting
    proxy_jump: str | None = None
    groups: tuple[str, ...] = ()
    ports: tuple[str, ...] = ()  # switch ports to read per-port counters from; empty = discover via LLDP
    # The name of an environment variable holding a password, never the password itself: inventories are
    # shared and bundles are copied around, so a secret must not live in either.
    password_env: str | None = field(default=None, repr=False, compare=False)
    # The key file as the inventory wrote it (`~/.ssh/id_ed25519`, a relative path): what `public()` records.
    # Bundles travel, and the collecting machine's home directory or temporary paths are nobody else's business.
    identity_file_as_given: str | None = field(default=None, compare=False)

    def public(self) -> dict:
        """The resolved target without anything secret (for `inventory show` and the bundle)."""
        out = {
            "name": self.name,
            "address": self.address,
            "kind": self.kind.value,
            "platform": self.platform.value,
            "role": self.role,
            "user": self.user,
            "port": self.port,
            "identity_file": self.identity_file if self.identity_file_as_given is None else self.identity_file_as_given,
            "proxy_jump": self.proxy_jump,
            "groups": list(self.groups),
        }
        if self.ports:
            out["ports"] = list(self.ports)
        return out


@dataclass(frozen=True)
class CommandResult:
    """Raw text of one logical command on one target; a failure is a value, never an exception."""

    target: str
    parser: str
    command: str
    stdout: str
    exit_code: int | None = 0
    stderr: str = ""
    qualifier: str | None = None
    started: str | None = None
    duration_s: float | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_code == 0


@dataclass(frozen=True, slots=True)  # slots: a quarter off building each of the ~900,000 samples of a big bundle
class Sample:
    """One observation from a tool output, in the canonical vocabulary.

    `entity` says what it is about (`mlx5_0/1`, `mlx5_0`, `eth2`, `Ethernet0`, `ib_write_bw`); `raw_key` keeps the
    tool's own name for the field so an engineer can find it again in the raw output.
    """

    entity: str
    metric: str
    value: int | float | None = None  # ints stay ints: 64-bit counters exceed a float's 53-bit mantissa
    text: str | None = None
    priority: int | None = None
    size_bytes: int | None = None
    raw_key: str | None = None

    def as_dict(self) -> dict:
        """The public JSON shape (`rdmatool parse --json`): exactly these seven keys."""
        value = self.value
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            value = int(value)
        return {
            "entity": self.entity,
            "metric": self.metric,
            "value": value,
            "text": self.text,
            "priority": self.priority,
            "size_bytes": self.size_bytes,
            "raw_key": self.raw_key,
        }


@dataclass(frozen=True)
class Suggestion:
    """A concrete setting change with its reasoning and the exact commands per platform; printed, never applied."""

    setting: str
    current: str | None
    proposed: str
    rationale: str
    commands: dict[str, list[str]] = field(default_factory=dict)
    target: str | None = None  # the device the change is made on (a suggestion may also print its cable peer's)
    # platform → the device its commands run on, for the platforms that are not `target`'s own (its cable peer)
    devices: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Finding:
    """One diagnosis: the four columns of the troubleshooting table plus the evidence that triggered it."""

    rule: str
    severity: Severity
    target: str
    entity: str | None
    symptom: str
    cause: str
    check: str
    fix: str
    evidence: dict = field(default_factory=dict)
    suggestions: tuple[Suggestion, ...] = ()
    # The id (rdmatool.outcome.result.finding_ids) of the finding of another rule that explains this one on the same target
    # and port (the playbook's `explains`): the table prints the two as one block; nothing else leaves it out.
    explained_by: str | None = None
