"""The shapes a platform module fills in: a show command it runs, and the object its ECN thresholds live in."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SwitchCommand:
    parser: str  # the `rdmatool parse` name of the output
    command: str  # a template; `{port}` is filled with a validated switch port name
    per_port: bool = False
    counters: bool = True  # re-read in the second (counters-only) snapshot
    qualifier: str | None = None  # extra qualifier (e.g. the priority of an Onyx per-priority view)
    keep_echo: bool = False  # the output names neither port nor priority: keep the echoed command line with it


@dataclass(frozen=True)
class EcnObject:
    """What one block of a platform's ECN commands configures (rdmatool.tune.suggest.ecn): one `port`, or one
    object every port shares: a `wred-profile` (named in the switch's own ECN output, else by the site profile's
    `site_key`), a `global-profile` (`name`), or a `queuing-policy` bound to each port it serves (`site_key`)."""

    kind: str  # "port", "wred-profile", "global-profile" or "queuing-policy"
    name: str | None = None  # the one fixed name of a global profile
    site_key: str | None = None  # the site profile value that names it

