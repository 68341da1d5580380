"""Inventory loading: rdmatool's YAML form, or an Ansible inventory (YAML or INI) → a list of resolved Targets.

Group and default inheritance, hostlist ranges and the user's ~/.ssh/config are all resolved once, here; every later
step sees plain Targets. Precedence, most specific first: target entry > its group > `defaults` > ~/.ssh/config >
built-in defaults. Every value that will reach a command line or a file name is validated here.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path
from typing import Any

import paramiko

from rdmatool import hostlist, yamlio
from rdmatool.errors import InventoryError
from rdmatool.model import Platform, Target, TargetKind

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")  # also a directory name inside bundles
_ADDRESS = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[?[0-9A-Fa-f:.]+\]?)$")
_USER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$")
_PORT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9/._:-]{0,63}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SECRET_KEYS = {"password", "ansible_password", "ansible_ssh_pass", "ansible_become_pass", "secret"}
_KNOWN_KEYS = {
    "name", "address", "group", "groups", "kind", "platform", "role", "user", "port", "identity_file",
    "proxy_jump", "ports", "password_env",
}
_SWITCH_PLATFORMS = {Platform.SONIC, Platform.CUMULUS, Platform.ONYX, Platform.EOS, Platform.NXOS}
_ANSIBLE_OS = {
    "sonic": Platform.SONIC, "dellemc.enterprise_sonic.sonic": Platform.SONIC,
    "cumulus": Platform.CUMULUS, "nvidia.nvue.nvue": Platform.CUMULUS, "cumulus_linux": Platform.CUMULUS,
    "onyx": Platform.ONYX, "mellanox.onyx.onyx": Platform.ONYX, "mlnxos": Platform.ONYX,
    "eos": Platform.EOS, "arista.eos.eos": Platform.EOS,
    "nxos": Platform.NXOS, "cisco.nxos.nxos": Platform.NXOS,
    "linux": Platform.LINUX,
}


def load(path: str | Path, ssh_config: str | Path | None = "~/.ssh/config") -> list[Target]:
    """Read an inventory file; raises InventoryError with `FILE[:LINE]: message` on any problem."""
    path = Path(path)
    config = _read_ssh_config(ssh_config)
    text = _read_text(path)
    if _looks_like_ini(text):
        entries = _ansible_ini_entries(text, path)
        return _resolve(entries, {}, None, path, config)
    try:
        data = yamlio.loads(text, str(path))
    except yamlio.YamlError as exc:
        raise InventoryError(str(exc)) from None
    if not isinstance(data, dict):
        raise InventoryError(f"{path}: an inventory is a mapping with `targets` (or an Ansible inventory)")
    if "targets" in data:
        return _native(data, path, config)
    if "all" in data or any(isinstance(v, dict) and ("hosts" in v or "children" in v) for v in data.values()):
        return _resolve(_ansible_yaml_entries(data, path), {}, None, path, config)
    raise InventoryError(f"{path}: no `targets` list (and not an Ansible inventory)")


def select(targets: list[Target], limit: str | None = None, shard: str | None = None) -> list[Target]:
    """`--limit` (comma-separated names or globs, also matching group names) and `--shard K/N` (1-based)."""
    chosen = targets
    if limit:
        patterns = [p.strip() for p in limit.split(",") if p.strip()] if "[" not in limit else _split_limit(limit)
        expanded = {p: set(_expand_quietly(p)) for p in patterns}
        chosen = [
            t for t in chosen
            if any(t.name in expanded[p] or fnmatch.fnmatchcase(t.name, p) or p in t.groups for p in patterns)
        ]
    if shard:
        match = re.fullmatch(r"(\d+)/(\d+)", shard.strip())
        if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
            raise InventoryError(f"--shard {shard!r}: expected K/N with 1 <= K <= N")
        k, n = int(match.group(1)), int(match.group(2))
        # Round-robin by sorted name: stable across runs and every target in exactly one shard.
        ordered = sorted(chosen, key=lambda t: t.name)
        keep = {t.name for i, t in enumerate(ordered) if i % n == k - 1}
        chosen = [t for t in chosen if t.name in keep]
    return chosen


def _split_limit(limit: str) -> list[str]:
    """Split on commas outside brackets, so `gpu[01-04,07],leaf*` is two patterns."""
    parts, depth, current = [], 0, ""
    for ch in limit:
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    parts.append(current.strip())
    return [p for p in parts if p]


def _expand_quietly(pattern: str) -> list[str]:
    try:
        return hostlist.expand(pattern)
    except ValueError:
        return []  # not a hostlist: it may still be a glob or a group name


# --- native format ------------------------------------------------------------------------------------------


def _native(data: dict, path: Path, config: paramiko.SSHConfig | None) -> list[Target]:
    defaults = data.get("defaults") or {}
    groups = data.get("groups") or {}
    if not isinstance(defaults, dict):
        raise InventoryError(f"{path}:{yamlio.line_of(data)}: `defaults` must be a mapping")
    if not isinstance(groups, dict) or not all(isinstance(g, dict) for g in groups.values()):
        raise InventoryError(f"{path}:{yamlio.line_of(groups)}: `groups` must map group names to mappings")
    entries = data.get("targets")
    if not isinstance(entries, list):
        raise InventoryError(f"{path}:{yamlio.line_of(data)}: `targets` must be a list")
    return _resolve(entries, defaults, groups, path, config)


def _resolve(
    entries: list, defaults: dict, groups: dict | None, path: Path, config: paramiko.SSHConfig | None
) -> list[Target]:
    """`groups` is None for Ansible inventories, whose group variables are already folded into each entry."""
    targets: list[Target] = []
    seen: dict[str, int] = {}
    for entry in entries:
        line = yamlio.line_of(entry)
        where = f"{path}:{line}" if line else str(path)
        if not isinstance(entry, dict):
            raise InventoryError(f"{where}: a target must be a mapping, got {entry!r}")
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


def _expand_entry(entry: dict, where: str) -> list[dict]:
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise InventoryError(f"{where}: target without a `name`")
    try:
        names = hostlist.expand(name)
        address = entry.get("address")
        addresses = hostlist.expand(str(address)) if address is not None else [None] * len(names)
    except ValueError as exc:
        raise InventoryError(f"{where}: {exc}") from None
    if len(addresses) != len(names):
        raise InventoryError(
            f"{where}: name {name!r} expands to {len(names)} targets but address {entry.get('address')!r} to "
            f"{len(addresses)}; the two ranges must have the same count"
        )
    return [{**entry, "name": n, "address": a} for n, a in zip(names, addresses, strict=False)]


def _merge(entry: dict, defaults: dict, groups: dict | None, where: str) -> dict:
    group_names = entry.get("groups") or ([entry["group"]] if entry.get("group") else [])
    if isinstance(group_names, str):
        group_names = [group_names]
    merged: dict[str, Any] = dict(defaults)
    for group_name in group_names if groups is not None else ():
        if group_name not in groups:
            raise InventoryError(f"{where}: target {entry['name']!r} names unknown group {group_name!r}")
        merged.update(groups[group_name])
    merged.update({k: v for k, v in entry.items() if v is not None})
    merged["groups"] = tuple(group_names)
    unknown = set(merged) - _KNOWN_KEYS - _SECRET_KEYS - {"ansible_vars"}
    if unknown:
        raise InventoryError(f"{where}: unknown key(s) {sorted(unknown)} for target {entry['name']!r}")
    if set(merged) & _SECRET_KEYS:
        raise InventoryError(
            f"{where}: target {entry['name']!r}: passwords do not belong in an inventory; use keys, or "
            "`password_env: VARNAME` naming an environment variable"
        )
    return merged


def _build_target(m: dict, where: str, config: paramiko.SSHConfig | None) -> Target:
    name = str(m["name"])
    if not _NAME.match(name):
        raise InventoryError(f"{where}: invalid target name {name!r} (letters, digits, . _ - only)")
    looked_up = config.lookup(name) if config is not None else {}
    explicit_address = m.get("address")
    address = str(explicit_address or looked_up.get("hostname") or name)
    if not _ADDRESS.match(address):
        raise InventoryError(f"{where}: target {name!r}: invalid address {address!r}")
    user = m.get("user") or looked_up.get("user")
    if user is not None and not _USER.match(str(user)):
        raise InventoryError(f"{where}: target {name!r}: invalid user {user!r}")
    port = m.get("port", looked_up.get("port", 22))
    try:
        port = int(port)
        if not 1 <= port <= 65535:
            raise ValueError
    except (TypeError, ValueError):
        raise InventoryError(f"{where}: target {name!r}: invalid port {port!r}") from None
    identity = m.get("identity_file") or (looked_up.get("identityfile") or [None])[0]
    try:
        platform = Platform(str(m.get("platform", "linux")).lower())
    except ValueError:
        choices = ", ".join(p.value for p in Platform)
        raise InventoryError(f"{where}: target {name!r}: unknown platform {m.get('platform')!r} ({choices})") from None
    kind_raw = m.get("kind") or ("switch" if platform in _SWITCH_PLATFORMS else "host")
    try:
        kind = TargetKind(str(kind_raw).lower())
    except ValueError:
        raise InventoryError(f"{where}: target {name!r}: kind must be host or switch, not {kind_raw!r}") from None
    if kind is TargetKind.SWITCH and platform not in _SWITCH_PLATFORMS:
        raise InventoryError(f"{where}: switch {name!r} needs a switch platform (sonic, cumulus, onyx, eos, nxos)")
    if kind is TargetKind.HOST and platform is not Platform.LINUX:
        raise InventoryError(f"{where}: host {name!r} must have platform linux, not {platform.value}")
    ports = m.get("ports") or ()
    if isinstance(ports, str):
        ports = [p.strip() for p in ports.split(",")]
    for p in ports:
        if not _PORT_NAME.match(str(p)):
            raise InventoryError(f"{where}: target {name!r}: invalid switch port name {p!r}")
    password_env = m.get("password_env")
    if password_env is not None and not _ENV_NAME.match(str(password_env)):
        raise InventoryError(f"{where}: target {name!r}: password_env must name an environment variable")
    proxy = m.get("proxy_jump") or looked_up.get("proxyjump")
    if proxy is not None and not re.fullmatch(r"(?:[A-Za-z0-9_.-]+@)?[A-Za-z0-9_.:\[\]-]+", str(proxy)):
        raise InventoryError(f"{where}: target {name!r}: invalid proxy_jump {proxy!r}")
    return Target(
        name=name,
        address=address,
        kind=kind,
        platform=platform,
        role=m.get("role"),
        user=None if user is None else str(user),
        port=port,
        identity_file=None if identity is None else os.path.expanduser(str(identity)),
        proxy_jump=None if proxy is None else str(proxy),
        groups=tuple(m.get("groups", ())),
        ports=tuple(str(p) for p in ports),
        password_env=password_env,
    )


# --- Ansible inventories ---------------------------------------------------------------------------------------


def _ansible_host_entry(name: str, hostvars: dict, group_chain: list[str], line: int) -> dict:
    entry: dict[str, Any] = {"name": name}
    entry_line = yamlio.LineDict()
    mapping = {
        "ansible_host": "address",
        "ansible_user": "user",
        "ansible_port": "port",
        "ansible_ssh_private_key_file": "identity_file",
    }
    for key, value in hostvars.items():
        if key in mapping:
            entry[mapping[key]] = value
        elif key == "ansible_network_os":
            os_name = str(value).lower()
            if os_name not in _ANSIBLE_OS:
                raise InventoryError(f"unknown ansible_network_os {value!r} for host {name!r}")
            entry["platform"] = _ANSIBLE_OS[os_name].value
        elif key in _SECRET_KEYS:
            continue  # Ansible keeps vault-encrypted secrets here; we never read or carry them
        elif key in ("rdmatool_role", "role"):
            entry["role"] = value
        elif key in ("rdmatool_ports",):
            entry["ports"] = value
    entry_line.update(entry)
    entry_line.line = line
    entry_line["groups"] = [g for g in group_chain if g not in ("all", "ungrouped")]
    return entry_line


def _ansible_yaml_entries(data: dict, path: Path) -> list[dict]:
    hosts: dict[str, dict] = {}

    def walk(group_name: str, group: Any, inherited: dict, chain: list[str]) -> None:
        if group is None:
            return
        if not isinstance(group, dict):
            raise InventoryError(f"{path}: Ansible group {group_name!r} must be a mapping")
        group_vars = {**inherited, **(group.get("vars") or {})}
        chain = [*chain, group_name]
        for host, hostvars in (group.get("hosts") or {}).items():
            merged = {**group_vars, **(hostvars or {})}
            previous = hosts.get(host)
            line = yamlio.line_of(hostvars) or yamlio.line_of(group)
            try:
                entry = _ansible_host_entry(str(host), merged, chain, line)
            except InventoryError as exc:
                raise InventoryError(f"{path}:{line}: {exc}") from None
            if previous is not None:  # a host in several groups: merge, keeping every group name
                entry["groups"] = sorted(set(previous["groups"]) | set(entry["groups"]))
                merged_entry = {**previous, **entry}
                entry = yamlio.LineDict(merged_entry)
                entry.line = line
            hosts[str(host)] = entry
        for child_name, child in (group.get("children") or {}).items():
            walk(str(child_name), child, group_vars, chain)

    roots = data["all"] if "all" in data and isinstance(data["all"], dict) else {"children": data}
    walk("all", roots, {}, [])
    return list(hosts.values())


def _looks_like_ini(text: str) -> bool:
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        return line.startswith("[") and line.endswith("]")
    return False


def _ansible_ini_entries(text: str, path: Path) -> list[dict]:
    hosts: dict[str, dict] = {}
    group_vars: dict[str, dict] = {}
    children: dict[str, list[str]] = {}
    section = "ungrouped"
    kind = "hosts"
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        header = re.fullmatch(r"\[([^\]:]+)(?::(vars|children))?\]", line)
        if header:
            section, kind = header.group(1), header.group(2) or "hosts"
            continue
        if kind == "vars":
            key, _, value = line.partition("=")
            group_vars.setdefault(section, {})[key.strip()] = value.strip()
        elif kind == "children":
            children.setdefault(section, []).append(line.split()[0])
        else:
            tokens = line.split()
            host_vars = {}
            for token in tokens[1:]:
                if "=" not in token:
                    raise InventoryError(f"{path}:{number}: expected key=value, got {token!r}")
                key, _, value = token.partition("=")
                host_vars[key] = value
            entry = hosts.setdefault(tokens[0], {"vars": {}, "groups": [], "line": number})
            entry["vars"].update(host_vars)
            entry["groups"].append(section)
    parents: dict[str, list[str]] = {}
    for parent, kids in children.items():
        for kid in kids:
            parents.setdefault(kid, []).append(parent)

    def ancestry(group: str, seen: frozenset = frozenset()) -> list[str]:
        out = [group]
        for parent in parents.get(group, []):
            if parent not in seen:
                out = ancestry(parent, seen | {group}) + out
        return out

    entries = []
    for host, info in hosts.items():
        chain: list[str] = []
        for g in info["groups"]:
            chain.extend(x for x in ancestry(g) if x not in chain)
        merged: dict = {}
        for g in ["all", *chain]:
            merged.update(group_vars.get(g, {}))
        merged.update(info["vars"])
        try:
            entries.append(_ansible_host_entry(host, merged, chain, info["line"]))
        except InventoryError as exc:
            raise InventoryError(f"{path}:{info['line']}: {exc}") from None
    return entries


# --- helpers -----------------------------------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InventoryError(f"{path}: no such inventory file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InventoryError(f"{path}: cannot read inventory: {exc}") from None


def _read_ssh_config(ssh_config: str | Path | None) -> paramiko.SSHConfig | None:
    if ssh_config is None:
        return None
    path = Path(os.path.expanduser(str(ssh_config)))
    if not path.is_file():
        return None
    try:
        return paramiko.SSHConfig.from_path(str(path))
    except Exception as exc:  # paramiko raises assorted types for a malformed config
        raise InventoryError(f"{path}: cannot read ssh config: {exc}") from None
