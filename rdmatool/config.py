"""The configuration file: a site's defaults for the inventory, the baseline store, the playbooks, the gate profile
and the site profile (RTT, RoCE / CNP priority and DSCP) that the suggested settings are computed with.

Where it is read from, the first that applies and only that one (files are never merged, so what a run used is
always one file to read):

1. `$RDMATOOL_CONFIG`: that file, which must exist; set but empty, no configuration file at all.
2. `$XDG_CONFIG_HOME/rdmatool/config.yaml` (`~/.config/rdmatool/config.yaml` by default).
3. `/etc/rdmatool/config.yaml`.

```yaml
inventory: inventory.yaml          # the default of -i
store: /var/lib/rdmatool/baselines # the default of --store
playbooks: /etc/rdmatool/playbooks # the default of --playbooks (the shipped ones otherwise)
gate_profile: gate.yaml            # the default of gate --profile
site:                              # the values the facts cannot tell (docs/tuning.md); SITE_DEFAULTS otherwise
  rtt_us: 25
  roce_priority: 4                 # this site's RoCE class: DSCP 34 on priority 4
  roce_dscp: 34
limits:                            # what one input may cost (rdmatool.limits); the defaults otherwise
  snapshot_bytes: 67108864         # one host's or switch's output for one snapshot
```

A relative path is read from the configuration file's folder, where such files usually live. An option given on the
command line always wins over the file (`--site roce_priority=4,roce_dscp=34` over its `site`, key by key). Every key is checked: an unknown key or a value of the wrong kind is an
error naming the file and the line (`FILE:LINE: ...`), so a typo never silently falls back to a default.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rdmatool import yamlio
from rdmatool.errors import RdmatoolError

ENV = "RDMATOOL_CONFIG"
SYSTEM_FILE = Path("/etc/rdmatool/config.yaml")
MAX_BYTES = 1024 * 1024  # a configuration file is a few lines; this only stops reading the wrong file
PATH_KEYS = ("inventory", "store", "playbooks", "gate_profile")


class ConfigError(RdmatoolError):
    """A configuration file that cannot be used; the message names the file and the line."""


def _whole(low: int, high: int) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return f"a whole number from {low} to {high}"
        return None
    return check


def _positive(value: Any) -> str | None:
    # finite too: `.inf` is greater than 0, and an infinite RTT or cable turns every threshold derived from it into
    # inf or nan far from here (a crash in the middle of a diagnosis)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value > 0 and math.isfinite(value)):
        return "a positive finite number"
    return None


def _one_of(*allowed: int) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value in allowed and not isinstance(value, bool) else f"one of {', '.join(map(str, allowed))}"
    return check


# The site profile keys a configuration file (or `--site KEY=VALUE`) may set, with what each accepts; SITE_DEFAULTS
# holds their defaults, the one place a site without a configuration file gets its RoCE / CNP class from (the rules,
# the playbooks' `{site.KEY}` templates, the capture reader and the suggesters all read it).
SITE_KEYS: dict[str, Callable[[Any], str | None]] = {
    "rtt_us": _positive,  # NIC-to-NIC unloaded RTT: the ECN thresholds' BDP (docs/tuning.md §2.3)
    "roce_priority": _whole(0, 7),  # the lossless priority of RoCE data (docs/tuning.md §1.1)
    "roce_dscp": _whole(0, 63),
    "cnp_priority": _whole(0, 7),
    "cnp_dscp": _whole(0, 63),
    "mtu": _whole(576, 9216),  # the port's Ethernet MTU, for the PFC headroom
    "roce_mtu": _one_of(256, 512, 1024, 2048, 4096),
    "cable_length_m": _positive,
}
SITE_DEFAULTS: dict[str, Any] = {
    "rtt_us": 10,  # docs/tuning.md §2.3: the 10 µs column (one pod, NIC-to-NIC unloaded RTT)
    "roce_priority": 3,  # docs/tuning.md §1.1: RoCE data DSCP 26 → switch priority 3, PFC on 3
    "roce_dscp": 26,
    "cnp_priority": 6,  # docs/tuning.md §1.1: CNP DSCP 48 → priority 6, strict
    "cnp_dscp": 48,
    "mtu": 9216,  # port (Ethernet) MTU for headroom / mlx5 xoff; docs/tuning.md §3.1 worked examples
    "roce_mtu": 4096,  # RoCE path MTU for the Kmin→Kmax ramp when no active_mtu fact is present
    "cable_length_m": None,  # the real cable length when known; else the longer of the configured ones
}
ECT0 = 2  # the ECN field of an ECN-capable packet, ECT(0): RoCE's ToS byte is DSCP×4 + ECT(0) (docs/tuning.md §1.1)


def site_profile(given: dict[str, Any] | None = None) -> dict[str, Any]:
    """The site profile in effect: SITE_DEFAULTS, overridden by what the configuration file or `--site` gives (and
    by any other key a caller adds, such as the suggesters' `xoff_bytes`); `roce_tos` derived from `roce_dscp`."""
    profile = {**SITE_DEFAULTS, **(given or {})}
    profile["roce_tos"] = int(profile["roce_dscp"]) * 4 + ECT0
    return profile


def parse_site_option(values: list[str] | tuple[str, ...] | None) -> dict[str, Any]:
    """`--site KEY=VALUE` (repeatable, or `KEY=VALUE,KEY=VALUE`) as site profile values, each checked as the
    configuration file's are; ConfigError names the option and the key."""
    site: dict[str, Any] = {}
    for item in (part.strip() for value in values or () for part in value.split(",")):
        if not item:
            continue
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not text.strip():
            raise ConfigError(f"--site {item}: takes KEY=VALUE (keys: {', '.join(SITE_KEYS)})")
        check = SITE_KEYS.get(key)
        if check is None:
            raise ConfigError(f"--site {item}: unknown site key {yamlio.quote(key)} (known: {', '.join(SITE_KEYS)})")
        value = _number(text.strip())
        problem = check(value)
        if problem:
            raise ConfigError(f"--site {item}: site.{key} takes {problem}, not {yamlio.quote(text.strip())}")
        site[key] = value
    return site


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


@dataclass(frozen=True)
class Config:
    """What the configuration file says; `path` None when no file was read. `lines` says where each key was set
    (`site.rtt_us` for a site key), for `rdmatool config show`."""

    path: str | None = None
    searched: tuple[str, ...] = ()
    inventory: str | None = None
    store: str | None = None
    playbooks: str | None = None
    gate_profile: str | None = None
    site: dict[str, Any] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)

    def source(self, key: str) -> str | None:
        """`FILE:LINE` where `key` was set, None when the file does not set it."""
        line = self.lines.get(key)
        return f"{self.path}:{line}" if self.path and line else None


def candidates(env: dict[str, str] | None = None) -> list[Path] | None:
    """The files looked for, in order; None when RDMATOOL_CONFIG is set but empty (no file wanted)."""
    env = os.environ if env is None else env
    if ENV in env:
        return [Path(env[ENV]).expanduser()] if env[ENV] else None
    home = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return [Path(home).expanduser() / "rdmatool" / "config.yaml", SYSTEM_FILE]


def load(env: dict[str, str] | None = None) -> Config:
    """The configuration in effect: the first file found (see the module's docstring), or none."""
    env = os.environ if env is None else env
    files = candidates(env)
    if files is None:
        return Config()
    explicit = ENV in env
    for path in files:
        if explicit or path.is_file():  # RDMATOOL_CONFIG names a file that must be there
            return read(path, searched=tuple(map(str, files)))
    return Config(searched=tuple(map(str, files)))


def read(path: Path, searched: tuple[str, ...] = ()) -> Config:
    """One configuration file, every key checked."""
    text = _text(path)
    try:
        data = yamlio.loads(text, str(path)) if text.strip() else None
    except yamlio.YamlError as exc:  # already FILE:LINE: problem
        raise ConfigError(str(exc)) from None
    lines = _key_lines(text)
    if data is None:
        return Config(path=str(path), searched=searched)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:{yamlio.line_of(data) or 1}: a configuration file is a mapping of keys "
                          f"({', '.join((*PATH_KEYS, 'site', 'limits'))})")
    known = (*PATH_KEYS, "site", "limits")
    for key in data:
        if key not in known:
            raise ConfigError(f"{path}:{lines.get(str(key), data.line)}: unknown key {yamlio.quote(key)} (known: "
                              f"{', '.join(known)})")
    values: dict[str, Any] = {}
    for key in PATH_KEYS:
        if key in data:
            values[key] = _path(path, data[key], f"{path}:{lines.get(key, data.line)}: {key}")
    site = _site(path, data.get("site"), lines, data.line)
    bounds = _limits(path, data.get("limits"), lines, data.line)
    return Config(path=str(path), searched=searched, site=site, limits=bounds, lines=lines, **values)


def _text(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file ({ENV} names it)") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a configuration file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_BYTES} bytes; not a configuration file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _key_lines(text: str) -> dict[str, int]:
    """The line of each top-level key and of each key under `site` and `limits` (as `site.KEY`). yamlio keeps the line of each
    mapping only; the file has passed its checks (size, aliases, nesting) before this second, node-level read."""
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return {}
    lines: dict[str, int] = {}
    if not isinstance(root, yaml.MappingNode):
        return lines
    for key, value in root.value:
        if isinstance(key, yaml.ScalarNode):
            lines[key.value] = key.start_mark.line + 1
            if key.value in ("site", "limits") and isinstance(value, yaml.MappingNode):
                for sub, _ in value.value:
                    if isinstance(sub, yaml.ScalarNode):
                        lines[f"{key.value}.{sub.value}"] = sub.start_mark.line + 1
    return lines


def _path(config: Path, raw: Any, where: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise ConfigError(f"{where}: takes a path, not {yamlio.quote(raw)}")
    value = Path(raw).expanduser()
    return str(value if value.is_absolute() else config.parent / value)


def _site(path: Path, raw: Any, lines: dict[str, int], top_line: int) -> dict[str, Any]:
    return _section("site", SITE_KEYS, path, raw, lines, top_line)


def _limits(path: Path, raw: Any, lines: dict[str, int], top_line: int) -> dict[str, int]:
    from rdmatool import limits

    checks = {key: (lambda value, key=key: limits.problem(key, value)) for key in limits.RANGES}
    return _section("limits", checks, path, raw, lines, top_line)


def _section(name: str, checks: dict[str, Callable[[Any], str | None]], path: Path, raw: Any,
             lines: dict[str, int], top_line: int) -> dict[str, Any]:
    """A mapping section of the file (`site`, `limits`): every key known and its value what its check accepts;
    ConfigError with FILE:LINE otherwise."""
    if raw is None:
        return {}
    where = f"{path}:{lines.get(name, top_line)}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: {name} is a mapping of {', '.join(checks)}")
    values = {}
    for key, value in raw.items():
        at = f"{path}:{lines.get(f'{name}.{key}', yamlio.line_of(raw) or top_line)}"
        check = checks.get(key) if isinstance(key, str) else None
        if check is None:
            raise ConfigError(f"{at}: unknown {name} key {yamlio.quote(key)} (known: {', '.join(checks)})")
        problem = check(value)
        if problem:
            raise ConfigError(f"{at}: {name}.{key} takes {problem}, not {yamlio.quote(value)}")
        values[key] = value
    return values
