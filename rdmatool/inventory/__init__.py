"""Inventory loading: rdmatool's YAML form, or an Ansible inventory (YAML or INI) → a list of resolved Targets.

Group and default inheritance, hostlist ranges and the user's ~/.ssh/config are all resolved once, here; every later
step sees plain Targets. Precedence, most specific first: target entry > its group > `defaults` > ~/.ssh/config >
built-in defaults. Every value that will reach a command line or a file name is validated here.

The package: `targets` (the native format and the resolution into Targets), `ansible` (Ansible YAML and INI
inventories as entries); here, reading the file and `--limit` / `--shard` selection.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

import paramiko

from rdmatool import hostlist, yamlio
from rdmatool.errors import InventoryError
from rdmatool.inventory.ansible import ini_entries, looks_like_ini, yaml_entries
from rdmatool.inventory.targets import from_native, resolve
from rdmatool.model import Target


def load(path: str | Path, ssh_config: str | Path | None = "~/.ssh/config") -> list[Target]:
    """Read an inventory file; raises InventoryError with `FILE[:LINE]: message` on any problem."""
    path = Path(path)
    config = _read_ssh_config(ssh_config)
    text = _read_text(path)
    if looks_like_ini(text):
        entries = ini_entries(text, path)
        return resolve(entries, {}, None, path, config)
    try:
        data = yamlio.loads(text, str(path))
    except yamlio.YamlError as exc:
        raise InventoryError(str(exc)) from None
    if not isinstance(data, dict):
        raise InventoryError(f"{path}: an inventory is a mapping with `targets` (or an Ansible inventory)")
    if "targets" in data:
        return from_native(data, path, config)
    if "all" in data or any(isinstance(v, dict) and ("hosts" in v or "children" in v) for v in data.values()):
        return resolve(yaml_entries(data, path), {}, None, path, config)
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
            raise InventoryError(f"--shard {yamlio.quote(shard)}: expected K/N with 1 <= K <= N")
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


def _read_text(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(yamlio.MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise InventoryError(f"{path}: no such inventory file") from None
    except OSError as exc:
        raise InventoryError(f"{path}: cannot read inventory: {exc.strerror or exc}") from None
    if len(data) > yamlio.MAX_FILE_BYTES:
        raise InventoryError(f"{path}: larger than {yamlio.MAX_FILE_BYTES} bytes; not an inventory")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InventoryError(f"{path}: cannot read inventory: not UTF-8 text ({exc.reason} at byte {exc.start})") \
            from None


def _read_ssh_config(ssh_config: str | Path | None) -> paramiko.SSHConfig | None:
    if ssh_config is None:
        return None
    path = Path(os.path.expanduser(str(ssh_config)))
    if not path.is_file():
        return None
    try:
        return paramiko.SSHConfig.from_path(str(path))
    except Exception as exc:  # paramiko raises assorted types for a malformed config
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InventoryError(f"{path}: cannot read ssh config: {yamlio.shorten(message)}") from None
