"""rdmatool's own inventory format, and the resolution every format ends in: entries with group and default
inheritance, host ranges (`rdmatool.present.hostlist`, ClusterShell syntax) and ~/.ssh/config → validated Targets. Every value that will reach a command line or a
file name is checked here, with `fullmatch`."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from rdmatool import platforms, yamlio
from rdmatool.errors import InventoryError
from rdmatool.model import Platform, Target, TargetKind
from rdmatool.present import hostlist
from rdmatool.transport.ssh_library import paramiko

# Validators are used with fullmatch: `$` would also accept a trailing newline, and these values reach command
# lines and file names.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # also a directory name inside bundles
_ADDRESS = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[?[0-9A-Fa-f:.]{1,64}\]?")
_USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}")
_PORT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9/._:-]{0,63}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_PROXY = re.compile(r"(?:[A-Za-z0-9_.-]{1,64}@)?[A-Za-z0-9_.:\[\]-]{1,260}")
_GROUP_NAME_MAX = 128
_IDENTITY_MAX = 4096
# A whole inventory, not only one pattern: many entries each just under the hostlist limit must not add up to
# millions of targets.
_MAX_TARGETS = 100_000
MAX_TARGETS = _MAX_TARGETS  # the Ansible readers count against it too, before they build entries
MAX_GROUPS_PER_TARGET = 256  # every target carries its group names: that list must not multiply the inventory
SECRET_KEYS = {"password", "ansible_password", "ansible_ssh_pass", "ansible_become_pass", "secret"}
_KNOWN_KEYS = {
    "name", "address", "group", "groups", "kind", "platform", "role", "user", "port", "identity_file",
    "proxy_jump", "ports", "password_env",
}
_SWITCH_PLATFORMS = {Platform(m.NAME) for m in platforms.SWITCHES}
_HOST_PLATFORMS = {Platform(m.NAME) for m in platforms.HOSTS}
# ansible_network_os → platform: each platform module's ALIASES
ANSIBLE_OS = {alias: Platform(m.NAME) for m in platforms.MODULES for alias in m.ALIASES}


def from_native(data: dict, path: Path, config: paramiko.SSHConfig | None) -> list[Target]:
    defaults = data.get("defaults") or {}
    groups = data.get("groups") or {}
    if not isinstance(defaults, dict):
        raise InventoryError(f"{path}:{yamlio.line_of(data)}: `defaults` must be a mapping")
    _check_keys(defaults, f"{path}:{yamlio.line_of(defaults) or yamlio.line_of(data)}", "`defaults`")
    if not isinstance(groups, dict):
        raise InventoryError(f"{path}:{yamlio.line_of(data)}: `groups` must map group names to mappings")
    for group_name, group in groups.items():
        where = f"{path}:{yamlio.line_of(group) or yamlio.line_of(groups) or yamlio.line_of(data)}"
        check_group_name(group_name, where)
        if not isinstance(group, dict):
            raise InventoryError(f"{where}: group {group_name!r} must be a mapping, not {yamlio.quote(group)}")
        _check_keys(group, where, f"group {group_name!r}")
    entries = data.get("targets")
    if not isinstance(entries, list):
        raise InventoryError(f"{path}:{yamlio.line_of(data)}: `targets` must be a list")
    return resolve(entries, defaults, groups, path, config)


def check_group_name(name: Any, where: str) -> None:
    """Group names end up in `--limit` matching, reports and the bundle: plain text only."""
    if not isinstance(name, str) or not name or len(name) > _GROUP_NAME_MAX or not name.isprintable():
        raise InventoryError(f"{where}: a group name must be a non-empty string, not {yamlio.quote(name)}")


def _check_keys(mapping: dict, where: str, what: str) -> None:
    odd = [k for k in mapping if not isinstance(k, str)]
    if odd:
        raise InventoryError(f"{where}: {what}: keys must be strings, not {yamlio.quote(odd[0])}")


def resolve(
    entries: list, defaults: dict, groups: dict | None, path: Path, config: paramiko.SSHConfig | None
) -> list[Target]:
    """`groups` is None for Ansible inventories, whose group variables are already folded into each entry."""
    targets: list[Target] = []
    seen: dict[str, int] = {}
    total = 0
    for entry in entries:  # counted from the ranges first: an oversized inventory is refused before any work
        line = yamlio.line_of(entry)
        where = f"{path}:{line}" if line else str(path)
        if not isinstance(entry, dict):
            raise InventoryError(f"{where}: a target must be a mapping, got {yamlio.quote(entry)}")
        _check_keys(entry, where, "a target")
        total += _count_entry(entry, where)
        if total > _MAX_TARGETS:
            raise InventoryError(f"{where}: the inventory expands to more than {_MAX_TARGETS} targets (the limit)")
    for entry in entries:
        line = yamlio.line_of(entry)
        where = f"{path}:{line}" if line else str(path)
        for expanded in _expand_entry(entry, where):
            merged = _merge(expanded, defaults, groups, where)
            target = _build_target(merged, where, config)
            if target.name in seen:
                raise InventoryError(f"{where}: target {target.name!r} defined twice (first at line {seen[target.name]})")
            seen[target.name] = line
            targets.append(target)
    if not targets:
        raise InventoryError(f"{path}: the inventory has no targets")
    return targets


def _count_entry(entry: dict, where: str) -> int:
    """How many targets an entry stands for, from its name's ranges alone (nothing is expanded yet)."""
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise InventoryError(f"{where}: target without a `name`")
    try:
        return hostlist.count(name)
    except ValueError as exc:
        raise InventoryError(f"{where}: {exc}") from None


def _expand_entry(entry: dict, where: str) -> list[dict]:
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise InventoryError(f"{where}: target without a `name`")
    address = entry.get("address")
    if address is not None and not isinstance(address, str):
        raise InventoryError(f"{where}: target {yamlio.quote(name)}: address must be a string, not "
                             f"{yamlio.quote(address)}")
    try:
        names = hostlist.expand(name)
        addresses = hostlist.expand(address) if address is not None else [None] * len(names)
    except ValueError as exc:
        raise InventoryError(f"{where}: {exc}") from None
    if len(addresses) != len(names):
        raise InventoryError(
            f"{where}: name {yamlio.quote(name)} expands to {len(names)} targets but address "
            f"{yamlio.quote(address)} to {len(addresses)}; the two ranges must have the same count"
        )
    return [{**entry, "name": n, "address": a} for n, a in zip(names, addresses, strict=False)]


def _group_names(entry: dict, where: str) -> list[str]:
    """`groups: [a, b]` or `groups: a` or `group: a`; each a known group's name (a string)."""
    raw = entry.get("groups") or ([entry["group"]] if entry.get("group") else [])
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, (list, tuple)):
        raise InventoryError(f"{where}: target {yamlio.quote(entry['name'])}: `groups` must be a group name or a list of them, "
                             f"not {yamlio.quote(raw)}")
    if len(raw) > MAX_GROUPS_PER_TARGET:
        raise InventoryError(f"{where}: target {yamlio.quote(entry['name'])} in more than {MAX_GROUPS_PER_TARGET} "
                             "groups (the limit)")
    for group_name in raw:
        check_group_name(group_name, where)
    return list(raw)


def _merge(entry: dict, defaults: dict, groups: dict | None, where: str) -> dict:
    group_names = _group_names(entry, where)
    merged: dict[str, Any] = dict(defaults)
    for group_name in group_names if groups is not None else ():
        if group_name not in groups:
            raise InventoryError(f"{where}: target {yamlio.quote(entry['name'])} names unknown group {yamlio.quote(group_name)}")
        merged.update(groups[group_name])
    merged.update({k: v for k, v in entry.items() if v is not None})
    merged["groups"] = tuple(group_names)
    unknown = set(merged) - _KNOWN_KEYS - SECRET_KEYS - {"ansible_vars"}
    if unknown:
        shown = yamlio.shorten(str(sorted(unknown, key=str)))
        raise InventoryError(f"{where}: unknown key(s) {shown} for target {yamlio.quote(entry['name'])}")
    if set(merged) & SECRET_KEYS:
        raise InventoryError(
            f"{where}: target {yamlio.quote(entry['name'])}: passwords do not belong in an inventory; use keys, or "
            "`password_env: VARNAME` naming an environment variable"
        )
    return merged


def _text(m: dict, key: str, where: str, name: str, numbers: bool = False) -> str | None:
    """A setting that must be one plain value: a string (or, with `numbers`, an integer written bare)."""
    value = m.get(key)
    if value is None:
        return None
    if isinstance(value, str) or (numbers and isinstance(value, int) and not isinstance(value, bool)):
        return str(value)
    raise InventoryError(f"{where}: target {name!r}: {key} must be a string, not {yamlio.quote(value)}")


def _build_target(m: dict, where: str, config: paramiko.SSHConfig | None) -> Target:
    name = str(m["name"])
    if not _NAME.fullmatch(name):
        raise InventoryError(f"{where}: invalid target name {yamlio.quote(name)} (letters, digits, . _ - only)")
    looked_up = config.lookup(name) if config is not None else {}
    explicit_address = m.get("address")
    address = str(explicit_address or looked_up.get("hostname") or name)
    if not _ADDRESS.fullmatch(address):
        raise InventoryError(f"{where}: target {name!r}: invalid address {yamlio.quote(address)}")
    user = _text(m, "user", where, name, numbers=True) or looked_up.get("user")
    if user is not None and not _USER.fullmatch(str(user)):
        raise InventoryError(f"{where}: target {name!r}: invalid user {yamlio.quote(user)}")
    port = m.get("port", looked_up.get("port", 22))
    try:
        if isinstance(port, bool) or not isinstance(port, (int, str)):
            raise ValueError
        port = int(port)
        if not 1 <= port <= 65535:
            raise ValueError
    except ValueError:
        raise InventoryError(f"{where}: target {name!r}: invalid port {yamlio.quote(port)}") from None
    identity, identity_given = _identity(m, looked_up, where, name)
    platform_raw = _text(m, "platform", where, name) or "linux"
    try:
        platform = Platform(platform_raw.lower())
    except ValueError:
        choices = ", ".join(p.value for p in Platform)
        raise InventoryError(f"{where}: target {name!r}: unknown platform {yamlio.quote(platform_raw)} "
                             f"({choices})") from None
    kind_raw = _text(m, "kind", where, name) or ("switch" if platform in _SWITCH_PLATFORMS else "host")
    try:
        kind = TargetKind(kind_raw.lower())
    except ValueError:
        raise InventoryError(f"{where}: target {name!r}: kind must be host or switch, not "
                             f"{yamlio.quote(kind_raw)}") from None
    if kind is TargetKind.SWITCH and platform not in _SWITCH_PLATFORMS:
        choices = ", ".join(m.NAME for m in platforms.SWITCHES)
        raise InventoryError(f"{where}: switch {name!r} needs a switch platform ({choices})")
    if kind is TargetKind.HOST and platform not in _HOST_PLATFORMS:
        hosts = ", ".join(m.NAME for m in platforms.HOSTS)
        raise InventoryError(f"{where}: host {name!r} must have platform {hosts}, not {platform.value}")
    role = _text(m, "role", where, name, numbers=True)
    if role is not None and (len(role) > _GROUP_NAME_MAX or not role.isprintable()):
        raise InventoryError(f"{where}: target {name!r}: invalid role {yamlio.quote(role)}")
    ports = m.get("ports") or ()
    if isinstance(ports, str):
        ports = [p.strip() for p in ports.split(",")]
    if not isinstance(ports, (list, tuple)):
        raise InventoryError(f"{where}: target {name!r}: ports must be a list of switch port names, not "
                             f"{yamlio.quote(ports)}")
    for p in ports:
        if isinstance(p, bool) or not isinstance(p, (str, int)) or not _PORT_NAME.fullmatch(str(p)):
            raise InventoryError(f"{where}: target {name!r}: invalid switch port name {yamlio.quote(p)}")
    password_env = _text(m, "password_env", where, name)
    if password_env is not None and not _ENV_NAME.fullmatch(password_env):
        raise InventoryError(f"{where}: target {name!r}: password_env must name an environment variable")
    proxy = _text(m, "proxy_jump", where, name) or looked_up.get("proxyjump")
    if proxy is not None and not _PROXY.fullmatch(str(proxy)):
        raise InventoryError(f"{where}: target {name!r}: invalid proxy_jump {yamlio.quote(proxy)}")
    return Target(
        name=name,
        address=address,
        kind=kind,
        platform=platform,
        role=role,
        user=None if user is None else str(user),
        port=port,
        identity_file=identity,
        identity_file_as_given=identity_given,
        proxy_jump=None if proxy is None else str(proxy),
        groups=tuple(m.get("groups", ())),
        ports=tuple(str(p) for p in ports),
        password_env=password_env,
    )


def _identity(m: dict, looked_up: dict, where: str, name: str) -> tuple[str | None, str | None]:
    """(the key file this machine connects with, the key file as written for the record).

    Bundles and `inventory show` carry the second: `~/.ssh/id_ed25519` says what was meant without telling
    everyone who reads a bundle the collecting machine's home directory or temporary paths.
    """
    given = _text(m, "identity_file", where, name) or None  # an empty one defers to ~/.ssh/config
    if given is None:
        from_config = looked_up.get("identityfile") or [None]
        given = from_config[0] if isinstance(from_config, list) else from_config
        if given is None:
            return None, None
        given = _home_contracted(str(given))  # ssh_config lookups come back with `~` already expanded
    if not given or len(given) > _IDENTITY_MAX or not given.isprintable():
        raise InventoryError(f"{where}: target {name!r}: invalid identity_file {yamlio.quote(given)}")
    return os.path.expanduser(given), given


def _home_contracted(path: str) -> str:
    home = os.path.expanduser("~")
    if home not in ("~", "/") and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")):]
    return path
